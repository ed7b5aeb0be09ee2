"""Ratio metrics such as bits per byte: a ratio of sums, with a cluster bootstrap over documents.

Bits per byte of a corpus is total bits over total bytes, not the mean of the
documents' own ratios (which would weigh a ten-byte document like a book).
Its uncertainty comes from which documents happened to be in the corpus, so a
resample draws whole documents with replacement and recomputes both sums;
a paired A - B difference uses the same draw for both models.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS
from arena.core.errors import ArgumentError
from arena.evals.checks import (
    Interval,
    as_finite,
    check_count,
    check_level,
    check_rng,
    percentile_bounds,
    same_length,
)
from arena.evals.resample import resample_sums

__all__ = ["RatioComparison", "compare_ratios", "ratio_interval"]


def _cluster_totals(columns: list[np.ndarray], clusters) -> tuple[np.ndarray, int]:
    n = columns[0].size
    if clusters is None:
        return np.column_stack(columns), n
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.size != n:
        raise ArgumentError(f"clusters must be a 1-D array of length {n}")
    _, code = np.unique(labels, return_inverse=True)
    k = int(code.max()) + 1
    return np.column_stack([np.bincount(code, weights=c, minlength=k) for c in columns]), k


def _check_denominator(den: np.ndarray, name: str) -> None:
    if (den < 0).any():
        raise ArgumentError(
            f"{name} must not be negative (entry {int(np.flatnonzero(den < 0)[0])})"
        )
    if den.sum() <= 0:
        raise ArgumentError(f"{name} sums to zero: the ratio is undefined")


def ratio_interval(
    numerator,
    denominator,
    rng,
    *,
    clusters=None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """``sum(numerator) / sum(denominator)`` with a cluster bootstrap percentile interval.

    Parameters
    ----------
    numerator, denominator : array_like, shape (n,)
        Per-item amounts (bits and bytes of each document or chunk).
    rng : numpy.random.Generator
        Consumed as ``rng.integers(0, C, size=(rounds, C))`` for ``C`` clusters
        (items when ``clusters`` is None), numbered in sorted label order.
    clusters : array_like, shape (n,), optional
        Document of each item; whole documents are resampled.
    rounds : int, default DEFAULT_ROUNDS (1000)
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    Interval
    """
    num = as_finite(numerator, "numerator")
    den = as_finite(denominator, "denominator")
    same_length(num, den, "numerator", "denominator")
    _check_denominator(den, "denominator")
    level = check_level(level)
    rounds = check_count(rounds, "rounds")
    check_rng(rng)
    totals, _ = _cluster_totals([num, den], clusters)
    sums = resample_sums(totals, rng, rounds)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = sums[:, 0] / sums[:, 1]
    lo, hi = percentile_bounds(ratios, level)
    return Interval(float(num.sum() / den.sum()), float(lo), float(hi), level)


@dataclass(frozen=True)
class RatioComparison:
    """Result of :func:`compare_ratios`.

    Attributes
    ----------
    a, b : Interval
        Each model's ratio with its interval (from the shared resamples).
    diff : Interval
        ``ratio_a - ratio_b`` with its paired interval.
    n_clusters : int
        Documents (or items) resampled.
    """

    a: Interval
    b: Interval
    diff: Interval
    n_clusters: int


def compare_ratios(
    num_a,
    den_a,
    num_b,
    den_b,
    rng,
    *,
    clusters=None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> RatioComparison:
    """Two models' ratio metrics on the same items and the paired difference.

    One cluster draw per resample serves both models, so the difference's
    interval reflects that both read the same documents.

    Parameters
    ----------
    num_a, den_a, num_b, den_b : array_like, shape (n,)
        Per-item numerators and denominators of models A and B (the
        denominators are usually the same bytes).
    rng : numpy.random.Generator
    clusters : array_like, optional
    rounds : int, default DEFAULT_ROUNDS (1000)
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    RatioComparison
    """
    cols = [as_finite(v, name) for v, name in zip((num_a, den_a, num_b, den_b), ("num_a", "den_a", "num_b", "den_b"), strict=True)]  # fmt: skip
    for c, name in zip(cols[1:], ("den_a", "num_b", "den_b"), strict=True):
        same_length(cols[0], c, "num_a", name)
    _check_denominator(cols[1], "den_a")
    _check_denominator(cols[3], "den_b")
    level = check_level(level)
    rounds = check_count(rounds, "rounds")
    check_rng(rng)
    totals, k = _cluster_totals(cols, clusters)
    sums = resample_sums(totals, rng, rounds)
    with np.errstate(invalid="ignore", divide="ignore"):
        ra = sums[:, 0] / sums[:, 1]
        rb = sums[:, 2] / sums[:, 3]
    est_a = float(cols[0].sum() / cols[1].sum())
    est_b = float(cols[2].sum() / cols[3].sum())
    out = []
    for boot, est in ((ra, est_a), (rb, est_b), (ra - rb, est_a - est_b)):
        lo, hi = percentile_bounds(boot, level)
        out.append(Interval(est, float(lo), float(hi), level))
    return RatioComparison(out[0], out[1], out[2], k)
