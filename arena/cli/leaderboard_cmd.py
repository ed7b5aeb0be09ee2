"""``arena leaderboard``: show one snapshot of a board."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    format_option,
    snapshot_option,
    style_control_option,
)
from arena.cli.output import emit

COLUMNS = ["rank_ub", "tier", "model", "rating", "minus", "plus", "battles", "flags"]


def open_board(app, snapshot_id: int | None, category: str | None, style: bool = False):
    """The board asked for, or a one-line error (shared by leaderboard and compare)."""
    from arena.compare import SnapshotError, resolve_board

    with app.engine().connect() as conn:
        try:
            return resolve_board(conn, snapshot_id=snapshot_id, category=category, style=style)
        except SnapshotError as exc:
            raise click.ClickException(str(exc)) from None


def _tenth(x: float) -> float:
    return round(x, 1)


def _table_rows(rows: list[dict]) -> list[dict]:
    return [
        dict(
            rank_ub=r["rank_ub"] if r["rank_ub"] is not None else "-",
            tier=r["tier"] if r["tier"] is not None else "-",
            model=r["model"],
            rating=_tenth(r["rating"]),
            minus=_tenth(r["rating"] - r["ci_low"]),
            plus=_tenth(r["ci_high"] - r["rating"]),
            battles=r["battles"],
            flags=",".join(r["flags"]),
        )
        for r in rows
    ]


@click.command("leaderboard")
@snapshot_option
@category_option("Show the latest snapshot of this category's board.")
@click.option("--all", "show_all", is_flag=True, help="Include hidden models.")
@style_control_option("Use the style-controlled board (answer length and markdown held fixed).")
@format_option
@click.pass_obj
def leaderboard_command(app, snapshot_id, category, show_all, style_control, fmt):
    """Show a snapshot: rank (UB), tier, rating with its interval, battles.

    Rank (UB) is 1 + the number of models whose whole interval lies above
    this model's. Models in one tier are not ranked against each other.
    With --style-control: the style-controlled board (ratings with answer
    length, headers, lists and bold held fixed) and its style coefficients.

    \b
    Example:
        arena leaderboard
        arena leaderboard --category math --format json
        arena leaderboard --style-control --format json
    """
    from arena.snapshots import ROW_FIELDS

    board = open_board(app, snapshot_id, category, style_control == "on")
    doc = board.document(include_hidden=show_all)
    if fmt != "table":
        emit(doc["rows"], list(ROW_FIELDS), fmt, json_obj=doc)
        return
    s = doc["snapshot"]
    opts = s["options"]
    click.echo(
        f"snapshot {s['id']} ({s['board']}) {s['created_at'][:19]}  "
        f"{s['counts']['battles']} battles, {s['counts']['models']} models, "
        f"{opts.get('ci')} {round(100 * opts.get('level', 0.95))}% intervals, "
        f"tiers: {opts.get('tiers')}"
    )
    emit(_table_rows(doc["rows"]), COLUMNS, "table")
    if board.style_controlled:
        click.echo(
            f"style coefficients (logits per SD of the covariate, "
            f"{round(100 * opts.get('level', 0.95))}% intervals; > 0: judges prefer more of it):"
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


COMMANDS = [leaderboard_command]
