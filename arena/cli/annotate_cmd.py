"""``arena models annotate``: set the metadata shown on the published page."""

from __future__ import annotations

import click


@click.command("annotate")
@click.argument("name", required=False)
@click.option("--display-name", default=None, help="Name to show instead of NAME.")
@click.option("--organisation", default=None, help="Who makes the model.")
@click.option("--licence", default=None, help="Licence, e.g. 'Apache-2.0' or 'proprietary'.")
@click.option("--link", default=None, help="http(s) link to the model's page.")
@click.option(
    "--hide/--show",
    "hidden",
    default=None,
    help="Leave the model off the published page (its battles still count).",
)
@click.option(
    "--from",
    "from_file",
    type=click.Path(exists=True, dir_okay=False),
    help="CSV or JSON file with columns model,display_name,organisation,licence,link,hidden.",
)
@click.pass_obj
def annotate_command(
    app, name, display_name, organisation, licence, link, hidden, from_file
) -> None:
    """Set a model's display name, organisation, licence, link or visibility.

    An empty value ("") clears a field. In a --from file an empty cell leaves
    the field unchanged. Unknown model names are an error and nothing is
    changed. Metadata never changes ratings; run `arena publish` to show it.

    \b
    Example:
        arena models annotate gemini-2.5-pro --organisation Google --licence proprietary
        arena models annotate my-test-model --hide
        arena models annotate --from models.csv
    """
    fields = (display_name, organisation, licence, link, hidden)
    if from_file:
        if name or any(v is not None for v in fields):
            raise click.UsageError("give either NAME with options or --from FILE, not both")
    elif not name:
        raise click.UsageError("give a model NAME or --from FILE")
    elif all(v is None for v in fields):
        raise click.UsageError(
            "nothing to set: give --display-name, --organisation, --licence, --link, --hide or --show"
        )
    changed = (
        app.arena()
        .annotate(
            name,
            display_name=display_name,
            organisation=organisation,
            licence=licence,
            link=link,
            hidden=hidden,
            from_file=from_file,
        )
        .changed
    )
    click.echo(f"annotated {changed} model{'s' if changed != 1 else ''}")
