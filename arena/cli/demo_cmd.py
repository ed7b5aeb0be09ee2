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
    from arena.core import resources
    from arena.jobs.rebuild import RebuildError, RebuildOptions, rebuild

    db = app.arena()
    say = phase_reporter(quiet=quiet)
    engine = db.engine(create=True)
    _hard_prompts(engine, say)
    for source, path in resources.DEMO_SOURCES:
        data = path()
        with file_progress(quiet=quiet) as progress:
            (report,) = db.ingest(data, source=source, progress=progress).files
        if report.already_ingested_as is not None:
            click.echo(
                f"demo data {data.name} already ingested (batch {report.already_ingested_as})"
            )
        else:
            click.echo(
                f"ingested {report.inserted} battles ({report.excluded} excluded: "
                f"a model playing itself) from {data.name}"
            )
    _annotate(engine, resources.demo_models())
    # The human votes on the overall board and its categories; the judge's verdicts
    # (the only battles that name a judge) on their own source boards.
    runs = [(RebuildOptions(rounds=rounds, exclude_judges=(resources.DEMO_JUDGE,)), True)]
    runs += [
        (RebuildOptions(rounds=rounds, source=source), False)
        for source, _ in resources.DEMO_SOURCES[1:]
    ]
    ids: list[int] = []
    seconds = 0.0
    for opts, all_categories in runs:
        try:
            result = rebuild(engine, opts, all_categories=all_categories, progress=say)
        except RebuildError as exc:
            raise click.ClickException(f"{exc}; no snapshot was written") from None
        ids += result.snapshot_ids
        seconds += result.seconds
    click.echo(f"rebuilt {len(ids)} boards in {seconds:.1f}s (snapshots {ids[0]}-{ids[-1]})")
    db.publish(out_dir, attribution=resources.DEMO_ATTRIBUTION, progress=say)
    click.echo(f"published {out_dir}/index.html")


def _hard_prompts(engine, say) -> None:
    """LMArena's Hard Prompts (>= 6 of the 7 criteria), defined before the ingest
    links it, and re-linked on a database where it is missing or differs."""
    from arena.store.derived import HARD_PROMPTS, define, load_rules

    with engine.begin() as conn:
        if HARD_PROMPTS not in load_rules(conn):
            say(f"categories: {HARD_PROMPTS.key} = {HARD_PROMPTS.describe()}")
            define(conn, HARD_PROMPTS)


def _annotate(engine, path) -> None:
    """Organisation, licence and link of the demo's models (those in the database)."""
    from sqlalchemy import select

    from arena.db.models import Model
    from arena.store.annotate import annotate, read_annotations

    with engine.begin() as conn:
        known = set(conn.execute(select(Model.name)).scalars())
        annotate(conn, [a for a in read_annotations(path) if a.model in known])


COMMANDS = [demo_command]
