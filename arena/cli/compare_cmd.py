"""``arena compare``: head-to-head verdict between two models of one snapshot."""

from __future__ import annotations

import math

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


def _text(h) -> list[str]:
    pct = round(100 * h.level)
    if h.met:
        record = f"{h.a_wins} wins, {h.b_wins} losses, {h.ties} ties"
    elif not h.met_through_others:
        record = "never met, directly or through other models"
    else:
        record = "never met"
    lines = [f"{h.model_a} vs {h.model_b} (snapshot {h.snapshot}, board {h.board})"]
    if h.reason is None:
        lines += [
            f"  rating difference  {h.difference:+.1f}  ({pct}% paired interval "
            f"{h.ci_low:+.1f} to {h.ci_high:+.1f})",
            f"  P({h.model_a} better) {h.p_a_better:.3f} over bootstrap rounds",
            f"  predicted win probability of {h.model_a}: {h.win_probability_a:.3f}",
        ]
    lines += [f"  direct record: {record}", f"  verdict: {h.verdict}"]
    if h.reason is None and not math.isfinite(h.ci_low):
        lines.append("  (interval not available)")
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

    Gives the rating difference with its paired bootstrap interval, the
    predicted win probability, P(A better than B) over bootstrap rounds and
    the direct record between the two. Two models outside the main board's
    comparable set are compared on their own set's board when `arena rebuild
    --components separate` wrote one; models in different sets never met,
    directly or through others, and get no verdict.

    \b
    Example:
        arena compare gemini-2.5-pro o3-2025-04-16
        arena compare gemini-2.5-pro o3-2025-04-16 --style-control  # needs style metadata
    """
    from dataclasses import asdict

    from arena.boards.compare import SnapshotError, compare

    with app.engine().connect() as conn:
        try:
            h = compare(
                conn,
                model_a,
                model_b,
                snapshot_id=snapshot_id,
                category=category,
                style=style_control == "on",
                component=component,
                source=source,
            )
        except (SnapshotError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
    if fmt == "json":
        emit([], [], "json", json_obj=h.document(), rounded=True)
    elif fmt == "csv":
        flat = asdict(h)
        emit([flat], list(flat), "csv", rounded=True)
    else:
        click.echo("\n".join(_text(h)))


COMMANDS = [compare_command]
