"""The point fit for many models: :func:`sparse_fit`, no models x models matrix.

Boards with at least :data:`SPARSE_MIN_MODELS` models (or when asked with
``path="sparse"``) are fitted here instead of :func:`arena.engine.fitting.fit.fit`.
The model, the options (ties, Davidson, position term, prior, anchor), the
existence check, the flags and the stopping rule are the dense fit's; the
maximiser is found by :func:`arena.engine.sparse.newton.sparse_newton`
(Newton with preconditioned conjugate gradients on the sparse Hessian), so the
ratings agree with the dense path to round-off (tested to 1e-6 Elo).

What differs: the Fisher covariance (an ``M x M`` matrix) is not formed.
``Fit.cov``, ``param_cov`` and ``kinv`` are ``None`` and ``Fit.se`` holds a
**lower bound** of each model's Fisher standard error (Cauchy–Schwarz,
``w' H^-1 w >= (w'w)^2 / (w' H w)`` with ``w`` the model's centring or
anchoring direction): the exact SE also counts the uncertainty of the
opponents, typically a few per cent more on a well-connected board (see
``docs/engine.md``).  It is used only by the small-sample rule, where a
smaller Fisher interval can only make that rule's hull narrower, never wider,
than on the dense path.  Fisher and sandwich intervals need the covariance
and are refused on this path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.core.errors import ArgumentError
from arena.engine.counts import CountTable
from arena.engine.fitting.design import Design
from arena.engine.fitting.fit import (
    DEFAULT_PRIOR,
    Fit,
    finish_fit,
    fit_problem,
    initial_params,
    to_models,
)
from arena.engine.options import FitOptions, fit_options
from arena.engine.scale import BASE, SCALE
from arena.engine.sparse.newton import sparse_evaluate, sparse_newton

__all__ = ["SPARSE_MIN_MODELS", "PATHS", "use_sparse", "sparse_fit", "fisher_se_bound"]

#: Boards with at least this many models take the sparse path (``path="auto"``).
#: Below it the dense solvers are faster (their fixed-Hessian bootstrap
#: iterations need one (P, P) product per round), above it their P^2 memory
#: and P^3 factorisations dominate.
SPARSE_MIN_MODELS = 1500
#: ``auto``: by size; ``dense`` / ``sparse``: forced.
PATHS = ("auto", "dense", "sparse")


def point_columns(design: Design) -> np.ndarray:
    """The observed group statistics in the sparse solver's layout ``(G, n_stats, 1)``."""
    return np.ascontiguousarray(design.point_stats()[0].T)[:, :, None]


def use_sparse(path: str, n_models: int) -> bool:
    """Whether a board of ``n_models`` models takes the sparse path."""
    if path not in PATHS:
        raise ArgumentError(f"path must be one of {PATHS}, got {path!r}")
    return path == "sparse" or (path == "auto" and n_models >= SPARSE_MIN_MODELS)


def fisher_se_bound(
    design: Design, x: np.ndarray, lam: float, anchor: tuple[int, float] | None
) -> np.ndarray:
    """Lower bound of the Fisher SE of every model's theta (logits), shape (M,).

    For the centred rating ``w = e_k - 1/Ma``; anchored ``w = e_k - e_anchor``.
    ``Var = w' H^+ w >= (w'w)^2 / (w' H w)``, where ``H`` may be the
    theta block of the information (the full inverse's theta block is larger).
    """
    stats = point_columns(design)
    _, _, curv = sparse_evaluate(design, x[:, None], stats, np.array([lam]))
    ma = design.n_active
    h_diag = curv.diag[:ma, 0] - curv.gauge[0]  # the gauge term is not information
    out = np.zeros(design.n_models)
    if ma == 0:
        return out
    if anchor is None:
        ww = 1.0 - 1.0 / ma
        # w'Hw = H_kk - 2/Ma sum_j H_kj + 1/Ma^2 sum H; with rows of H summing to lam
        # (Laplacian plus prior) this is H_kk - 2 lam / Ma + lam / Ma
        whw = h_diag - lam / ma
        var = ww * ww / np.maximum(whw, 1e-300)
    else:
        a = int(np.searchsorted(design.active, anchor[0]))
        # H_ka: minus the curvature of the groups between k and the anchor
        hdd = curv.hdd[:, 0]
        h_ka = np.zeros(ma)
        for me, other in ((design.ga, design.gb), (design.gb, design.ga)):
            hit = other == a
            np.add.at(h_ka, me[hit], -hdd[hit])
        whw = h_diag + h_diag[a] - 2.0 * h_ka
        var = 4.0 / np.maximum(whw, 1e-300)
        var[a] = 0.0
    out[design.active] = var
    return np.sqrt(out)


def sparse_fit(
    table: CountTable,
    options: FitOptions | None = None,
    /,
    *,
    names: Sequence[str] | None = None,
    design: Design | None = None,
    **overrides: Any,
) -> Fit:
    """Bradley–Terry fit like :func:`arena.engine.fitting.fit.fit`, in O(cells) memory.

    ``names`` and ``design`` as in :func:`~arena.engine.fitting.fit.fit`.  Returns a
    :class:`~arena.engine.fitting.fit.Fit` with ``cov``, ``param_cov`` and
    ``kinv`` set to ``None`` and ``se`` a lower bound of the Fisher SE (see
    the module docstring).
    """
    p = fit_problem(table, fit_options(options, **overrides), names, design=design)
    design, anchor, lam = p.design, p.anchor, p.lam
    cols = point_columns(design)
    x0 = initial_params(design)[:, None]
    solve: dict[str, Any] = dict(lam=lam, max_cg=1000, dtype=np.float64)
    x, conv, iters, gnorm = sparse_newton(design, cols, x0, gtol=p.gtol, max_iter=200, **solve)
    # polish as the dense fit does: more Newton steps take the gradient to round-off
    xp, _, _, gp = sparse_newton(
        design, cols, x, gtol=np.zeros(1), max_iter=2, eta_max=1e-12, **solve
    )
    if gp[0] < gnorm[0]:
        x, gnorm = xp, gp
    f = float(sparse_evaluate(design, x, cols, np.array([lam]), order=0)[0][0])
    x = x[:, 0]

    theta = to_models(design, x[None, : design.n_active], anchor)[0]
    rating = BASE + SCALE * theta
    if anchor is not None:
        rating += anchor[1] - BASE
    se = SCALE * fisher_se_bound(design, x, lam, anchor)
    se[design.battles_per_model == 0] = SCALE / np.sqrt(lam if lam > 0 else DEFAULT_PRIOR)
    k = design.n_active
    pos = float(x[k]) if design.position else None
    tie = float(np.exp(x[-1])) if design.ties == "davidson" else None
    # what the dense fit reports, without the covariance (never formed here)
    sol: dict[str, Any] = {f: None for f in ("cov", "param_cov", "kinv", "tie_param_se")}
    sol.update(theta=theta, rating=rating, se=se, tie_param=tie, log_likelihood=f)
    sol.update(converged=bool(conv[0]) or bool(gnorm[0] <= p.gtol[0]), grad_norm=float(gnorm[0]))
    sol.update(iterations=int(iters[0]), anchor=anchor, design=design, x=x)
    return finish_fit(p, sol, pos, None)
