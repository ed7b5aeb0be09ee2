"""Two-parameter logistic (2PL) item response theory: calibration by marginal maximum likelihood.

The probability that examinee ``p`` (a model) answers item ``i`` correctly is
``expit(a_i * (theta_p - b_i))``, with discrimination ``a_i``, difficulty ``b_i``
and abilities ``theta ~ N(0, 1)``, which fixes the scale. Item parameters
maximise the marginal likelihood, abilities integrated out by quadrature, with
the EM algorithm of Bock and Aitkin (1981): the E-step gives each examinee's
posterior weights on the quadrature nodes, the M-step is one Newton step per
item on its expected complete-data log-likelihood (all items at once, as
arrays), in the slope-intercept form ``expit(a * theta + d)``, ``b = -d / a``.

Quadrature. Gauss-Hermite nodes (``numpy.polynomial.hermite_e.hermegauss``, as
``ltm`` does) integrate smooth integrands over N(0, 1) to high order, but a
model answering thousands of items has a posterior far narrower than the space
between nodes, and every node but one would get zero weight. When the
narrowest posterior (estimated from the test information) is narrower than the
Gauss-Hermite spacing (over 0.8 of it), a uniform grid with spacing of one posterior standard
deviation is used instead; the rectangle rule is spectrally accurate on such
grids (its error falls like ``exp(-2 pi^2 sd^2 / h^2)``). ``ItemBank.quadrature``
says which was used.

Standard errors come from the observed information of the marginal
likelihood by Louis' formula (complete-data information minus the posterior
variance of the complete-data score): the full matrix for up to
:data:`FULL_INFORMATION_ITEMS` items, its item-diagonal blocks beyond that
(stated in ``ItemBank.se_method``); ``b``'s by the delta method.

The model's functions and the result, :class:`ItemBank`, are in
:mod:`arena.evals.itembank` (re-exported here).

Items that every examinee answered the same way (or that fewer than two
examinees answered) carry no information on ``a`` and ``b``: they are left out
of the bank and listed in ``ItemBank.dropped``.
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import expit, logsumexp

from arena.core.errors import ArgumentError
from arena.evals.checks import check_count
from arena.evals.itembank import ItemBank, item_information, response_matrix

__all__ = [
    "A_LIMIT",
    "FULL_INFORMATION_ITEMS",
    "ItemBank",
    "calibrate_1pl",
    "calibrate_2pl",
    "item_information",
    "response_matrix",
]

#: Up to this many items the full observed information matrix is inverted.
FULL_INFORMATION_ITEMS = 100
#: Uniform grid spacing as a share of the narrowest posterior standard deviation.
_GRID_SHARE = 1.0
#: Gauss-Hermite nodes are kept while their central spacing is below this many
#: posterior standard deviations (rectangle-rule error ~exp(-2 pi^2 / 1.25^2) = 3e-6).
_GH_SHARE = 1.25
#: Uniform grids cover this range of abilities (the N(0, 1) prior is ~1e-8 beyond).
_GRID_LIMIT = 6.0
#: Discriminations are kept within +-A_LIMIT: items that (nearly) separate the
#: examinees have no finite maximum-likelihood estimate; those at the bound are
#: listed in ``ItemBank.at_bound``.
A_LIMIT = 10.0
#: A node whose posterior mass (summed over examinees) is below this share is skipped
#: in the M-step; its contribution to any expected count is below 1e-12 examinees.
_EMPTY_NODE = 1e-14
#: Newton steps are clipped to this size in (a, d) so early EM iterations stay stable.
_MAX_STEP = 1.0


def _nodes(max_information: float, n_nodes: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Quadrature nodes over N(0, 1) and log weights (summing to one)."""
    x, w = hermegauss(n_nodes)
    narrowest_sd = 1.0 / np.sqrt(1.0 + max_information)
    gh_spacing = float(np.min(np.diff(x)))
    if gh_spacing <= _GH_SHARE * narrowest_sd:
        return x, np.log(w / w.sum()), f"gauss-hermite, {n_nodes} nodes"
    h = _GRID_SHARE * narrowest_sd
    k = int(np.ceil(_GRID_LIMIT / h))
    grid = np.linspace(-_GRID_LIMIT, _GRID_LIMIT, 2 * k + 1)
    lw = -0.5 * grid**2
    lw -= logsumexp(lw)
    return grid, lw, f"uniform grid, h={grid[1] - grid[0]:.3g}, {grid.size} nodes"


def _max_information(a: np.ndarray, mask: np.ndarray) -> float:
    # Information of a 2PL item is at most a^2 / 4 (at p = 1/2).
    return float((mask @ (a * a / 4.0)).max())


def _posterior(ym, mask, full, a, d, theta, lw):
    """Posterior weights (examinees, nodes) and the marginal log-likelihood."""
    z = a[:, None] * theta[None, :] + d[:, None]  # (items, nodes)
    log1m = -np.logaddexp(0.0, z)
    # y*log p + (1-y)*log(1-p) = y*z + log(1-p); y @ z is rank two in the nodes.
    ll = np.outer(ym @ a, theta) + (ym @ d)[:, None]
    ll += log1m.sum(axis=0)[None, :] if full else mask @ log1m
    ll += lw[None, :]
    norm = logsumexp(ll, axis=1)
    return np.exp(ll - norm[:, None]), float(norm.sum())


def _newton_items(r, n, theta, a, d, prior_sd):
    """One Newton step per item on the expected complete-data log-likelihood."""
    p = expit(a[:, None] * theta[None, :] + d[:, None])
    res = r - n * p
    g_a, g_d = res @ theta, res.sum(axis=1)
    wq = n * p * (1.0 - p)
    h_aa, h_ad, h_dd = wq @ (theta * theta), wq @ theta, wq.sum(axis=1)
    if prior_sd is not None:
        prec = 1.0 / prior_sd**2
        g_a -= (a - 1.0) * prec
        g_d -= d * prec
        h_aa, h_dd = h_aa + prec, h_dd + prec
    det = h_aa * h_dd - h_ad * h_ad
    det = np.where(det > 1e-12, det, np.inf)  # no step for a flat item
    step_a = (h_dd * g_a - h_ad * g_d) / det
    step_d = (h_aa * g_d - h_ad * g_a) / det
    scale = np.maximum(1.0, np.maximum(np.abs(step_a), np.abs(step_d)) / _MAX_STEP)
    a_free = a + step_a / scale
    a_new = np.clip(a_free, -A_LIMIT, A_LIMIT)
    # Keep b = -d / a where it was when a hits the bound, so d does not run off alone
    # (a is near the bound there, never 0).
    hit = np.abs(a_free) > A_LIMIT
    d_new = d + step_d / scale
    d_new[hit] = d[hit] * a_new[hit] / a[hit]
    return a_new, d_new


def _newton_common(r, n, theta, a, d, prior_sd):
    """One Newton step on (a, d_1..d_I) with ``a`` shared by every item (1PL).

    The Hessian is an arrow (a couples to every d_i, the d_i not to each
    other), solved by its Schur complement.
    """
    p = expit(a[:, None] * theta[None, :] + d[:, None])
    res = r - n * p
    g_a, g_d = float((res @ theta).sum()), res.sum(axis=1)
    wq = n * p * (1.0 - p)
    h_aa, h_ad, h_dd = float((wq @ (theta * theta)).sum()), wq @ theta, wq.sum(axis=1)
    if prior_sd is not None:
        prec = 1.0 / prior_sd**2
        g_a -= (a[0] - 1.0) * prec
        g_d = g_d - d * prec
        h_aa, h_dd = h_aa + prec, h_dd + prec
    h_dd = np.where(h_dd > 1e-12, h_dd, np.inf)
    schur = h_aa - float((h_ad * h_ad / h_dd).sum())
    step_a = (g_a - float((h_ad * g_d / h_dd).sum())) / schur if schur > 1e-12 else 0.0
    step_d = (g_d - h_ad * step_a) / h_dd
    scale = max(1.0, abs(step_a) / _MAX_STEP, float(np.abs(step_d).max()) / _MAX_STEP)
    a_new = np.full_like(a, np.clip(a[0] + step_a / scale, -A_LIMIT, A_LIMIT))
    return a_new, d + step_d / scale


def _standard_errors_common(info, a, d, full_matrix, prior_sd):
    """SEs of the shared ``a`` and of each ``b = -d / a`` (1PL).

    The 1PL information is ``J' I J`` for the 2PL information ``I`` at
    ``a_i = a`` (``J`` maps the shared ``a`` to every ``a_i``): the chain rule
    of the Hessian under a linear reparametrisation.
    """
    n_items = a.size
    if full_matrix:
        top = info[:n_items].sum(axis=0)  # sum over the a_i rows
        inf1 = np.empty((n_items + 1, n_items + 1))
        inf1[0, 0] = top[:n_items].sum()
        inf1[0, 1:] = inf1[1:, 0] = top[n_items:]
        inf1[1:, 1:] = info[n_items:, n_items:]
    else:
        # Item-diagonal blocks: the arrow matrix without cross-item terms.
        inf1 = np.zeros((n_items + 1, n_items + 1))
        inf1[0, 0] = info[:, 0, 0].sum()
        inf1[0, 1:] = inf1[1:, 0] = info[:, 0, 1]
        inf1[1:, 1:][np.diag_indices(n_items)] = info[:, 1, 1]
    if prior_sd is not None:
        inf1[np.diag_indices(n_items + 1)] += 1.0 / prior_sd**2
    try:
        cov = np.linalg.inv(inf1)
    except np.linalg.LinAlgError:
        cov = np.full_like(inf1, np.nan)
    var_a = np.full(n_items, cov[0, 0])
    ga, gd = d / a**2, -1.0 / a
    var_b = ga * ga * cov[0, 0] + 2 * ga * gd * cov[0, 1:] + gd * gd * np.diag(cov)[1:]
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.where(var_a > 0, var_a, np.nan)), np.sqrt(
            np.where(var_b > 0, var_b, np.nan)
        )


def _observed_information(y, mask, w, theta, a, d, prior_sd, full_matrix):
    """Observed information of (a, d) by Louis' formula; full or item-diagonal blocks."""
    p = expit(a[:, None] * theta[None, :] + d[:, None])  # (items, nodes)
    n_items = a.size
    nw = mask.T.astype(np.float64) @ w  # expected examinees per node and item
    q = nw * p * (1.0 - p)
    complete = np.zeros((n_items, 2, 2))
    complete[:, 0, 0] = q @ (theta * theta)
    complete[:, 0, 1] = complete[:, 1, 0] = q @ theta
    complete[:, 1, 1] = q.sum(axis=1)
    if prior_sd is not None:
        complete[:, 0, 0] += 1.0 / prior_sd**2
        complete[:, 1, 1] += 1.0 / prior_sd**2
    if full_matrix:
        # Complete-data score of examinee e at node g: u[e, g, i] * (theta_g, 1).
        u = mask[:, None, :] * (y[:, None, :] - p.T[None, :, :])
        s = np.concatenate([u * theta[None, :, None], u], axis=2)  # (examinees, nodes, 2I)
        mean = np.einsum("eg,egk->ek", w, s)
        second = np.einsum("eg,egk,egl->kl", w, s, s)
        missing = second - mean.T @ mean
        info = -missing
        idx = np.arange(n_items)
        for r_ in range(2):
            for c_ in range(2):
                info[idx + r_ * n_items, idx + c_ * n_items] += complete[:, r_, c_]
        return info
    # Diagonal blocks only: E[u theta^k] and E[u^2 theta^k] per examinee and item via
    # products (examinees, nodes) @ (nodes, items), never the 3-D array.
    blocks = complete.copy()
    th = [np.ones_like(theta), theta, theta * theta]
    m = [(w @ t)[:, None] for t in th]  # E[theta^k] per examinee
    e_p = [(w * t[None, :]) @ p.T for t in th]  # E[p theta^k], (examinees, items)
    e_p2 = [(w * t[None, :]) @ (p * p).T for t in th]  # E[p^2 theta^k]
    # u = y - p, y^2 = y: E[u^2 theta^k] = y E[theta^k] - 2 y E[p theta^k] + E[p^2 theta^k].
    e_u = [y * m[k] - e_p[k] for k in (0, 1)]  # E[u], E[u theta]
    for r_, c_, k in ((0, 0, 2), (0, 1, 1), (1, 1, 0)):
        e_u2 = y * m[k] - 2.0 * y * e_p[k] + e_p2[k]
        var = (mask * (e_u2 - e_u[1 - r_] * e_u[1 - c_])).sum(axis=0)
        blocks[:, r_, c_] -= var
        if r_ != c_:
            blocks[:, c_, r_] -= var
    return blocks


def _standard_errors(info, a, d, full_matrix):
    n_items = a.size
    if full_matrix:
        try:
            cov_full = np.linalg.inv(info)
        except np.linalg.LinAlgError:
            cov_full = np.full_like(info, np.nan)
        idx = np.arange(n_items)
        cov = np.empty((n_items, 2, 2))
        cov[:, 0, 0] = cov_full[idx, idx]
        cov[:, 0, 1] = cov[:, 1, 0] = cov_full[idx, idx + n_items]
        cov[:, 1, 1] = cov_full[idx + n_items, idx + n_items]
    else:
        det = info[:, 0, 0] * info[:, 1, 1] - info[:, 0, 1] ** 2
        det = np.where(det > 0, det, np.nan)
        cov = np.empty_like(info)
        cov[:, 0, 0] = info[:, 1, 1] / det
        cov[:, 1, 1] = info[:, 0, 0] / det
        cov[:, 0, 1] = cov[:, 1, 0] = -info[:, 0, 1] / det
    var_a = cov[:, 0, 0]
    # b = -d / a: gradient (d / a^2, -1 / a).
    ga, gd = d / a**2, -1.0 / a
    var_b = ga * ga * cov[:, 0, 0] + 2 * ga * gd * cov[:, 0, 1] + gd * gd * cov[:, 1, 1]
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.where(var_a > 0, var_a, np.nan)), np.sqrt(
            np.where(var_b > 0, var_b, np.nan)
        )


def calibrate_1pl(responses, **options) -> ItemBank:
    """Calibrate a 1PL (Rasch) item bank: one discrimination shared by every item.

    ``P = expit(a (theta - b_i))`` with ``theta ~ N(0, 1)`` and a single ``a``
    (the Rasch model with ability SD ``a``, as ``ltm::rasch`` fits it). Same
    options and result as :func:`calibrate_2pl` (``ItemBank.model == "1PL"``;
    the prior, when given, is on the shared ``a`` once).
    """
    return _calibrate(responses, one_pl=True, **options)


def calibrate_2pl(responses, **options) -> ItemBank:
    """Calibrate a 2PL item bank by marginal maximum likelihood (EM, quadrature).

    See :func:`_calibrate` for the options.
    """
    return _calibrate(responses, one_pl=False, **options)


def _calibrate(
    responses,
    *,
    one_pl: bool,
    items: list[str] | None = None,
    present=None,
    n_nodes: int = 21,
    prior_sd: float | None = None,
    tol: float = 1e-5,
    max_iter: int = 2000,
    standard_errors: bool = True,
) -> ItemBank:
    """Calibrate a 2PL (or, with ``one_pl``, 1PL) item bank by marginal ML (EM, quadrature).

    Parameters
    ----------
    responses : array_like, shape (n_examinees, n_items)
        0/1 responses; NaN (or ``present`` False) marks an item not given.
    items : list of str, optional
        Item ids (default ``"0", "1", ...``).
    present : array_like of bool, optional
        Which responses exist.
    n_nodes : int, default 21
        Gauss-Hermite nodes (a finer uniform grid replaces them for long tests;
        see the module notes).
    prior_sd : float, optional
        With a value, normal priors ``a ~ N(1, prior_sd^2)``, ``d ~ N(0, prior_sd^2)``
        make the estimates posterior modes; keeps ``a`` finite for items that
        separate the examinees perfectly (few examinees). Default: pure
        maximum likelihood, as ``ltm`` and ``mirt``.
    tol : float, default 1e-5
        Stop when no parameter moves more than ``tol`` in an EM iteration.
    max_iter : int, default 2000
    standard_errors : bool, default True

    Returns
    -------
    ItemBank

    Raises
    ------
    ValueError
        Responses not 0/1, fewer than two examinees, no item with variation.
    """
    y, mask = response_matrix(responses, present)
    n_exam, n_all = y.shape
    check_count(n_nodes, "n_nodes", minimum=3)
    check_count(max_iter, "max_iter")
    if n_exam < 2:
        raise ArgumentError("calibration needs at least two examinees")
    if prior_sd is not None and not prior_sd > 0:
        raise ArgumentError(f"prior_sd must be positive, got {prior_sd!r}")
    ids = [str(i) for i in range(n_all)] if items is None else [str(i) for i in items]
    if len(ids) != n_all:
        raise ArgumentError(f"{len(ids)} item ids for {n_all} items")
    seen = mask.sum(axis=0)
    right = (y * mask).sum(axis=0)
    dropped = {}
    for j in np.flatnonzero((seen < 2) | (right == 0) | (right == seen)):
        if seen[j] < 2:
            dropped[ids[j]] = f"answered by {int(seen[j])} examinee(s)"
        else:
            dropped[ids[j]] = "all right" if right[j] == seen[j] else "all wrong"
    keep = np.array([i not in dropped for i in ids])
    if not keep.any():
        raise ArgumentError("no item has both right and wrong answers: nothing to calibrate")
    y, mask = y[:, keep], mask[:, keep]
    kept = [i for i, k in zip(ids, keep, strict=True) if k]
    answered = mask.any(axis=1)
    if answered.sum() < 2:
        raise ArgumentError("fewer than two examinees answered any calibrated item")
    y, mask = y[answered], mask[answered]
    full = bool(mask.all())
    ym = y * mask
    maskf = mask.astype(np.float64)

    pvalue = np.clip(ym.sum(axis=0) / mask.sum(axis=0), 0.01, 0.99)
    a = np.ones(y.shape[1])
    # For a = 1 and theta ~ N(0, 1), expit(d / 1.49) approximates the p-value.
    d = np.log(pvalue / (1.0 - pvalue)) * np.sqrt(1.0 + np.pi**2 / 8.0)
    theta, lw, quad = _nodes(_max_information(a, maskf), n_nodes)
    converged = False
    it = 0

    def em(a_, d_):
        """One EM step; also the (penalised) log-likelihood at the point it started from."""
        w_, ll_ = _posterior(ym, maskf, full, a_, d_, theta, lw)
        # Nodes where no examinee has posterior mass add nothing to the M-step: with
        # long tests the posteriors are narrow and most nodes of a fine grid are empty.
        mass = w_.sum(axis=0)
        act = mass > _EMPTY_NODE * mass.sum()
        w_ = w_[:, act]
        r_ = ym.T @ w_
        n_ = np.broadcast_to(w_.sum(axis=0), r_.shape) if full else maskf.T @ w_
        if prior_sd is not None:
            pen_a = (a_[0] - 1.0) ** 2 if one_pl else float(((a_ - 1.0) ** 2).sum())
            ll_ -= (pen_a + float((d_**2).sum())) / (2.0 * prior_sd**2)
        newton = _newton_common if one_pl else _newton_items
        return (*newton(r_, n_, theta[act], a_, d_, prior_sd), ll_)

    while it < max_iter:
        # SQUAREM (Varadhan & Roland 2008): two EM steps give the direction and the
        # step length of an extrapolation; a third EM step from the extrapolated
        # point keeps it stable. Falls back to plain EM when the likelihood drops.
        a1, d1, ll0 = em(a, d)
        a2, d2, _ = em(a1, d1)
        it += 2
        change = max(np.abs(a2 - a1).max(), np.abs(d2 - d1).max())
        ra, rd = a1 - a, d1 - d
        va, vd = a2 - a1 - ra, d2 - d1 - rd
        v_norm = np.sqrt((va * va).sum() + (vd * vd).sum())
        alpha = -np.sqrt((ra * ra).sum() + (rd * rd).sum()) / v_norm if v_norm > 0 else -1.0
        alpha = min(alpha, -1.0)
        a_x = np.clip(a - 2 * alpha * ra + alpha**2 * va, -A_LIMIT, A_LIMIT)
        d_x = d - 2 * alpha * rd + alpha**2 * vd
        a3, d3, ll_x = em(a_x, d_x)
        it += 1
        if np.isfinite(ll_x) and ll_x >= ll0:
            a, d = a3, d3
        else:
            a, d = a2, d2
        if change < tol:
            # Discriminations grew: make sure the nodes still resolve the posteriors.
            theta2, lw2, quad2 = _nodes(_max_information(a, maskf), n_nodes)
            if quad2 != quad and theta2.size > theta.size:
                theta, lw, quad = theta2, lw2, quad2
                continue
            converged = True
            break
    w, loglik = _posterior(ym, maskf, full, a, d, theta, lw)
    full_matrix = a.size <= FULL_INFORMATION_ITEMS
    if standard_errors:
        if one_pl:
            # The prior on the shared a counts once: added after the projection.
            info = _observed_information(y, maskf, w, theta, a, d, None, full_matrix)
            se_a, se_b = _standard_errors_common(info, a, d, full_matrix, prior_sd)
        else:
            info = _observed_information(y, maskf, w, theta, a, d, prior_sd, full_matrix)
            se_a, se_b = _standard_errors(info, a, d, full_matrix)
    else:
        se_a = se_b = np.full(a.size, np.nan)
    return ItemBank(
        items=kept,
        discrimination=a,
        difficulty=-d / a,
        se_discrimination=se_a,
        se_difficulty=se_b,
        log_likelihood=loglik,
        n_examinees=int(y.shape[0]),
        iterations=it,
        converged=converged,
        quadrature=quad,
        se_method=(
            "full observed information (Louis)"
            if full_matrix
            else "item-diagonal blocks of the observed information (Louis)"
        ),
        prior_sd=prior_sd,
        dropped=dropped,
        at_bound=[i for i, v in zip(kept, np.abs(a) >= A_LIMIT, strict=True) if v],
        model="1PL" if one_pl else "2PL",
    )
