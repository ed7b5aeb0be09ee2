"""``arena plan``: which battles to collect next, and how many are needed."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    component_option,
    declared,
    format_option,
    seed_option,
    snapshot_option,
    source_option,
)
from arena.cli.output import emit
from arena.core.defaults import PLAN_MAX_LISTED

WEIGHT_COLUMNS = ["model_a", "model_b", "battles", "probability"]

POWER_COLUMNS = ["model_a", "model_b", "difference", "se", "power_now", "battles_needed"]


PLAN_CATEGORY = "Plan for the latest snapshot of this category's board."
PLAN_SOURCE = "Plan for the latest snapshot of this source's board (`arena rebuild --source`)."


@click.group("plan", invoke_without_command=True)
@snapshot_option
@category_option(PLAN_CATEGORY)
@source_option(PLAN_SOURCE)
@component_option
@declared("rule")
@declared(
    "n",
    "--n",
    "n_draws",
    help="Draw N battles (pairs in shown order) instead of listing weights.",
)
@declared(
    "top",
    help=f"List only the K most probable pairs (needed above {PLAN_MAX_LISTED:,} pairs).",
)
@seed_option
@format_option
@click.pass_context
def plan_group(
    ctx, snapshot_id, category, source, component, rule, n_draws, top, seed, fmt
) -> None:
    """Sampling probabilities per pair for the next battles (ranked models).

    Lists every pair of ranked models with its battles so far and the
    probability a scheduler should give it (with --top K, the K most
    probable); with --n, draws N battles from those probabilities (shown
    order by a fair coin) as model_a,model_b rows. With --component N: the
    pairs of comparable set N's board (`arena rebuild --components separate`).
    Boards of thousands of ranked models are planned a block of pairs at a
    time (see docs/scale.md).

    \b
    Example:
        arena plan --format csv > weights.csv
        arena plan --rule tiers --n 500 --seed 1 --format csv > next.csv
        arena plan --top 1000 --format csv > best-pairs.csv
        arena plan power gemini-2.5-pro o3-2025-04-16
        arena plan --component 2 --format json
    """
    if ctx.invoked_subcommand is not None:
        return
    if n_draws is not None and n_draws < 1:
        raise click.BadParameter("must be at least 1", param_hint="--n")
    if top is not None and top < 1:
        raise click.BadParameter("must be at least 1", param_hint="--top")
    result = ctx.obj.arena().plan(
        snapshot=snapshot_id,
        category=category,
        source=source,
        component=component,
        rule=rule,
        n=n_draws,
        top=top,
        seed=seed,
    )
    doc = result.to_dict()
    if n_draws is not None:
        emit(doc["battles"], ["model_a", "model_b"], fmt, json_obj=doc)
    else:
        # full precision: the table prints its own short form, CSV rounds as JSON does
        emit(list(result.pairs), WEIGHT_COLUMNS, fmt, json_obj=doc, rounded=True)
        if fmt == "table":  # what the columns mean, where a reader would ask
            total = doc.get("pairs_total", len(doc["pairs"]))
            click.echo(
                f"probability: the share of the next battles to give the pair (over all "
                f"{total:,} pairs of ranked models they add up to 1; rule {doc['rule']}); "
                f"battles: played so far (snapshot {doc['snapshot']})"
            )


@plan_group.command("power")
@click.argument("models", nargs=-1)
@snapshot_option
@category_option(PLAN_CATEGORY)
@source_option(PLAN_SOURCE)
@component_option
@declared("power", "--power", "target")
@format_option
@click.pass_obj
def power_command(app, models, snapshot_id, category, source, component, target, fmt) -> None:
    """Battles needed to separate two models, or every adjacent ranked pair.

    Closed form at the board's confidence level: with the current difference
    taken as the truth and the snapshot's bootstrap SE of the difference, how
    many more direct battles give the target power (inf when the two are
    estimated equal: no number of battles is enough then).

    \b
    Example:
        arena plan power gemini-2.5-pro o3-2025-04-16
        arena plan power --format json
    """
    if not 0 < target < 1:
        raise click.BadParameter("must be between 0 and 1", param_hint="--power")
    if len(models) not in (0, 2):
        raise click.UsageError("give two models, or none for every adjacent ranked pair")
    result = app.arena().plan_power(
        models,
        snapshot=snapshot_id,
        category=category,
        source=source,
        component=component,
        power=target,
    )
    # full precision: the table prints its own short form, CSV rounds as JSON does
    emit(list(result.pairs), POWER_COLUMNS, fmt, json_obj=result.to_dict(), rounded=True)


COMMANDS = [plan_group]
