"""Analytic covariances: Fisher information and sandwich (Huber–White).

Both are computed in parameter space at the point fit and mapped to ratings
with the same linear map the fit uses (mean-centring or anchoring).

* Fisher: ``cov = I^+`` (pseudo-inverse of the observed information, the
  common shift removed); computed by the point fit as ``Fit.cov``.  Model-based: right when votes are independent and
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

from arena.engine.fitting.fit import Fit, rating_transform
from arena.engine.fitting.likelihood import category_maps
from arena.engine.scale import SCALE

__all__ = ["sandwich_cov", "sandwich_param_cov"]


def sandwich_param_cov(
    scores: sp.csr_matrix, n: np.ndarray, zq: sp.csr_matrix | None, param_cov: np.ndarray
) -> np.ndarray:
    """Sandwich covariance in parameter space, ``I^+ B I^+``.

    Parameters
    ----------
    scores : sparse (Q, P)
        Score vector of one battle of each category (or row).
    n : ndarray (Q,)
        Battles per category.
    zq : sparse (K, Q) or None
        Clusters x categories battle counts (cluster-robust meat), or None
        (battles are the units).
    param_cov : ndarray (P, P)
        ``I^+``, the gauge-projected inverse information.
    """
    if zq is None:
        meat = np.asarray((scores.T @ sp.diags(n) @ scores).todense())
        units = n.sum()
    else:
        per_cluster = np.asarray((zq @ scores).todense())
        meat = per_cluster.T @ per_cluster
        units = float(zq.shape[0])
    if units > 1:
        meat *= units / (units - 1)
    cov: np.ndarray = param_cov @ meat @ param_cov
    return cov


def sandwich_cov(point: Fit, clusters: sp.csr_matrix | None = None) -> np.ndarray:
    """Sandwich (robust) covariance of the ratings, shape (M, M).

    Parameters
    ----------
    point : Fit
    clusters : scipy.sparse matrix (K, C), optional
        Clusters x cells battle counts for the cluster-robust version.
    """
    d = point.design
    scores = category_maps(d, point.x)[0]
    zq = None if clusters is None else d.clusters_by_category(clusters)
    pcov = sandwich_param_cov(scores, d.cat_n, zq, point.param_cov)
    t = rating_transform(d, point.anchor)
    cov: np.ndarray = SCALE**2 * (t @ pcov @ t.T)
    none_idx = np.flatnonzero(d.battles_per_model == 0)
    cov[none_idx, none_idx] = point.cov[none_idx, none_idx]
    return cov
