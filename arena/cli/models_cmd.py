"""``arena models``: the models in the store and their records."""

from __future__ import annotations

import click

from arena.cli.output import emit, format_option

COLUMNS = ["model", "battles", "wins", "losses", "ties", "excluded", "organisation", "hidden"]


@click.group("models", invoke_without_command=True)
@format_option
@click.pass_context
def models_group(ctx: click.Context, fmt: str) -> None:
    """List models with their battles, wins, losses and ties.

    Ties count both tie labels; battles a model plays against itself are kept
    but excluded from ratings and counted separately.

    \b
    Example:
        arena models
        arena models --format json
    """
    if ctx.invoked_subcommand is not None:
        return
    result = ctx.obj.arena().models()
    doc = result.to_dict()
    emit(doc["models"], COLUMNS, fmt, json_obj=doc)


COMMANDS = [models_group]

from arena.cli.annotate_cmd import annotate_command  # noqa: E402

models_group.add_command(annotate_command)
