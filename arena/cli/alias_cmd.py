"""``arena models alias / unalias / aliases``: one model spelled two ways by two sources."""

from __future__ import annotations

import click

from arena.cli.output import emit, format_option


@click.command("alias")
@click.argument("alias", required=False)
@click.argument("canonical", required=False)
@click.option("--reason", default=None, help="Why the two names are one model (stored, shown).")
@click.option(
    "--from",
    "from_file",
    type=click.Path(exists=True, dir_okay=False),
    help="CSV file with columns alias,canonical,reason ('#' lines are comments).",
)
@click.pass_obj
def alias_command(app, alias, canonical, reason, from_file) -> None:
    """Say that model ALIAS is model CANONICAL spelled another way.

    Two sources often name one release differently (a judge's
    claude-3.7-sonnet is the human board's claude-3-7-sonnet-20250219). An
    alias never changes a rating or merges battles: `arena agreement` matches
    the two boards' rows through it, and `arena models` shows it. Both names
    must be models of the database; no chains. Never alias variants (reasoning
    effort, thinking budget, another date): they are other models.

    \b
    Example:
        arena models alias claude-3.7-sonnet claude-3-7-sonnet-20250219 --reason "one release"
        arena models alias --from aliases.csv
    """
    if from_file is None and (alias is None or canonical is None):
        raise click.UsageError("give ALIAS and CANONICAL, or --from FILE")
    changed = app.arena().alias(alias, canonical, reason=reason, from_file=from_file).changed
    click.echo(f"stored {changed} alias{'es' if changed != 1 else ''}")


@click.command("unalias")
@click.argument("aliases", nargs=-1, required=True)
@click.pass_obj
def unalias_command(app, aliases) -> None:
    """Remove aliases (the names given to `arena models alias` first).

    \b
    Example:
        arena models unalias claude-3.7-sonnet
    """
    changed = app.arena().unalias(*aliases).changed
    click.echo(f"removed {changed} alias{'es' if changed != 1 else ''}")


@click.command("aliases")
@format_option
@click.pass_obj
def aliases_command(app, fmt: str) -> None:
    """List model aliases: each alias, its canonical model and why they are one.

    \b
    Example:
        arena models aliases
        arena models aliases --format csv
    """
    result = app.arena().aliases()
    rows = [a.to_dict() for a in result.aliases]
    emit(rows, ["alias", "canonical", "reason"], fmt, json_obj=result.to_dict())
