"""The resampling engine: bootstrap sums of many columns without a Python loop per resample.

A bootstrap resample of ``n`` items is a row of ``idx = rng.integers(0, n, size=(rounds, n))``.
Any statistic that is a sum over items (an accuracy, a paired difference, a
cluster total) only needs how often each item was drawn, so the resample sums of
``k`` columns are ``counts @ columns`` with ``counts`` the per-row histogram of
``idx``. The draw is done in blocks of rows so memory stays small; numpy's
generator produces the same numbers whether ``(rounds, n)`` is drawn at once or
as consecutive row blocks, and whether as int64 or int32 (values below 2**31
use the same 32-bit bounded sampler), so the stream consumed is exactly that of
the one-shot call. ``tests/test_evals_accuracy.py`` checks this equivalence.
"""

from __future__ import annotations

import numpy as np

#: Target number of histogram bins per block (rows * n); keeps bincount in cache.
_BLOCK_CELLS = 1 << 17
#: Target number of cells of the stacked histogram buffer multiplied at once (~16 MB).
_PRODUCT_CELLS = 1 << 22
#: float32 holds integers exactly up to 2**24; beyond that use float64 sums.
_FLOAT32_EXACT = 1 << 24


def draw_block_sizes(rounds: int, n: int) -> list[int]:
    """Row-block sizes used to draw ``(rounds, n)`` indices in pieces."""
    rows = max(1, _BLOCK_CELLS // max(n, 1))
    full, rest = divmod(rounds, rows)
    return [rows] * full + ([rest] if rest else [])


def resample_sums(columns: np.ndarray, rng: np.random.Generator, rounds: int) -> np.ndarray:
    """Bootstrap sums of each column over ``rounds`` resamples of the rows.

    Parameters
    ----------
    columns : ndarray, shape (n, k)
        Per-item values; row ``i`` is item ``i``.
    rng : numpy.random.Generator
        Consumed exactly as ``rng.integers(0, n, size=(rounds, n))``.
    rounds : int
        Number of resamples.

    Returns
    -------
    ndarray, shape (rounds, k)
        ``out[b, j] = columns[idx[b], j].sum()``.

    Notes
    -----
    Indices are drawn and histogrammed in small row blocks (the histogram stays
    in cache); the histograms are stacked into a buffer of a few megabytes and
    multiplied with ``columns`` in one BLAS call per buffer, because skinny
    matrix products are slow.
    """
    columns = np.asarray(columns, dtype=np.float64)
    n, k = columns.shape
    integral = bool(np.all(columns == np.round(columns)))
    exact32 = integral and float(np.abs(columns).sum(axis=0).max(initial=0.0)) < _FLOAT32_EXACT
    dtype = np.float32 if exact32 and n < _FLOAT32_EXACT else np.float64
    cols = columns.astype(dtype)
    idx_dtype = np.int32 if n < 2**31 else np.int64
    out = np.empty((rounds, k), dtype=np.float64)
    blocks = draw_block_sizes(rounds, n)
    rows = blocks[0]
    per_product = max(1, _PRODUCT_CELLS // (rows * n)) * rows
    buf = np.empty((min(per_product, rounds), n), dtype=dtype)
    offsets = (np.arange(rows, dtype=idx_dtype) * n)[:, None]
    filled = 0
    done = 0
    for r in blocks:
        idx = rng.integers(0, n, size=(r, n), dtype=idx_dtype)
        idx += offsets[:r]
        counts = np.bincount(idx.ravel(), minlength=r * n)
        buf[filled : filled + r] = counts.reshape(r, n)
        filled += r
        if filled + rows > buf.shape[0] or done + filled == rounds:
            out[done : done + filled] = buf[:filled] @ cols
            done += filled
            filled = 0
    return out
