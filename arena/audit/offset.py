"""One-parameter deviations from a fitted Bradley–Terry model, per group of votes.

For votes with a known log-odds ``base`` for the first-shown model, a group's
deviation ``t`` enters as ``logit P = base + t * x`` (``x = 1``: a position
advantage; ``x = +-1`` by side: favouring one model; ``base = 0, x = d``: the
judge's "temperature", 1 = agrees with the board, 0 = votes at random).

Intervals are score (Rao) intervals: the ``t`` whose standardised score
``U(t) / sqrt(V(t))`` lies within ``+-crit``.  They exist when the maximum
likelihood estimate is infinite (a judge who always picks the left answer),
where a Wald interval would not.  ``U`` falls in ``t``, so each end is one
bisection, run for all groups at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

__all__ = ["GroupFit", "group_fit", "tie_variance"]

#: Search range for t (logits); an end at the bound is reported as infinite.
BOUND = 12.0
_ITERS = 60


def tie_variance(p: np.ndarray, tie_share: float) -> np.ndarray:
    """Variance of a half-tie score with mean ``p`` when a share of votes are ties.

    A tie scores 0.5 without Bernoulli noise, so ``Var = p(1-p) - t/4``; kept
    above a tenth of ``p(1-p)`` where the tie share is inconsistent with ``p``.
    """
    v = p * (1 - p)
    return np.maximum(v - tie_share / 4.0, 0.1 * v)


@dataclass(frozen=True)
class GroupFit:
    """Per group: estimate, interval and votes (arrays of shape (G,))."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray


def _z(group, base, x, y, w, tie_share, n_groups, t):
    eta = base + t[group] * x
    p = expit(eta)
    u = np.bincount(group, weights=w * x * (y - p), minlength=n_groups)
    v = np.bincount(group, weights=w * w * x * x * tie_variance(p, tie_share), minlength=n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(v > 0, u / np.sqrt(v), 0.0)


def group_fit(
    group: np.ndarray,
    base: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    *,
    n_groups: int,
    crit: float,
    tie_share: float = 0.0,
    weight: np.ndarray | None = None,
) -> tuple[GroupFit, Callable[[float], np.ndarray]]:
    """Score intervals for one deviation per group.

    Parameters
    ----------
    group : ndarray of intp, shape (B,)
        Group of each vote (0 .. n_groups-1).
    base, x : ndarray, shape (B,)
        ``logit P(first-shown wins) = base + t[group] * x``.
    y : ndarray, shape (B,)
        Credit of the first-shown model (1, 0.5, 0).
    crit : float
        Normal critical value of the interval.
    tie_share : float
        Share of ties, for the score variance.

    Returns
    -------
    GroupFit, and ``z_at(t)``: the standardised score of every group at a common ``t``.
    """
    w = np.ones(y.shape) if weight is None else weight
    n = np.bincount(group, weights=w, minlength=n_groups)

    def z_of(t):
        return _z(group, base, x, y, w, tie_share, n_groups, t)

    def root(target):
        lo = np.full(n_groups, -BOUND)
        hi = np.full(n_groups, BOUND)
        for _ in range(_ITERS):
            mid = 0.5 * (lo + hi)
            above = z_of(mid) > target  # z decreases in t: root lies above mid
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        out = 0.5 * (lo + hi)
        out[out <= -BOUND + 1e-6] = -np.inf
        out[out >= BOUND - 1e-6] = np.inf
        return out

    est, low, high = root(0.0), root(crit), root(-crit)
    empty = n == 0
    for arr in (est, low, high):
        arr[empty] = np.nan

    def z_at(t: float) -> np.ndarray:
        return z_of(np.full(n_groups, float(t)))

    return GroupFit(est, low, high, n), z_at
