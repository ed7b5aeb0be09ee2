"""Style-controlled point fit: :func:`fit_style` and its result :class:`StyleFit`.

The model, the penalty and the scale are described in :mod:`arena.engine.style.rate`;
the likelihood is :class:`arena.engine.style.model.StyleDesign`'s, solved by
the raw engine's :func:`arena.engine.fitting.fit.solve_model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.core.errors import ArgumentError
from arena.engine.fields import filled_by_producer
from arena.engine.fitting.fit import check_anchor, check_davidson, resolve_prior, solve_model
from arena.engine.fitting.graph import existence, model_flags
from arena.engine.fitting.newton import GTOL_REL
from arena.engine.messages import fit_warnings
from arena.engine.options import FitOptions, fit_options
from arena.engine.resampling.blas import one_blas_thread
from arena.engine.style.design import StyleTable
from arena.engine.style.model import StyleDesign

__all__ = ["StyleFit", "fit_style", "LN10"]

LN10 = float(np.log(10.0))


@dataclass(frozen=True)
class StyleFit:
    """Point fit of the style-controlled model (attributes as :class:`arena.engine.fitting.fit.Fit`).

    Extra attributes
    ----------------
    features : tuple of str
        Covariates (``"position"`` last when fitted).
    coef, coef_se : ndarray, shape (F,)
        ``gamma`` in logits per covariate SD, and its Fisher SE.
    coef_cov : ndarray, shape (F, F)
    style_reg : float or None
    lam : ndarray, shape (P,)
        Prior precision of every parameter actually used.
    """

    theta: np.ndarray
    rating: np.ndarray
    se: np.ndarray
    cov: np.ndarray
    features: tuple[str, ...]
    coef: np.ndarray
    coef_se: np.ndarray
    coef_cov: np.ndarray
    converged: bool
    grad_norm: float
    iterations: int
    tie_param: float | None
    tie_param_se: float | None
    mle_exists: bool
    prior_used: float
    style_reg: float | None
    flags: list[tuple[str, ...]]
    warnings: list[str]
    log_likelihood: float
    anchor: tuple[int, float] | None = None
    design: StyleDesign = filled_by_producer()
    x: np.ndarray = filled_by_producer()
    param_cov: np.ndarray = filled_by_producer()
    kinv: np.ndarray = filled_by_producer()
    lam: np.ndarray = filled_by_producer()


def _precision(design: StyleDesign, lam_theta: float, lam_coef: float) -> np.ndarray:
    lam = np.zeros(design.n_params)
    lam[: design.n_active] = lam_theta
    lam[design.n_active : design.n_active + design.n_features] = lam_coef
    return lam


@one_blas_thread
def fit_style(
    table: StyleTable,
    options: FitOptions | None = None,
    /,
    *,
    style_reg: float | None = None,
    **overrides: Any,
) -> StyleFit:
    """Fit the style-controlled Bradley–Terry model (see :mod:`arena.engine.style.rate`).

    Parameters
    ----------
    table : StyleTable
    options : FitOptions, optional
        The model, as for :func:`arena.engine.fitting.fit.fit`: ``ties``,
        ``position`` (a first-shown advantage, fitted as an intercept
        covariate named ``position``), ``prior`` (theta only; not with
        ``style_reg``) and ``anchor``.  ``both_bad`` was applied when the
        table was built (:func:`~arena.engine.style.design.style_table`).
    style_reg : float or None
        LMArena's L2 penalty on all parameters (their default 0.5).
    **overrides
        Fields of :class:`FitOptions` given directly (``ties="davidson"``).

    Returns
    -------
    StyleFit
    """
    opts = fit_options(options, **overrides)
    prior = opts.prior
    design = StyleDesign(table, ties=opts.ties, position=opts.position)
    anchor = check_anchor(opts.anchor, table.n_models, design)
    raw = design.raw
    raw_stats = raw.point_stats()
    ex = existence(raw, raw_stats[0])
    flags = model_flags(raw, raw_stats[0], ex)
    stats = design.point_stats()
    check_davidson(design, stats)
    if style_reg is not None:
        style_reg = float(style_reg)
        if not np.isfinite(style_reg) or style_reg < 0:
            raise ArgumentError(f"style_reg must be a finite number >= 0, got {style_reg!r}")
        if prior is not None:
            raise ArgumentError("give prior or style_reg, not both")
    if style_reg:
        lam_theta, lam_coef = style_reg / LN10**2, style_reg
    else:
        lam_theta, lam_coef = resolve_prior(prior, ex.exists), 0.0
    lam = _precision(design, lam_theta, lam_coef)

    gtol = GTOL_REL * design.gradient_scale(stats)
    sol = solve_model(design, stats, lam, gtol, anchor, lam_theta)
    ma, nf = design.n_active, design.n_features
    coef = sol["x"][ma : ma + nf].copy()
    coef_cov = sol["param_cov"][ma : ma + nf, ma : ma + nf].copy()
    warnings = list(table.warnings)
    warnings += fit_warnings(flags, ex.exists, 0.0 if style_reg else lam_theta)
    if not sol["converged"]:
        warnings.append(
            f"style-controlled fit did not converge (max |gradient| {sol['grad_norm']:.3g}); "
            "a style feature may separate the outcomes perfectly"
        )
    return StyleFit(
        **sol,
        features=design.names,
        coef=coef,
        coef_se=np.sqrt(np.clip(np.diag(coef_cov), 0.0, None)),
        coef_cov=coef_cov,
        mle_exists=bool(ex.exists),
        prior_used=float(lam_theta),
        style_reg=style_reg,
        flags=flags,
        warnings=warnings,
        lam=lam,
    )
