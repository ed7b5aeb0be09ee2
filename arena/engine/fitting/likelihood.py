"""The Bradley–Terry log-likelihood of R fits at once: value, gradient, Hessian.

Parameters of round ``r`` are ``x[r] = [theta (Ma), gamma (if position),
phi (if Davidson)]``, statistics ``(R, n_stats, G)`` per group of a
:class:`~arena.engine.fitting.design.Design`.  The log-likelihood is concave; without
a prior it is invariant to shifting all thetas, which :func:`evaluate` removes
by adding ``c/Ma * 1 1^T`` to the negative Hessian (the added direction
carries zero gradient, so the Newton step is the minimum-norm one and thetas
stay mean-centred).  The solvers of :mod:`arena.engine.fitting.newton` call these;
:func:`category_maps` gives the per-category score and curvature the
bootstrap and the sandwich estimator use.
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np
import scipy.sparse as sp

from arena.engine.fitting.design import Design

__all__ = [
    "evaluate",
    "group_terms",
    "logistic",
    "hessian_diagonal",
    "category_stats",
    "category_maps",
    "gradient_scale",
    "rmul",
]


#: ``(ld, hdd, lphi, hpp, hdp)`` of :func:`group_terms`: d ll/dd, then the terms that
#: are None where the tie model (phi terms for half ties) or ``curvature=False`` has
#: none -- which ones depends on the arguments, so they are typed Any
Derivatives = tuple[np.ndarray, Any, Any, Any, Any]


def _unpack(design: Design, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    ma = design.n_active
    theta = x[:, :ma]
    d = np.take(theta, design.ga, axis=1)
    d -= np.take(theta, design.gb, axis=1)
    if design.position:
        d += x[:, ma : ma + 1]
    phi = x[:, -1:] if design.ties == "davidson" else None
    return theta, d, phi


def _pieces(
    design: Design,
    x: np.ndarray,
    stats: np.ndarray,
    *,
    derivs: bool,
    value: bool = True,
    curvature: bool = True,
) -> tuple[Any, Derivatives | None]:
    """Per-group log-likelihood terms (if ``value``) and (if ``derivs``) derivatives."""
    _, d, phi = _unpack(design, x)
    return group_terms(design.ties, d, phi, stats, derivs=derivs, value=value, curvature=curvature)


#: Largest |theta| (plus |position term|) for which the gradient path factors
#: exp(-d) into per-model exponentials: exp(+-300) and their products stay finite.
_EXP_SAFE = 300.0


def _half_gradient_terms(design: Design, x: np.ndarray, stats: np.ndarray) -> np.ndarray | None:
    """``d ll / d d`` per group for half ties, ``s - n / (1 + exp(-d))``, or None.

    ``exp(-d)`` with ``d = theta_a - theta_b (+ gamma)`` is computed as
    ``exp(-theta_a) * exp(theta_b) (* exp(-gamma))``: M exponentials instead of
    G, and the first factor is a run-length expansion (groups are sorted by
    their first member) instead of a gather.  Within 2 ulp of the direct form.
    Returns None where that factoring does not apply (Davidson ties, no
    groups, or ratings so extreme that the factors could overflow).
    """
    ma = design.n_active
    if design.ties != "half" or ma == 0 or design.n_groups == 0:
        return None
    theta = x[:, :ma]
    reach = np.abs(theta).max()
    if design.position:
        reach += np.abs(x[:, ma]).max()
    if not reach <= _EXP_SAFE:
        return None
    ea = np.exp(-theta)
    if design.position:
        ea *= np.exp(-x[:, ma : ma + 1])
    e = np.repeat(ea, design.sums.ga_runs, axis=1)
    e *= np.take(np.exp(theta), design.gb, axis=1)
    e += 1.0
    np.divide(stats[:, 1], e, out=e)
    np.subtract(stats[:, 0], e, out=e)
    return e


def logistic(d: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``expit(d)`` as ``1 / (1 + exp(-d))``: as accurate (exp overflows to inf
    and gives 0 exactly where expit underflows), and 3x faster than
    ``scipy.special.expit``, which branches on the sign of every element."""
    p = np.negative(d, out=out)
    with np.errstate(over="ignore"):
        np.exp(p, out=p)
    p += 1.0
    out_: np.ndarray = np.reciprocal(p, out=p)
    return out_


@overload
def group_terms(
    ties: str,
    d: np.ndarray,
    phi: np.ndarray | None,
    stats: np.ndarray,
    *,
    derivs: Literal[True],
    value: bool = ...,
    curvature: bool = ...,
) -> tuple[Any, Derivatives]: ...
@overload
def group_terms(
    ties: str,
    d: np.ndarray,
    phi: np.ndarray | None,
    stats: np.ndarray,
    *,
    derivs: bool,
    value: bool = ...,
    curvature: bool = ...,
) -> tuple[Any, Derivatives | None]: ...
def group_terms(
    ties: str,
    d: np.ndarray,
    phi: np.ndarray | None,
    stats: np.ndarray,
    *,
    derivs: bool,
    value: bool = True,
    curvature: bool = True,
) -> tuple[Any, Derivatives | None]:
    """Log-likelihood terms and derivatives given the linear predictor ``d``.

    ``stats`` has the statistics on axis -2.  Returns ``(ll, (ld, hdd, lphi,
    hpp, hdp))``: d ll/dd, -d2 ll/dd2, d ll/dphi, -d2 ll/dphi2, -d2 ll/dd dphi
    (phi terms None for half ties; second derivatives None unless ``curvature``).
    """
    if ties == "half":
        s, n = stats[..., 0, :], stats[..., 1, :]
        ll = s * d - n * np.logaddexp(0.0, d) if value else None
        if not derivs:
            return ll, None
        if not curvature:
            # gradient-only path of the chord iterations, in place:
            # s - n / (1 + exp(-d)), five passes
            ld = np.negative(d, out=None if value else d)
            with np.errstate(over="ignore"):
                np.exp(ld, out=ld)
            ld += 1.0
            np.divide(n, ld, out=ld)
            np.subtract(s, ld, out=ld)
            return ll, (ld, None, None, None, None)
        p = logistic(d)
        hdd = n * p
        ld = s - hdd
        # same operations as n * p * (1 - p), with two temporaries fewer
        np.subtract(1.0, p, out=p)
        hdd *= p
        return ll, (ld, hdd, None, None, None)
    assert phi is not None  # Davidson ties: the tie parameter is given
    wa, wb, wt = stats[..., 0, :], stats[..., 1, :], stats[..., 2, :]
    h = 0.5 * d
    m = np.maximum(np.abs(h), phi)
    ea, eb, et = np.exp(h - m), np.exp(-h - m), np.exp(phi - m)
    z = ea + eb + et
    tot = wa + wb + wt
    ll = (wa - wb) * h + wt * phi - tot * (m + np.log(z)) if value else None
    if not derivs:
        return ll, None
    pa, pb, pt = ea / z, eb / z, et / z
    diff = pa - pb
    ld = 0.5 * (wa - wb) - 0.5 * tot * diff
    hdd = tot * (0.25 * (pa + pb) - 0.25 * diff * diff)
    lphi = wt - tot * pt
    hpp = tot * pt * (1.0 - pt)
    hdp = -0.5 * tot * diff * pt
    return ll, (ld, hdd, lphi, hpp, hdp)


def rmul(mat_t: sp.csr_matrix, dense: np.ndarray) -> np.ndarray:
    """``dense @ mat`` for a dense (R, G) matrix, given the sparse ``mat_t = mat.T`` (K, G)."""
    out: np.ndarray = np.asarray((mat_t @ dense.T).T)
    return out


@overload
def evaluate(
    design: Design, x: np.ndarray, stats: np.ndarray, lam: float, *, order: Literal[2] = ...
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
@overload
def evaluate(
    design: Design, x: np.ndarray, stats: np.ndarray, lam: float, *, order: Literal[1]
) -> tuple[np.ndarray, np.ndarray, None]: ...
@overload
def evaluate(
    design: Design, x: np.ndarray, stats: np.ndarray, lam: float, *, order: Literal[-1]
) -> tuple[None, np.ndarray, None]: ...
@overload
def evaluate(
    design: Design, x: np.ndarray, stats: np.ndarray, lam: float, *, order: Literal[0]
) -> tuple[np.ndarray, None, None]: ...
@overload
def evaluate(
    design: Design, x: np.ndarray, stats: np.ndarray, lam: float, *, order: int
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]: ...
def evaluate(
    design: Design, x: np.ndarray, stats: np.ndarray, lam: float, *, order: int = 2
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Objective (log-likelihood minus prior), gradient and negative Hessian.

    Parameters
    ----------
    x : ndarray, shape (R, P)
    stats : ndarray, shape (R, n_stats, G)
    lam : float
        Gaussian prior precision on theta (0: none; then the gauge term is added).
    order : int
        0: objective only; 1: and gradient; 2: and negative Hessian;
        -1: gradient only (objective returned as None).

    Returns
    -------
    f : (R,), g : (R, P) or None, H : (R, P, P) or None
    """
    ma = design.n_active
    grad_only = order == -1
    if grad_only:
        order = 1
    theta = x[:, :ma]
    ld = _half_gradient_terms(design, x, stats) if grad_only else None
    # der = (ld, hdd, lphi, hpp, hdp); None where the tie model or the order has no such term
    ll: Any
    der: Derivatives | None
    if ld is not None:
        half: Derivatives = (ld, None, None, None, None)
        ll, der = None, half
    else:
        ll, der = _pieces(
            design, x, stats, derivs=order >= 1, value=not grad_only, curvature=order >= 2
        )
    f = None if grad_only else ll.sum(axis=1) - 0.5 * lam * np.einsum("ij,ij->i", theta, theta)
    if order == 0:
        return f, None, None
    assert der is not None  # order >= 1 asked for the derivatives
    ld, hdd, lphi, hpp, hdp = der
    r, p = x.shape
    g = np.empty((r, p))
    g[:, :ma] = design.sums.signed(ld) - lam * theta
    k = ma
    if design.position:
        g[:, k] = ld.sum(axis=1)
        k += 1
    if design.ties == "davidson":
        g[:, k] = lphi.sum(axis=1)
    if order == 1:
        return f, g, None
    h = np.zeros((r, p, p))
    hflat = h.reshape(r, p * p)
    # theta block: a weighted graph Laplacian, off-diagonals per unordered pair
    if design.position:
        pair_w = rmul(design.pair_map_t, hdd)
    else:
        pair_w = hdd  # groups are the unordered pairs already
    hflat[:, design.pair_i * p + design.pair_j] = -pair_w
    hflat[:, design.pair_j * p + design.pair_i] = -pair_w
    diag = np.arange(ma)
    h[:, diag, diag] = design.sums.total(hdd) + lam
    if lam == 0.0 and ma > 0:
        scale = h[:, diag, diag].mean(axis=1) / ma
        h[:, :ma, :ma] += scale[:, None, None]
    k = ma
    if design.position:
        col = design.sums.signed(hdd)
        h[:, :ma, k] = col
        h[:, k, :ma] = col
        h[:, k, k] = hdd.sum(axis=1)
        k += 1
    if design.ties == "davidson":
        col = design.sums.signed(hdp)
        h[:, :ma, k] = col
        h[:, k, :ma] = col
        h[:, k, k] = hpp.sum(axis=1)
        if design.position:
            h[:, k - 1, k] = h[:, k, k - 1] = hdp.sum(axis=1)
    return f, g, h


def hessian_diagonal(design: Design, x: np.ndarray, stats: np.ndarray, lam: float) -> np.ndarray:
    """Diagonal of the negative Hessian (no gauge term), shape (R, P)."""
    _, der = _pieces(design, x, stats, derivs=True, value=False)
    assert der is not None  # derivs=True
    _, hdd, _, hpp, _ = der
    out = [design.sums.total(hdd) + lam]
    if design.position:
        out.append(hdd.sum(axis=1, keepdims=True))
    if design.ties == "davidson":
        out.append(hpp.sum(axis=1, keepdims=True))
    return np.concatenate(out, axis=1)


def category_stats(design: Design) -> tuple[np.ndarray, np.ndarray]:
    """Group of each category and the statistics of one of its battles, shapes (Q,), (n_stats, Q)."""
    coo = design.cat_stats.tocoo()
    q = design.cat_n.size
    group = np.zeros(q, dtype=np.intp)
    group[coo.row] = coo.col % design.n_groups
    stats = np.zeros((design.n_stats, q))
    np.add.at(stats, (coo.col // design.n_groups, coo.row), coo.data)
    return group, stats


def category_maps(design: Design, x: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Per-battle score and curvature of each category at parameters ``x``, each (Q, P).

    Both the gradient and the Hessian diagonal of the log-likelihood are sums
    over battles, so for any resample with category counts ``c`` they are
    ``c @ score`` and ``c @ curv`` at the fixed point ``x``: the bootstrap gets
    each round's starting gradient and curvature from one sparse product
    instead of a pass over all groups.  ``score`` rows are also the per-battle
    score vectors of the sandwich estimator.
    """
    d = design
    q, ma = d.cat_n.size, d.n_active
    group, stats = category_stats(d)
    ga, gb = d.ga[group], d.gb[group]
    lin = x[ga] - x[gb]
    if d.position:
        lin = lin + x[ma]
    phi = np.full(q, x[-1]) if d.ties == "davidson" else None
    _, (ld, hdd, lphi, hpp, _) = group_terms(d.ties, lin, phi, stats, derivs=True, value=False)
    qi = np.arange(q)
    rows, cols, score, curv = [qi, qi], [ga, gb], [ld, -ld], [hdd, hdd]
    k = ma
    if d.position:
        rows.append(qi)
        cols.append(np.full(q, k))
        score.append(ld)
        curv.append(hdd)
        k += 1
    if d.ties == "davidson":
        rows.append(qi)
        cols.append(np.full(q, k))
        score.append(lphi)
        curv.append(hpp)
    ij = np.concatenate(rows), np.concatenate(cols)
    shape = (q, d.n_params)
    return (
        sp.csr_matrix((np.concatenate(score), ij), shape=shape),
        sp.csr_matrix((np.concatenate(curv), ij), shape=shape),
    )


def gradient_scale(design: Design, stats: np.ndarray) -> np.ndarray:
    """Largest per-model total battle weight of each round, at least 1; shape (R,)."""
    tot = stats[:, 1] if design.ties == "half" else stats.sum(axis=1)
    per_model = design.sums.total(tot)
    if per_model.shape[1] == 0:
        return np.ones(stats.shape[0])
    scale: np.ndarray = np.maximum(per_model.max(axis=1), 1.0)
    return scale
