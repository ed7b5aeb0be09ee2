"""``arena ingest``: load battle files into the store."""

from __future__ import annotations

import os

import click

from arena.cli.options import DeclaredType, alias_target, declared, hidden_alias, quiet_option
from arena.cli.progress import file_progress
from arena.core.options import option

# `--format` is the output format everywhere else; ingest's input format has its own name.
_INPUT_FORMATS = DeclaredType(option("input_format"))


def _parse_map(values: tuple[str, ...]) -> dict[str, str]:
    mapping = {}
    for item in values:  # the library checks FIELD (one place says which fields exist)
        fld, sep, column = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r}: expected FIELD=COLUMN", param_hint="--map")
        mapping[fld] = column
    return mapping


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True)
@declared("input_format", callback=alias_target)
@hidden_alias("--format", "--input-format", "input_format", type=_INPUT_FORMATS)
@click.option("--source", help="Source label stored on every battle (e.g. human, gpt-4-judge).")
@click.option(
    "--map",
    "maps",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="Read FIELD from COLUMN (repeatable); FIELD= ignores a field, e.g. --map id=.",
)
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="Store the valid rows and write rejected rows to --rejects.",
)
@click.option(
    "--rejects",
    type=click.Path(dir_okay=False, writable=True),
    help="CSV file for rejected rows (required with --skip-invalid).",
)
@declared("max_expand")
@quiet_option
@click.pass_obj
def ingest_command(
    app, paths, input_format, source, maps, skip_invalid, rejects, max_expand, quiet
):
    """Validate battle files and store their battles (one transaction per file).

    PATH may be CSV, JSON lines or a JSON array, gzip-compressed or not; `-`
    reads stdin. LMArena battle records (model_a, model_b, winner), arena-hard
    verdicts (model_a, model_b, verdict) and LLMFAO comparisons (left, right,
    winner) are recognised. A malformed row rejects its whole file unless
    --skip-invalid is given; a model playing itself is stored but excluded from
    ratings. Re-ingesting a file inserts nothing.

    \b
    Example:
        arena ingest battles.csv.gz
        arena ingest judgments.jsonl --source gpt-4-judge
        cat votes.csv | arena ingest - --skip-invalid --rejects rejected.csv
    """
    if skip_invalid and not rejects:
        raise click.UsageError("--skip-invalid needs --rejects FILE (nothing is dropped silently)")
    if rejects and not skip_invalid:
        raise click.UsageError("--rejects is only used with --skip-invalid")
    mapping = _parse_map(maps)
    # a missing file is refused before the database is opened: a failed first
    # ingest must not leave an empty arena.db behind
    for path in paths:
        if path != "-" and not os.path.exists(path):
            raise click.ClickException(f"{path}: no such file; nothing was stored")

    def stored(report) -> None:
        click.echo(_summary(report))
        for warning in report.warnings:
            click.echo(f"warning: {report.file}: {warning}", err=True)

    with file_progress(quiet=quiet) as progress:
        app.arena().ingest(
            paths,
            input_format=input_format,
            source=source,
            map=mapping,
            skip_invalid=skip_invalid,
            rejects=rejects,
            max_expand=max_expand,
            progress=progress,
            on_file=stored,
        )


def _summary(r) -> str:
    if r.already_ingested_as is not None:
        return f"{r.file}: already ingested as batch {r.already_ingested_as} (same sha256); nothing inserted"
    parts = [f"{r.rows_read} rows read", f"{r.inserted} inserted"]
    if r.excluded:
        parts.append(f"{r.excluded} of them excluded from ratings (model plays itself)")
    parts.append(f"{r.duplicates} duplicates skipped")
    parts.append(f"{r.rejected} rejected")
    if r.new_models:
        parts.append(f"{r.new_models} new models")
    return f"{r.file} ({r.format}): " + ", ".join(parts)


COMMANDS = [ingest_command]
