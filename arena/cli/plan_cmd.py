"""``arena plan``: which battles to collect next, and how many are needed."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    component_option,
    format_option,
    seed_option,
    snapshot_option,
    source_option,
)
from arena.cli.output import emit

WEIGHT_COLUMNS = ["model_a", "model_b", "battles", "probability"]
#: Pairs listed without --top (about 1,400 ranked models); beyond, draws stream too.
MAX_LISTED = 1_000_000
POWER_COLUMNS = ["model_a", "model_b", "difference", "se", "power_now", "battles_needed"]


def _inputs(app, snapshot_id, category, component=None, source=None):
    from arena.boards.compare import resolve_board
    from arena.boards.snapshots import SnapshotError
    from arena.plan.store import plan_inputs

    with app.engine().connect() as conn:
        try:
            board = resolve_board(
                conn, snapshot_id=snapshot_id, category=category, source=source, component=component
            )
            snapshot_id = board.snapshot.id
            inputs = plan_inputs(conn, snapshot_id)
        except SnapshotError as exc:
            raise click.ClickException(str(exc)) from None
    if inputs is None:
        raise click.ClickException(f"no snapshot {snapshot_id}")
    return inputs


PLAN_CATEGORY = "Plan for the latest snapshot of this category's board."
PLAN_SOURCE = "Plan for the latest snapshot of this source's board (`arena rebuild --source`)."


@click.group("plan", invoke_without_command=True)
@snapshot_option
@category_option(PLAN_CATEGORY)
@source_option(PLAN_SOURCE)
@component_option
@click.option(
    "--rule",
    type=click.Choice(["paper", "tiers"]),
    default="paper",
    show_default=True,
    help="paper: shrink every interval fastest (Chiang et al. eq. 9); tiers: settle undecided separations.",
)
@click.option(
    "--n",
    "n_draws",
    type=int,
    default=None,
    help="Draw N battles (pairs in shown order) instead of listing weights.",
)
@click.option(
    "--top",
    type=int,
    default=None,
    help=f"List only the K most probable pairs (needed above {MAX_LISTED:,} pairs).",
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
    import numpy as np

    from arena.plan.pairs import draw_streamed, plan_pairs
    from arena.plan.weights import draw_pairs

    if n_draws is not None and n_draws < 1:
        raise click.BadParameter("must be at least 1", param_hint="--n")
    if top is not None and top < 1:
        raise click.BadParameter("must be at least 1", param_hint="--top")
    inp = _inputs(ctx.obj, snapshot_id, category, component, source)
    models = np.flatnonzero(inp.ranked)
    n_pairs = models.size * (models.size - 1) // 2
    args = (inp.rating, inp.samples, inp.pair_battles)
    kwargs = {"models": models, "rule": rule, "level": inp.level}
    try:
        if n_draws is not None:
            if n_pairs <= MAX_LISTED:
                # every pair's probability in hand: the draws of arena.plan.weights.draw_pairs
                plan = plan_pairs(*args, **kwargs).plan
                first, second = draw_pairs(plan, n_draws, seed=seed)
            else:
                first, second = draw_streamed(*args, n_draws, seed=seed, **kwargs)
        else:
            if top is None and n_pairs > MAX_LISTED:
                raise click.ClickException(
                    f"{models.size:,} ranked models make {n_pairs:,} pairs, too many to list: "
                    "give --top K for the K most probable, or --n N to draw N battles"
                )
            planned = plan_pairs(*args, **kwargs, top=top)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if n_draws is not None:
        rows = [
            {"model_a": inp.names[a], "model_b": inp.names[b]}
            for a, b in zip(first.tolist(), second.tolist(), strict=True)
        ]
        emit(rows, ["model_a", "model_b"], fmt)
        return
    plan = planned.plan
    order = np.argsort(-plan.probability, kind="stable")
    rows = [
        {
            "model_a": inp.names[plan.i[k]],
            "model_b": inp.names[plan.j[k]],
            "battles": int(plan.battles[k]),
            "probability": float(plan.probability[k]),
        }
        for k in order
    ]
    doc = {"snapshot": inp.snapshot.id, "rule": rule, "pairs": rows}
    if top is not None:
        doc = {**doc, "top": top, "pairs_total": planned.n_pairs}
    emit(rows, WEIGHT_COLUMNS, fmt, json_obj=doc, rounded=True)


@plan_group.command("power")
@click.argument("models", nargs=-1)
@snapshot_option
@category_option(PLAN_CATEGORY)
@source_option(PLAN_SOURCE)
@component_option
@click.option("--power", "target", type=float, default=0.8, show_default=True, help="Target power.")
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
    import numpy as np

    from arena.plan.weights import battles_needed, current_power

    if not 0 < target < 1:
        raise click.BadParameter("must be between 0 and 1", param_hint="--power")
    inp = _inputs(app, snapshot_id, category, component, source)
    if len(models) == 2:
        try:
            pairs = [(inp.index(models[0]), inp.index(models[1]))]
        except KeyError as exc:
            raise click.ClickException(exc.args[0]) from None
    elif not models:
        ranked = np.flatnonzero(inp.ranked)
        order = ranked[np.argsort(-inp.rating[ranked], kind="stable")]
        pairs = list(zip(order[:-1].tolist(), order[1:].tolist(), strict=True))
    else:
        raise click.UsageError("give two models, or none for every adjacent ranked pair")
    i = np.array([p[0] for p in pairs], dtype=int)
    j = np.array([p[1] for p in pairs], dtype=int)
    delta = inp.rating[i] - inp.rating[j]
    se = (inp.samples[:, i] - inp.samples[:, j]).std(axis=0, ddof=1)
    need = battles_needed(delta, se, level=inp.level, power=target)
    now = current_power(delta, se, level=inp.level)
    rows = [
        {
            "model_a": inp.names[a],
            "model_b": inp.names[b],
            # unrounded: JSON and CSV round every float alike (arena.core.formats.tidy),
            # the table prints its own short form
            "difference": float(d),
            "se": float(s),
            "power_now": float(p),
            "battles_needed": int(k) if np.isfinite(k) else None,
        }
        for a, b, d, s, p, k in zip(i, j, delta, se, now, need, strict=True)
    ]
    emit(
        rows,
        POWER_COLUMNS,
        fmt,
        json_obj={"snapshot": inp.snapshot.id, "level": inp.level, "power": target, "pairs": rows},
        rounded=True,
    )


COMMANDS = [plan_group]
