"""Head-to-head verdict between two models from the paired bootstrap."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL
from arena.core.errors import ArgumentError
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
        pair, chosen by the user) and both models are ranked.
    level : float
    reason : str or None
        Why there is no verdict (a model unranked), in words; ``None`` when
        the verdict stands on the interval.
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
    reason: str | None = None

    @property
    def verdict(self) -> str:
        """``"i"`` / ``"j"`` (that model is better), ``"none"`` (cannot tell) or ``"unranked"``."""
        if self.reason is not None:
            return "unranked"
        if self.low > 0:
            return "i"
        if self.high < 0:
            return "j"
        return "none"


def compare_pair(
    samples: np.ndarray,
    i: int,
    j: int,
    *,
    rating: np.ndarray,
    level: float = DEFAULT_LEVEL,
    unranked: dict[int, str] | None = None,
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
    level : float, default DEFAULT_LEVEL (0.95)
        Level of the percentile interval.
    unranked : dict of int to str, optional
        Models that have no rank (few battles, disconnected, no MLE) and the
        reason in words (:func:`unranked_reason`).  A pair with such a model
        gets no verdict: ``significant`` is False, ``reason`` says why, and
        the interval and ``p_better`` are NaN (a collapsed bootstrap or a
        rating on another scale would claim a certainty the data lack).

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
    r = np.asarray(rating, dtype=np.float64)
    if r.ndim != 1 or r.size == 0:
        raise ArgumentError(f"rating must be a non-empty vector, got shape {r.shape}")
    m = r.size
    for name, idx in (("i", i), ("j", j)):
        if not (isinstance(idx, int | np.integer) and 0 <= idx < m):
            raise ArgumentError(f"{name} must be a model index in [0, {m}), got {idx!r}")
    if i == j:
        raise ArgumentError("i and j must be different models")
    reasons = [unranked[k] for k in (i, j) if unranked and k in unranked]
    if not reasons:
        # only ranked pairs need (and must have) finite ratings and samples
        r = rating_vector(r, "rating")
        s = sample_matrix(samples, m)
    else:
        nan = float("nan")
        diff = float(r[i] - r[j])
        return Comparison(
            i=int(i),
            j=int(j),
            diff=diff,
            low=nan,
            high=nan,
            p_better=nan,
            win_prob=float(win_probability(diff)) if np.isfinite(diff) else nan,
            significant=False,
            level=float(level),
            reason="; ".join(reasons),
        )
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
