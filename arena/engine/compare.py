"""Head-to-head verdict between two models from the paired bootstrap."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.engine.scale import win_probability
from arena.engine.validate import check_level, rating_vector, sample_matrix

__all__ = ["Comparison", "compare_pair"]


@dataclass(frozen=True)
class Comparison:
    """Head-to-head verdict between models ``i`` and ``j``.

    Attributes
    ----------
    i, j : int
        Model indices.
    diff : float
        Point rating difference ``rating[i] - rating[j]`` (Elo scale).
    low, high : float
        Paired bootstrap percentile interval of ``R_i - R_j`` at ``level``.
    p_better : float
        Fraction of bootstrap rounds with ``R_i > R_j`` (ties count half).
    win_prob : float
        Bradley-Terry predicted probability that ``i`` beats ``j``:
        ``1 / (1 + 10 ** (-diff / 400))`` (ties not modelled).
    significant : bool
        True iff the interval excludes 0 (not corrected for multiplicity: one
        pair, chosen by the user).
    level : float
    """

    i: int
    j: int
    diff: float
    low: float
    high: float
    p_better: float
    win_prob: float
    significant: bool
    level: float


def compare_pair(
    samples: np.ndarray,
    i: int,
    j: int,
    *,
    rating: np.ndarray,
    level: float = 0.95,
) -> Comparison:
    """Head-to-head comparison of two models from the paired bootstrap.

    Parameters
    ----------
    samples : array_like, shape (rounds, M)
        Bootstrap ratings.
    i, j : int
        The two (distinct) model indices; the verdict is about ``i`` vs ``j``.
    rating : array_like, shape (M,)
        Point ratings.
    level : float, default 0.95
        Level of the percentile interval.

    Returns
    -------
    Comparison

    Notes
    -----
    The interval is the ``(alpha/2, 1 - alpha/2)`` percentile interval of
    ``samples[:, i] - samples[:, j]``; it keeps the correlation of the two
    estimates, which comparing two marginal intervals loses.  The win
    probability uses ``expit(diff * ln(10) / 400)``, which equals the Elo
    formula and does not overflow for extreme differences.
    """
    alpha = 1.0 - check_level(level)
    r = rating_vector(rating, "rating")
    s = sample_matrix(samples, r.size)
    m = r.size
    for name, idx in (("i", i), ("j", j)):
        if not (isinstance(idx, int | np.integer) and 0 <= idx < m):
            raise ValueError(f"{name} must be a model index in [0, {m}), got {idx!r}")
    if i == j:
        raise ValueError("i and j must be different models")
    d = s[:, i] - s[:, j]
    diff = float(r[i] - r[j])
    low, high = np.quantile(d, [alpha / 2.0, 1.0 - alpha / 2.0])
    p_better = (np.count_nonzero(d > 0.0) + 0.5 * np.count_nonzero(d == 0.0)) / d.size
    win_prob = float(win_probability(diff))
    return Comparison(
        i=int(i),
        j=int(j),
        diff=diff,
        low=float(low),
        high=float(high),
        p_better=float(p_better),
        win_prob=win_prob,
        significant=bool(low > 0.0 or high < 0.0),
        level=float(level),
    )
