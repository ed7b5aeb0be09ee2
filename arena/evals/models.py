"""Bootstrap intervals for many models on one benchmark, and all their pairs, in one pass.

All models share one index matrix, so the m(m-1)/2 paired differences cost no
more resampling than the m accuracies: a paired difference's resamples are the
difference of the two models' resampled sums. Models that were not scored on
every item are handled with ratio estimates over the items each model (or
pair) has.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS
from arena.core.errors import ArgumentError
from arena.engine.validate import check_level
from arena.evals.checks import (
    as_binary,
    check_count,
    check_rng,
    percentile_bounds,
)
from arena.evals.resample import resample_sums

__all__ = ["ModelsBootstrap", "bootstrap_models"]


@dataclass(frozen=True)
class ModelsBootstrap:
    """Bootstrap intervals for several models on one benchmark, and all their pairs.

    Attributes
    ----------
    accuracy, low, high : ndarray, shape (m,)
        Each model's accuracy on its own items and percentile interval.
    n_items : ndarray of int, shape (m,)
        Items each model was scored on.
    diff, diff_low, diff_high : ndarray, shape (m, m)
        ``diff[i, j]`` is accuracy(i) - accuracy(j) over the items both were
        scored on, with its paired interval (antisymmetric; diagonal 0).
    shared : ndarray of int, shape (m, m)
        Items scored for both models.
    level : float
    """

    accuracy: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_items: np.ndarray
    diff: np.ndarray
    diff_low: np.ndarray
    diff_high: np.ndarray
    shared: np.ndarray
    level: float


def bootstrap_models(
    correct,
    rng,
    *,
    present=None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> ModelsBootstrap:
    """Percentile intervals for m models and all m(m-1)/2 paired differences at once.

    One index matrix ``idx = rng.integers(0, n, size=(rounds, n))`` over the
    ``n`` items is shared by every model and every pair. When every model has
    every item, model ``i``'s interval equals ``bootstrap_ci`` and pair
    ``(i, j)``'s equals ``paired_bootstrap`` for a generator in the same state.

    Parameters
    ----------
    correct : array_like of 0/1, shape (n, m)
        Item ``i``, model ``j``. Entries where ``present`` is False are ignored.
    rng : numpy.random.Generator
    present : array_like of bool, shape (n, m), optional
        Which items each model was scored on (default: all). With missing
        items a resample's accuracy is the ratio of the resampled correct
        count to the resampled number of scored items, and a pair uses only
        the items scored for both.
    rounds : int, default DEFAULT_ROUNDS (1000)
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    ModelsBootstrap
    """
    x = np.asarray(correct)
    if x.ndim != 2:
        raise ArgumentError(f"correct must be a 2-D (items, models) array, got shape {x.shape}")
    n, m = x.shape
    if n == 0 or m == 0:
        raise ArgumentError("correct is empty")
    if present is None:
        mask = np.ones((n, m), dtype=bool)
    else:
        mask = np.asarray(present, dtype=bool)
        if mask.shape != x.shape:
            raise ArgumentError(f"present has shape {mask.shape}, correct has {x.shape}")
    x = np.where(mask, x, 0)
    as_binary(x.ravel(), "correct")
    x = x.astype(np.float64)
    check_level(level)
    rounds = check_count(rounds, "rounds")
    check_rng(rng)
    counts = mask.sum(axis=0)
    if (counts == 0).any():
        raise ArgumentError(f"model column {int(np.flatnonzero(counts == 0)[0])} has no items")

    # Build the columns whose resample sums we need, without duplicates.
    cols: list[np.ndarray] = []
    index: dict[bytes, int] = {}

    def col(v: np.ndarray) -> int:
        key = np.packbits(v.astype(bool)).tobytes()  # columns are 0/1
        if key not in index:
            index[key] = len(cols)
            cols.append(v)
        return index[key]

    right = [col(x[:, j]) for j in range(m)]
    seen = [col(mask[:, j].astype(np.float64)) for j in range(m)]
    full = bool(mask.all())
    pair_cols: dict[tuple[int, int], tuple[int, int, int]] = {}
    shared = np.empty((m, m), dtype=np.int64)
    for i in range(m):
        for j in range(m):
            both = mask[:, i] & mask[:, j]
            shared[i, j] = int(both.sum())
            if i < j:
                if full:
                    pair_cols[i, j] = (right[i], right[j], seen[i])
                else:
                    w = both.astype(np.float64)
                    pair_cols[i, j] = (col(x[:, i] * w), col(x[:, j] * w), col(w))
    if (shared == 0).any():
        i, j = (int(v[0]) for v in np.nonzero(shared == 0))
        raise ArgumentError(f"models {i} and {j} share no items")

    sums = resample_sums(np.column_stack(cols), rng, rounds)
    with np.errstate(invalid="ignore", divide="ignore"):
        accs = sums[:, right] / sums[:, seen] if not full else sums[:, right] / n
    accuracy = x.sum(axis=0) / counts
    low, high = percentile_bounds(accs, level)

    diff = np.zeros((m, m))
    dlo = np.zeros((m, m))
    dhi = np.zeros((m, m))
    pairs = sorted(pair_cols)
    if pairs:
        ca = [pair_cols[p][0] for p in pairs]
        cb = [pair_cols[p][1] for p in pairs]
        cw = [pair_cols[p][2] for p in pairs]
        if full:
            d = sums[:, ca] / n - sums[:, cb] / n
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                d = sums[:, ca] / sums[:, cw] - sums[:, cb] / sums[:, cw]
        lo, hi = percentile_bounds(d, level)
        ii = np.array([p[0] for p in pairs])
        jj = np.array([p[1] for p in pairs])
        est = np.array(
            [
                (x[:, i] * (mask[:, i] & mask[:, j])).sum() / shared[i, j]
                - (x[:, j] * (mask[:, i] & mask[:, j])).sum() / shared[i, j]
                for i, j in pairs
            ]
        )
        diff[ii, jj], diff[jj, ii] = est, -est
        dlo[ii, jj], dhi[ii, jj] = lo, hi
        dlo[jj, ii], dhi[jj, ii] = -hi, -lo
    return ModelsBootstrap(
        accuracy=accuracy,
        low=np.asarray(low),
        high=np.asarray(high),
        n_items=counts.astype(np.int64),
        diff=diff,
        diff_low=dlo,
        diff_high=dhi,
        shared=shared,
        level=float(level),
    )
