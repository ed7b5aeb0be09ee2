"""``arena demo``: the whole path on bundled data, on the embedded default database."""

from __future__ import annotations

import os

import click

from arena.cli.options import quiet_option, rounds_option
from arena.cli.progress import phase_reporter, progress_bar


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
    from arena.ingest import IngestError, ingest_file
    from arena.jobs.rebuild import RebuildError, RebuildOptions, rebuild
    from arena.publish.atomic import PublishError
    from arena.publish.site import publish_site

    engine = app.engine(create=True)
    data = resources.demo_data()
    say = phase_reporter(quiet=quiet)
    try:
        with progress_bar(os.path.getsize(data), f"ingest {data.name}", quiet=quiet) as update:
            report = ingest_file(engine, str(data), source="lmarena-140k", progress=update)
    except IngestError as exc:
        raise click.ClickException(str(exc)) from None
    if report.already_ingested_as is not None:
        click.echo(f"demo data already ingested (batch {report.already_ingested_as})")
    else:
        click.echo(
            f"ingested {report.inserted} battles ({report.excluded} excluded: "
            f"a model playing itself) from {data.name}"
        )
    try:
        result = rebuild(engine, RebuildOptions(rounds=rounds), all_categories=True, progress=say)
    except RebuildError as exc:
        raise click.ClickException(f"{exc}; no snapshot was written") from None
    click.echo(
        f"rebuilt {len(result.snapshot_ids)} boards in {result.seconds:.1f}s "
        f"(snapshots {result.snapshot_ids[0]}-{result.snapshot_ids[-1]})"
    )
    say(f"publish: rendering {out_dir}")
    try:
        publish_site(engine, out_dir, attribution=resources.DEMO_ATTRIBUTION)
    except PublishError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot write {out_dir}: {exc.strerror or exc}") from None
    click.echo(f"published {out_dir}/index.html")


COMMANDS = [demo_command]
