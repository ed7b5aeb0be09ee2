"""Analytic covariances: Fisher information and sandwich (Huber–White).

Both are computed in parameter space at the point fit and mapped to ratings
with the same linear map the fit uses (mean-centring or anchoring).

* Fisher: ``cov = I^+`` (pseudo-inverse of the observed information, the
  common shift removed).  Model-based: right when votes are independent and
  the model holds.  With half ties it over-states the variance, because a tie
  scores 0.5 with no Bernoulli noise.
* Sandwich: ``cov = I^+ B I^+`` with the meat ``B`` the sum over independent
  units of outer products of their score vectors.  Units are battles by
  default (computed per category, all battles of a category having the same
  score) or clusters when a clusters x cells matrix is given, which makes it
  cluster-robust.  A ``K / (K - 1)`` small-sample factor is applied.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from arena.engine.design import Design
from arena.engine.fit import SCALE, Fit, rating_transform
from arena.engine.newton import group_terms

__all__ = ["fisher_cov", "sandwich_cov"]


def _category_scores(design: Design, x: np.ndarray) -> sp.csr_matrix:
    """Score (gradient of the log-likelihood) of one battle of each category, shape (Q, P)."""
    d = design
    q, ma = d.cat_n.size, d.n_active
    coo = d.cat_stats.tocoo()
    g_of_cat = np.zeros(q, dtype=np.intp)
    g_of_cat[coo.row] = coo.col % d.n_groups
    stats = np.zeros((d.n_stats, q))
    np.add.at(stats, (coo.col // d.n_groups, coo.row), coo.data)
    ga, gb = d.ga[g_of_cat], d.gb[g_of_cat]
    lin = x[ga] - x[gb]
    if d.position:
        lin = lin + x[ma]
    phi = np.full(q, x[-1]) if d.ties == "davidson" else None
    _, (ld, _, lphi, _, _) = group_terms(d.ties, lin, phi, stats, derivs=True, value=False)
    qi = np.arange(q)
    rows, cols, vals = [qi, qi], [ga, gb], [ld, -ld]
    k = ma
    if d.position:
        rows.append(qi)
        cols.append(np.full(q, k))
        vals.append(ld)
        k += 1
    if d.ties == "davidson":
        rows.append(qi)
        cols.append(np.full(q, k))
        vals.append(lphi)
    return sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(q, d.n_params)
    )


def fisher_cov(point: Fit) -> np.ndarray:
    """Fisher covariance of the ratings, shape (M, M) (same as ``point.cov``)."""
    return point.cov


def sandwich_cov(point: Fit, clusters: sp.csr_matrix | None = None) -> np.ndarray:
    """Sandwich (robust) covariance of the ratings, shape (M, M).

    Parameters
    ----------
    point : Fit
    clusters : scipy.sparse matrix (K, C), optional
        Clusters x cells battle counts for the cluster-robust version.
    """
    d = point.design
    scores = _category_scores(d, point.x)
    if clusters is None:
        n = d.cat_n
        meat = np.asarray((scores.T @ sp.diags(n) @ scores).todense())
        units = n.sum()
    else:
        kept = d.cell_cat >= 0
        cols = np.flatnonzero(kept)
        to_cat = sp.csr_matrix(
            (np.ones(cols.size), (cols, d.cell_cat[kept])), shape=(d.cell_cat.size, d.cat_n.size)
        )
        zq = sp.csr_matrix(clusters) @ to_cat
        per_cluster = np.asarray((zq @ scores).todense())
        meat = per_cluster.T @ per_cluster
        units = float(np.count_nonzero(np.asarray(zq.sum(axis=1)).ravel()))
    if units > 1:
        meat *= units / (units - 1)
    pc = point.param_cov
    pcov = pc @ meat @ pc
    t = rating_transform(d, point.anchor)
    cov = SCALE**2 * (t @ pcov @ t.T)
    none_idx = np.flatnonzero(d.battles_per_model == 0)
    cov[none_idx, none_idx] = point.cov[none_idx, none_idx]
    return cov
