"""Style-controlled ratings: the contextual Bradley–Terry model of LMArena.

``logit P(A beats B) = theta_A - theta_B + x . gamma`` with ``x`` the
standardised style covariates of the battle (:mod:`arena.engine.style_design`),
ties as half a win or by Davidson's model, battle weights as given.

* Default: the exact MLE (no penalty).  When the raw beats graph is not
  strongly connected the MLE does not exist and, as for raw boards, a weak
  Gaussian prior on theta is used (``prior``, see :mod:`arena.engine.fit`).
* ``style_reg=lam``: LMArena's objective, the L2 penalty ``lam / 2 *
  (||r||^2 + ||gamma||^2)`` with ``r = theta / ln 10`` (FastChat fits ratings
  in base-10 logits and features in natural logits); ``0.5`` is their default.
* Ratings are on the raw board's scale: ``1000 + 400 / ln 10 * theta``,
  mean-centred over the models with battles, or anchored.
* Coefficients ``gamma`` are reported in logits per standard deviation of
  the covariate (FastChat's ``params``).

Intervals: the bootstrap resamples battles (one exact multinomial over rows
per round, as the raw engine resamples categories) or clusters; all rounds of
a chunk are one ``(rounds, P)`` array solved by the raw engine's
fixed-Hessian iterations warm-started at the point fit, with batched damped
Newton for the rounds that contract slowly.  Fisher and sandwich (optionally
cluster-robust) normal intervals, and simultaneous intervals (max-|t| or the
chi-square projection) as for raw boards; the coefficients get intervals by
the same method (simultaneous over the coefficients when asked).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from arena.engine.analytic import sandwich_param_cov
from arena.engine.blas import one_blas_thread
from arena.engine.bootstrap import Bootstrap, _mle_possible, run_rounds
from arena.engine.fit import (
    DEFAULT_PRIOR,
    SCALE,
    _warnings,
    check_anchor,
    check_davidson,
    model_ratings,
    rating_transform,
    resolve_prior,
    solve_point,
    to_models,
)
from arena.engine.graph import category_credit_maps, existence, model_flags
from arena.engine.newton import GTOL_REL, GTOL_REL_BOOT, _rmul, chord, newton
from arena.engine.rate import (
    Ratings,
    base_diagnostics,
    check_interval_options,
    normal_intervals,
    report_rounds,
)
from arena.engine.sampling import resampled_counts
from arena.engine.style_design import StyleTable
from arena.engine.style_model import StyleDesign

__all__ = ["StyleFit", "StyleRatings", "fit_style", "bootstrap_style", "rate_style"]

#: Elements per working array of a bootstrap chunk: small enough that a
#: chunk's arrays stay in cache between the passes of one evaluation.
STYLE_CHUNK_ELEMS = 1_000_000
LN10 = float(np.log(10.0))


@dataclass(frozen=True)
class StyleFit:
    """Point fit of the style-controlled model (attributes as :class:`arena.engine.fit.Fit`).

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
    design: StyleDesign = field(repr=False, default=None)
    x: np.ndarray = field(repr=False, default=None)
    param_cov: np.ndarray = field(repr=False, default=None)
    kinv: np.ndarray = field(repr=False, default=None)
    lam: np.ndarray = field(repr=False, default=None)


@dataclass(frozen=True)
class StyleRatings(Ratings):
    """:class:`~arena.engine.rate.Ratings` of a style-controlled board plus its coefficients.

    Extra attributes
    ----------------
    features : tuple of str
    coef, coef_low, coef_high, coef_se : ndarray, shape (F,)
    coef_samples : ndarray, shape (rounds, F)
    """

    features: tuple[str, ...] = ()
    coef: np.ndarray = None
    coef_low: np.ndarray = None
    coef_high: np.ndarray = None
    coef_se: np.ndarray = None
    coef_samples: np.ndarray = field(repr=False, default=None)

    def coefficients(self) -> list[dict]:
        """``[{feature, estimate, ci_low, ci_high, se}]`` as plain floats."""
        return [
            {
                "feature": f,
                "estimate": float(self.coef[k]),
                "ci_low": float(self.coef_low[k]),
                "ci_high": float(self.coef_high[k]),
                "se": float(self.coef_se[k]),
            }
            for k, f in enumerate(self.features)
        ]


def _precision(design: StyleDesign, lam_theta: float, lam_coef: float) -> np.ndarray:
    lam = np.zeros(design.n_params)
    lam[: design.n_active] = lam_theta
    lam[design.n_active : design.n_active + design.n_features] = lam_coef
    return lam


@one_blas_thread
def fit_style(
    table: StyleTable,
    *,
    ties: str = "half",
    position: bool = False,
    prior: float | None = None,
    style_reg: float | None = None,
    anchor: tuple[int, float] | None = None,
) -> StyleFit:
    """Fit the style-controlled Bradley–Terry model (see module docstring).

    Parameters
    ----------
    table : StyleTable
    ties : {"half", "davidson"}
    position : bool
        Also fit a first-shown advantage (an intercept covariate named ``position``).
    prior : float or None
        As in :func:`arena.engine.fit.fit` (theta only); not with ``style_reg``.
    style_reg : float or None
        LMArena's L2 penalty on all parameters (their default 0.5).
    anchor : (int, float) or None

    Returns
    -------
    StyleFit
    """
    design = StyleDesign(table, ties=ties, position=position)
    anchor = check_anchor(anchor, table.n_models, design)
    raw = design.raw
    raw_stats = raw.point_stats()
    ex = existence(raw, raw_stats[0])
    flags = model_flags(raw, raw_stats[0], ex)
    stats = design.point_stats()
    check_davidson(design, stats)
    if style_reg is not None:
        style_reg = float(style_reg)
        if not np.isfinite(style_reg) or style_reg < 0:
            raise ValueError(f"style_reg must be a finite number >= 0, got {style_reg!r}")
        if prior is not None:
            raise ValueError("give prior or style_reg, not both")
    if style_reg:
        lam_theta, lam_coef = style_reg / LN10**2, style_reg
    else:
        lam_theta, lam_coef = resolve_prior(prior, ex.exists), 0.0
    lam = _precision(design, lam_theta, lam_coef)

    gtol = GTOL_REL * design.gradient_scale(stats)
    x, converged, iters, gnorm, f, pcov, hinv = solve_point(design, stats, lam, gtol)
    theta, rating, cov, se = model_ratings(design, x, pcov, anchor, lam_theta)

    ma, nf = design.n_active, design.n_features
    coef = x[0, ma : ma + nf].copy()
    coef_cov = pcov[ma : ma + nf, ma : ma + nf].copy()
    tie = tie_se = None
    if design.ties == "davidson":
        tie = float(np.exp(x[0, -1]))
        tie_se = float(tie * np.sqrt(max(pcov[-1, -1], 0.0)))
    warnings = list(table.warnings)
    warnings += _warnings(flags, ex.exists, 0.0 if style_reg else lam_theta)
    if not converged:
        warnings.append(
            f"style-controlled fit did not converge (max |gradient| {gnorm:.3g}); a style "
            "feature may separate the outcomes perfectly"
        )
    return StyleFit(
        theta=theta,
        rating=rating,
        se=se,
        cov=cov,
        features=design.names,
        coef=coef,
        coef_se=np.sqrt(np.clip(np.diag(coef_cov), 0.0, None)),
        coef_cov=coef_cov,
        converged=converged,
        grad_norm=gnorm,
        iterations=iters,
        tie_param=tie,
        tie_param_se=tie_se,
        mle_exists=bool(ex.exists),
        prior_used=float(lam_theta),
        style_reg=style_reg,
        flags=flags,
        warnings=warnings,
        log_likelihood=f,
        anchor=anchor,
        design=design,
        x=x[0],
        param_cov=pcov,
        kinv=hinv,
        lam=lam,
    )


def _clusters_by_row(design: StyleDesign, clusters) -> sp.csr_matrix:
    if clusters.shape[1] != design.cat_n.size:
        raise ValueError(
            f"clusters must have one column per style row ({design.cat_n.size}), "
            f"got {clusters.shape[1]}"
        )
    zq = sp.csr_matrix(clusters)
    return zq[np.asarray(zq.sum(axis=1)).ravel() > 0]


def _inverse(h: np.ndarray) -> np.ndarray:
    """Inverses of a ``(R, P, P)`` stack (least-squares inverses if one is singular)."""
    try:
        return np.linalg.inv(h)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(h, hermitian=True)


class _StyleJob:
    """Everything a chunk of bootstrap rounds needs (read-only, shared by workers)."""

    def __init__(self, point: StyleFit, zq, rounds: int, chord_iters: int, newton_iters: int):
        self.point = point
        self.design = d = point.design
        self.zq = zq
        self.chord_iters, self.newton_iters = chord_iters, newton_iters
        # resampling units: battles (their rows) or clusters
        if zq is None:
            per_row = d.cat_n.astype(np.intp)
            self.n_units = d.cat_n.size
            one_each = bool(np.all(per_row == 1))
            self.unit_of = None if one_each else np.repeat(np.arange(self.n_units), per_row)
        else:
            self.unit_of = None
            self.n_units = zq.shape[0]
        # per-round MLE check on the raw graph: row counts -> credit/debit per model
        credit, debit = category_credit_maps(d.raw)
        n = d.cat_n.size
        row_cat = sp.csr_matrix(
            (np.ones(n), (np.arange(n), d.cell_cat)), shape=(n, d.raw.cat_n.size)
        )
        self.credit_t = (row_cat @ credit).T.tocsr()
        self.debit_t = (row_cat @ debit).T.tocsr()
        self.mle_point = point.prior_used == 0.0 and not point.style_reg
        self.lam_prior = point.lam.copy()
        self.lam_prior[: d.n_active] = np.maximum(self.lam_prior[: d.n_active], DEFAULT_PRIOR)
        self.none_idx = np.flatnonzero(d.battles_per_model == 0)
        self.terms = d.point_terms(point.x)
        self.diag0 = d.diagonal_from_terms(
            [None if t is None else d.cat_n * t for t in self.terms], point.lam
        )[0]

    def width(self) -> int:
        d = self.design
        clusters = 0 if self.zq is None else self.n_units
        return max(d.cat_n.size, clusters, d.n_params**2, 1)

    def run(self, rounds: int, seed: np.random.SeedSequence):
        d, point = self.design, self.point
        rng = np.random.Generator(np.random.PCG64(seed))
        draws = resampled_counts(rng, self.unit_of, self.n_units, rounds)
        counts = draws if self.zq is None else np.ascontiguousarray((self.zq.T @ draws.T).T)
        stats = d.stats_from_counts(counts)
        gtol = GTOL_REL_BOOT * d.gradient_scale(stats)
        x = np.tile(point.x, (rounds, 1))
        converged = np.zeros(rounds, dtype=bool)
        gnorm = np.full(rounds, np.inf)
        use_prior = np.zeros(rounds, dtype=bool)
        if self.mle_point and d.n_active:
            credit, debit = _rmul(self.credit_t, counts), _rmul(self.debit_t, counts)
            use_prior = ~_mle_possible(d, stats, credit, debit)
        std = np.flatnonzero(~use_prior)
        if std.size:
            every = std.size == rounds
            st = stats if every else stats[std]
            # First step: the point fit's inverse information rescaled to the
            # round's curvature (as the raw engine's chord), from the round's
            # gradient and Hessian diagonal at the point fit, which are linear
            # in its counts (no logistic pass).  Resampled rows move these fits
            # further than the raw engine's cells (models with ~1000 battles,
            # weights up to 3), so the fixed matrix would then contract at only
            # 0.1-0.3 per step: the next iterations use each round's own
            # Hessian at that first step, and contract like the remaining
            # (now small) distance.
            c_std = counts if every else counts[std]
            terms = [None if t is None else c_std * t for t in self.terms]
            g0 = d.assemble(terms, x[std], point.lam, hessian=False)[0]
            dr = d.diagonal_from_terms(terms, point.lam)
            with np.errstate(divide="ignore", invalid="ignore"):
                inv_s = np.sqrt(np.where(dr > 0, self.diag0 / dr, 1.0))
            x1 = x[std] + ((g0 * inv_s) @ point.kinv) * inv_s
            _, g1, h1 = d.evaluate(x1, st, point.lam, order=-2)
            xs, cs, _, gs = chord(
                d,
                st,
                x1,
                _inverse(h1),
                lam=point.lam,
                gtol=gtol[std],
                max_iter=self.chord_iters,
                g0=g1,
            )
            slow = np.flatnonzero(~cs)
            if slow.size:
                xn, cn, _, gn = newton(
                    d, st[slow], xs[slow], lam=point.lam, gtol=gtol[std[slow]],
                    max_iter=self.newton_iters,
                )  # fmt: skip
                xs[slow], cs[slow], gs[slow] = xn, cn, gn
            x[std], converged[std], gnorm[std] = xs, cs, gs
            if self.mle_point:
                for r in std[~cs]:
                    if not existence(d.raw, d.raw_stats(stats[r : r + 1])[0]).exists:
                        use_prior[r] = True
        pri = np.flatnonzero(use_prior)
        if pri.size:
            xp, cp, _, gp = newton(
                d, stats[pri], np.tile(point.x, (pri.size, 1)), lam=self.lam_prior,
                gtol=gtol[pri], max_iter=self.newton_iters,
            )  # fmt: skip
            x[pri], converged[pri], gnorm[pri] = xp, cp, gp
        theta = to_models(d, x[:, : d.n_active], point.anchor)
        if self.none_idx.size:
            # no data at all: the prior is all we know about these models
            sd = 1.0 / np.sqrt(max(point.prior_used, DEFAULT_PRIOR))
            theta[:, self.none_idx] += rng.normal(0.0, sd, size=(rounds, self.none_idx.size))
        ratings = point.rating[None, :] + SCALE * (theta - point.theta[None, :])
        coef = x[:, d.n_active : d.n_active + d.n_features]
        return ratings, coef, converged, use_prior, gnorm


@dataclass(frozen=True)
class StyleBootstrap:
    """Bootstrap of a style fit: ratings and coefficients of the same rounds."""

    ratings: Bootstrap
    coef: Bootstrap


@one_blas_thread
def bootstrap_style(
    table: StyleTable,
    *,
    rounds: int = 1000,
    seed: int | np.random.Generator | np.random.SeedSequence = 0,
    clusters: sp.csr_matrix | None = None,
    point: StyleFit | None = None,
    workers: int | None = None,
    chord_iters: int = 12,
    newton_iters: int = 60,
    **fit_options,
) -> StyleBootstrap:
    """Bootstrap the style-controlled fit; all rounds of a chunk solved together.

    Parameters
    ----------
    table : StyleTable
    rounds : int
    seed : int, Generator or SeedSequence
        Same seed, same samples (whatever ``workers``).
    clusters : scipy.sparse matrix, shape (K, N), optional
        Clusters x rows battle counts (build with
        :func:`arena.engine.counts.cluster_matrix` from ``table.battle_row``):
        resample whole clusters.
    point : StyleFit, optional
        The point fit of the same table and options.
    workers : int, optional
    chord_iters, newton_iters : int
    **fit_options
        Passed to :func:`fit_style` when ``point`` is not given.

    Returns
    -------
    StyleBootstrap
    """
    if int(rounds) != rounds or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    rounds = int(rounds)
    if point is None:
        point = fit_style(table, **fit_options)
    zq = None if clusters is None else _clusters_by_row(point.design, clusters)
    job = _StyleJob(point, zq, rounds, chord_iters, newton_iters)
    parts = run_rounds(job, rounds, seed, workers, chunk_elems=STYLE_CHUNK_ELEMS)
    converged = np.concatenate([p[2] for p in parts])
    failed = np.flatnonzero(~converged)
    prior_rounds = np.flatnonzero(np.concatenate([p[3] for p in parts]))
    gnorm = np.concatenate([p[4] for p in parts])

    def boot(k: int, est: np.ndarray) -> Bootstrap:
        samples = np.concatenate([p[k] for p in parts])
        return Bootstrap(samples, est, converged, failed, prior_rounds, gnorm, point)

    return StyleBootstrap(ratings=boot(0, point.rating), coef=boot(1, point.coef))


def style_sandwich(point: StyleFit, clusters=None) -> tuple[np.ndarray, np.ndarray]:
    """Sandwich covariances of the ratings (M, M) and coefficients (F, F)."""
    d = point.design
    zq = None if clusters is None else _clusters_by_row(d, clusters)
    pcov = sandwich_param_cov(d.scores(point.x), d.cat_n, zq, point.param_cov)
    t = rating_transform(d, point.anchor)
    cov = SCALE**2 * (t @ pcov @ t.T)
    none_idx = np.flatnonzero(d.battles_per_model == 0)
    cov[none_idx, none_idx] = point.cov[none_idx, none_idx]
    ma, nf = d.n_active, d.n_features
    return cov, pcov[ma : ma + nf, ma : ma + nf]


def rate_style(
    table: StyleTable,
    *,
    ci: str = "bootstrap",
    level: float = 0.95,
    rounds: int = 1000,
    seed: int | np.random.Generator = 0,
    simultaneous: bool | str = False,
    clusters: sp.csr_matrix | None = None,
    ties: str = "half",
    position: bool = False,
    prior: float | None = None,
    style_reg: float | None = None,
    anchor: tuple[int, float] | None = None,
    workers: int | None = None,
) -> StyleRatings:
    """Style-controlled ratings and coefficients with intervals.

    Parameters are those of :func:`arena.engine.rate.rate` (``clusters`` is
    clusters x rows of ``table``) plus ``style_reg`` (:func:`fit_style`).
    With ``simultaneous``, the rating intervals hold jointly over the models
    and the coefficient intervals jointly over the coefficients.

    Returns
    -------
    StyleRatings
    """
    check_interval_options(ci, simultaneous, level)
    point = fit_style(
        table, ties=ties, position=position, prior=prior, style_reg=style_reg, anchor=anchor
    )
    warnings = list(point.warnings)
    diag = base_diagnostics(point, ci, level, simultaneous, clusters, rounds, seed)
    diag.update(
        style_reg=point.style_reg,
        n_rows=int(table.n_rows),
        style_features=list(point.features),
        style_features_dropped=list(table.dropped),
    )
    boot = None
    if ci == "bootstrap":
        sb = bootstrap_style(
            table, rounds=rounds, seed=seed, clusters=clusters, point=point, workers=workers
        )
        boot = sb.ratings
        low, high = boot.interval(level, simultaneous=bool(simultaneous))
        se, samples, cov = boot.se, boot.good, None
        c_low, c_high = sb.coef.interval(level, simultaneous=bool(simultaneous))
        c_se, c_samples = sb.coef.se, sb.coef.good
        report_rounds(boot, diag, warnings)
    else:
        if ci == "fisher":
            cov, coef_cov = point.cov, point.coef_cov
        else:
            cov, coef_cov = style_sandwich(point, clusters)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        df = max(point.design.n_active - (1 if point.prior_used == 0 else 0), 1)
        low, high, se, samples, crit = normal_intervals(
            point.rating, cov, level=level, simultaneous=simultaneous, rounds=rounds, rng=rng, df=df
        )
        c_low, c_high, c_se, c_samples, c_crit = normal_intervals(
            point.coef, coef_cov, level=level, simultaneous=simultaneous, rounds=rounds, rng=rng,
            df=max(point.coef.size, 1),
        )  # fmt: skip
        diag["critical_value"] = crit
        diag["coef_critical_value"] = c_crit
    return StyleRatings(
        rating=point.rating,
        ci_low=np.asarray(low),
        ci_high=np.asarray(high),
        se=np.asarray(se),
        samples=samples,
        cov=cov,
        flags=point.flags,
        warnings=warnings,
        diagnostics=diag,
        fit=point,
        boot=boot,
        # one joint fit (the weak prior when the MLE does not exist, as flagged)
        comparable=point.design.battles_per_model > 0,
        small_sample=np.zeros(point.rating.size, dtype=bool),
        features=point.features,
        coef=point.coef,
        coef_low=np.asarray(c_low),
        coef_high=np.asarray(c_high),
        coef_se=np.asarray(c_se),
        coef_samples=c_samples,
    )
