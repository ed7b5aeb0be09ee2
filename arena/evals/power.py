"""Sample-size planning: how many items are needed to detect an accuracy gap.

Closed forms for a two-sided test at ``alpha`` with the given ``power``:

* unpaired (two independent item sets, pooled two-proportion z-test)::

      n = (z_a sqrt(2 pbar (1 - pbar)) + z_b sqrt(pA (1 - pA) + pB (1 - pB)))^2 / (pA - pB)^2

* paired (same items, McNemar; Connor 1987) with ``p10`` the share of items only
  A gets right and ``p01`` the share only B gets right, ``psi = p10 + p01``,
  ``delta = p10 - p01``::

      n = (z_a sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2

``z_a`` is the normal ``1 - alpha/2`` quantile, ``z_b`` the ``power`` quantile.
The simulation functions check a plan by running the actual test many times.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri
from scipy.stats import norm

from arena.core.errors import ArgumentError
from arena.evals.binomial import EXACT_BELOW, mcnemar_pvalues
from arena.evals.checks import check_count, check_probability, check_rng

__all__ = [
    "items_needed",
    "items_needed_paired",
    "simulate_power",
    "simulate_power_paired",
]


def _z(alpha: float, power: float) -> tuple[float, float]:
    alpha = check_probability(alpha, "alpha")
    power = check_probability(power, "power")
    return float(ndtri(1.0 - alpha / 2.0)), float(ndtri(power))


def items_needed(p_a: float, p_b: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Items per model to detect accuracy ``p_a`` vs ``p_b`` on separate item sets.

    Returns the smallest integer ``n`` at or above the closed form (module doc).
    """
    p_a = check_probability(p_a, "p_a")
    p_b = check_probability(p_b, "p_b")
    if p_a == p_b:
        raise ArgumentError("p_a and p_b must differ")
    za, zb = _z(alpha, power)
    pbar = (p_a + p_b) / 2.0
    num = za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
    return math.ceil(num**2 / (p_a - p_b) ** 2)


def items_needed_paired(
    p_a_only: float, p_b_only: float, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Shared items to detect a gap with McNemar's test (Connor's formula).

    Parameters
    ----------
    p_a_only, p_b_only : float
        Expected share of items that only A (resp. only B) gets right. The
        accuracy gap is their difference; their sum is the discordance.
    """
    p10 = check_probability(p_a_only, "p_a_only")
    p01 = check_probability(p_b_only, "p_b_only")
    if p10 + p01 > 1:
        raise ArgumentError("p_a_only + p_b_only must not exceed 1")
    if p10 == p01:
        raise ArgumentError("p_a_only and p_b_only must differ")
    za, zb = _z(alpha, power)
    psi, delta = p10 + p01, p10 - p01
    num = za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)
    return math.ceil(num**2 / delta**2)


def simulate_power(
    n_items: int,
    p_a: float,
    p_b: float,
    rng,
    *,
    alpha: float = 0.05,
    n_sim: int = 10000,
) -> float:
    """Share of ``n_sim`` simulated unpaired experiments in which the pooled
    two-sided two-proportion z-test rejects at ``alpha``.

    Draws ``rng.binomial(n_items, p_a, n_sim)`` then ``rng.binomial(n_items, p_b, n_sim)``.
    """
    n = check_count(n_items, "n_items")
    p_a = check_probability(p_a, "p_a", open_interval=False)
    p_b = check_probability(p_b, "p_b", open_interval=False)
    check_probability(alpha, "alpha")
    n_sim = check_count(n_sim, "n_sim")
    check_rng(rng)
    ka = rng.binomial(n, p_a, n_sim)
    kb = rng.binomial(n, p_b, n_sim)
    pool = (ka + kb) / (2.0 * n)
    se = np.sqrt(pool * (1 - pool) * 2.0 / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (ka - kb) / n / se
    p = np.where(se > 0, 2 * norm.sf(np.abs(z)), 1.0)
    return float(np.mean(p <= alpha))


def simulate_power_paired(
    n_items: int,
    p_a_only: float,
    p_b_only: float,
    rng,
    *,
    alpha: float = 0.05,
    n_sim: int = 10000,
    continuity: bool = True,
    exact_below: int = EXACT_BELOW,
) -> float:
    """Share of simulated paired experiments in which McNemar's test rejects.

    Each experiment draws the discordant counts as
    ``rng.multinomial(n_items, [p_a_only, p_b_only, rest], size=n_sim)``.

    Parameters
    ----------
    continuity : bool, default True
        True runs the test exactly as :func:`arena.evals.mcnemar` does (exact
        binomial below ``exact_below`` discordant pairs, continuity-corrected
        chi-square otherwise), which is slightly conservative compared with
        the planning formula. False uses the uncorrected chi-square test that
        the formula assumes.
    """
    n = check_count(n_items, "n_items")
    p10 = check_probability(p_a_only, "p_a_only", open_interval=False)
    p01 = check_probability(p_b_only, "p_b_only", open_interval=False)
    if p10 + p01 > 1:
        raise ArgumentError("p_a_only + p_b_only must not exceed 1")
    check_probability(alpha, "alpha")
    n_sim = check_count(n_sim, "n_sim")
    check_rng(rng)
    draws = rng.multinomial(n, [p10, p01, max(0.0, 1.0 - p10 - p01)], size=n_sim)
    b, c = draws[:, 0], draws[:, 1]
    if continuity:
        p = mcnemar_pvalues(b, c, exact_below=exact_below)
    else:
        total = b + c
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = (b - c) ** 2 / total
        p = np.where(total > 0, norm.sf(np.sqrt(stat)) * 2, 1.0)
    return float(np.mean(p <= alpha))
