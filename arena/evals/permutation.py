"""Paired permutation (randomisation) test for any corpus-level metric.

Under the null hypothesis that systems A and B are exchangeable, swapping the
two systems' outputs on any subset of items leaves the distribution of the
metric difference unchanged. Each permutation flips a fair coin per item.
Works for metrics that are not averages of per-item scores (corpus F1, BLEU
from per-item sufficient statistics, ...), as long as the metric is written to
score a whole batch of corpora at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena.core.errors import ArgumentError
from arena.evals.checks import check_count, check_rng

__all__ = ["PermutationResult", "paired_permutation_test", "ALTERNATIVES"]

ALTERNATIVES = ("two-sided", "greater", "less")
#: Relative tolerance for counting a permuted difference as "as extreme" (float ties).
_TIE_RTOL = 1e-9
#: Target number of array cells per block of permutations.
_BLOCK_CELLS = 1 << 20


def _mean_metric(batch: np.ndarray) -> np.ndarray:
    return batch.reshape(batch.shape[0], -1).mean(axis=1)


@dataclass(frozen=True)
class PermutationResult:
    """Result of :func:`paired_permutation_test`.

    Attributes
    ----------
    observed : float
        ``metric(A) - metric(B)`` on the original data.
    pvalue : float
        ``(1 + #extreme) / (1 + n_perm)``, never 0.
    n_perm : int
    alternative : str
    """

    observed: float
    pvalue: float
    n_perm: int
    alternative: str


def paired_permutation_test(
    a,
    b,
    rng,
    *,
    metric: Callable[[np.ndarray], np.ndarray] | None = None,
    n_perm: int = 10000,
    alternative: str = "two-sided",
) -> PermutationResult:
    """Paired permutation test of ``metric(A) - metric(B)``.

    Parameters
    ----------
    a, b : array_like, shape (n, ...)
        Per-item values of the two systems, items on the first axis: 0/1
        correctness, scores, or per-item sufficient statistics such as
        ``(true positives, false positives, false negatives)`` rows.
    rng : numpy.random.Generator
        Consumed as ``rng.integers(0, 2, size=(n_perm, n))`` (swap item ``i`` in
        permutation ``r`` when 1), drawn in row blocks.
    metric : callable, optional
        Corpus-level metric, vectorised over a batch: called with an array of
        shape ``(r, n, ...)`` (``r`` corpora), returns shape ``(r,)``. Default:
        mean of all values (accuracy for 0/1 input).
    n_perm : int, default 10000
    alternative : {"two-sided", "greater", "less"}
        ``"greater"`` tests metric(A) > metric(B).

    Returns
    -------
    PermutationResult
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim == 0 or x.shape[0] == 0:
        raise ArgumentError("a is empty")
    if x.shape != y.shape:
        raise ArgumentError(f"a and b must have the same shape, got {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ArgumentError("a and b must be finite")
    if alternative not in ALTERNATIVES:
        raise ArgumentError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    n_perm = check_count(n_perm, "n_perm")
    check_rng(rng)
    f = metric or _mean_metric
    n = x.shape[0]
    observed_pair = np.asarray(f(np.stack([x, y])), dtype=np.float64)
    if observed_pair.shape != (2,):
        raise ArgumentError(
            f"metric must map a batch of shape (r, n, ...) to shape (r,); got {observed_pair.shape}"
        )
    observed = float(observed_pair[0] - observed_pair[1])
    cells = max(1, x.size)
    rows = max(1, _BLOCK_CELLS // cells)
    extra = (1,) * (x.ndim - 1)
    tol = _TIE_RTOL * max(1.0, abs(observed))
    hits = 0
    done = 0
    while done < n_perm:
        r = min(rows, n_perm - done)
        swap = rng.integers(0, 2, size=(r, n)).astype(bool).reshape((r, n) + extra)
        pa = np.where(swap, y, x)
        pb = np.where(swap, x, y)
        d = np.asarray(f(pa), dtype=np.float64) - np.asarray(f(pb), dtype=np.float64)
        if alternative == "two-sided":
            hits += int(np.count_nonzero(np.abs(d) >= abs(observed) - tol))
        elif alternative == "greater":
            hits += int(np.count_nonzero(d >= observed - tol))
        else:
            hits += int(np.count_nonzero(d <= observed + tol))
        done += r
    return PermutationResult(observed, (1 + hits) / (1 + n_perm), n_perm, alternative)
