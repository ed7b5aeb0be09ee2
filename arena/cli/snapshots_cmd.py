"""``arena snapshots`` and ``arena diff``: the history of boards."""

from __future__ import annotations

from dataclasses import asdict

import click

from arena.cli.options import category_option, format_option, style_control_option
from arena.cli.output import emit

SNAPSHOT_COLUMNS = [
    "id",
    "created_at",
    "board",
    "models",
    "battles",
    "watermark",
    "method",
    "rounds",
    "seed",
    "options",
]
DIFF_COLUMNS = [
    "model",
    "status",
    "rating",
    "d_rating",
    "ci_low",
    "ci_high",
    "old_ci_low",
    "old_ci_high",
    "position",
    "old_position",
    "rank_ub",
    "old_rank_ub",
    "tier",
    "old_tier",
]


@click.command("snapshots")
@format_option
@click.pass_obj
def snapshots_command(app, fmt):
    """List snapshots, newest last.

    \b
    Example:
        arena snapshots --format json
    """
    from arena.formats import count
    from arena.snapshots import list_snapshots, options_summary

    with app.engine().connect() as conn:
        snaps = list_snapshots(conn)
    rows = [
        dict(
            id=s.id,
            created_at=s.created_at.isoformat()[:19],
            board=s.board,
            models=s.n_models,
            battles=count(s.n_battles),
            watermark=s.watermark,
            method=s.options.get("ci"),
            rounds=s.options.get("rounds"),
            seed=s.seed,
            options=options_summary(s.options),
        )
        for s in snaps
    ]
    emit(rows, SNAPSHOT_COLUMNS, fmt)


@click.command("diff")
@click.argument("old", type=int, required=False)
@click.argument("new", type=int, required=False)
@style_control_option("Use the style-controlled board (answer length and markdown held fixed).")
@category_option("With --style-control and no ids: this category's latest boards.")
@format_option
@click.pass_obj
def diff_command(app, old, new, style_control, category, fmt):
    """Show what moved between two snapshots of one board: ratings, intervals, ranks, tiers.

    Snapshots of different boards (overall vs a category) are refused; options
    that change the numbers (ties, cluster, ci, level, prior, anchor,
    min-battles) are compared and a difference is a loud warning.
    With --style-control and no snapshot ids: the latest raw board against its
    style-controlled board from the same rebuild (each model's rank and rating
    change once answer length and markdown are held fixed).

    \b
    Example:
        arena diff 3 4
        arena diff --style-control
        arena diff --style-control --category math --format json
    """
    from arena.compare import SnapshotError, diff, resolve_board

    style = style_control == "on"
    if (old is None) != (new is None) or (old is None and not style):
        raise click.UsageError("give two snapshot ids OLD NEW, or --style-control")
    if old is not None and (style or category):
        raise click.UsageError("--style-control/--category pick the boards only without ids")
    with app.engine().connect() as conn:
        try:
            if old is None:
                raw = resolve_board(conn, category=category)
                old = raw.snapshot.id
                new = resolve_board(conn, snapshot_id=old, style=True).snapshot.id
            result = diff(conn, old, new)
        except SnapshotError as exc:
            raise click.ClickException(str(exc)) from None
    if result.options_differ:
        click.echo(
            f"WARNING: snapshots {old} and {new} were built with different options "
            f"({'; '.join(result.options_differ)}): the changes below mix the data's "
            "and the options' effects",
            err=True,
        )
    rows = [asdict(r) for r in result.rows]
    if fmt == "table":
        for r in rows:
            for key in ("rating", "d_rating", "ci_low", "ci_high", "old_ci_low", "old_ci_high"):
                r[key] = None if r[key] is None else round(r[key], 1)
    emit(rows, DIFF_COLUMNS, fmt)


COMMANDS = [snapshots_command, diff_command]
