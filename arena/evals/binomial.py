"""Closed-form tests and intervals for pass/fail counts.

Wilson and Clopper-Pearson intervals for one accuracy, McNemar's test for two
models on the same questions, and the one-sided exact test against a chance
floor (multiple-choice guessing) with chance-corrected accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri
from scipy.stats import beta, binom, chi2

from arena.core.defaults import DEFAULT_LEVEL
from arena.core.errors import ArgumentError
from arena.engine.validate import check_level
from arena.evals.checks import (
    Interval,
    as_binary,
    check_count,
    check_probability,
    same_length,
)

__all__ = [
    "wilson_interval",
    "clopper_pearson_interval",
    "McNemarResult",
    "mcnemar",
    "mcnemar_counts",
    "mcnemar_pvalues",
    "ChanceResult",
    "chance_test",
    "EXACT_BELOW",
]

#: McNemar uses the exact binomial test when fewer than this many discordant pairs.
EXACT_BELOW = 25


def _check_counts(k: int, n: int) -> tuple[int, int]:
    n = check_count(n, "n", minimum=1)
    k = check_count(k, "k", minimum=0)
    if k > n:
        raise ArgumentError(f"k ({k}) must not exceed n ({n})")
    return k, n


def wilson_interval(k: int, n: int, *, level: float = DEFAULT_LEVEL) -> Interval:
    """Wilson score interval for a proportion ``k / n`` (no continuity correction).

    ``(p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` with ``z``
    the normal ``(1 + level) / 2`` quantile. Unlike the normal (Wald) interval
    it stays inside [0, 1] and behaves at 0 and n correct.
    """
    k, n = _check_counts(k, n)
    level = check_level(level)
    z = float(ndtri((1.0 + level) / 2.0))
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), level)


def clopper_pearson_interval(k: int, n: int, *, level: float = DEFAULT_LEVEL) -> Interval:
    """Exact (Clopper-Pearson) interval from beta quantiles; conservative coverage."""
    k, n = _check_counts(k, n)
    level = check_level(level)
    tail = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else float(beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1.0 - tail, k + 1, n - k))
    return Interval(k / n, low, high, level)


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test on the discordant questions of two models.

    Attributes
    ----------
    a_only : int
        Questions A got right and B wrong.
    b_only : int
        Questions B got right and A wrong.
    statistic : float
        The continuity-corrected chi-square statistic, or ``min(a_only, b_only)``
        for the exact test.
    pvalue : float
        Two-sided p-value.
    method : str
        ``"exact"`` or ``"chi2"``.
    """

    a_only: int
    b_only: int
    statistic: float
    pvalue: float
    method: str


def mcnemar_pvalues(a_only, b_only, *, exact_below: int = EXACT_BELOW) -> np.ndarray:
    """Vectorised two-sided McNemar p-values for arrays of discordant counts.

    Exact: ``min(1, 2 * P[Bin(a+b, 1/2) <= min(a, b)])`` when ``a + b < exact_below``;
    otherwise ``chi2.sf((|a - b| - 1)^2 / (a + b), 1)`` (Edwards' continuity
    correction). No discordant pairs gives p = 1.
    """
    b = np.asarray(a_only, dtype=np.int64)
    c = np.asarray(b_only, dtype=np.int64)
    total = b + c
    exact = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(b, c), total, 0.5))
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = (np.maximum(np.abs(b - c) - 1, 0) ** 2) / total
    approx = chi2.sf(stat, 1)
    p = np.where(total < exact_below, exact, approx)
    return np.where(total == 0, 1.0, p)


def mcnemar_counts(a_only: int, b_only: int, *, exact_below: int = EXACT_BELOW) -> McNemarResult:
    """McNemar's test from the two discordant counts."""
    b = check_count(a_only, "a_only", minimum=0)
    c = check_count(b_only, "b_only", minimum=0)
    exact_below = check_count(exact_below, "exact_below", minimum=0)
    total = b + c
    if total < exact_below:
        stat, method = float(min(b, c)), "exact"
    else:
        stat, method = float(max(abs(b - c) - 1, 0) ** 2 / total), "chi2"
    p = float(mcnemar_pvalues(b, c, exact_below=exact_below))
    return McNemarResult(b, c, stat, p, method)


def mcnemar(correct_a, correct_b, *, exact_below: int = EXACT_BELOW) -> McNemarResult:
    """McNemar's test for two models scored on the same questions.

    Parameters
    ----------
    correct_a, correct_b : array_like of 0/1, shape (n,)
    exact_below : int, default 25
        Use the exact binomial test when there are fewer discordant pairs than
        this, the continuity-corrected chi-square test otherwise.

    Returns
    -------
    McNemarResult
    """
    a = as_binary(correct_a, "correct_a")
    b = as_binary(correct_b, "correct_b")
    same_length(a, b, "correct_a", "correct_b")
    a_only = int(np.count_nonzero((a == 1) & (b == 0)))
    b_only = int(np.count_nonzero((a == 0) & (b == 1)))
    return mcnemar_counts(a_only, b_only, exact_below=exact_below)


@dataclass(frozen=True)
class ChanceResult:
    """Accuracy against a chance floor ``p0``.

    Attributes
    ----------
    k, n : int
        Correct answers and questions.
    accuracy : float
    p0 : float
        Chance accuracy (e.g. 0.25 for four-option multiple choice).
    pvalue : float
        One-sided exact binomial p-value, ``P[Bin(n, p0) >= k]``.
    chance_corrected : float
        ``(accuracy - p0) / (1 - p0)``: 0 at chance, 1 for a perfect score.
    chance_corrected_low : float
        The same transform of the one-sided Clopper-Pearson lower bound at ``level``.
    level : float
    """

    k: int
    n: int
    accuracy: float
    p0: float
    pvalue: float
    chance_corrected: float
    chance_corrected_low: float
    level: float


def chance_test(correct, p0: float, *, level: float = DEFAULT_LEVEL) -> ChanceResult:
    """One-sided exact binomial test that accuracy exceeds the chance floor ``p0``."""
    x = as_binary(correct, "correct")
    p0 = check_probability(p0, "p0")
    level = check_level(level)
    n = x.size
    k = int(x.sum())
    pvalue = float(binom.sf(k - 1, n, p0))
    low = 0.0 if k == 0 else float(beta.ppf(1.0 - level, k, n - k + 1))
    acc = k / n
    return ChanceResult(
        k=k,
        n=n,
        accuracy=acc,
        p0=p0,
        pvalue=pvalue,
        chance_corrected=(acc - p0) / (1.0 - p0),
        chance_corrected_low=(low - p0) / (1.0 - p0),
        level=level,
    )
