"""``arena categories``: the categories in the store, their labels and battles."""

from __future__ import annotations

import click

from arena.cli.output import emit, format_option

COLUMNS = ["key", "label", "source", "battles"]


@click.group("categories", invoke_without_command=True)
@format_option
@click.pass_context
def categories_group(ctx: click.Context, fmt: str) -> None:
    """List category keys with the label the published site shows and their battles.

    SOURCE says where a label comes from: "set" (stored with `arena categories
    label`), "default" (arena's names for LMArena's keys) or "key" (made from
    the key's spelling).

    \b
    Example:
        arena categories
        arena categories --format json
        arena categories label if "Instruction following"
    """
    if ctx.invoked_subcommand is not None:
        return
    doc = ctx.obj.arena().categories().to_dict()
    emit(doc["categories"], COLUMNS, fmt, json_obj=doc)


@categories_group.command("label")
@click.argument("key")
@click.argument("name")
@click.pass_obj
def label_command(app, key: str, name: str) -> None:
    """Show category KEY as NAME on the published site ("" restores the default).

    The label appears in the navigation, page titles, headings and the
    downloads' metadata from the next `arena publish`; it changes no rating.

    \b
    Example:
        arena categories label criteria.domain_knowledge "Hard prompts: expertise"
        arena categories label if ""
    """
    shown = app.arena().label_category(key, name).label
    click.echo(f"category {key} is shown as {shown!r}")


COMMANDS = [categories_group]
