"""``arena categories``: the categories in the store, their labels and battles."""

from __future__ import annotations

import click

from arena.cli.output import emit, format_option

COLUMNS = ["key", "label", "source", "battles", "rule"]


@click.group("categories", invoke_without_command=True)
@format_option
@click.pass_context
def categories_group(ctx: click.Context, fmt: str) -> None:
    """List category keys with the label the published site shows and their battles.

    SOURCE says where a label comes from: "set" (stored with `arena categories
    label`), "default" (arena's names for LMArena's keys) or "key" (made from
    the key's spelling). RULE is a derived category's rule (`arena categories
    derive`), empty for a tag of the data.

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
        arena categories label criteria.domain_knowledge "Criterion: expertise"
        arena categories label if ""
    """
    shown = app.arena().label_category(key, name).label
    click.echo(f"category {key} is shown as {shown!r}")


@categories_group.command("derive")
@click.argument("key")
@click.option(
    "--tags",
    default=None,
    help="Comma-separated category keys the rule counts (e.g. criteria.complexity,...).",
)
@click.option(
    "--at-least",
    "at_least",
    type=int,
    default=None,
    help="Battles with at least this many of the tags belong to KEY (default: all of them).",
)
@click.option("--note", default="", help="Where the rule comes from; the site shows it.")
@click.option("--remove", is_flag=True, help="Forget the rule of KEY, its links and counts.")
@click.pass_obj
def derive_command(app, key: str, tags: str | None, at_least: int | None, note: str, remove: bool):
    """Define category KEY by a rule over tags: battles carrying at least N of them.

    Every stored battle is linked now, and every battle ingested later by the
    ingest that stores it; `arena rebuild --all-categories` then builds its
    board like any other. Defining KEY again replaces its rule. LMArena's
    Hard Prompts is the battles that meet at least 6 of the 7 criteria:

    \b
    Example:
        arena categories derive hard_prompts --at-least 6 --tags \\
          criteria.complexity,criteria.creativity,criteria.domain_knowledge,\\
          criteria.problem_solving,criteria.real_world,criteria.specificity,\\
          criteria.technical_accuracy
        arena categories derive hard_prompts --remove
    """
    db = app.arena()
    if remove:
        db.drop_category(key)
        click.echo(f"derived category {key} removed (its snapshots stay)")
        return
    done = db.derive_category(key, (tags or "").split(","), at_least=at_least, note=note)
    verb = "replaced" if done.replaced else "defined"
    click.echo(f"category {key} {verb}: {done.rule.describe()}; {done.battles:,} battles")


COMMANDS = [categories_group]
