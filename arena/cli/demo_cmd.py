"""``arena demo``: the whole path on bundled data, on the embedded default database."""

from __future__ import annotations

import click

from arena.cli.options import quiet_option, rounds_option
from arena.cli.progress import file_progress, phase_reporter


@click.command("demo")
@click.argument("out_dir", default="site", type=click.Path(file_okay=False))
@rounds_option
@quiet_option
@click.pass_obj
def demo_command(app, out_dir, rounds, quiet):
    """Ingest the bundled LMArena votes and judge battles, rebuild every board, publish.

    Uses the database given by --db (default sqlite:///arena.db in the working
    directory). Running it again ingests nothing new and adds a snapshot.
    Progress of each phase goes to stderr on a terminal (-q hides it).
    Two sources, never pooled: LMArena's human votes (the overall board, its
    categories and the derived Hard Prompts category) and ko-arena-hard's
    LLM-judge verdicts (their own boards, raw and style-controlled).
    Data: LMArena arena-human-preference-140k, CC-BY-4.0; ko-arena-hard-auto,
    Apache-2.0; model organisations and licences from arena/data/models.csv.

    \b
    Example:
        arena demo site/ && python -m http.server -d site
    """
    db = app.arena()
    with file_progress(quiet=quiet) as progress:
        done = db.demo(
            out_dir, rounds=rounds, progress=phase_reporter(quiet=quiet), file_progress=progress
        )
    for name, report in done.files:
        if report.already_ingested_as is not None:
            click.echo(f"demo data {name} already ingested (batch {report.already_ingested_as})")
        else:
            click.echo(
                f"ingested {report.inserted} battles ({report.excluded} excluded: "
                f"a model playing itself) from {name}"
            )
    ids = done.snapshot_ids
    click.echo(f"rebuilt {len(ids)} boards in {done.seconds:.1f}s (snapshots {ids[0]}-{ids[-1]})")
    click.echo(f"published {out_dir}/index.html")


COMMANDS = [demo_command]
