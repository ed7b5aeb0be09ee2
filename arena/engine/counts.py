"""Aggregation of battles into a count table over (pair, outcome, weight) cells.

Everything downstream of this module (fits, bootstrap, analytic intervals)
works on cells, so its cost depends on the number of distinct
``(model_a, model_b, outcome, weight)`` combinations, never on the number of
battles.  A cluster bootstrap additionally needs to know which cells each
cluster (judge, question, ...) contributed to; :func:`cluster_matrix` stores
that as a sparse clusters x cells count matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from arena.core.errors import ArgumentError
from arena.core.outcomes import N_OUTCOMES

__all__ = [
    "CountTable",
    "count_table",
    "from_cells",
    "cluster_matrix",
    "clustered_table",
    "clustered_cells",
    "unique_rows",
]


@dataclass(frozen=True)
class CountTable:
    """Battles aggregated into cells.

    Attributes
    ----------
    n_models : int
        Number of models; model indices run over ``0 .. n_models - 1``.
    a, b : ndarray of intp, shape (C,)
        Index of the model shown first (``model_a``) and second.
    outcome : ndarray of int8, shape (C,)
        Outcome code from :mod:`arena.core.outcomes`.
    n : ndarray of float64, shape (C,)
        Number of battles in the cell.
    weight : ndarray of float64, shape (C,)
        Weight of each battle in the cell (1.0 unless weights were given).
    """

    n_models: int
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    n: np.ndarray
    weight: np.ndarray

    @property
    def n_cells(self) -> int:
        return int(self.a.shape[0])

    @property
    def n_battles(self) -> float:
        return float(self.n.sum())


def _validate(
    n_models: int,
    a: ArrayLike,
    b: ArrayLike,
    outcome: ArrayLike,
    n: ArrayLike,
    weight: ArrayLike | None,
) -> CountTable:
    n_models = check_n_models(n_models)
    n = np.asarray(n, dtype=np.float64)
    a, b, outcome = battle_arrays(n_models, a, b, outcome)
    shape = a.shape
    if n.shape != shape:
        raise ArgumentError("a, b, outcome and n must be 1-d arrays of the same length")
    if not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ArgumentError("cell counts n must be finite and non-negative")
    if weight is None:
        weight = np.ones(shape, dtype=np.float64)
    else:
        weight = np.broadcast_to(np.asarray(weight, dtype=np.float64), shape).copy()
        if not np.all(np.isfinite(weight)) or np.any(weight <= 0):
            raise ArgumentError("weights must be finite and positive")
    return CountTable(
        n_models=n_models,
        a=a.astype(np.intp),
        b=b.astype(np.intp),
        outcome=outcome.astype(np.int8),
        n=n,
        weight=weight,
    )


def check_n_models(n_models: Any) -> int:
    if int(n_models) != n_models or n_models < 0:
        raise ArgumentError(f"n_models must be a non-negative integer, got {n_models!r}")
    return int(n_models)


def battle_arrays(
    n_models: int, a: ArrayLike, b: ArrayLike, outcome: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check per-battle index arrays; returns them as intp (no copy when already intp)."""
    a, b, outcome = np.asarray(a), np.asarray(b), np.asarray(outcome)
    if a.ndim != 1 or b.shape != a.shape or outcome.shape != a.shape:
        raise ArgumentError("a, b, outcome and n must be 1-d arrays of the same length")
    for name, arr in (("a", a), ("b", b), ("outcome", outcome)):
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise ArgumentError(f"{name} must hold integers, got dtype {arr.dtype}")
    if a.size and (a.min() < 0 or a.max() >= n_models or b.min() < 0 or b.max() >= n_models):
        raise ArgumentError(f"model indices must lie in [0, {n_models})")
    if outcome.size and (outcome.min() < 0 or outcome.max() >= N_OUTCOMES):
        raise ArgumentError(f"outcome codes must lie in [0, {N_OUTCOMES})")
    return (
        a.astype(np.intp, copy=False),
        b.astype(np.intp, copy=False),
        outcome.astype(np.intp, copy=False),
    )


def unique_rows(*cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of the given equal-length columns.

    Returns ``(first, inverse)``: the index of one representative row per
    distinct key (keys in lexicographic order, first column most significant)
    and the key number of every row.  Numeric ``lexsort``, O(B log B).
    """
    n = cols[0].shape[0]
    if n == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    order = np.lexsort(cols[::-1])
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for c in cols:
        sc = c[order]
        new[1:] |= sc[1:] != sc[:-1]
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def _group_rows(
    a: np.ndarray, b: np.ndarray, outcome: np.ndarray, weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return (first row of each distinct cell key, inverse index)."""
    # one integer for (a, b, outcome) keeps the sort numeric and fast
    m = int(max(a.max(), b.max())) + 1 if a.size else 1
    key = (a.astype(np.int64) * m + b) * N_OUTCOMES + outcome
    return unique_rows(key, weight)


#: Largest key space (models^2 x outcomes) grouped by direct addressing.
_DENSE_MAX_KEYS = 1 << 24


def _dense_table(
    n_models: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, *, inverse: bool
) -> tuple[CountTable, np.ndarray | None] | None:
    """Unit-weight aggregation by direct addressing, O(B + M^2) without a sort.

    Returns the table (cells in key order, exactly as the sort-based path
    orders them) and, if asked, every battle's cell; None when the key space
    is too large to address directly.
    """
    m = n_models
    size = m * m * N_OUTCOMES
    if size > _DENSE_MAX_KEYS:
        return None
    key = a * (m * N_OUTCOMES)
    key += b * N_OUTCOMES
    key += outcome
    n = np.bincount(key, minlength=size)
    keys = np.flatnonzero(n)
    table = CountTable(
        n_models=m,
        a=keys // (m * N_OUTCOMES),
        b=keys // N_OUTCOMES % m,
        outcome=(keys % N_OUTCOMES).astype(np.int8),
        n=n[keys].astype(np.float64),
        weight=np.ones(keys.size),
    )
    return table, (np.cumsum(n > 0) - 1)[key] if inverse else None


def count_table(
    model_a: ArrayLike,
    model_b: ArrayLike,
    outcome: ArrayLike,
    *,
    n_models: int,
    weight: ArrayLike | None = None,
) -> CountTable:
    """Aggregate per-battle arrays into a :class:`CountTable`.

    Parameters
    ----------
    model_a, model_b : array_like of int, shape (B,)
        Model indices of the first- and second-shown model of each battle.
    outcome : array_like of int, shape (B,)
        Outcome codes (``A_WINS=0, B_WINS=1, TIE=2, TIE_BOTH_BAD=3``).
    n_models : int
        Number of models.
    weight : array_like of float, shape (B,), optional
        Per-battle weights; cells are keyed by weight too, so battles with
        different weights never share a cell.

    Returns
    -------
    CountTable
        One cell per distinct ``(a, b, outcome, weight)``.  Self-play rows are
        kept here and ignored by the fits.
    """
    return clustered_table(model_a, model_b, outcome, None, n_models=n_models, weight=weight)[0]


def from_cells(
    a: ArrayLike,
    b: ArrayLike,
    outcome: ArrayLike,
    n: ArrayLike,
    *,
    n_models: int,
    weight: ArrayLike | None = None,
) -> CountTable:
    """Build a :class:`CountTable` from pre-aggregated rows (e.g. SQL ``GROUP BY``).

    Rows with the same key are merged and empty rows dropped, so the result is
    canonical whatever the grouping upstream was.
    """
    return _merge_cells(_validate(n_models, a, b, outcome, n, weight))[0]


def clustered_cells(
    a: ArrayLike,
    b: ArrayLike,
    outcome: ArrayLike,
    n: ArrayLike,
    cluster_ids: ArrayLike,
    *,
    n_models: int,
    weight: ArrayLike | None = None,
) -> tuple[CountTable, sp.csr_matrix]:
    """Pre-aggregated rows that also carry a cluster key -> table and cluster matrix.

    Each row is ``n`` battles of one cluster in one cell (SQL ``GROUP BY
    cluster, model_a, model_b, outcome, weight``), so a cell appears once per
    cluster that played it.

    Returns
    -------
    table : CountTable
        As :func:`from_cells` of the same rows.
    clusters : scipy.sparse.csr_matrix, shape (K, C)
        Battles of cluster ``k`` (in sorted key order) in cell ``c``.
    """
    t = _validate(n_models, a, b, outcome, n, weight)
    cluster_ids = np.asarray(cluster_ids)
    if cluster_ids.shape != t.n.shape:
        raise ArgumentError("cluster_ids must have one entry per row")
    rows = t.n > 0
    if not rows.all():
        t = CountTable(t.n_models, t.a[rows], t.b[rows], t.outcome[rows], t.n[rows], t.weight[rows])
        cluster_ids = cluster_ids[rows]
    table, inverse = _merge_cells(t)
    return table, cluster_matrix(cluster_ids, inverse, n_cells=table.n_cells, n=t.n)


def _merge_cells(t: CountTable) -> tuple[CountTable, np.ndarray]:
    """Merge rows with the same cell key; returns the table and each row's cell.

    Cells left empty are dropped (rows of such cells get index -1).
    """
    if t.n_cells == 0:
        return t, np.zeros(0, np.intp)
    first, inverse = _group_rows(t.a, t.b, t.outcome, t.weight)
    n_merged = np.bincount(inverse, weights=t.n, minlength=first.size)
    keep = n_merged > 0
    if not keep.all():
        inverse = np.where(keep, np.cumsum(keep) - 1, -1)[inverse]
        first = first[keep]
    table = CountTable(
        n_models=t.n_models,
        a=t.a[first],
        b=t.b[first],
        outcome=t.outcome[first],
        n=n_merged[keep],
        weight=t.weight[first],
    )
    return table, inverse


def cluster_matrix(
    cluster_ids: ArrayLike, cell_index: ArrayLike, *, n_cells: int, n: ArrayLike | None = None
) -> sp.csr_matrix:
    """Sparse clusters x cells matrix of battle counts.

    Parameters
    ----------
    cluster_ids : array_like, shape (B,)
        Cluster key of each battle (any hashable/sortable values: judge ids,
        question ids, ...).  Clusters are numbered in sorted key order.
    cell_index : array_like of int, shape (B,)
        Cell of each battle (row of the :class:`CountTable`).
    n_cells : int
        Number of cells in the table.
    n : array_like of float, shape (B,), optional
        Battle multiplicity of each row (default 1).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (K, n_cells)
        Entry ``[k, c]`` is the number of battles of cluster ``k`` in cell ``c``.
    """
    cluster_ids = np.asarray(cluster_ids)
    cell_index = np.asarray(cell_index, dtype=np.intp)
    if cluster_ids.shape != cell_index.shape or cell_index.ndim != 1:
        raise ArgumentError("cluster_ids and cell_index must be 1-d arrays of the same length")
    if cell_index.size and (cell_index.min() < 0 or cell_index.max() >= n_cells):
        raise ArgumentError(f"cell_index must lie in [0, {n_cells})")
    _, k = np.unique(cluster_ids, return_inverse=True)
    k = k.reshape(-1)
    vals = (
        np.ones(cell_index.shape, dtype=np.float64)
        if n is None
        else np.asarray(n, dtype=np.float64)
    )
    n_clusters = int(k.max()) + 1 if k.size else 0
    z = sp.coo_matrix((vals, (k, cell_index)), shape=(n_clusters, n_cells)).tocsr()
    z.sum_duplicates()
    return z


def clustered_table(
    model_a: ArrayLike,
    model_b: ArrayLike,
    outcome: ArrayLike,
    cluster_ids: ArrayLike | None,
    *,
    n_models: int,
    weight: ArrayLike | None = None,
) -> tuple[CountTable, sp.csr_matrix | None]:
    """Aggregate per-battle arrays and, if ``cluster_ids`` is given, their cluster matrix.

    Returns
    -------
    table : CountTable
    clusters : scipy.sparse.csr_matrix of shape (K, C), or None
        ``None`` when ``cluster_ids`` is ``None`` (battle-level resampling).
    """
    a = np.asarray(model_a)
    if weight is None:
        # per-battle arrays: validated without materialising unit counts
        m = check_n_models(n_models)
        a, b, o = battle_arrays(m, a, model_b, outcome)
        dense = _dense_table(m, a, b, o, inverse=cluster_ids is not None) if a.size else None
        if dense is None:
            t = CountTable(m, a, b, o.astype(np.int8), np.ones(a.shape), np.ones(a.shape))
        else:
            t = dense[0]
    else:
        t = _validate(n_models, a, model_b, outcome, np.ones(a.shape), weight)
        dense = None
    if t.n_cells == 0:
        z = None if cluster_ids is None else sp.csr_matrix((0, 0))
        return t, z
    if dense is not None:
        table, inverse = dense
    else:
        first, inverse = _group_rows(t.a, t.b, t.outcome, t.weight)
        table = CountTable(
            n_models=t.n_models,
            a=t.a[first],
            b=t.b[first],
            outcome=t.outcome[first],
            n=np.bincount(inverse, minlength=first.size).astype(np.float64),
            weight=t.weight[first],
        )
    if cluster_ids is None:
        return table, None
    assert inverse is not None  # the dense path kept it (inverse=True when clustered)
    return table, cluster_matrix(cluster_ids, inverse, n_cells=table.n_cells)
