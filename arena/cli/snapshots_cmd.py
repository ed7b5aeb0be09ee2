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
]
DIFF_COLUMNS = [
    "model",
    "status",
    "rating",
    "d_rating",
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
    from arena.snapshots import list_snapshots

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
    """Show what moved between two snapshots: rating, rank (UB) and tier changes.

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
    rows = [asdict(r) for r in result.rows]
    if fmt == "table":
        for r in rows:
            for key in ("rating", "d_rating"):
                r[key] = None if r[key] is None else round(r[key], 1)
    emit(rows, DIFF_COLUMNS, fmt)


COMMANDS = [snapshots_command, diff_command]
