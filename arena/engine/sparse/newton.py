"""Batched Newton with preconditioned conjugate gradients: no models x models matrix.

The solvers of :mod:`arena.engine.fitting.newton` build the ``(P, P)`` negative
Hessian of every round and solve it densely; at ten thousand models that is
800 MB per round.  Here the Hessian is never formed.  Its product with a
vector is one gather over the groups (unordered pairs, or ordered pairs with a
position term), a multiply by the per-group curvature and one sparse
scatter back onto the models, O(groups) per round, and the Newton system
``H step = g`` is solved by conjugate gradients preconditioned with the
Hessian diagonal, batched over rounds.

Layout: rounds run along the *last* axis (parameters ``(P, R)``, group
arrays ``(G, R)``, statistics ``(G, n_stats, R)``), so the gathers and the
sparse scatter move whole rows of ``R`` contiguous numbers.

The objective, its gradient and the stopping rule are those of the dense
solver (same log-likelihood terms, same prior, same gauge term ``c/Ma 1 1^T``
without a prior, same ``max |gradient| <= gtol``), so both converge to the
same maximiser; only the way there differs.  Each Newton step is solved to a
relative residual that shrinks with the gradient (inexact Newton) and no
tighter than the stopping rule needs; the products run in float32 (the step
only has to be a good direction: every gradient, and so the stopping test, is
float64).  A full step is taken when it shrinks the gradient, otherwise an
Armijo backtracking search on the objective.
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np

from arena.engine.fitting.design import Design
from arena.engine.fitting.likelihood import group_terms

__all__ = ["Curvature", "column_stats", "sparse_evaluate", "sparse_newton"]

#: Conjugate-gradient iterations per Newton step (a cap; well-connected
#: comparison graphs need 5-20).
MAX_CG = 200


def column_stats(design: Design, counts_t: np.ndarray) -> np.ndarray:
    """Group statistics ``(G, n_stats, R)`` from category counts ``(Q, R)``."""
    flat = np.asarray(design.cat_stats_t @ counts_t)  # (n_stats * G, R)
    return flat.reshape(design.n_stats, design.n_groups, -1).transpose(1, 0, 2)


class Curvature:
    """Per-round curvature at a point: everything a Hessian-vector product needs."""

    def __init__(
        self,
        design: Design,
        hdd: np.ndarray,
        hdp: np.ndarray | None,
        hpp_sum: np.ndarray | None,
        diag: np.ndarray,
        gauge: np.ndarray,
        lam: np.ndarray,
        inc_t: Any,
    ) -> None:
        self.design = design
        self.dtype = dtype = inc_t.dtype
        self.hdd = hdd.astype(dtype, copy=False)
        self.hdp = None if hdp is None else hdp.astype(dtype, copy=False)
        self.hpp_sum, self.diag, self.gauge, self.lam = hpp_sum, diag, gauge, lam
        self.inc_t = inc_t

    def take(self, cols: np.ndarray) -> Curvature:
        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[..., cols]

        out = object.__new__(Curvature)
        out.__dict__.update(self.__dict__)
        out.hdd, out.hdp, out.hpp_sum = self.hdd[:, cols], pick(self.hdp), pick(self.hpp_sum)
        out.diag, out.gauge, out.lam = self.diag[:, cols], self.gauge[cols], self.lam[cols]
        return out

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """Negative Hessian (with prior and gauge term) times ``v`` (P, R), column by column."""
        d = self.design
        ma = d.n_active
        th = v[:ma].astype(self.dtype, copy=False)
        t = np.take(th, d.ga, axis=0)
        t -= np.take(th, d.gb, axis=0)
        if d.position:
            t += v[ma].astype(self.dtype)
        if self.hdp is not None:
            jv = t.copy()
        t *= self.hdd
        if self.hdp is not None:
            t += self.hdp * v[-1].astype(self.dtype)
        out = np.empty(v.shape)
        out[:ma] = self.inc_t @ t
        out[:ma] += self.lam * v[:ma] + self.gauge * v[:ma].sum(axis=0)
        if d.position:
            out[ma] = t.sum(axis=0)
        if self.hdp is not None:
            out[-1] = np.einsum("gr,gr->r", self.hdp, jv) + self.hpp_sum * v[-1]
        return out


#: the incidence transpose and its absolute value (scipy sparse matrices)
IncidencePair = tuple[Any, Any]


@overload
def sparse_evaluate(
    design: Design,
    x: np.ndarray,
    stats: np.ndarray,
    lam: np.ndarray,
    *,
    order: Literal[2] = ...,
    cg_inc: IncidencePair | None = ...,
) -> tuple[None, np.ndarray, Curvature]: ...
@overload
def sparse_evaluate(
    design: Design,
    x: np.ndarray,
    stats: np.ndarray,
    lam: np.ndarray,
    *,
    order: Literal[-1],
    cg_inc: IncidencePair | None = ...,
) -> tuple[None, np.ndarray, None]: ...
@overload
def sparse_evaluate(
    design: Design,
    x: np.ndarray,
    stats: np.ndarray,
    lam: np.ndarray,
    *,
    order: Literal[0],
    cg_inc: IncidencePair | None = ...,
) -> tuple[np.ndarray, None, None]: ...
def sparse_evaluate(
    design: Design,
    x: np.ndarray,
    stats: np.ndarray,
    lam: np.ndarray,
    *,
    order: int = 2,
    cg_inc: IncidencePair | None = None,
) -> tuple[np.ndarray | None, np.ndarray | None, Curvature | None]:
    """Objective, gradient and :class:`Curvature` of every round (columns of ``x`` (P, R)).

    ``lam`` is the prior precision per round, shape (R,); ``order`` 0: the
    objective only; -1: gradient only; 2: gradient and curvature (no
    objective).  ``cg_inc``: the incidence transpose and its absolute value in
    the precision of the Hessian products (default: the design's, float64);
    the diagonal (a preconditioner) is summed in that precision too.  The
    functions are those of
    :func:`arena.engine.fitting.newton.evaluate`.
    """
    d = design
    ma = d.n_active
    theta = x[:ma]
    lin = np.take(theta, d.ga, axis=0)
    lin -= np.take(theta, d.gb, axis=0)
    if d.position:
        lin += x[ma]
    phi = x[-1:] if d.ties == "davidson" else None
    ll, der = group_terms(
        d.ties, lin, phi, stats, derivs=order != 0, value=order == 0, curvature=order == 2
    )
    if order == 0:
        return ll.sum(axis=0) - 0.5 * lam * np.einsum("pr,pr->r", theta, theta), None, None
    assert der is not None  # order != 0 asked for the derivatives
    ld, hdd, lphi, hpp, hdp = der
    g = np.empty(x.shape)
    g[:ma] = d.incidence_t @ ld
    g[:ma] -= lam * theta
    k = ma
    if d.position:
        g[k] = ld.sum(axis=0)
        k += 1
    if d.ties == "davidson":
        g[k] = lphi.sum(axis=0)
    if order == -1:
        return None, g, None
    inc_t, inc_abs_t = (d.incidence_t, d.incidence_abs_t) if cg_inc is None else cg_inc
    hdd = hdd.astype(inc_t.dtype, copy=False)
    diag = np.empty(x.shape)
    diag[:ma] = inc_abs_t @ hdd
    diag[:ma] += lam
    gauge = np.zeros(x.shape[1])
    if ma:
        # as the dense solver: c/Ma 1 1^T with c the mean diagonal, only without a prior
        gauge = np.where(lam == 0.0, diag[:ma].mean(axis=0) / ma, 0.0)
        diag[:ma] += gauge
    k = ma
    if d.position:
        diag[k] = hdd.sum(axis=0)
        k += 1
    hpp_sum = None
    if d.ties == "davidson":
        hpp_sum = hpp.sum(axis=0)
        diag[k] = hpp_sum
    else:
        hdp = None
    return None, g, Curvature(d, hdd, hdp, hpp_sum, diag, gauge, lam, inc_t)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.einsum("pr,pr->r", a, b)
    return out


def pcg(curv: Curvature, g: np.ndarray, eta: np.ndarray, max_iter: int = MAX_CG) -> np.ndarray:
    """Solve ``H step = g`` per column to relative residual ``eta`` (Jacobi-preconditioned).

    Columns that reach their tolerance stop moving; every iterate of CG
    started at zero is an ascent direction, so a capped solve still gives a
    usable step.
    """
    diag = curv.diag
    inv_m = 1.0 / np.where(diag > 0, diag, 1.0)
    step = np.zeros_like(g)
    res = g.copy()
    z = res * inv_m
    direction = z.copy()
    rz = _dot(res, z)
    target = eta * eta * _dot(g, g)
    live = _dot(res, res) > target
    for _ in range(max_iter):
        if not live.any():
            break
        q = curv.matvec(direction)
        pq = _dot(direction, q)
        alpha = np.where(live & (pq > 0), rz / np.where(pq > 0, pq, 1.0), 0.0)
        step += alpha * direction
        res -= alpha * q
        live &= (_dot(res, res) > target) & (pq > 0)
        np.multiply(res, inv_m, out=z)
        rz_new = _dot(res, z)
        beta = np.where(live, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
        direction *= beta
        direction += z
        rz = rz_new
    return step


def _armijo(
    design: Design,
    stats: np.ndarray,
    x: np.ndarray,
    step: np.ndarray,
    g: np.ndarray,
    lam: np.ndarray,
    rows: np.ndarray,
) -> np.ndarray:
    """Backtracking on the objective for the columns ``rows``; returns their new points."""
    xs, st, lm = x[:, rows], stats[..., rows], lam[rows]
    sp_ = step[:, rows]
    f0 = sparse_evaluate(design, xs, st, lm, order=0)[0]
    slope = _dot(g[:, rows], sp_)
    alpha = np.ones(rows.size)
    pending = np.arange(rows.size)
    for _ in range(60):
        trial = xs[:, pending] + alpha[pending] * sp_[:, pending]
        ft = sparse_evaluate(design, trial, st[..., pending], lm[pending], order=0)[0]
        fp = f0[pending]
        # Armijo, with slack for round-off once steps are at machine precision
        ok = ft >= fp + 1e-4 * alpha[pending] * slope[pending] - 1e-13 * np.abs(fp)
        ok &= np.isfinite(ft)
        xs[:, pending[ok]] = trial[:, ok]
        pending = pending[~ok]
        if pending.size == 0:
            break
        alpha[pending] *= 0.5
    return xs


def sparse_newton(
    design: Design,
    stats: np.ndarray,
    x0: np.ndarray,
    *,
    lam: float | np.ndarray,
    gtol: np.ndarray,
    max_iter: int = 100,
    eta_max: float = 0.5,
    max_cg: int = MAX_CG,
    dtype: type[np.floating[Any]] = np.float32,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Damped inexact Newton (PCG steps) for the columns of ``x0`` (P, R).

    Same contract as :func:`arena.engine.fitting.newton.newton`: a column is converged
    when its own ``max |gradient| <= gtol``.  ``stats`` (G, n_stats, R).

    Returns
    -------
    x : (P, R), converged : (R,) bool, iterations : (R,) int, grad_norm : (R,)
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    r = x.shape[1]
    lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (r,)).copy()
    converged = np.zeros(r, dtype=bool)
    iterations = np.zeros(r, dtype=np.int64)
    gnorm = np.full(r, np.inf)
    idx = np.arange(r)
    st = stats
    # the products' precision, converted once
    cg_inc = (design.incidence_t.astype(dtype), design.incidence_abs_t.astype(dtype))
    _, g, curv = sparse_evaluate(design, x, st, lam, cg_inc=cg_inc)
    g_first = None
    for _ in range(max_iter + 1):
        gn = np.abs(g).max(axis=0) if g.shape[0] else np.zeros(idx.size)
        gnorm[idx] = gn
        if g_first is None:
            g_first = np.maximum(gn, 1e-300)
        done = gn <= gtol[idx]
        converged[idx[done]] = True
        live = ~done
        if not live.any() or iterations[idx[live]].min() >= max_iter:
            break
        if not live.all():
            keep = np.flatnonzero(live)
            idx, g, g_first = idx[keep], g[:, keep], g_first[keep]
            curv = curv.take(keep)
            st = stats[..., idx]
        iterations[idx] += 1
        # forcing term: quadratic convergence, but no tighter than the stopping rule needs
        g2 = np.sqrt(_dot(g, g))
        eta = np.minimum(np.sqrt(gnorm[idx] / g_first), eta_max)
        eta = np.clip(np.maximum(eta, 0.2 * gtol[idx] / np.maximum(g2, 1e-300)), 1e-12, eta_max)
        step = pcg(curv, g, eta, max_cg)
        xs = x[:, idx] + step
        _, gt, ct = sparse_evaluate(design, xs, st, lam[idx], cg_inc=cg_inc)
        worse = np.flatnonzero(~(np.abs(gt).max(axis=0) < gnorm[idx]))
        if worse.size:
            xs[:, worse] = _armijo(design, st, x[:, idx], step, g, lam[idx], worse)
            _, gt, ct = sparse_evaluate(design, xs, st, lam[idx], cg_inc=cg_inc)
        x[:, idx] = xs
        g, curv = gt, ct
    return x, converged, iterations, gnorm
