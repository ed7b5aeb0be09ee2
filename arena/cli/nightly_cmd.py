"""``arena nightly``: drop folder in, site out (see :mod:`arena.jobs.nightly`)."""

from __future__ import annotations

import click

from arena.cli.options import declared, format_option, quiet_option
from arena.cli.output import emit, warn
from arena.cli.progress import phase_reporter
from arena.cli.publish_cmd import site_options
from arena.cli.rebuild_cmd import fit_options, fit_values
from arena.cli.snapshots_cmd import retention_options

_DIR = click.Path(file_okay=False, dir_okay=True, path_type=str)
#: Columns of ``--format csv`` (one row: the night).
_COLUMNS = (
    "outcome",
    "exit_code",
    "time",
    "seconds",
    "battles_added",
    "files_ingested",
    "files_seen",
    "files_rejected",
    "rebuilt",
    "snapshot_ids",
    "watermark",
    "published",
    "error",
)


@click.command("nightly")
@click.option(
    "--incoming",
    type=click.Path(exists=True, file_okay=False, dir_okay=True, path_type=str),
    required=True,
    help="Drop folder: every file in it is ingested (hidden files are left alone).",
)
@click.option("--site", "site", type=_DIR, required=True, help="Folder of the published site.")
@click.option(
    "--done", type=_DIR, default=None, help="Move ingested (and already seen) files here."
)
@click.option(
    "--failed",
    type=_DIR,
    default=None,
    help="Move rejected files here, each with NAME.error.txt saying why.",
)
@declared("follow_symlinks")
@declared("boards")
@fit_options
@site_options
@retention_options("prune-")
@format_option
@quiet_option
@click.pass_obj
def nightly_command(
    app,
    incoming,
    site,
    done,
    failed,
    follow_symlinks,
    boards,
    max_models,
    max_boards,
    heatmap_top,
    attribution,
    prune_keep_days,
    prune_keep_last,
    fmt,
    quiet,
    **fit,
):
    """Ingest a drop folder, rebuild every board and publish the site: the night's job.

    Every file in --incoming is ingested in its own transaction; files stored
    before (same sha256) are recognised and skipped, and a rejected file does
    not stop the night. Then the boards the database has are rebuilt, each
    with the options its latest snapshot was built with (sources apart, style
    variants, categories, excluded judges; the rating options given here apply
    only to a database without a snapshot); --boards given rebuilds the overall
    board and each category with the options given, pooling every source. The
    site is published atomically, with a status.json
    (time, snapshot ids, battles added, files rejected, duration). The rebuild
    is skipped when no battle arrived since the last one. A database-wide lock
    keeps two runs from interleaving: the second waits up to --wait.
    With --prune-keep-days/--prune-keep-last, old snapshots' samples and pair
    tables are dropped after a good night only (as `arena snapshots prune`).

    \b
    Exit codes (for monitoring):
      0  ok
      1  error (bad database, disk full, ...): nothing more was done
      3  some input files were rejected; the rest was ingested and published
      4  nothing new: no new battles, rebuild skipped, site refreshed
      5  rebuild or publish failed: the previous snapshots and site are kept
      6  locked: another run held the lock longer than --wait

    \b
    Example:
        arena nightly --incoming drop/ --site /srv/www/arena --done drop/done --failed drop/failed
        arena --db postgresql+psycopg://arena@db/arena nightly --incoming drop/ --site site/ -q
        arena nightly --incoming drop/ --site site/ --prune-keep-days 30 --prune-keep-last 7
        arena nightly --incoming drop/ --site site/ --boards given --rounds 200
    """
    from arena.api import EXIT_LOCKED, LockHeld, NightlyError
    from arena.cli.errors import as_click_error, flag_for
    from arena.core.errors import OptionError

    try:
        night = app.arena().nightly(
            incoming,
            site,
            done=done,
            failed=failed,
            heatmap_top=heatmap_top,
            max_boards=max_boards,
            attribution=attribution,
            prune_keep_days=prune_keep_days,
            prune_keep_last=prune_keep_last,
            follow_symlinks=follow_symlinks,
            boards=boards,
            max_models=max_models,
            progress=phase_reporter(quiet=quiet),
            **fit_values(**fit),
        )
        result = night.result
    except (NightlyError, OptionError) as exc:  # parameter names become flags
        raise click.ClickException(f"{as_click_error(exc).message}; nothing was done") from None
    except LockHeld as exc:
        if fmt == "json":
            emit([], _COLUMNS, fmt, json_obj={"outcome": "locked", "exit_code": EXIT_LOCKED})
        click.echo(f"Error: {exc}; nothing was done", err=True)
        raise click.exceptions.Exit(EXIT_LOCKED) from None
    for warning in result.warnings:
        warn(warning)
    for f in result.files:
        for note in f.warnings:
            warn(f"{f.name}: {note}")
    for f in result.problems:
        if f.error is not None:
            click.echo(f"{f.status}: {f.error}", err=True)
        if f.move_error is not None:
            click.echo(f"not moved: {f.name}: {f.move_error}", err=True)
    doc = night.to_dict()
    if fmt == "table":
        click.echo(result.summary(spell=flag_for))
    else:
        emit([doc], _COLUMNS, fmt, json_obj=doc)
    if result.exit_code:
        raise click.exceptions.Exit(result.exit_code)


COMMANDS = [nightly_command]
