"""``arena compare``: head-to-head verdict between two models of one snapshot."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    component_option,
    format_option,
    snapshot_option,
    source_option,
    style_control_option,
)
from arena.cli.output import emit


def _ranks(r: tuple[int, int] | None) -> str:
    if r is None:
        return "-"
    return str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}"


def _text(h) -> list[str]:
    pct = round(100 * h.level)
    if h.met:
        record = f"{h.a_wins} wins, {h.b_wins} losses, {h.ties} ties"
    elif not h.met_through_others:
        record = "never met, directly or through other models"
    else:
        record = "never met"
    lines = [f"{h.model_a} vs {h.model_b} (snapshot {h.snapshot}, board {h.board})"]
    if h.reason is not None:
        return lines + [f"  direct record: {record}", f"  verdict: {h.verdict}"]
    u = h.uncorrected
    lines += [
        f"  verdict: {h.verdict} (the board's: all {h.n_pairs:,} pairs tested at once, {pct}%)",
        f"  rank sets on the board (all models at once): {h.model_a} {_ranks(h.rank_a)}, "
        f"{h.model_b} {_ranks(h.rank_b)}; each asked about alone: "
        f"{_ranks(h.rank_alone_a)}, {_ranks(h.rank_alone_b)}",
        f"  rating difference  {h.difference:+.1f}",
    ]
    if u.ci_low is not None and u.ci_high is not None:
        lines.append(
            f"  tested alone, not corrected for the {h.n_pairs:,} pairs of this board: "
            f"{pct}% paired interval {u.ci_low:+.1f} to {u.ci_high:+.1f}, {u.verdict}"
        )
    else:
        lines.append("  tested alone: interval not available")
    lines += [
        f"  P({h.model_a} better) {h.p_a_better:.3f} over the board's rounds",
        f"  predicted win probability of {h.model_a}: {h.win_probability_a:.3f}",
        f"  direct record: {record}",
    ]
    return lines


@click.command("compare")
@click.argument("model_a")
@click.argument("model_b")
@snapshot_option
@category_option("Use the latest snapshot of this category's board.")
@source_option("Use the latest snapshot of this source's board (`arena rebuild --source`).")
@style_control_option("Use the style-controlled board (answer length and markdown held fixed).")
@component_option
@format_option
@click.pass_obj
def compare_command(
    app, model_a, model_b, snapshot_id, category, source, style_control, component, fmt
):
    """Head-to-head verdict: is MODEL_A really better than MODEL_B?

    The verdict is the board's: the one test of all its pairs at once that
    also gives its rank sets and tiers, so compare never contradicts the
    board. Below it: each model's rank set, the rating difference, the pair
    tested alone (its paired interval, not corrected for the board's other
    pairs), P(A better than B) over the board's rounds (its bootstrap rounds
    or, by default, its fixed normal draws), the
    predicted win probability and the direct record between the two. Two models outside the main board's
    comparable set are compared on their own set's board when `arena rebuild
    --components separate` wrote one; models in different sets never met,
    directly or through others, and get no verdict.

    \b
    Example:
        arena compare gemini-2.5-pro o3-2025-04-16
        arena compare gemini-2.5-pro o3-2025-04-16 --style-control  # needs style metadata
    """

    if model_a == model_b:
        raise click.ClickException("compare two different models")
    result = app.arena().compare(
        model_a,
        model_b,
        snapshot=snapshot_id,
        category=category,
        source=source,
        style_control=style_control == "on",
        component=component,
    )
    h = result.head_to_head
    if fmt == "json":
        emit([], [], "json", json_obj=result.to_dict())
    elif fmt == "csv":
        flat = h.flat()
        emit([flat], list(flat), "csv", rounded=True)
    else:
        click.echo("\n".join(_text(h)))


COMMANDS = [compare_command]
