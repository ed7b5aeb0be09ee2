"""Bootstrap intervals for per-item benchmark scores.

``bootstrap_ci``, ``paired_bootstrap`` and ``significant`` follow the seed design's
contract to the letter (names, signatures -- ``n_boot=2000``, positional ``rng`` --,
tuple results and the exact use of ``rng``) so that an interval can be reproduced
by anyone holding the same seed. They are the one documented exception to the
library's vocabulary, which says ``rounds`` everywhere else (CHANGELOG.md).
The other functions return :class:`~arena.evals.Interval` dataclasses.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy.special import ndtr, ndtri

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS, SEED_N_BOOT
from arena.core.errors import ArgumentError
from arena.engine.validate import check_level
from arena.evals.binomial import clopper_pearson_interval
from arena.evals.checks import (
    DegenerateResamplesWarning,
    Interval,
    as_binary,
    as_finite,
    check_count,
    check_rng,
    percentile_bounds,
    quantile_levels,
    same_length,
)
from arena.evals.resample import draw_block_sizes, resample_sums

__all__ = [
    "bootstrap_ci",
    "paired_bootstrap",
    "significant",
    "bca_interval",
    "cluster_bootstrap_ci",
]


#: Words for the fallback, shown with the interval (``Interval.note``) and in the warning.
FALLBACK_NOTE = "Clopper-Pearson: every bootstrap resample was identical"


def _is_binary(x: np.ndarray) -> bool:
    return bool(np.all((x == 0.0) | (x == 1.0)))


def _cp_share(k: int, n: int, level: float, what: str) -> tuple[float, float]:
    """Clopper-Pearson bounds of k/n, announcing the fallback."""
    warnings.warn(
        f"{what}: every bootstrap resample is identical ({k} of {n}), so a resampling "
        f"interval would have zero width; using the Clopper-Pearson interval instead",
        DegenerateResamplesWarning,
        stacklevel=3,
    )
    cp = clopper_pearson_interval(k, n, level=level)
    return cp.low, cp.high


def _paired_fallback(d: float, n: int, level: float) -> tuple[float, float]:
    """Bounds for ``acc(A) - acc(B)`` when every item has the same difference ``d``.

    The difference is the share of A-only items minus the share of B-only
    items; with ``d = 1`` on every item A-only is n/n, with ``d = 0`` both
    shares are 0/n, and Clopper-Pearson bounds each share.
    """
    if d == 0.0:
        _, u = _cp_share(0, n, level, "paired difference")
        return -u, u
    lo, _ = _cp_share(n, n, level, "paired difference")
    return (lo, 1.0) if d > 0 else (-1.0, -lo)


def bootstrap_ci(correct, rng, n_boot=SEED_N_BOOT, level=DEFAULT_LEVEL):
    """Accuracy with a percentile bootstrap interval.

    Parameters
    ----------
    correct : array_like of 0/1, shape (n,)
        One entry per question: 1 if the model got it right.
    rng : numpy.random.Generator
        Consumed exactly as ``idx = rng.integers(0, n, size=(n_boot, n))``.
    n_boot : int, default 2000
        Number of resamples (the seed design's name and default).
    level : float, default DEFAULT_LEVEL (0.95)
        Two-sided confidence level in (0, 1).

    Returns
    -------
    (accuracy, low, high) : tuple of float
        Accuracy on the original data and the ``(1 - level) / 2`` and
        ``(1 + level) / 2`` quantiles (``np.quantile``) of the resampled accuracies.

    Raises
    ------
    ValueError
        Empty input, values other than 0/1, ``level`` outside (0, 1), ``n_boot < 1``.
    """
    x = as_binary(correct, "correct")
    check_level(level)
    n_boot = check_count(n_boot, "n_boot")
    check_rng(rng)
    n = x.size
    accs = resample_sums(x[:, None], rng, n_boot)[:, 0] / n
    lo, hi = percentile_bounds(accs, level)
    k = int(x.sum())
    if k in (0, n):
        cp_lo, cp_hi = _cp_share(k, n, level, "accuracy")
        return float(x.mean()), float(cp_lo), float(cp_hi)
    return float(x.mean()), float(lo), float(hi)


def paired_bootstrap(correct_a, correct_b, rng, n_boot=SEED_N_BOOT, level=DEFAULT_LEVEL):
    """Paired bootstrap interval for accuracy(A) minus accuracy(B).

    One ``idx = rng.integers(0, n, size=(n_boot, n))`` is drawn and applied to
    both models, so the interval reflects the questions' shared difficulty.

    Parameters
    ----------
    correct_a, correct_b : array_like of 0/1, shape (n,)
        Per-question correctness of models A and B, aligned by question.
    rng : numpy.random.Generator
        Consumed exactly once as above.
    n_boot : int, default 2000
        Number of resamples (the seed design's name and default).
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    (difference, low, high) : tuple of float

    Raises
    ------
    ValueError
        Lengths differ, empty arrays, values not 0/1, ``level`` outside (0, 1).
    """
    a = as_binary(correct_a, "correct_a")
    b = as_binary(correct_b, "correct_b")
    same_length(a, b, "correct_a", "correct_b")
    check_level(level)
    n_boot = check_count(n_boot, "n_boot")
    check_rng(rng)
    n = a.size
    sums = resample_sums(np.column_stack([a, b]), rng, n_boot)
    diffs = sums[:, 0] / n - sums[:, 1] / n
    lo, hi = percentile_bounds(diffs, level)
    d = a - b
    if np.all(d == d[0]):
        fb_lo, fb_hi = _paired_fallback(float(d[0]), n, level)
        return float(a.mean() - b.mean()), float(fb_lo), float(fb_hi)
    return float(a.mean() - b.mean()), float(lo), float(hi)


def significant(low, high):
    """True when the interval ``[low, high]`` excludes 0."""
    low, high = float(low), float(high)
    if np.isnan(low) or np.isnan(high):
        raise ArgumentError("interval bounds must not be NaN")
    if low > high:
        raise ArgumentError(f"low ({low}) is greater than high ({high})")
    return bool(low > 0.0 or high < 0.0)


def _resample_statistic(
    x: np.ndarray, statistic: Callable[..., np.ndarray], rng: np.random.Generator, rounds: int
) -> np.ndarray:
    """``statistic(x[idx], axis=-1)`` for idx drawn block by block (vectorised per block)."""
    n = x.size
    parts = []
    for rows in draw_block_sizes(rounds, n):
        idx = rng.integers(0, n, size=(rows, n))
        parts.append(np.asarray(statistic(x[idx], axis=-1), dtype=np.float64).reshape(rows))
    return np.concatenate(parts)


def _jackknife(x: np.ndarray, statistic: Callable[..., np.ndarray] | None) -> np.ndarray:
    """Leave-one-out values of the statistic (closed form for the mean)."""
    n = x.size
    if statistic is None:
        return (x.sum() - x) / (n - 1)
    keep = np.arange(n - 1)
    out = np.empty(n)
    rows = max(1, (1 << 20) // n)
    for start in range(0, n, rows):
        left_out = np.arange(start, min(start + rows, n))
        idx = keep[None, :] + (keep[None, :] >= left_out[:, None])
        out[left_out] = np.asarray(statistic(x[idx], axis=-1), dtype=np.float64)
    return out


def bca_interval(
    values,
    rng,
    *,
    statistic: Callable[..., np.ndarray] | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Bias-corrected and accelerated (BCa) bootstrap interval.

    Parameters
    ----------
    values : array_like, shape (n,)
        Per-item scores (0/1 correctness or any finite number).
    rng : numpy.random.Generator
        Consumed as ``rng.integers(0, n, size=(rounds, n))`` (in row blocks).
    statistic : callable, optional
        Vectorised statistic ``f(samples, axis=-1)``; default the mean.
    rounds : int, default DEFAULT_ROUNDS (1000)
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    Interval

    Notes
    -----
    Bias correction ``z0 = Phi^-1(p)`` with ``p`` the share of resampled
    statistics below the estimate, ties counted one half (resampled accuracies
    tie with the estimate often). Acceleration from the jackknife,
    ``a = sum(d^3) / (6 * sum(d^2)^1.5)`` with ``d = mean(theta_(i)) - theta_(i)``.
    Endpoints are the ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` quantiles for
    ``z`` the normal quantiles of ``(1 -/+ level) / 2``.

    When every resample is identical (0/n or n/n correct, or any constant
    data) the interval would have zero width: for 0/1 data and the mean it
    falls back to Clopper-Pearson, otherwise it keeps the zero-width interval;
    both warn (:class:`DegenerateResamplesWarning`) and say so in ``note``.
    """
    x = as_finite(values, "values")
    if x.size < 2:
        raise ArgumentError("BCa needs at least 2 values")
    check_level(level)
    rounds = check_count(rounds, "rounds")
    check_rng(rng)
    if statistic is None:
        theta = float(x.mean())
        boots = resample_sums(x[:, None], rng, rounds)[:, 0] / x.size
    else:
        theta = float(np.asarray(statistic(x, axis=-1)))
        boots = _resample_statistic(x, statistic, rng, rounds)
    # sums of equal values in a different order can differ in the last bit
    if np.ptp(boots) <= 1e-12 * max(1.0, abs(float(boots[0]))):
        if statistic is None and _is_binary(x):
            lo, hi = _cp_share(int(x.sum()), x.size, level, "BCa")
            return Interval(theta, float(lo), float(hi), float(level), FALLBACK_NOTE)
        warnings.warn(
            "BCa: every bootstrap resample gave the same value; the interval has zero "
            "width and says nothing about the uncertainty",
            DegenerateResamplesWarning,
            stacklevel=2,
        )
        note = "zero width: every bootstrap resample was identical"
        return Interval(theta, float(boots[0]), float(boots[0]), float(level), note)
    below = np.count_nonzero(boots < theta) + 0.5 * np.count_nonzero(boots == theta)
    z0 = ndtri(below / rounds)
    loo = _jackknife(x, statistic)
    d = loo.mean() - loo
    denom = 6.0 * np.sum(d**2) ** 1.5
    accel = float(np.sum(d**3) / denom) if denom > 0 else 0.0
    z = ndtri(np.array(quantile_levels(level)))
    with np.errstate(divide="ignore", invalid="ignore"):
        adjusted = ndtr(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
    if not np.all(np.isfinite(adjusted)):
        # All resamples on one side of the estimate (degenerate data): fall back
        # to the percentile interval rather than returning NaN.
        adjusted = np.array(quantile_levels(level))
    lo, hi = np.quantile(boots, adjusted)
    return Interval(theta, float(lo), float(hi), float(level))


def cluster_bootstrap_ci(
    values,
    clusters,
    rng,
    *,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Bootstrap interval for a mean when items come in clusters.

    Questions that share a document, passage or prompt template are not
    independent; resampling whole clusters keeps that dependence. The estimate
    is the item-level mean, ``sum(values) / n``; each resample draws ``C``
    clusters with replacement (``rng.integers(0, C, size=(rounds, C))``, clusters
    numbered in sorted order of their labels) and takes the ratio of resampled
    sums to resampled item counts.

    Parameters
    ----------
    values : array_like, shape (n,)
        Per-item scores: 0/1 correctness for an accuracy, or ``a - b`` for a
        paired difference of two models.
    clusters : array_like, shape (n,)
        Cluster label of each item (any hashable, sortable values).
    rng : numpy.random.Generator
    rounds : int, default DEFAULT_ROUNDS (1000)
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    Interval
    """
    x = as_finite(values, "values")
    labels = np.asarray(clusters)
    if labels.ndim != 1:
        raise ArgumentError(f"clusters must be a 1-D array, got shape {labels.shape}")
    same_length(x, labels, "values", "clusters")
    check_level(level)
    rounds = check_count(rounds, "rounds")
    check_rng(rng)
    _, code = np.unique(labels, return_inverse=True)
    n_clusters = int(code.max()) + 1
    totals = np.bincount(code, weights=x, minlength=n_clusters)
    sizes = np.bincount(code, minlength=n_clusters).astype(np.float64)
    sums = resample_sums(np.column_stack([totals, sizes]), rng, rounds)
    ratios = sums[:, 0] / sums[:, 1]
    lo, hi = percentile_bounds(ratios, level)
    if np.all(x == x[0]) and _is_binary(x):
        # clusters, not items, are the independent units: bound the share by them
        c_lo, c_hi = _cp_share(int(x[0]) * n_clusters, n_clusters, level, "cluster bootstrap")
        return Interval(float(x[0]), float(c_lo), float(c_hi), float(level), FALLBACK_NOTE)
    return Interval(float(x.sum() / x.size), float(lo), float(hi), float(level))
