"""Ranks from intervals and from the bootstrap: rank (UB) and rank intervals.

Pure functions of arrays indexed by model (``0 .. M-1``); see ``docs/tiers.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL
from arena.core.errors import ArgumentError
from arena.engine.validate import check_level, interval_arrays, sample_matrix

__all__ = [
    "RankInterval",
    "rank_interval",
    "rank_lb",
    "rank_ub",
]


def rank_ub(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Rank upper bound as LMArena shows it.

    ``rank_ub[i] = 1 + #{j : low[j] > high[i]}``: one plus the number of models
    whose interval lies entirely above model ``i``'s interval.  It is the best
    rank the intervals cannot rule out, so several models can share it.

    Parameters
    ----------
    low, high : array_like, shape (M,)
        Interval bounds, ``low <= high``.

    Returns
    -------
    numpy.ndarray of int, shape (M,)
        Ranks in ``1 .. M``.

    Notes
    -----
    O(M log M): sort the lower bounds once and count, for every ``high[i]``,
    how many lower bounds exceed it.  A model never counts itself because its
    own ``low <= high``.  The comparison is strict, so touching intervals
    (``low[j] == high[i]``) do not separate.
    """
    lo, hi = interval_arrays(low, high)
    sorted_low = np.sort(lo)
    # searchsorted(side="right") = number of lower bounds <= high[i].
    above = lo.size - np.searchsorted(sorted_low, hi, side="right")
    return (1 + above).astype(np.int64)


def rank_lb(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Worst rank the intervals allow: the number of models not surely worse.

    ``rank_lb[i] = #{j : high[j] >= low[i]}`` (the model itself included):
    every model whose interval is not entirely below model ``i``'s could sit
    above it.  With :func:`rank_ub` it brackets the rank the data support,
    ``rank_ub <= rank_lb``; the board shows both as a rank interval.
    Arguments and result (int ranks in ``1 .. M``) as for :func:`rank_ub`.

    Notes
    -----
    O(M log M), the mirror image of :func:`rank_ub`.  Touching intervals
    (``high[j] == low[i]``) do not separate.
    """
    lo, hi = interval_arrays(low, high)
    sorted_high = np.sort(hi)
    # searchsorted(side="left") = number of upper bounds < low[i] (surely worse)
    below = np.searchsorted(sorted_high, lo, side="left")
    return (lo.size - below).astype(np.int64)


@dataclass(frozen=True)
class RankInterval:
    """Per-model bootstrap rank interval (1 = best).

    Attributes
    ----------
    low, high : numpy.ndarray of int, shape (M,)
        Best and worst plausible rank at ``level`` (marginal, per model; not
        simultaneous over models).
    level : float
    """

    low: np.ndarray
    high: np.ndarray
    level: float


def rank_interval(samples: np.ndarray, *, level: float = DEFAULT_LEVEL) -> RankInterval:
    """Marginal rank interval of each model from the bootstrap.

    In every round the models are ranked by their bootstrap rating (1 = best,
    ties share the best rank); the interval is the ``(alpha/2, 1 - alpha/2)``
    quantile of each model's ranks, rounded outwards to whole ranks.

    Parameters
    ----------
    samples : array_like, shape (rounds, M)
        Bootstrap ratings.
    level : float, default DEFAULT_LEVEL (0.95)
        Per-model level.

    Returns
    -------
    RankInterval

    Notes
    -----
    O(rounds * M log M) time and O(rounds * M) memory.  The intervals are
    per model: with many models some true ranks will fall outside their
    intervals; they are a readable summary, not a simultaneous statement.
    """
    alpha = 1.0 - check_level(level)
    s = np.asarray(samples, dtype=np.float64)
    if s.ndim != 2 or s.shape[1] < 1:
        raise ArgumentError(f"samples must have shape (rounds, M), got {s.shape}")
    s = sample_matrix(s, s.shape[1])
    from scipy.stats import rankdata  # only here: scipy.stats costs ~0.5 s to import

    ranks = rankdata(-s, method="min", axis=1)
    low = np.quantile(ranks, alpha / 2.0, axis=0, method="lower")
    high = np.quantile(ranks, 1.0 - alpha / 2.0, axis=0, method="higher")
    return RankInterval(
        low=np.asarray(low, dtype=np.int64),
        high=np.asarray(high, dtype=np.int64),
        level=float(level),
    )
