"""``arena snapshots`` and ``arena diff``: the history of boards."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    component_option,
    declared,
    format_option,
    source_option,
    style_control_option,
)
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
#: JSON/CSV columns of ``arena diff`` (the rank is the simultaneous rank set; rank_ub
#: is LMArena's overlap rank, an extra)
DIFF_COLUMNS = [
    "model",
    "status",
    "rank_low",
    "rank_high",
    "old_rank_low",
    "old_rank_high",
    "tier",
    "old_tier",
    "rating",
    "d_rating",
    "ci_low",
    "ci_high",
    "old_ci_low",
    "old_ci_high",
    "note",
    "rank_ub",
    "old_rank_ub",
]
#: The table's columns: the rank as the leaderboard prints it, old beside new.
DIFF_TABLE_COLUMNS = [
    "model",
    "status",
    "rank",
    "old_rank",
    "tier",
    "old_tier",
    "rating",
    "d_rating",
    "interval",
    "old_interval",
    "note",
]


@click.group("snapshots", invoke_without_command=True)
@format_option
@click.pass_context
def snapshots_command(ctx, fmt):
    """List snapshots, newest last; `arena snapshots prune` drops old snapshots' detail.

    \b
    Example:
        arena snapshots --format json
        arena snapshots prune --keep-days 30 --keep-last 7 --dry-run
    """
    if ctx.invoked_subcommand is not None:
        return
    result = ctx.obj.arena().snapshots()
    if fmt == "json":
        emit([], SNAPSHOT_COLUMNS, fmt, json_obj=result.to_dict())
        return
    rows = result.row_dicts()
    emit(rows, SNAPSHOT_COLUMNS, fmt)


@click.command("diff")
@click.argument("old", type=int, required=False)
@click.argument("new", type=int, required=False)
@style_control_option("Use the style-controlled board (answer length and markdown held fixed).")
@category_option("With no ids: this category's latest boards.")
@source_option("With no ids: this source's latest boards (`arena rebuild --source`).")
@component_option
@format_option
@click.pass_obj
def diff_command(app, old, new, style_control, category, source, component, fmt):
    """Show what moved between two snapshots of one board: ratings, intervals, ranks, tiers.

    Snapshots of different boards (overall vs a category) are refused; options
    that change the numbers (ties, cluster, ci, level, prior, anchor,
    min-battles) are compared and a difference is a loud warning.
    With no snapshot ids: the board's latest snapshot against the one before it
    (overall, or --category / --source). With --style-control and no ids: the latest raw board against its
    style-controlled board from the same rebuild (each model's rank and rating
    change once answer length and markdown are held fixed); --component N
    picks comparable set N's boards (`arena rebuild --components separate`).
    Two snapshots of one comparable set's board with no model in common hold
    different sets (sets are numbered anew by each rebuild) and are refused.

    \b
    Example:
        arena diff                # the overall board: latest snapshot against the one before
        arena diff 1 12           # two snapshots of one board (ids: arena snapshots)
        arena diff --style-control  # battles with style metadata (conv_metadata)
        arena diff --style-control --category math --format json
    """
    if (old is None) != (new is None):
        raise click.UsageError("give two snapshot ids OLD NEW, or none")
    if old is not None and (style_control == "on" or category or source or component):
        raise click.UsageError(
            "--style-control/--category/--source/--component pick the boards only without ids"
        )
    result = app.arena().diff(
        old,
        new,
        style_control=style_control == "on",
        category=category,
        source=source,
        component=component,
    )
    if result.options_differ:
        click.echo(
            f"WARNING: snapshots {result.diff.old.id} and {result.diff.new.id} were built with "
            f"different options ({'; '.join(result.options_differ)}): the changes below mix "
            "the data's and the options' effects",
            err=True,
        )
    if fmt == "json":
        emit([], DIFF_COLUMNS, fmt, json_obj=result.to_dict())
        return
    rows = result.row_dicts()
    if fmt == "table":
        click.echo(result.diff.compared)
        for r in rows:
            for key in ("rating", "d_rating", "ci_low", "ci_high", "old_ci_low", "old_ci_high"):
                r[key] = None if r[key] is None else round(r[key], 1)
        if rows and not any(_moved(r) for r in rows):
            # rows of zeros say less than one sentence
            click.echo(
                f"nothing moved between snapshots {result.diff.old.id} and "
                f"{result.diff.new.id}: {len(rows)} models, "
                "same ranks and tiers, ratings and intervals within 0.05 "
                "(--format json or csv lists them)"
            )
            return
        emit([_table_row(r) for r in rows], DIFF_TABLE_COLUMNS, fmt)
        return
    emit(rows, DIFF_COLUMNS, fmt, rounded=True)


def rank_set_text(low: int | None, high: int | None) -> str:
    """``3`` when pinned, ``3-7`` as a set, ``-`` when there is none (as `arena leaderboard`)."""
    if low is None:
        return "-"
    return str(low) if high is None or high == low else f"{low}-{high}"


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{low:.1f} to {high:.1f}"


def _table_row(r: dict) -> dict:
    return {
        "model": r["model"],
        "status": r["status"],
        "rank": rank_set_text(r["rank_low"], r["rank_high"]),
        "old_rank": rank_set_text(r["old_rank_low"], r["old_rank_high"]),
        "tier": "-" if r["tier"] is None else r["tier"],
        "old_tier": "-" if r["old_tier"] is None else r["old_tier"],
        "rating": "-" if r["rating"] is None else r["rating"],
        "d_rating": "-" if r["d_rating"] is None else r["d_rating"],
        "interval": _interval(r["ci_low"], r["ci_high"]),
        "old_interval": _interval(r["old_ci_low"], r["old_ci_high"]),
        "note": r["note"] or "",
    }


def _moved(row: dict) -> bool:
    """A diff row (rounded to 0.1) that shows a change."""
    if row["status"] != "unchanged":
        return True
    if row["d_rating"] not in (None, 0, 0.0):
        return True
    return (row["ci_low"], row["ci_high"]) != (row["old_ci_low"], row["old_ci_high"])


def retention_options(prefix: str = ""):
    """``--keep-days``/``--keep-last`` (``--prune-keep-...`` in ``arena nightly``): one vocabulary."""
    name = prefix.replace("-", "_")

    def decorate(f):
        f = declared(f"{name}keep_last")(f)
        return declared(f"{name}keep_days")(f)

    return decorate


PRUNE_COLUMNS = ["pruned", "kept", "sample_rows", "pair_rows", "bytes_freed", "dry_run"]


@snapshots_command.command("prune")
@retention_options()
@click.option("--dry-run", is_flag=True, help="Count what would be dropped; delete nothing.")
@format_option
@click.pass_obj
def prune_command(app, keep_days, keep_last, dry_run, fmt):
    """Drop the bootstrap samples and pair tables of old snapshots.

    A snapshot loses its detail only if it is older than --keep-days AND not
    among its board's newest --keep-last; the latest snapshot of every board
    is never touched. Summary rows (rating, interval, rank, tier, counts) stay,
    so history charts and `arena diff` keep working; `arena compare` on a
    pruned snapshot says its samples were pruned. Bytes freed are estimated
    from the rows deleted (SQLite's file shrinks only after VACUUM).

    \b
    Example:
        arena snapshots prune --keep-days 30 --keep-last 7
        arena snapshots prune --keep-last 3 --dry-run --format json
    """
    if keep_days is None and keep_last is None:
        raise click.UsageError("give --keep-days, --keep-last or both")
    result = app.arena().prune_snapshots(keep_days=keep_days, keep_last=keep_last, dry_run=dry_run)
    pruned = result.result
    if fmt == "table":
        verb = "would drop" if dry_run else "dropped"
        click.echo(
            f"{len(pruned.snapshot_ids)} snapshot(s) pruned ({pruned.kept} kept): {verb} "
            f"{pruned.sample_rows} sample table(s) and {pruned.pair_rows} pair row(s), "
            f"about {pruned.bytes_freed} bytes"
        )
    else:
        doc = result.to_dict()
        emit([doc], PRUNE_COLUMNS, fmt, json_obj=doc)


COMMANDS = [snapshots_command, diff_command]
