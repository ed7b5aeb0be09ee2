"""The plan of one snapshot: pair probabilities, drawn battles, power per pair.

What ``arena plan`` and ``arena plan power`` compute, from a snapshot's
:class:`~arena.plan.store.PlanInputs`: the ranked models' pairs with the
probability a scheduler should give each (:func:`plan_weights`), battles
drawn from those probabilities (:func:`plan_draws`), and how many more direct
battles separate two models (:func:`plan_power`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.core.defaults import DEFAULT_PLAN_RULE, DEFAULT_POWER, DEFAULT_SEED, PLAN_MAX_LISTED
from arena.core.errors import OptionError, check_at_least
from arena.plan.pairs import draw_streamed, plan_pairs
from arena.plan.store import PlanInputs
from arena.plan.weights import battles_needed, current_power, draw_pairs

__all__ = ["MAX_LISTED", "PairList", "plan_draws", "plan_power", "plan_weights"]

#: Pairs listed without ``top`` (about 1,400 ranked models); beyond, draws stream too.
MAX_LISTED = PLAN_MAX_LISTED


@dataclass(frozen=True)
class PairList:
    """Pairs of a plan, most probable first (``pairs_total``: pairs planned in all)."""

    pairs: tuple[dict[str, Any], ...]
    pairs_total: int


def _ranked(inp: PlanInputs) -> tuple[np.ndarray, int]:
    models = np.flatnonzero(inp.ranked)
    return models, models.size * (models.size - 1) // 2


def plan_weights(
    inp: PlanInputs, *, rule: str = DEFAULT_PLAN_RULE, top: int | None = None
) -> PairList:
    """Every pair of ranked models with its battles and sampling probability.

    Raises
    ------
    OptionError
        ``top`` below 1, or no ``top`` on a board of more than :data:`MAX_LISTED` pairs.
    ValueError
        An unknown ``rule``.
    """
    check_at_least("top", top, 1)
    models, n_pairs = _ranked(inp)
    if top is None and n_pairs > MAX_LISTED:
        raise OptionError(
            "top",
            f"{models.size:,} ranked models make {n_pairs:,} pairs, too many to list: "
            "give {name} K for the K most probable, or draw N battles instead",
        )
    planned = plan_pairs(
        inp.rating,
        inp.samples,
        inp.pair_battles,
        models=models,
        rule=rule,
        level=inp.level,
        top=top,
    )
    plan = planned.plan
    order = np.argsort(-plan.probability, kind="stable")
    pairs = tuple(
        {
            "model_a": inp.names[plan.i[k]],
            "model_b": inp.names[plan.j[k]],
            "battles": int(plan.battles[k]),
            "probability": float(plan.probability[k]),
        }
        for k in order
    )
    return PairList(pairs, int(planned.n_pairs))


def plan_draws(
    inp: PlanInputs, n: int, *, rule: str = DEFAULT_PLAN_RULE, seed: int = DEFAULT_SEED
) -> tuple[tuple[str, str], ...]:
    """``n`` battles drawn from the plan's probabilities, each in a shown order (a fair coin).

    With every pair's probability in hand (up to :data:`MAX_LISTED` pairs) these
    are the draws of :func:`arena.plan.weights.draw_pairs`; beyond, the pairs
    are streamed (:func:`arena.plan.pairs.draw_streamed`).
    """
    check_at_least("n", n, 1)
    models, n_pairs = _ranked(inp)
    args = (inp.rating, inp.samples, inp.pair_battles)
    kwargs: dict[str, Any] = {"models": models, "rule": rule, "level": inp.level}
    if n_pairs <= MAX_LISTED:
        first, second = draw_pairs(plan_pairs(*args, **kwargs).plan, n, seed=seed)
    else:
        first, second = draw_streamed(*args, n, seed=seed, **kwargs)
    return tuple(
        (inp.names[a], inp.names[b]) for a, b in zip(first.tolist(), second.tolist(), strict=True)
    )


def plan_power(
    inp: PlanInputs, models: tuple[str, ...] | list[str] = (), *, power: float = DEFAULT_POWER
) -> tuple[dict[str, Any], ...]:
    """Battles needed to separate two models, or every adjacent ranked pair (no ``models``).

    Closed form at the board's level: the current difference taken as the
    truth and the snapshot's bootstrap SE of the difference; ``battles_needed``
    is None when no number of battles is enough (the two estimated equal).

    Raises
    ------
    OptionError
        ``power`` outside (0, 1), or ``models`` neither two names nor none.
    KeyError
        A model not on the board (the message names it and the board).
    """
    if not 0 < power < 1:
        raise OptionError("power", "{name} must be between 0 and 1")
    if len(models) == 2:
        pairs = [(inp.index(models[0]), inp.index(models[1]))]
    elif not models:
        ranked = np.flatnonzero(inp.ranked)
        order = ranked[np.argsort(-inp.rating[ranked], kind="stable")]
        pairs = list(zip(order[:-1].tolist(), order[1:].tolist(), strict=True))
    else:
        raise OptionError("models", "give two {name}, or none for every adjacent ranked pair")
    i = np.array([p[0] for p in pairs], dtype=int)
    j = np.array([p[1] for p in pairs], dtype=int)
    delta = inp.rating[i] - inp.rating[j]
    se = (inp.samples[:, i] - inp.samples[:, j]).std(axis=0, ddof=1)
    need = battles_needed(delta, se, level=inp.level, power=power)
    now = current_power(delta, se, level=inp.level)
    return tuple(
        {
            "model_a": inp.names[a],
            "model_b": inp.names[b],
            "difference": float(d),
            "se": float(s),
            "power_now": float(p),
            "battles_needed": int(k) if np.isfinite(k) else None,
        }
        for a, b, d, s, p, k in zip(i, j, delta, se, now, need, strict=True)
    )
