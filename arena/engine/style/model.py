"""Style control, model side: batched likelihood derivatives of the contextual BT model.

For a row (battles with the same ``a, b, outcome, weight, z``) the linear
predictor is ``d = theta_a - theta_b + z . gamma`` (plus a constant
first-shown term when ``position``), and the log-likelihood terms are the
raw engine's (:func:`arena.engine.fitting.likelihood.group_terms`): half ties or
Davidson.  Parameters are ``x = [theta (Ma), gamma (F), phi (Davidson)]``.

:class:`StyleDesign` provides ``evaluate`` and ``hessian_diagonal`` with the
signatures the raw engine's solvers (:func:`~arena.engine.fitting.newton.newton`,
:func:`~arena.engine.fitting.newton.chord`) call, so the style model is solved by the
same damped Newton and fixed-Hessian iterations.  Its dense ``(P, P)``
Hessian, ``P = models + features``, is assembled from segment sums: rows are
sorted by ordered pair, so per-pair sums are one ``np.add.reduceat``, and the
pair -> model maps are the raw design's sparse incidence matrices.

The prior ``lam`` is a precision *vector* over the parameters: zero for the
MLE; LMArena's L2 penalty; or the weak prior on theta when the MLE does not
exist.  While theta has no prior, the common shift is removed by the rank-one
gauge term of the raw engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import dgemv

from arena.core.defaults import DEFAULT_TIES
from arena.core.errors import ArgumentError
from arena.core.outcomes import A_WINS, B_WINS
from arena.engine.counts import CountTable
from arena.engine.fitting.design import CLASS_A, CLASS_B, ParameterCounts, make_design
from arena.engine.fitting.likelihood import group_terms, rmul
from arena.engine.style.design import StyleTable

__all__ = ["StyleDesign"]

#: Largest ``rows x F^2`` for which the per-row products ``z_k z_l`` are kept.
ZZ_MAX_ELEMS = 16_000_000


def _index_dtype(nnz: int) -> type[np.signedinteger[Any]]:
    return np.int32 if nnz < np.iinfo(np.int32).max else np.int64


class StyleDesign(ParameterCounts):
    """Compiled contextual Bradley–Terry model of a :class:`StyleTable`.

    Attributes
    ----------
    raw : Design
        The raw engine's design of the same battles (ordered pairs): groups,
        incidence matrices, MLE-existence checks and per-model flags.
    n_models, active, battles_per_model, n_active, n_params
        As for :class:`arena.engine.fitting.design.Design` (the helpers of
        :mod:`arena.engine.fitting.fit` work on either).
    z : ndarray, shape (N, F)
        Covariates per row (a column of ones last when ``position``).
    names : tuple of str
        Names of the ``F`` covariates.
    unit : ndarray, shape (n_stats, N)
        Statistics contributed by one battle of each row.
    cat_n : ndarray, shape (N,)
        Battles per row (the bootstrap resamples rows).
    """

    def __init__(self, table: StyleTable, *, ties: str = DEFAULT_TIES, position: bool = False):
        ct = CountTable(table.n_models, table.a, table.b, table.outcome, table.n, table.weight)
        raw = make_design(ct, ties=ties, both_bad="tie", position=True)
        self.raw = raw
        self.ties = raw.ties
        self.position = bool(position)
        self.n_models = raw.n_models
        self.active = raw.active
        self.battles_per_model = raw.battles_per_model
        self.n_stats = raw.n_stats
        m = table.n_models
        gkeys = raw.active[raw.ga] * m + raw.active[raw.gb]
        group = np.searchsorted(gkeys, table.a * m + table.b)
        if table.n_rows and np.any(np.diff(group) < 0):
            raise ArgumentError("style table rows must be sorted by (model_a, model_b)")
        self.row_group = group
        self.starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if group.size else group
        self.glen = np.diff(np.r_[self.starts, group.size])
        z = table.z
        names = tuple(table.features)
        if self.position:
            z = np.hstack([z, np.ones((table.n_rows, 1))])
            names = (*names, "position")
        self.z = np.ascontiguousarray(z)
        self.z2 = self.z * self.z
        self.zf = self.z.T  # (F, N) Fortran-ordered view, as BLAS wants it
        f, n, n_groups = z.shape[1], z.shape[0], raw.n_groups
        # products z_k z_l per row for the coefficient block of the Hessian as
        # one (R, N) @ (N, F * F) product; on large tables (8 F^2 bytes a row:
        # 640 MB at 5M rows) the block is summed round by round instead
        self.zz = (
            (z[:, :, None] * z[:, None, :]).reshape(n, f * f) if n * f * f <= ZZ_MAX_ELEMS else None
        )
        # (1 + F) x G rows: row k * G + g sums z_k (z_0 = 1) over the rows of
        # pair g; rows are sorted by pair, so each row of this matrix is one
        # contiguous range of table rows (built directly in CSR form)
        if self.starts.size != n_groups:
            raise ArgumentError("every pair of the raw design must have a style row")
        idx = _index_dtype(n * (f + 1))
        starts = self.starts.astype(idx)
        self.group_z_t = sp.csr_matrix(
            (
                np.concatenate([np.ones(n), self.zf.ravel()]),
                np.tile(np.arange(n, dtype=idx), f + 1),
                np.concatenate([starts + k * n for k in range(f + 1)] + [[n * (f + 1)]]).astype(
                    idx
                ),
            ),
            shape=((f + 1) * n_groups, n),
        )
        self.names = names
        self.n_features: int = z.shape[1]
        self.cat_n = table.n
        self.cell_cat = raw.cell_cat  # row -> raw category (rows are the table's cells)
        o, w = table.outcome, table.weight
        if self.ties == "half":
            credit = np.where(o == A_WINS, 1.0, np.where(o == B_WINS, 0.0, 0.5))
            self.unit = np.stack([credit * w, w])
        else:
            cls = np.full(o.shape, 2)
            cls[o == A_WINS], cls[o == B_WINS] = CLASS_A, CLASS_B
            self.unit = np.stack([w * (cls == k) for k in range(3)])

    @property
    def n_active(self) -> int:
        return int(self.raw.n_active)

    @property
    def n_extra(self) -> int:
        return self.n_features + int(self.ties == "davidson")

    # ------------------------------------------------------------ statistics
    def stats_from_counts(self, counts: np.ndarray) -> np.ndarray:
        """Row statistics ``(R, n_stats, N)`` from battle counts per row ``(R, N)``."""
        counts = np.atleast_2d(counts)
        stats: np.ndarray = counts[:, None, :] * self.unit[None]
        return stats

    def point_stats(self) -> np.ndarray:
        return self.stats_from_counts(self.cat_n[None, :])

    def raw_stats(self, stats: np.ndarray) -> np.ndarray:
        """The raw design's group statistics ``(R, n_stats, G)`` of row statistics."""
        return np.add.reduceat(stats, self.starts, axis=2) if stats.shape[2] else stats

    def gradient_scale(self, stats: np.ndarray) -> np.ndarray:
        """Total battle weight of each round, at least 1: the size of the gradient entries."""
        tot = stats[:, 1].sum(axis=1) if self.ties == "half" else stats.sum(axis=(1, 2))
        scale: np.ndarray = np.maximum(tot, 1.0)
        return scale

    # ------------------------------------------------------------ derivatives
    def _linear(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        ma, f = self.n_active, self.n_features
        theta = x[:, :ma]
        dg = np.take(theta, self.raw.ga, axis=1)
        dg -= np.take(theta, self.raw.gb, axis=1)
        d = np.repeat(dg, self.glen, axis=1)
        # one gemv per round, accumulating into d in place (BLAS handles
        # (R, F) @ (F, N) with a tiny F poorly)
        for r in range(d.shape[0] if f else 0):
            dgemv(1.0, self.zf, x[r, ma : ma + f], beta=1.0, y=d[r], overwrite_y=True, trans=1)
        phi = x[:, -1:] if self.ties == "davidson" else None
        return d, phi

    def _to_models(self, per_row: np.ndarray, signed: bool = True) -> np.ndarray:
        """Sum row terms ``(R, N)`` onto the models: ``+`` first, ``-`` second (or ``+`` both)."""
        per_group = np.add.reduceat(per_row, self.starts, axis=1)
        mat = self.raw.incidence_t if signed else self.raw.incidence_abs_t
        return rmul(mat, per_group)

    def evaluate(
        self, x: np.ndarray, stats: np.ndarray, lam: np.ndarray, *, order: int = 2
    ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        """Objective (log-likelihood minus prior), gradient and negative Hessian.

        Same contract as :func:`arena.engine.fitting.likelihood.evaluate`, with ``lam`` a
        precision vector of shape (P,); ``order=-2`` gives gradient and
        Hessian without the objective (which costs a ``logaddexp`` per row).
        """
        value = order >= 0
        d, phi = self._linear(x)
        ll, der = group_terms(
            self.ties, d, phi, stats, derivs=order != 0, value=value, curvature=abs(order) >= 2
        )
        fval = ll.sum(axis=1) - 0.5 * (x * x) @ lam if value else None
        if order == 0:
            return fval, None, None
        assert der is not None  # order != 0 asked for the derivatives
        g, h = self.assemble(der, x, lam, hessian=abs(order) >= 2)
        return fval, g, h

    def point_terms(self, x: np.ndarray) -> tuple[np.ndarray | None, ...]:
        """Per-battle derivative terms of every row at ``x`` (P,), each shape (N,) or None.

        The terms of :func:`~arena.engine.fitting.likelihood.group_terms` are linear in
        the statistics at fixed ``x``, so a resample with row counts ``c``
        has terms ``c * t``: its gradient and Hessian at ``x`` need no
        ``expit`` pass (see :meth:`assemble`).
        """
        d, phi = self._linear(x[None, :])
        der = group_terms(self.ties, d, phi, self.unit[None], derivs=True, value=False)[1]
        return tuple(None if t is None else t[0] for t in der)

    def assemble(
        self, der: Sequence[Any], x: np.ndarray, lam: np.ndarray, *, hessian: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Gradient ``(R, P)`` and negative Hessian ``(R, P, P)`` from row terms ``(R, N)``."""
        ma, f = self.n_active, self.n_features
        ld, hdd, lphi, hpp, hdp = der
        r, p = x.shape
        g = np.empty((r, p))
        if ma:
            g[:, :ma] = self._to_models(ld)
        g[:, ma : ma + f] = ld @ self.z
        if self.ties == "davidson":
            g[:, -1] = lphi.sum(axis=1)
        g -= x * lam
        if not hessian:
            return g, None
        h = np.zeros((r, p, p))
        hflat = h.reshape(r, p * p)
        raw = self.raw
        # per-pair sums of hdd and hdd * z in one sparse product, and the
        # coefficient block as one (R, N) @ (N, F * F) product
        hgz = rmul(self.group_z_t, hdd).reshape(r, f + 1, -1)
        hg = hgz[:, 0]
        pair_w = rmul(raw.pair_map_t, hg)
        hflat[:, raw.pair_i * p + raw.pair_j] = -pair_w
        hflat[:, raw.pair_j * p + raw.pair_i] = -pair_w
        diag = np.arange(ma)
        h[:, diag, diag] = rmul(raw.incidence_abs_t, hg)
        if ma and not np.any(lam[:ma]):
            scale = h[:, diag, diag].mean(axis=1) / ma
            h[:, :ma, :ma] += scale[:, None, None]
        if f:
            col = rmul(raw.incidence_t, hgz[:, 1:].reshape(r * f, -1)).reshape(r, f, ma)
            h[:, ma : ma + f, :ma] = col
            h[:, :ma, ma : ma + f] = col.transpose(0, 2, 1)
            h[:, ma : ma + f, ma : ma + f] = self._feature_block(hdd)
        if self.ties == "davidson":
            col = self._to_models(hdp)
            h[:, :ma, -1] = col
            h[:, -1, :ma] = col
            cz = hdp @ self.z
            h[:, ma : ma + f, -1] = cz
            h[:, -1, ma : ma + f] = cz
            h[:, -1, -1] = hpp.sum(axis=1)
        h[:, np.arange(p), np.arange(p)] += lam
        return g, h

    def _feature_block(self, hdd: np.ndarray) -> np.ndarray:
        """``sum_i hdd_ri z_i z_i^T`` of every round, shape (R, F, F)."""
        r, f = hdd.shape[0], self.n_features
        if self.zz is not None:
            block: np.ndarray = (hdd @ self.zz).reshape(r, f, f)
            return block
        out = np.empty((r, f, f))
        for k in range(r):
            out[k] = (self.zf * hdd[k]) @ self.z
        return out

    def hessian_diagonal(self, x: np.ndarray, stats: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Diagonal of the negative Hessian (no gauge term), shape (R, P)."""
        d, phi = self._linear(x)
        der = group_terms(self.ties, d, phi, stats, derivs=True, value=False)[1]
        return self.diagonal_from_terms(der, lam)

    def diagonal_from_terms(self, der: Sequence[Any], lam: np.ndarray) -> np.ndarray:
        """Hessian diagonal ``(R, P)`` from row terms ``(R, N)`` (see :meth:`assemble`)."""
        hdd, hpp = der[1], der[3]
        hdd = np.atleast_2d(hdd)
        out = [self._to_models(hdd, signed=False), hdd @ self.z2]
        if self.ties == "davidson":
            out.append(np.atleast_2d(hpp).sum(axis=1, keepdims=True))
        diag: np.ndarray = np.concatenate(out, axis=1) + lam
        return diag

    def score_terms(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Per-battle score factors of every row at ``x``: ``ld`` (N,) and ``lphi`` (N,) or None."""
        d, phi = self._linear(x[None, :])
        _, (ld, _, lphi, _, _) = group_terms(
            self.ties, d, phi, self.unit[None], derivs=True, value=False
        )
        return ld[0], (None if lphi is None else lphi[0])

    def scores(
        self,
        x: np.ndarray,
        rows: slice | None = None,
        terms: tuple[np.ndarray, np.ndarray | None] | None = None,
    ) -> sp.csr_matrix:
        """Score vector of one battle of each row at ``x`` (no prior), shape (N, P).

        ``rows`` (a slice) gives those rows' only; ``terms`` the
        :meth:`score_terms` at ``x`` if already computed.
        """
        ma, f = self.n_active, self.n_features
        ld, lphi = self.score_terms(x) if terms is None else terms
        sel = slice(None) if rows is None else rows
        ld = ld[sel]
        n = ld.size
        group = self.row_group[sel]
        ga = self.raw.ga[group]
        gb = self.raw.gb[group]
        qi = np.arange(n)
        rows_ = [qi, qi, np.repeat(qi, f)]
        cols = [ga, gb, np.tile(ma + np.arange(f), n)]
        vals = [ld, -ld, (ld[:, None] * self.z[sel]).ravel()]
        if self.ties == "davidson":
            rows_.append(qi)
            cols.append(np.full(n, self.n_params - 1))
            assert lphi is not None  # Davidson ties have a tie-parameter score
            vals.append(lphi[sel])
        return sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows_), np.concatenate(cols))),
            shape=(n, self.n_params),
        )
