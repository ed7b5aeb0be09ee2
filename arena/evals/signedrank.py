"""Wilcoxon signed-rank test with its method chosen here, not by the installed scipy.

``scipy.stats.wilcoxon`` changed its default method between releases (1.11:
normal approximation whenever there are zeros; 1.13+: an exact or permutation
distribution for small samples), so the same data gave different p-values
(R's ``sleep`` data: 0.0058 against 0.0039). This module fixes the rule and
says which method decided:

- **zeros**: ``"pratt"`` (default) ranks the zero differences with the others
  and then drops them, so the remaining ranks start above 1; ``"wilcox"``
  drops zeros before ranking (R's ``wilcox.test``).
- **ties**: tied absolute differences get their mid-rank.
- **exact** when at most :data:`EXACT_MAX` differences are non-zero: the
  statistic's distribution given the ranks actually observed (every one of the
  ``2^n`` sign patterns equally likely under the null hypothesis), computed by
  counting sign patterns over the doubled ranks, which are integers even with
  mid-ranks and Pratt's offset. Exact for ties and zeros, unlike the
  tie-free tables.
- **normal** otherwise: ``z = (T+ - E - 0.5 sgn) / sd`` with ``E = sum(r) / 2``
  and ``sd^2 = sum(r^2) / 4`` over the non-zero ranks ``r`` (the moments of the
  conditional distribution, which include the tie correction), continuity
  corrected as R does.

With ``zero_method="wilcox"`` and ``method="normal"`` this is R's
``wilcox.test(x, y, paired = TRUE)`` with ties or zeros (its "continuity
correction" branch); with ``method="exact"`` and no ties or zeros it is R's
exact test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from arena.core.errors import ArgumentError

__all__ = ["EXACT_MAX", "SignedRankTest", "signed_rank_test"]

#: Up to this many non-zero differences the exact distribution decides (R's limit is 50).
EXACT_MAX = 50
_ZERO_METHODS = ("pratt", "wilcox")
_METHODS = ("auto", "exact", "normal")


@dataclass(frozen=True)
class SignedRankTest:
    """Result of :func:`signed_rank_test`.

    Attributes
    ----------
    statistic : float
        ``T+``: the sum of the ranks of the positive differences.
    pvalue : float
        Two-sided.
    method : str
        ``"exact"`` or ``"normal"``: what decided.
    zero_method : str
    n_nonzero, n_zero : int
    ties : bool
        Some non-zero absolute differences are tied (mid-ranks used).
    description : str
        One line saying how the p-value was computed.
    """

    statistic: float
    pvalue: float
    method: str
    zero_method: str
    n_nonzero: int
    n_zero: int
    ties: bool
    description: str


def _exact_two_sided(doubled: np.ndarray, t2: int) -> float:
    """P-value from the exact distribution of the (doubled) signed-rank sum."""
    total = int(doubled.sum())
    counts = np.zeros(total + 1)
    counts[0] = 1.0
    for r in doubled:
        r = int(r)
        counts[r:] = counts[r:] + counts[: total + 1 - r].copy()
    counts /= counts.sum()
    cdf = np.cumsum(counts)
    low = cdf[t2]
    high = 1.0 - (cdf[t2 - 1] if t2 > 0 else 0.0)
    return float(min(1.0, 2.0 * min(low, high)))


def signed_rank_test(d, *, zero_method: str = "pratt", method: str = "auto") -> SignedRankTest:
    """Two-sided Wilcoxon signed-rank test of paired differences ``d``.

    Parameters
    ----------
    d : array_like, shape (n,)
        Paired differences (finite).
    zero_method : {"pratt", "wilcox"}, default "pratt"
    method : {"auto", "exact", "normal"}, default "auto"
        ``"auto"``: exact up to :data:`EXACT_MAX` non-zero differences.

    Returns
    -------
    SignedRankTest
        p-value 1 when every difference is zero.
    """
    if zero_method not in _ZERO_METHODS:
        raise ArgumentError(f"zero_method must be one of {_ZERO_METHODS}, got {zero_method!r}")
    if method not in _METHODS:
        raise ArgumentError(f"method must be one of {_METHODS}, got {method!r}")
    x = np.asarray(d, dtype=np.float64).ravel()
    zero = x == 0.0
    n_zero = int(zero.sum())
    if zero_method == "wilcox":
        x = x[~zero]
        zero = np.zeros(x.size, dtype=bool)
    ranks = stats.rankdata(np.abs(x))
    r = ranks[~zero]
    pos = x[~zero] > 0
    n = int(r.size)
    ties = bool(np.unique(np.abs(x[~zero])).size < n)
    zeros_said = "zeros ranked then dropped (Pratt)" if zero_method == "pratt" else "zeros dropped (Wilcoxon)"  # fmt: skip
    if n == 0:
        return SignedRankTest(0.0, 1.0, "exact", zero_method, 0, n_zero, False,
                              "every difference is zero: p = 1")  # fmt: skip
    t_plus = float(r[pos].sum())
    chosen = method if method != "auto" else ("exact" if n <= EXACT_MAX else "normal")
    if chosen == "exact":
        doubled = np.rint(2.0 * r).astype(np.int64)
        pvalue = _exact_two_sided(doubled, int(round(2.0 * t_plus)))
        what = f"exact distribution of the signed ranks given {n} non-zero ranks"
    else:
        mean = float(r.sum()) / 2.0
        sd = float(np.sqrt((r * r).sum() / 4.0))
        dev = t_plus - mean
        z = (dev - 0.5 * np.sign(dev)) / sd if sd > 0 else 0.0
        pvalue = float(min(1.0, 2.0 * stats.norm.sf(abs(z))))
        what = "normal approximation with continuity correction, variance from the ranks"
    tie_said = "; mid-ranks for ties" if ties else ""
    return SignedRankTest(
        statistic=t_plus,
        pvalue=pvalue,
        method=chosen,
        zero_method=zero_method,
        n_nonzero=n,
        n_zero=n_zero,
        ties=ties,
        description=f"Wilcoxon signed-rank: {what}; {zeros_said}{tie_said}",
    )
