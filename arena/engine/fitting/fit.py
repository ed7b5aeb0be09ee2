"""Point fit: the exact Bradley–Terry maximum-likelihood estimate.

Model
-----
For a battle between ``a`` (shown first) and ``b`` with ``d = theta_a -
theta_b (+ gamma if position)``:

* ``ties="half"`` (default, LMArena-compatible): ``P(a wins) = expit(d)``;
  a tie counts as half a win for each side.
* ``ties="davidson"``: ``P(a) : P(b) : P(tie) = e^{d/2} : e^{-d/2} : nu``
  with the tie parameter ``nu = e^phi`` estimated.  Given a decisive result,
  ``P(a wins) = expit(d)``, so thetas are on the same scale.

Ratings are ``BASE + SCALE * theta`` with ``SCALE = 400 / ln 10`` (Elo
scale), thetas mean-centred over the models that have battles (mean rating
``BASE``), or shifted so that an anchor model has a given rating.

When the MLE does not exist
---------------------------
If the beats graph is not strongly connected (a model never lost or never
won, a group of models that never lost to the rest, or pieces with no
battles between them) the likelihood has no finite maximiser.  Then, and only
then, ``prior=None`` (default) adds a weak Gaussian prior ``theta ~ N(0,
1/DEFAULT_PRIOR)`` (prior SD 10 logits, ~1740 Elo), which makes the objective
strictly concave: ratings are finite, the affected models are flagged and a
warning says why.  When the MLE exists the default fit is the unregularised
MLE.  ``prior=0`` demands the MLE and raises :class:`ValueError` when it does
not exist; ``prior=lam > 0`` always fits the MAP estimate with precision
``lam``.

The checks and the set-up shared with the sparse point fit
(:func:`fit_problem` and :func:`finish_fit`) live here with the model; the
warnings' sentences are in :mod:`arena.engine.messages`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import linalg

from arena.core.errors import ArgumentError
from arena.engine.counts import CountTable
from arena.engine.fields import filled_by_producer
from arena.engine.fitting.design import Design, make_design
from arena.engine.fitting.graph import Existence, existence, model_flags
from arena.engine.fitting.likelihood import gradient_scale
from arena.engine.fitting.newton import GTOL_REL, model_functions, newton
from arena.engine.messages import check_names, fit_warnings, flag_warnings, model_label
from arena.engine.options import FitOptions, fit_options
from arena.engine.resampling.blas import one_blas_thread
from arena.engine.scale import BASE, SCALE

if TYPE_CHECKING:  # the style model shares these helpers; imported for annotations only
    from arena.engine.style.model import StyleDesign

__all__ = [
    "Fit",
    "fit",
    "DEFAULT_PRIOR",
    # re-exported from arena.engine.messages (their home before)
    "check_names",
    "fit_warnings",
    "flag_warnings",
    "model_label",
]

#: Prior precision used only when the MLE does not exist (prior SD 10 logits).
DEFAULT_PRIOR = 1e-2


@dataclass(frozen=True)
class Fit:
    """Result of :func:`fit`.

    Attributes
    ----------
    theta : ndarray, shape (M,)
        Log-strengths (logits), centred or anchored like ``rating``.
    rating : ndarray, shape (M,)
        ``BASE + SCALE * theta``.
    se : ndarray, shape (M,)
        Fisher-information standard errors on the rating scale (zero for an
        anchor model; prior SD for models with no battles).
    cov : ndarray, shape (M, M)
        Fisher covariance of ``rating``.
    converged : bool
    grad_norm : float
        Max-abs gradient of the objective at the solution.
    iterations : int
    tie_param : float or None
        Davidson ``nu`` (``None`` for half ties).
    tie_param_se : float or None
        Its standard error (delta method).
    position_param, position_se : float or None
        Position (first-shown) advantage in logits and its SE.
    mle_exists : bool
    prior_used : float
        Prior precision actually used (0.0 for the MLE).
    flags : list of tuple of str
        Per-model flags: ``no_battles``, ``few_battles``, ``never_won``,
        ``never_lost``, ``disconnected``, ``no_mle``.
    warnings : list of str
    log_likelihood : float
    """

    theta: np.ndarray
    rating: np.ndarray
    se: np.ndarray
    cov: np.ndarray
    converged: bool
    grad_norm: float
    iterations: int
    tie_param: float | None
    tie_param_se: float | None
    position_param: float | None
    position_se: float | None
    mle_exists: bool
    prior_used: float
    flags: list[tuple[str, ...]]
    warnings: list[str]
    log_likelihood: float
    anchor: tuple[int, float] | None = None
    # solver state reused by the bootstrap and the sandwich estimator
    design: Design = filled_by_producer()
    x: np.ndarray = filled_by_producer()
    param_cov: np.ndarray = filled_by_producer()  # inverse information, gauge-projected
    kinv: np.ndarray = filled_by_producer()  # inverse of the (gauge-fixed) negative Hessian


def initial_params(design: Design | StyleDesign) -> np.ndarray:
    """Start: equal strengths, no position effect, phi matching the tie share."""
    x = np.zeros(design.n_params)
    if design.ties == "davidson":
        st = design.point_stats()[0]
        tie = st[2].sum() / max(st.sum(), 1e-300)
        tie = min(max(tie, 1e-6), 1 - 1e-6)
        # with d = 0, P(tie) = nu / (2 + nu)
        x[-1] = np.log(2 * tie / (1 - tie))
    return x


def gauge_projector(design: Design | StyleDesign) -> np.ndarray:
    """Projector removing the common theta shift, shape (P, P)."""
    p, ma = design.n_params, design.n_active
    proj = np.eye(p)
    if ma:
        proj[:ma, :ma] -= 1.0 / ma
    return proj


def to_models(
    design: Design | StyleDesign, x_theta: np.ndarray, anchor: tuple[int, float] | None
) -> np.ndarray:
    """Embed active thetas ``(R, Ma)`` into all models ``(R, M)``, centred or anchored.

    Models without battles sit at the mean (or at the anchor's theta).
    """
    r = x_theta.shape[0]
    theta = np.zeros((r, design.n_models))
    if design.n_active:
        centred = x_theta - x_theta.mean(axis=1, keepdims=True)
        theta[:, design.active] = centred
    if anchor is not None:
        theta -= theta[:, [anchor[0]]]
    return theta


def rating_transform(design: Design | StyleDesign, anchor: tuple[int, float] | None) -> np.ndarray:
    """Linear map from parameters (P,) to model thetas (M,) as done by :func:`to_models`."""
    m, ma, p = design.n_models, design.n_active, design.n_params
    t = np.zeros((m, p))
    if ma:
        t[design.active, :ma] = np.eye(ma) - 1.0 / ma
    if anchor is not None:
        t -= t[anchor[0]]
    return t


#: Below this reciprocal condition number the information matrix is treated
#: as singular and inverted by the pseudo-inverse (directions the data cannot
#: identify get zero variance instead of round-off noise).
RCOND_MIN = 1e-12


def inverse_information(h: np.ndarray) -> np.ndarray:
    """Inverse of the (gauge-fixed) negative Hessian ``h``, or its pseudo-inverse if singular.

    A Cholesky inverse costs a fifth of the eigendecomposition behind
    ``np.linalg.pinv`` (0.4 s vs 2 s of CPU at 1,000 models); the condition
    estimate from the same factor sends nearly singular matrices to ``pinv``.
    """
    if h.shape[0] == 0:
        return np.zeros((0, 0))
    try:
        factor, lower = linalg.cho_factor(h, lower=True, check_finite=False)
        rcond, info = linalg.lapack.dpocon(factor, np.abs(h).sum(axis=0).max(), uplo="L")
        if info == 0 and rcond >= RCOND_MIN:
            inv = linalg.cho_solve((factor, lower), np.eye(h.shape[0]), check_finite=False)
            sym: np.ndarray = 0.5 * (inv + inv.T)
            return sym
    except linalg.LinAlgError:
        pass
    return np.linalg.pinv(h, hermitian=True)


def warm_params(design: Design | StyleDesign, start: np.ndarray | None) -> np.ndarray:
    """Start parameters: ``start`` (log-strengths of all models, any centring) for the
    active models, the usual start (:func:`initial_params`) for the rest.

    A warm start changes where Newton begins, not where it ends: the maximiser
    is unique, so a refit from the previous fit's thetas reaches the same
    estimate in fewer iterations. Non-finite entries (models without a rating
    before) start at the mean.
    """
    x = initial_params(design)
    if start is None or not design.n_active:
        return x
    theta = np.asarray(start, dtype=np.float64)
    if theta.shape != (design.n_models,):
        raise ArgumentError(f"start must have one value per model ({design.n_models})")
    active = np.where(np.isfinite(theta), theta, np.nan)[design.active]
    mean = np.nanmean(active) if np.isfinite(active).any() else 0.0
    active = np.where(np.isfinite(active), active - mean, 0.0)
    x[: design.n_active] = active
    return x


def solve_point(
    design: Design | StyleDesign,
    stats: np.ndarray,
    lam: float | np.ndarray,
    gtol: np.ndarray,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, bool, int, float, float, np.ndarray, np.ndarray]:
    """Damped Newton to the maximiser, polished, and the inverse information there.

    Works for any design the solvers of :mod:`arena.engine.fitting.newton` accept;
    ``start`` (thetas of all models) warm-starts it (:func:`warm_params`).

    Returns
    -------
    x : (1, P), converged : bool, iterations : int, grad_norm : float,
    log_likelihood : float, param_cov : (P, P) gauge-projected inverse
    information, kinv : (P, P) inverse of the (gauge-fixed) negative Hessian.
    """
    x0 = warm_params(design, start)[None, :]
    x, conv, iters, gnorm = newton(design, stats, x0, lam=lam, gtol=gtol, max_iter=200)
    # polish: one or two more Newton steps take the gradient to round-off level
    xp, _, _, gp = newton(design, stats, x, lam=lam, gtol=np.zeros(1), max_iter=2)
    if gp[0] < gnorm[0]:
        x, gnorm = xp, gp
    f, _, h = model_functions(design)[0](x, stats, lam)
    hinv = inverse_information(h[0])
    proj = gauge_projector(design)
    converged = bool(conv[0]) or bool(gnorm[0] <= gtol[0])
    return x, converged, int(iters[0]), float(gnorm[0]), float(f[0]), proj @ hinv @ proj, hinv


def solve_model(
    design: Design | StyleDesign,
    stats: np.ndarray,
    lam: float | np.ndarray,
    gtol: np.ndarray,
    anchor: tuple[int, float] | None,
    lam_theta: float,
    start: np.ndarray | None = None,
) -> dict[str, Any]:
    """Solve for the maximiser; the fields every point fit reports, as a dict.

    :func:`solve_point` and :func:`model_ratings` (models without battles get
    the prior precision ``lam_theta``), plus the Davidson tie parameter (the
    last parameter) and its delta-method SE.  Keys are fields of :class:`Fit`
    (and of the style fit's ``StyleFit``).
    """
    x, converged, iters, gnorm, f, pcov, hinv = solve_point(design, stats, lam, gtol, start)
    theta, rating, cov, se = model_ratings(design, x, pcov, anchor, lam_theta)
    tie = tie_se = None
    if design.ties == "davidson":
        tie = float(np.exp(x[0, -1]))
        tie_se = float(tie * np.sqrt(max(pcov[-1, -1], 0.0)))
    return dict(
        theta=theta,
        rating=rating,
        se=se,
        cov=cov,
        converged=converged,
        grad_norm=gnorm,
        iterations=iters,
        tie_param=tie,
        tie_param_se=tie_se,
        log_likelihood=f,
        anchor=anchor,
        design=design,
        x=x[0],
        param_cov=pcov,
        kinv=hinv,
    )


def check_davidson(design: Design | StyleDesign, stats: np.ndarray) -> None:
    """The Davidson tie parameter needs a tie and a decisive battle (``stats`` (1, 3, G))."""
    if design.ties == "davidson":
        wt = stats[0, 2].sum()
        if design.n_active and (wt <= 0 or wt >= stats[0].sum()):
            raise ArgumentError("ties='davidson' needs at least one tie and one decisive battle")


def model_ratings(
    design: Design | StyleDesign,
    x: np.ndarray,
    pcov: np.ndarray,
    anchor: tuple[int, float] | None,
    lam: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Thetas, ratings, Fisher covariance and SEs of all models from fitted parameters.

    ``x`` has shape (1, P) and ``pcov`` is the gauge-projected inverse
    information; models without battles get the prior variance (precision
    ``lam``, or the default prior when there is none).
    """
    t = rating_transform(design, anchor)
    theta = to_models(design, x[:, : design.n_active], anchor)[0]
    cov_theta = t @ pcov @ t.T
    none_idx = np.flatnonzero(design.battles_per_model == 0)
    cov_theta[none_idx, none_idx] = 1.0 / (lam if lam > 0 else DEFAULT_PRIOR)
    cov = SCALE**2 * cov_theta
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    rating = BASE + SCALE * theta
    if anchor is not None:
        rating += anchor[1] - BASE
    return theta, rating, cov, se


def check_anchor(
    anchor: Any,
    n_models: int,
    design: Design | StyleDesign | None = None,
    names: Sequence[str] | None = None,
) -> tuple[int, float] | None:
    if anchor is None:
        return None
    try:
        idx, value = int(anchor[0]), float(anchor[1])
    except (TypeError, ValueError, IndexError) as exc:
        raise ArgumentError(f"anchor must be (model_index, rating), got {anchor!r}") from exc
    if not 0 <= idx < n_models or not np.isfinite(value):
        raise ArgumentError(
            f"anchor index must be in [0, {n_models}) and rating finite, got {anchor!r}"
        )
    if design is not None and design.battles_per_model[idx] == 0:
        raise ArgumentError(
            f"anchor model {model_label(idx, names)} has no battles, so it cannot fix the scale"
        )
    return idx, value


def resolve_prior(prior: float | None, mle_exists: bool) -> float:
    if prior is None:
        return 0.0 if mle_exists else DEFAULT_PRIOR
    prior = float(prior)
    if not np.isfinite(prior) or prior < 0:
        raise ArgumentError(f"prior must be None or a finite number >= 0, got {prior!r}")
    if prior == 0.0 and not mle_exists:
        raise ArgumentError(
            "prior=0 asks for the pure maximum-likelihood estimate, but it does not exist for "
            "this data (the beats graph is not strongly connected: some model never lost or "
            "never won, or the comparison graph falls apart into pieces); use prior=None to "
            "fall back to a weak Gaussian prior, or prior>0"
        )
    return prior


@one_blas_thread
def fit(
    table: CountTable,
    options: FitOptions | None = None,
    /,
    *,
    names: Sequence[str] | None = None,
    design: Design | None = None,
    start: np.ndarray | None = None,
    **overrides: Any,
) -> Fit:
    """Fit Bradley–Terry ratings by maximum likelihood (see module docstring).

    Parameters
    ----------
    table : CountTable
    options : FitOptions, optional
        The model: tie model, ``both_bad`` votes, position term, prior and
        anchor (see :class:`arena.engine.options.FitOptions`).
    **overrides
        Fields of :class:`FitOptions` given directly, e.g.
        ``fit(table, ties="davidson")``; they replace those of ``options``.
    names : sequence of str, optional
        Model names by table index: warnings and errors name models by them
        (without, by index).
    design : Design, optional
        ``make_design`` of this table and model, when the caller has it
        already (compiling a 1,000-model board takes ~0.3 s).
    start : ndarray, shape (M,), optional
        Log-strengths to start Newton from (a previous fit's ``theta``): the same
        estimate, fewer iterations (:func:`warm_params`).

    Returns
    -------
    Fit
    """
    p = fit_problem(table, fit_options(options, **overrides), names, design=design)
    sol = solve_model(p.design, p.stats, p.lam, p.gtol, p.anchor, p.lam, start)
    pos = pos_se = None
    if p.design.position:
        k = p.design.n_active
        pos, pos_se = float(sol["x"][k]), float(np.sqrt(max(sol["param_cov"][k, k], 0.0)))
    return finish_fit(p, sol, pos, pos_se)


@dataclass(frozen=True)
class FitProblem:
    """What a point fit solves: the design, its data and the settled options."""

    design: Design
    anchor: tuple[int, float] | None
    stats: np.ndarray  # (1, n_stats, G)
    existence: Existence
    flags: list[tuple[str, ...]]
    lam: float
    gtol: np.ndarray
    names: list[str] | None = None


def fit_problem(
    table: CountTable,
    opts: FitOptions,
    names: Sequence[str] | None = None,
    *,
    design: Design | None = None,
) -> FitProblem:
    """Compile (unless ``design`` is given), check (anchor, Davidson, prior) and flag a point fit."""
    names = check_names(names, table.n_models)
    if design is None:
        design = make_design(table, ties=opts.ties, both_bad=opts.both_bad, position=opts.position)
    elif (design.ties, design.position, design.n_models) != (
        opts.ties,
        opts.position,
        table.n_models,
    ):
        raise ArgumentError("design was compiled for another table or model")
    anchor = check_anchor(opts.anchor, table.n_models, design, names)
    stats = design.point_stats()
    ex = existence(design, stats[0])
    flags = model_flags(design, stats[0], ex)
    check_davidson(design, stats)
    lam = resolve_prior(opts.prior, ex.exists)
    gtol = GTOL_REL * gradient_scale(design, stats)
    return FitProblem(design, anchor, stats, ex, flags, lam, gtol, names)


def finish_fit(p: FitProblem, sol: dict[str, Any], pos: float | None, pos_se: float | None) -> Fit:
    """The :class:`Fit` of a solved problem (``sol`` as from :func:`solve_model`)."""
    warnings = fit_warnings(p.flags, p.existence.exists, p.lam, p.names)
    if not sol["converged"]:
        warnings.append(f"point fit did not converge (max |gradient| {sol['grad_norm']:.3g})")
    return Fit(
        **sol,
        position_param=pos,
        position_se=pos_se,
        mle_exists=bool(p.existence.exists),
        prior_used=float(p.lam),
        flags=p.flags,
        warnings=warnings,
    )
