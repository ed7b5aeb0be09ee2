"""``arena snapshots`` and ``arena diff``: the history of boards."""

from __future__ import annotations

from dataclasses import asdict

import click

from arena.cli.options import format_option
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
@click.argument("old", type=int)
@click.argument("new", type=int)
@format_option
@click.pass_obj
def diff_command(app, old, new, fmt):
    """Show what moved between two snapshots of one board: ratings, intervals, ranks, tiers.

    Snapshots of different boards (overall vs a category) are refused; options
    that change the numbers (ties, cluster, ci, level, prior, anchor,
    min-battles) are compared and a difference is a loud warning.

    \b
    Example:
        arena diff 3 4
    """
    from arena.compare import SnapshotError, diff

    with app.engine().connect() as conn:
        try:
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
