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
    """Ingest the bundled LMArena votes, rebuild every board and publish the site.

    Uses the database given by --db (default sqlite:///arena.db in the working
    directory). Running it again ingests nothing new and adds a snapshot.
    Progress of each phase goes to stderr on a terminal (-q hides it).
    Data: LMArena arena-human-preference-140k, CC-BY-4.0.

    \b
    Example:
        arena demo site/ && python -m http.server -d site
    """
    from arena.core import resources

    db = app.arena()
    data = resources.demo_data()
    say = phase_reporter(quiet=quiet)
    with file_progress(quiet=quiet) as progress:
        (report,) = db.ingest(data, source="lmarena-140k", progress=progress).files
    if report.already_ingested_as is not None:
        click.echo(f"demo data already ingested (batch {report.already_ingested_as})")
    else:
        click.echo(
            f"ingested {report.inserted} battles ({report.excluded} excluded: "
            f"a model playing itself) from {data.name}"
        )
    result = db.rebuild(rounds=rounds, all_categories=True, progress=say)
    ids = result.snapshot_ids
    click.echo(
        f"rebuilt {len(ids)} boards in {result.result.seconds:.1f}s (snapshots {ids[0]}-{ids[-1]})"
    )
    db.publish(out_dir, attribution=resources.DEMO_ATTRIBUTION, progress=say)
    click.echo(f"published {out_dir}/index.html")


COMMANDS = [demo_command]
