"""``arena leaderboard``: show one snapshot of a board."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    component_option,
    declared,
    format_option,
    snapshot_option,
    source_option,
    style_control_option,
)
from arena.cli.output import emit
from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_RANKS
from arena.core.words import flag_word

COLUMNS = ["rank", "tier", "model", "rating", "minus", "plus", "battles", "flags"]


def component_lines(s: dict) -> list[str]:
    """What the header says about comparable sets with their own boards."""
    if s["component"] > 1:
        return [
            f"comparable set {s['component']} of board {s['main_board']}: these models are not "
            "linked to the main board's models by wins and losses both ways, directly or "
            "through others; their ratings are on their own scale, not comparable with it"
        ]
    others = s["component_boards"]
    if not others:
        return []
    return [
        f"other comparable sets, each on its own scale (not comparable with this board): "
        f"{', '.join(others)}; `arena leaderboard --component N` shows set N"
    ]


def _count(x: float) -> str:
    """A count with thousands separators (``135,624``; a weighted one to 0.1)."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.1f}"


def _tenth(x: float | None) -> float | str:
    return "-" if x is None else round(x, 1)


def _rank_text(r: dict, ranks: str = DEFAULT_RANKS) -> str:
    """The ranks the data allow: ``3`` when pinned, ``3-7`` as a set, ``-`` unranked.

    ``ranks="simultaneous"``: the board's rank confidence set (all models at
    once); ``"overlap"`` (or a snapshot written before the sets existed):
    LMArena's interval-overlap rank (UB)..rank (LB).
    """
    best, worst = r["rank_low"], r["rank_high"]
    if ranks == "overlap" or best is None:
        best, worst = r["rank_ub"], r["rank_lb"]
    if best is None:
        return "-"
    return str(best) if worst is None or worst == best else f"{best}-{worst}"


def _half(r: dict, side: str) -> float | str:
    """Distance from the rating to one bound; ``inf`` for an open end, ``-`` for no rating."""
    if r["rating"] is None:
        return "-"
    if r[side] is None:
        return "inf"
    return _tenth(abs(r["rating"] - r[side]))


def _table_rows(rows: list[dict], ranks: str = DEFAULT_RANKS) -> list[dict]:
    return [
        dict(
            rank=_rank_text(r, ranks),
            tier=r["tier"] if r["tier"] is not None else "-",
            model=r["model"],
            rating=_tenth(r["rating"]),
            minus=_half(r, "ci_low"),
            plus=_half(r, "ci_high"),
            battles=r["battles"],
            # the page's words ("few battles"); JSON and CSV keep the tokens
            flags=", ".join(flag_word(f) for f in r["flags"]),
        )
        for r in rows
    ]


#: The leaderboard's words for why models are not ranked, by flag.
UNRANKED_WORDS = {
    "disconnected": "never met the comparable set, directly or through others: "
    "no rating on this board's scale",
    "no_mle": "wins and losses do not pin a finite rating (never won, or never lost)",
    "no_battles": "no battles",
    "no_style": "no battle with style metadata: the style-controlled fit cannot rate it",
}


def _unranked_lines(rows: list[dict], min_battles) -> list[str]:
    from arena.core.words import name_list

    groups: dict[str, list[str]] = {}
    for r in rows:
        if r["unranked_reason"]:
            kind = next((f for f in UNRANKED_WORDS if f in r["flags"]), "few_battles")
            groups.setdefault(kind, []).append(r["model"])
    words = {**UNRANKED_WORDS, "few_battles": f"fewer than {min_battles} battles"}
    return [f"not ranked ({words[k]}): {name_list(models)}" for k, models in groups.items()]


@click.command("leaderboard")
@snapshot_option
@category_option("Show the latest snapshot of this category's board.")
@source_option("Show the latest snapshot of this source's board (`arena rebuild --source`).")
@click.option("--all", "show_all", is_flag=True, help="Include hidden models.")
@style_control_option("Use the style-controlled board (answer length and markdown held fixed).")
@component_option
@declared("ranks")
@declared("provisional")
@format_option
@click.pass_obj
def leaderboard_command(
    app, snapshot_id, category, source, show_all, style_control, component, ranks, provisional, fmt
):
    """Show a snapshot: rank set, tier, rating with its interval, battles.

    The rank column is the set of ranks the data allow for every model at
    once (rank_low-rank_high: 95% simultaneous, Mogstad, Romano, Shaikh &
    Wilhelm), from the one test of all pairs that also draws the tiers and
    gives `arena compare` its verdict. --ranks overlap shows LMArena's rank
    instead: 1 + the models whose interval lies wholly above (rank_ub) to
    the models whose interval is not wholly below (rank_lb), per model, not
    simultaneous. Unranked models are listed with the reason. The header
    shows the options that change the numbers.
    With --style-control: the style-controlled board (ratings with answer
    length, headers, lists and bold held fixed) and its style coefficients.
    With --component N: the board of comparable set N written by the same
    rebuild (`arena rebuild --components separate`); the main board's header
    lists the other sets' boards.
    With --provisional: the provisional board `arena serve` keeps current
    (the latest snapshot refitted on the votes stored since, analytic
    intervals); the header says so. Without it one is never shown.

    \b
    Example:
        arena leaderboard
        arena leaderboard --category math --format json
        arena leaderboard --style-control --format json
        arena leaderboard --component 2
        arena leaderboard --provisional --format json
        arena leaderboard --source gpt-4-judge   # after arena rebuild --source gpt-4-judge
    """
    result = app.arena().leaderboard(
        snapshot=snapshot_id,
        category=category,
        source=source,
        style_control=style_control == "on",
        component=component,
        include_hidden=show_all,
        provisional=provisional,
    )
    if fmt != "table":
        doc = result.to_dict()
        emit(doc["rows"], result.row_fields(), fmt, json_obj=doc)
        return
    board = result.board
    # the table rounds full-precision numbers itself (to_dict() has rounded them once)
    doc = board.to_dict(include_hidden=show_all)
    s = doc["snapshot"]
    opts = s["options"]
    prov = result.to_dict().get("provisional")
    if prov:
        title = (
            f"provisional board ({s['board']}) computed {prov['computed_at']}: snapshot "
            f"{prov['since_snapshot']} refitted with the {_count(prov['battles_since'])} battles "
            f"since snapshot {prov['since_snapshot']} (up to battle {s['watermark']}); the next "
            "full rebuild replaces it\n"
        )
    else:
        title = f"snapshot {s['id']} ({s['board']}) {s['created_at']}  "
        if provisional:
            click.echo("(no vote came since the latest snapshot: no provisional board is newer)")
    click.echo(
        title
        + f"{_count(s['counts']['battles'])} battles, {_count(s['counts']['models'])} models, "
        f"{opts.get('ci')} {round(100 * opts.get('level', DEFAULT_LEVEL))}% intervals, "
        f"tiers: {opts.get('tiers', 'maxt')}"
    )
    click.echo(f"options: {result.options_summary()}")
    for line in component_lines(s):
        click.echo(line)
    if s["model"]["tie_param"] is not None:
        click.echo(
            f"Davidson tie parameter nu = {s['model']['tie_param']:.3f} "
            f"(SE {s['model']['tie_param_se']:.3f})"
        )
    click.echo(result.rank_legend(ranks))
    sentence = result.tier_sentence()
    if sentence:
        click.echo(f"tier: {sentence}")
    note = result.draws_note()
    if note:
        click.echo(note)
    emit(_table_rows(doc["rows"], ranks), COLUMNS, "table")
    if board.style_controlled:
        click.echo(
            f"style coefficients (logits per SD of the covariate, "
            f"{round(100 * opts.get('level', DEFAULT_LEVEL))}% intervals; > 0: judges prefer more of it):"
        )
        for c in s["style_coefficients"]:
            click.echo(
                f"  {c['feature']:10s} {c['estimate']:+.3f}  [{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]"
            )
        click.echo(
            f"({s['counts']['excluded']} battle(s) left out, incl. those without style metadata)"
        )
    if s["hidden_models"] and not show_all:
        click.echo(f"({s['hidden_models']} hidden model(s) not shown; --all shows them)")
    for line in _unranked_lines(doc["rows"], opts.get("min_battles")):
        click.echo(line)


COMMANDS = [leaderboard_command]
