"""Batched solvers for R fits at once: damped Newton and fixed-Hessian (chord).

Both work on ``(rounds, params)`` arrays and on any model that gives the
log-likelihood functions of :mod:`arena.engine.fitting.likelihood` (the raw
:class:`~arena.engine.fitting.design.Design`) or brings its own with the same
signatures (the style-controlled :class:`~arena.engine.style.model.StyleDesign`).

* :func:`newton` -- damped Newton with a backtracking (Armijo) line search,
  batched over rounds with ``np.linalg.solve`` on ``(R, P, P)`` stacks; rounds
  leave the batch as soon as they converge.
* :func:`chord` -- fixed-Hessian Newton: every round reuses the inverse
  information matrix of the point fit.  Bootstrap rounds are small
  perturbations of the data, so this converges linearly with a tiny rate for
  the cost of a matrix product per iteration; rounds whose gradient stops
  shrinking fast are handed to :func:`newton`.  Either way a round is only
  called converged when its own gradient is below tolerance, so the fixed
  point is that round's exact maximiser.

"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from arena.engine.fitting.design import Design
from arena.engine.fitting.likelihood import (
    evaluate,
    hessian_diagonal,
)

if TYPE_CHECKING:  # the style model shares these helpers; imported for annotations only
    from arena.engine.style.model import StyleDesign

__all__ = [
    "newton",
    "chord",
    "GTOL_REL",
    "GTOL_REL_BOOT",
]

#: Convergence: max |gradient| <= GTOL_REL * (largest per-model battle weight).
#: Gradient entries are sums of that many O(1) terms, so round-off sits near
#: 1e-16 of it; 1e-11 leaves ample margin yet pins theta to ~1e-10.
GTOL_REL = 1e-11
#: Bootstrap rounds stop at 1e-8: theta within ~4e-8 logits (< 1e-5 Elo) of
#: that round's exact maximiser -- 40x tighter than LMArena's own stopping rule
#: leaves its fits, and far below any Monte Carlo error.  (1e-9 costs one more
#: chord iteration, 20% of the solver time, for nothing visible.)
GTOL_REL_BOOT = 1e-8


def model_functions(
    design: Design | StyleDesign,
) -> tuple[Callable[..., tuple[Any, Any, Any]], Callable[..., np.ndarray]]:
    """``(evaluate, hessian_diagonal)`` of a design.

    The raw :class:`Design` uses this module's functions; another model (the
    style-controlled one) brings its own methods with the same signatures, so
    both share the solvers below.
    """
    if not isinstance(design, Design):  # the style model's own methods
        return design.evaluate, design.hessian_diagonal
    return (
        lambda x, stats, lam, order=2: evaluate(design, x, stats, lam, order=order),
        lambda x, stats, lam: hessian_diagonal(design, x, stats, lam),
    )


def _solve(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    step: np.ndarray
    try:
        step = np.linalg.solve(h, g[..., None])[..., 0]
    except np.linalg.LinAlgError:
        # A singular stack member (unidentifiable direction, e.g. a position
        # term confounded with the design): least-squares step for all.
        step = np.einsum("rij,rj->ri", np.linalg.pinv(h, hermitian=True), g)
    return step


def newton(
    design: Design | StyleDesign,
    stats: np.ndarray,
    x0: np.ndarray,
    *,
    lam: float | np.ndarray,
    gtol: np.ndarray,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Damped Newton for a batch of rounds.

    Returns
    -------
    x : (R, P), converged : (R,) bool, iterations : (R,) int, grad_norm : (R,)
    """
    ev = model_functions(design)[0]
    x = np.array(x0, dtype=np.float64, copy=True)
    r = x.shape[0]
    converged = np.zeros(r, dtype=bool)
    iterations = np.zeros(r, dtype=np.int64)
    gnorm = np.full(r, np.inf)
    idx = np.arange(r)
    f, g, h = ev(x, stats, lam)
    for _ in range(max_iter + 1):
        gn = np.abs(g).max(axis=1) if g.shape[1] else np.zeros(idx.size)
        gnorm[idx] = gn
        done = gn <= gtol[idx]
        converged[idx[done]] = True
        live = ~done
        if not live.any():
            break
        if iterations[idx[live]].min() >= max_iter:
            break
        idx, f, g, h = idx[live], f[live], g[live], h[live]
        iterations[idx] += 1
        step = _solve(h, g)
        slope = np.einsum("ij,ij->i", g, step)
        alpha = np.ones(idx.size)
        xs = x[idx]
        pending = np.arange(idx.size)
        for _ls in range(60):
            trial = xs[pending] + alpha[pending, None] * step[pending]
            ft, _, _ = ev(trial, stats[idx[pending]], lam, order=0)
            fp = f[pending]
            # Armijo, with slack for round-off once steps are at machine precision
            ok = ft >= fp + 1e-4 * alpha[pending] * slope[pending] - 1e-13 * np.abs(fp)
            ok &= np.isfinite(ft)
            xs[pending[ok]] = trial[ok]
            pending = pending[~ok]
            if pending.size == 0:
                break
            alpha[pending] *= 0.5
        x[idx] = xs
        f, g, h = ev(xs, stats[idx], lam)
    return x, converged, iterations, gnorm


def chord(
    design: Design | StyleDesign,
    stats: np.ndarray,
    x0: np.ndarray,
    kinv: np.ndarray,
    *,
    lam: float | np.ndarray,
    gtol: np.ndarray,
    max_iter: int = 12,
    diag0: np.ndarray | None = None,
    g0: np.ndarray | None = None,
    diag: np.ndarray | None = None,
    depth: int = 2,
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Fixed-Hessian iterations ``x += S^-1 kinv S^-1 g(x)`` for a batch of rounds.

    ``kinv`` is the inverse negative Hessian of the point fit, whose diagonal
    is ``diag0``, or a stack ``(R, P, P)`` of one matrix per round (then
    ``diag0`` is not used).  ``S = sqrt(diag_r / diag0)`` rescales it to each round's
    own curvature at the start (a model that drew twice its battles has twice
    the curvature); without it, a model with few battles makes the fixed
    iteration contract slowly or diverge.  ``g0`` and ``diag`` (the gradient
    and Hessian diagonal at ``x0``) may be passed in when already known (see
    :func:`category_maps`).  ``depth`` > 0 applies Anderson acceleration
    over that many previous iterates of each round (``0``: plain
    iterations); it changes only the path, never the stopping rule.

    Returns
    -------
    x : (R, P), converged : (R,) bool, iterations : int, grad_norm : (R,)
        Unconverged rounds hold their best iterate (smallest gradient).
    """
    ev, hdiag = model_functions(design)
    x = np.array(x0, dtype=np.float64, copy=True)
    r = x.shape[0]
    converged = np.zeros(r, dtype=bool)
    g = ev(x, stats, lam, order=-1)[1] if g0 is None else g0
    gnorm = np.abs(g).max(axis=1) if g.shape[1] else np.zeros(r)
    if diag0 is None or kinv.ndim == 3:
        inv_s = np.ones_like(x)
    else:
        dr = hdiag(x, stats, lam) if diag is None else diag
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_s = np.sqrt(np.where(dr > 0, diag0 / dr, 1.0))
    idx = np.arange(r)
    n_iter = 0
    accel = _Anderson(depth)
    for _ in range(max_iter):
        done = gnorm[idx] <= gtol[idx]
        converged[idx[done]] = True
        idx, g = idx[~done], g[~done]
        accel.keep(~done)
        if idx.size == 0:
            break
        n_iter += 1
        if kinv.ndim == 3:
            # one fixed matrix per round
            f = np.einsum("rp,rpq->rq", g * inv_s[idx], kinv[idx]) * inv_s[idx]
        else:
            f = ((g * inv_s[idx]) @ kinv) * inv_s[idx]
        xk = x[idx]
        trial = xk + accel.step(xk, f)
        # stats[idx] would copy all statistics; skip that while no round has left
        st = stats if idx.size == r else stats[idx]
        _, gt, _ = ev(trial, st, lam, order=-1)
        gn = np.abs(gt).max(axis=1)
        better = gn < gnorm[idx]
        x[idx[better]] = trial[better]
        # keep iterating only where the contraction is fast; slow or diverging
        # rounds go to full Newton, starting from their best iterate
        fast = gn <= 0.25 * gnorm[idx]
        gnorm[idx[better]] = gn[better]
        idx, g = idx[fast], gt[fast]
        accel.keep(fast)
    done = gnorm <= gtol
    converged |= done
    return x, converged, n_iter, gnorm


class _Anderson:
    """Anderson acceleration of the fixed-point map ``x -> x + f(x)`` for a batch of rounds.

    With the differences ``dX`` of the last ``depth`` iterates and ``dF`` of
    their steps ``f``, the step is ``f - (dX + dF) c`` where ``c`` minimises
    ``|f - dF c|`` (Walker & Ni 2011, type II).  Near the solution the map is
    affine, and this is GMRES on it: the chord iteration's fixed linear rate
    (about 0.15 per step on thin boards, where a round's Hessian differs most
    from the point fit's) becomes faster, for a few (rounds, depth, P)
    products.  Histories follow the rounds as they leave the batch (:meth:`keep`).
    """

    def __init__(self, depth: int):
        self.depth = int(depth)
        self.dx: list[np.ndarray] = []
        self.df: list[np.ndarray] = []
        self.last: tuple[np.ndarray, np.ndarray] | None = None

    def keep(self, mask: np.ndarray) -> None:
        """Restrict the histories to the rounds still iterating (``mask`` over the batch)."""
        if self.last is None or mask.all():
            return
        self.dx = [d[mask] for d in self.dx]
        self.df = [d[mask] for d in self.df]
        self.last = (self.last[0][mask], self.last[1][mask])

    def step(self, x: np.ndarray, f: np.ndarray) -> np.ndarray:
        """The accelerated step from iterate ``x`` whose plain step is ``f``."""
        if self.depth <= 0:
            return f
        if self.last is not None:
            self.dx.append(x - self.last[0])
            self.df.append(f - self.last[1])
            if len(self.dx) > self.depth:
                del self.dx[0], self.df[0]
        self.last = (x, f)
        if not self.df:
            return f
        dfs = np.stack(self.df, axis=1)  # (R, m, P)
        a = np.einsum("rip,rjp->rij", dfs, dfs)
        b = np.einsum("rip,rp->ri", dfs, f)
        # a small ridge keeps nearly collinear histories solvable
        ridge = 1e-10 * np.trace(a, axis1=1, axis2=2) + 1e-300
        a += ridge[:, None, None] * np.eye(a.shape[1])
        try:
            c = np.linalg.solve(a, b[..., None])[..., 0]
        except np.linalg.LinAlgError:
            return f
        ok = np.isfinite(c).all(axis=1)
        c[~ok] = 0.0
        mixed: np.ndarray = f - np.einsum("ri,rip->rp", c, np.stack(self.dx, axis=1) + dfs)
        return mixed
