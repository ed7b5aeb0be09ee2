"""Batched log-likelihood, derivatives and solvers for R fits at once.

Parameters of round ``r`` are ``x[r] = [theta (Ma), gamma (if position),
phi (if Davidson)]``.  The log-likelihood is concave; without a prior it is
invariant to shifting all thetas, which we remove by adding ``c/Ma * 1 1^T``
to the negative Hessian (the added direction carries zero gradient, so the
Newton step is the minimum-norm one and thetas stay mean-centred).

Two solvers share the derivative code:

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

import numpy as np
import scipy.sparse as sp

from arena.engine.design import Design

__all__ = [
    "evaluate",
    "newton",
    "chord",
    "category_maps",
    "category_stats",
    "gradient_scale",
    "hessian_diagonal",
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


def _unpack(design: Design, x: np.ndarray):
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
):
    """Per-group log-likelihood terms (if ``value``) and (if ``derivs``) derivatives."""
    _, d, phi = _unpack(design, x)
    return group_terms(design.ties, d, phi, stats, derivs=derivs, value=value, curvature=curvature)


def logistic(d: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``expit(d)`` as ``1 / (1 + exp(-d))``: as accurate (exp overflows to inf
    and gives 0 exactly where expit underflows), and 3x faster than
    ``scipy.special.expit``, which branches on the sign of every element."""
    p = np.negative(d, out=out)
    with np.errstate(over="ignore"):
        np.exp(p, out=p)
    p += 1.0
    return np.reciprocal(p, out=p)


def group_terms(
    ties: str,
    d: np.ndarray,
    phi,
    stats: np.ndarray,
    *,
    derivs: bool,
    value: bool = True,
    curvature: bool = True,
):
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


def _rmul(mat_t: sp.csr_matrix, dense: np.ndarray) -> np.ndarray:
    """``dense @ mat`` for a dense (R, G) matrix, given the sparse ``mat_t = mat.T`` (K, G)."""
    return np.asarray((mat_t @ dense.T).T)


def evaluate(design: Design, x: np.ndarray, stats: np.ndarray, lam: float, *, order: int = 2):
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
    ll, der = _pieces(
        design, x, stats, derivs=order >= 1, value=not grad_only, curvature=order >= 2
    )
    theta = x[:, :ma]
    f = None if grad_only else ll.sum(axis=1) - 0.5 * lam * np.einsum("ij,ij->i", theta, theta)
    if order == 0:
        return f, None, None
    ld, hdd, lphi, hpp, hdp = der
    r, p = x.shape
    g = np.empty((r, p))
    g[:, :ma] = _rmul(design.incidence_t, ld) - lam * theta
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
        pair_w = _rmul(design.pair_map_t, hdd)
    else:
        pair_w = hdd  # groups are the unordered pairs already
    hflat[:, design.pair_i * p + design.pair_j] = -pair_w
    hflat[:, design.pair_j * p + design.pair_i] = -pair_w
    diag = np.arange(ma)
    h[:, diag, diag] = _rmul(design.incidence_abs_t, hdd) + lam
    if lam == 0.0 and ma > 0:
        scale = h[:, diag, diag].mean(axis=1) / ma
        h[:, :ma, :ma] += scale[:, None, None]
    k = ma
    if design.position:
        col = _rmul(design.incidence_t, hdd)
        h[:, :ma, k] = col
        h[:, k, :ma] = col
        h[:, k, k] = hdd.sum(axis=1)
        k += 1
    if design.ties == "davidson":
        col = _rmul(design.incidence_t, hdp)
        h[:, :ma, k] = col
        h[:, k, :ma] = col
        h[:, k, k] = hpp.sum(axis=1)
        if design.position:
            h[:, k - 1, k] = h[:, k, k - 1] = hdp.sum(axis=1)
    return f, g, h


def hessian_diagonal(design: Design, x: np.ndarray, stats: np.ndarray, lam: float) -> np.ndarray:
    """Diagonal of the negative Hessian (no gauge term), shape (R, P)."""
    _, (_, hdd, _, hpp, _) = _pieces(design, x, stats, derivs=True, value=False)
    out = [_rmul(design.incidence_abs_t, hdd) + lam]
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
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    shape = (q, d.n_params)
    return (
        sp.csr_matrix((np.concatenate(score), (rows, cols)), shape=shape),
        sp.csr_matrix((np.concatenate(curv), (rows, cols)), shape=shape),
    )


def gradient_scale(design: Design, stats: np.ndarray) -> np.ndarray:
    """Largest per-model total battle weight of each round, at least 1; shape (R,)."""
    tot = stats[:, 1] if design.ties == "half" else stats.sum(axis=1)
    per_model = _rmul(design.incidence_abs_t, tot)
    if per_model.shape[1] == 0:
        return np.ones(stats.shape[0])
    return np.maximum(per_model.max(axis=1), 1.0)


def _model_functions(design):
    """``(evaluate, hessian_diagonal)`` of a design.

    The raw :class:`Design` uses this module's functions; another model (the
    style-controlled one) brings its own methods with the same signatures, so
    both share the solvers below.
    """
    own = getattr(design, "evaluate", None)
    if own is not None:
        return own, design.hessian_diagonal
    return (
        lambda x, stats, lam, order=2: evaluate(design, x, stats, lam, order=order),
        lambda x, stats, lam: hessian_diagonal(design, x, stats, lam),
    )


def _solve(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(h, g[..., None])[..., 0]
    except np.linalg.LinAlgError:
        # A singular stack member (unidentifiable direction, e.g. a position
        # term confounded with the design): least-squares step for all.
        return np.einsum("rij,rj->ri", np.linalg.pinv(h, hermitian=True), g)


def newton(
    design: Design,
    stats: np.ndarray,
    x0: np.ndarray,
    *,
    lam: float,
    gtol: np.ndarray,
    max_iter: int = 100,
):
    """Damped Newton for a batch of rounds.

    Returns
    -------
    x : (R, P), converged : (R,) bool, iterations : (R,) int, grad_norm : (R,)
    """
    ev = _model_functions(design)[0]
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
    design: Design,
    stats: np.ndarray,
    x0: np.ndarray,
    kinv: np.ndarray,
    *,
    lam: float,
    gtol: np.ndarray,
    max_iter: int = 12,
    diag0: np.ndarray | None = None,
    g0: np.ndarray | None = None,
    diag: np.ndarray | None = None,
):
    """Fixed-Hessian iterations ``x += S^-1 kinv S^-1 g(x)`` for a batch of rounds.

    ``kinv`` is the inverse negative Hessian of the point fit, whose diagonal
    is ``diag0``, or a stack ``(R, P, P)`` of one matrix per round (then
    ``diag0`` is not used).  ``S = sqrt(diag_r / diag0)`` rescales it to each round's
    own curvature at the start (a model that drew twice its battles has twice
    the curvature); without it, a model with few battles makes the fixed
    iteration contract slowly or diverge.  ``g0`` and ``diag`` (the gradient
    and Hessian diagonal at ``x0``) may be passed in when already known (see
    :func:`category_maps`).

    Returns
    -------
    x : (R, P), converged : (R,) bool, iterations : int, grad_norm : (R,)
        Unconverged rounds hold their best iterate (smallest gradient).
    """
    ev, hdiag = _model_functions(design)
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
    for _ in range(max_iter):
        done = gnorm[idx] <= gtol[idx]
        converged[idx[done]] = True
        idx, g = idx[~done], g[~done]
        if idx.size == 0:
            break
        n_iter += 1
        if kinv.ndim == 3:
            # one fixed matrix per round
            trial = x[idx] + np.einsum("rp,rpq->rq", g * inv_s[idx], kinv[idx]) * inv_s[idx]
        else:
            trial = x[idx] + ((g * inv_s[idx]) @ kinv) * inv_s[idx]
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
    done = gnorm <= gtol
    converged |= done
    return x, converged, n_iter, gnorm
