"""``arena sampling``: who got how many battles, and how the server drew the pairs."""

from __future__ import annotations

import click

from arena.cli.options import source_option
from arena.cli.output import emit, format_option

MODEL_COLUMNS = ["name", "organisation", "battles", "share", "served", "first_battle", "last_battle", "hidden"]  # fmt: skip
ORGANISATION_COLUMNS = ["name", "models", "battles", "share", "served", "first_battle", "last_battle", "hidden"]  # fmt: skip


def _rows(rows: list[dict]) -> list[dict]:
    """Table cells: shares in percent, times to the minute."""
    out = []
    for r in rows:
        r = dict(r)
        r["share"] = f"{100 * r['share']:.1f}%"
        for k in ("first_battle", "last_battle"):
            r[k] = (r[k] or "")[:16].replace("T", " ")
        out.append(r)
    return out


@click.command("sampling")
@click.option(
    "--by",
    type=click.Choice(["model", "organisation"]),
    default="model",
    show_default=True,
    help="One row per model, or per organisation (arena models annotate --organisation).",
)
@source_option("Count only this source's battles (a human board and a judge's verdicts apart).")
@format_option
@click.pass_obj
def sampling_command(app, by: str, source: str | None, fmt: str) -> None:
    """Who got how many battles: battles, share and pairs served per model or organisation.

    Battles: rated battles in the store (of --source, else every source);
    share: of all battle appearances (two per battle, so shares add up to
    100%); served: pairs `arena serve` showed with the model, and how its
    pair rule drew them (plan, uniform, new); first/last: when the model's
    first and latest battles were stored (UTC); hidden: kept off the page.

    \b
    Example:
        arena sampling --source lmarena-140k
        arena sampling --by organisation --format csv
    """
    result = app.arena().sampling(source=source)
    doc = result.to_dict()
    rows = doc["models"] if by == "model" else doc["organisations"]
    columns = MODEL_COLUMNS if by == "model" else ORGANISATION_COLUMNS
    if fmt != "table":
        emit(rows, columns, fmt, json_obj=doc)
        return
    counted = f"source {source}" if source else "every source (" + ", ".join(doc["sources"]) + ")"
    click.echo(f"{doc['battles']:,} battles of {counted}")
    if doc["served"]:
        mix = ", ".join(f"{k} {100 * n / doc['served']:.0f}%" for k, n in doc["drawn_by"].items())
        click.echo(
            f"{doc['served']:,} pairs served by arena serve, {doc['first_served']} to "
            f"{doc['last_served']}, drawn by {mix}"
        )
    else:
        click.echo("no pairs served by arena serve yet (battles came from files)")
    emit(_rows(rows), columns, "table")


COMMANDS = [sampling_command]
