"""``arena db``: schema migrations."""

from __future__ import annotations

import click

from arena.cli.options import format_option, quiet_option
from arena.cli.output import emit


@click.group("db")
def db_group() -> None:
    """Database schema: show the revision, apply migrations, rebuild the count table.

    \b
    Example:
        arena --db postgresql+psycopg://postgres@127.0.0.1/arena db upgrade
    """


@db_group.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
@click.pass_obj
def upgrade_command(app, revision: str) -> None:
    """Migrate the database schema to the newest (or given) revision.

    \b
    Example:
        arena db upgrade
    """
    state = app.arena().upgrade(revision)
    click.echo(f"schema revision: {state.before or 'none'} -> {state.revision}")


@db_group.command("current")
@click.pass_obj
def current_command(app) -> None:
    """Show the schema revision of the database and the newest one known.

    \b
    Example:
        arena db current
    """
    now = app.arena().schema()
    rev, head = now.revision, now.head
    state = "up to date" if rev == head else "run `arena db upgrade`" if rev else "empty database"
    click.echo(f"{rev or 'none'} (head {head}: {state})")


@db_group.command("stats")
@format_option
@click.pass_obj
def stats_command(app, fmt) -> None:
    """Rows and bytes of each table, and the bytes one night's rebuild adds.

    Bytes: PostgreSQL's pg_total_relation_size (table, indexes, TOAST);
    SQLite's dbstat pages when available, else an estimate from the stored
    values' lengths (the method is printed). Bytes per night: the latest
    rebuild run's share of the snapshot tables (an estimate).

    \b
    Example:
        arena db stats
        arena db stats --format json
    """
    stats = app.arena().db_stats().stats
    doc = stats.to_dict()
    if fmt == "json":
        emit([], ["table", "rows", "bytes"], fmt, json_obj=doc)
        return
    rows = [dict(table=t.table, rows=t.rows, bytes=t.bytes) for t in stats.tables]
    rows.append(dict(table="total", rows=stats.total_rows, bytes=stats.total_bytes))
    emit(rows, ["table", "rows", "bytes"], fmt)
    if fmt == "table":
        click.echo(
            f"bytes: {stats.method}; bytes per night (latest run, {stats.run_snapshots} "
            f"snapshot(s), estimate): {stats.bytes_per_night}"
        )


@db_group.command("recount")
@quiet_option
@click.pass_obj
def recount_command(app, quiet) -> None:
    """Make the count table that rebuilds read, and the battle keys, equal to the battles.

    Every ingest keeps the count table (battles per board, pair, outcome and
    weight) and the battle keys (external ids) current in its own transaction,
    so this is needed only after battles were changed outside arena (by hand in
    SQL). One transaction that writes only the cells that differ: readers see
    the old counts until it commits. On PostgreSQL a VACUUM (ANALYZE) of both
    tables follows, so no dead rows are left behind.

    \b
    Example:
        arena db recount
        arena --db postgresql+psycopg://postgres@127.0.0.1/arena db recount -q
    """
    from arena.cli.progress import phase_reporter

    done = app.arena().recount(progress=phase_reporter(quiet=quiet)).recount
    click.echo(
        f"count table rebuilt: {done.cells} rows, {done.changed} changed; battle keys: "
        f"{done.keys_dropped} of deleted battles dropped, {done.keys_added} added"
    )


COMMANDS = [db_group]
