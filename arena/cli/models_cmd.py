"""``arena models``: the models in the store and their records."""

from __future__ import annotations

import click

from arena.cli.options import source_option
from arena.cli.output import emit, format_option

#: Columns around the per-source ones (``source:NAME``, one per source, after battles).
COLUMNS = [
    "model",
    "battles",
    "wins",
    "losses",
    "ties",
    "excluded",
    "organisation",
    "hidden",
    "same_as",
]


@click.group("models", invoke_without_command=True)
@source_option("Count only this source's battles (the battles its board counts).")
@format_option
@click.pass_context
def models_group(ctx: click.Context, source: str | None, fmt: str) -> None:
    """List models with their battles, per source, wins, losses and ties.

    A column per source (`source:NAME`) splits each model's battles: human
    votes and judge verdicts are never rated on one board unless asked, so a
    board's battle counts are those of its source (--source NAME lists that
    source alone). Ties count both tie labels; battles a model plays against
    itself are kept but excluded from ratings and counted separately.

    \b
    Example:
        arena models
        arena models --source lmarena-140k
        arena models --format json
    """
    if ctx.invoked_subcommand is not None:
        return
    result = ctx.obj.arena().models(source=source)
    columns = [*COLUMNS[:2], *(f"source:{s}" for s in result.sources), *COLUMNS[2:]]
    emit(result.row_dicts(), columns, fmt, json_obj=result.to_dict())


COMMANDS = [models_group]

from arena.cli.annotate_cmd import annotate_command  # noqa: E402

models_group.add_command(annotate_command)
from arena.cli.alias_cmd import alias_command, aliases_command, unalias_command  # noqa: E402

models_group.add_command(alias_command)
models_group.add_command(unalias_command)
models_group.add_command(aliases_command)
