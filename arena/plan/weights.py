"""What to collect next: sampling weights per pair and battles needed for power.

Pure numpy/scipy over a board's ratings, its bootstrap samples (for the
uncertainty of each difference) and the battles already played per pair.

Sampling rules
--------------
* ``paper`` -- Chiang et al. (2024), eq. 9: ``P(pair) ∝ sqrt(s2/n) - sqrt(s2/(n+1))``,
  the shrinkage of the pair's interval width from one more battle, with
  ``s2 = p(1-p)`` the per-battle variance of the pair's outcome at the
  current ratings and ``n`` its battles so far (an unplayed pair counts as
  half a battle, so its weight is finite and the largest).
* ``tiers`` -- aimed at tier boundaries: pairs of ranked models whose
  separation is undecided.  Weight = the shrinkage above, times the normal
  density of ``|z| - c`` (``z`` the pair's difference over its bootstrap SE,
  ``c`` the critical value): pairs whose verdict one more battle could flip
  come first; clearly separated and hopelessly tied pairs get little.

Battles needed
--------------
For a true difference ``delta`` (logits, taken at the current estimate) and
the current SE ``s0`` of the difference, ``k`` more direct battles add
``k p(1-p)`` to its information, so ``s(k)^-2 = s0^-2 + k p(1-p)``.  A
two-sided test at critical value ``c`` has power ``Phi(|delta|/s(k) - c)``;
80% power needs ``|delta| / s(k) = c + z_0.8``, hence
``k = ((c + z_0.8)^2 / delta^2 - s0^-2) / (p(1-p))`` (0 when already there).
``simulate_power`` checks it by running the test on simulated battles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, ndtr, ndtri

from arena.core.defaults import (
    DEFAULT_LEVEL,
    DEFAULT_PLAN_RULE,
    DEFAULT_POWER,
    DEFAULT_SEED,
    PLAN_RULES,
)
from arena.core.errors import ArgumentError
from arena.engine.scale import SCALE

__all__ = ["PairPlan", "pair_weights", "draw_pairs", "battles_needed", "simulate_power", "RULES"]

RULES = PLAN_RULES
#: Battles an unplayed pair counts as in the paper's rule.
UNPLAYED = 0.5


@dataclass(frozen=True)
class PairPlan:
    """Sampling probabilities over unordered pairs ``(i[k], j[k])``, i < j."""

    i: np.ndarray
    j: np.ndarray
    probability: np.ndarray
    battles: np.ndarray
    rule: str


def _pairs(models: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    iu, ju = np.triu_indices(models.size, k=1)
    return models[iu], models[ju]


def pair_weights(
    rating: np.ndarray,
    samples: np.ndarray,
    pair_battles: np.ndarray,
    *,
    models: np.ndarray | None = None,
    rule: str = DEFAULT_PLAN_RULE,
    level: float = DEFAULT_LEVEL,
) -> PairPlan:
    """Sampling probabilities per pair.

    Parameters
    ----------
    rating : ndarray, shape (M,)
        Ratings (Elo scale).
    samples : ndarray, shape (R, M)
        Bootstrap ratings (for ``rule="tiers"``).
    pair_battles : ndarray, shape (M, M)
        Battles played per unordered pair (symmetric).
    models : ndarray of int, optional
        Models to plan for (default: all).
    rule : {"paper", "tiers"}
    level : float
        Confidence level deciding separation (``tiers``).
    """
    if rule not in RULES:
        raise ArgumentError(f"rule must be one of {RULES}, got {rule!r}")
    models = np.arange(rating.size) if models is None else np.asarray(models)
    if models.size < 2:
        raise ArgumentError("at least two models are needed to plan battles")
    i, j = _pairs(models)
    p = expit((rating[i] - rating[j]) / SCALE)
    s2 = p * (1 - p)
    n = np.maximum(pair_battles[i, j].astype(np.float64), UNPLAYED)
    w = np.sqrt(s2 / n) - np.sqrt(s2 / (n + 1))
    if rule == "tiers":
        diff = samples[:, i] - samples[:, j]
        se = diff.std(axis=0, ddof=1)
        z = np.abs(rating[i] - rating[j]) / np.maximum(se, 1e-9)
        c = float(ndtri(0.5 + level / 2))
        w = w * np.exp(-0.5 * (z - c) ** 2)
    total = w.sum()
    prob = w / total if total > 0 else np.full(w.size, 1.0 / w.size)
    return PairPlan(i, j, prob, pair_battles[i, j].astype(np.float64), rule)


def draw_pairs(plan: PairPlan, n: int, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` battles drawn from the plan; the shown order is a fair coin (position bias cancels)."""
    rng = np.random.default_rng(seed)
    k = rng.choice(plan.probability.size, size=n, p=plan.probability)
    flip = rng.random(n) < 0.5
    first = np.where(flip, plan.j[k], plan.i[k])
    second = np.where(flip, plan.i[k], plan.j[k])
    return first, second


def battles_needed(
    delta: np.ndarray,
    se0: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    power: float = DEFAULT_POWER,
) -> np.ndarray:
    """More direct battles for ``power`` to separate two models (closed form, module docstring).

    Parameters
    ----------
    delta, se0 : array_like
        Difference and its current standard error, in Elo.

    Returns
    -------
    ndarray of float
        Battles (ceil), 0 when the power is already there, inf for ``delta = 0``.
    """
    d = np.abs(np.asarray(delta, dtype=np.float64)) / SCALE
    s0 = np.asarray(se0, dtype=np.float64) / SCALE
    c = float(ndtri(0.5 + level / 2))
    zb = float(ndtri(power))
    p = expit(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = ((c + zb) ** 2 / d**2 - 1.0 / s0**2) / (p * (1 - p))
    need = np.where(d > 0, np.ceil(np.maximum(need, 0.0)), np.inf)
    return need


def current_power(delta: ArrayLike, se0: ArrayLike, *, level: float = DEFAULT_LEVEL) -> np.ndarray:
    """Power of the two-sided test today: ``Phi(|delta|/se0 - c)``."""
    c = float(ndtri(0.5 + level / 2))
    power: np.ndarray = ndtr(np.abs(np.asarray(delta)) / np.asarray(se0) - c)
    return power


def simulate_power(
    delta: float,
    se0: float,
    k: int,
    *,
    level: float = DEFAULT_LEVEL,
    reps: int = 4000,
    seed: int = DEFAULT_SEED,
) -> float:
    """Share of simulated experiments that separate the pair after ``k`` more battles.

    The existing evidence is a normal estimate ``N(delta, se0^2)`` (logits);
    the new battles are Bernoulli draws at the true win probability; the two
    are combined by inverse-variance weighting (the MLE of one pair) and the
    combined estimate is tested at the two-sided critical value.
    """
    rng = np.random.default_rng(seed)
    d, s0 = delta / SCALE, se0 / SCALE
    c = float(ndtri(0.5 + level / 2))
    old = rng.normal(d, s0, size=reps)
    p = expit(d)
    wins = rng.binomial(k, p, size=reps)
    # logit of the new battles' win share (half a battle added to each side keeps it finite)
    new = np.log((wins + 0.5) / (k - wins + 0.5))
    var_new = 1.0 / ((k + 1) * p * (1 - p))
    w_old, w_new = 1 / s0**2, 1 / var_new
    est = (w_old * old + w_new * new) / (w_old + w_new)
    se = 1 / np.sqrt(w_old + w_new)
    return float(np.mean(np.abs(est) / se > c))
