"""One call from a count table to ratings with intervals: :func:`rate`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

# scipy.special, not scipy.stats: the latter costs ~0.5 s of start-up per command.
from scipy import special

from arena.engine.analytic import sandwich_cov
from arena.engine.bootstrap import Bootstrap, bootstrap, max_t_critical
from arena.engine.components import Components, _components, subtable
from arena.engine.counts import CountTable
from arena.engine.design import make_design
from arena.engine.fit import (
    SCALE,
    Fit,
    _warnings,
    check_anchor,
    check_names,
    fit,
    flag_warnings,
    model_label,
)
from arena.engine.graph import existence, model_flags
from arena.engine.options import FitOptions, fit_options
from arena.engine.smallsample import SMALL_SAMPLE_BATTLES, score_bounds, widen_small_samples
from arena.engine.validate import check_level

__all__ = ["Ratings", "rate", "normal_intervals", "CI_METHODS", "COMPONENT_MODES"]

CI_METHODS = ("bootstrap", "sandwich", "fisher")
#: ``largest``: fit the comparable set only; ``joint``: one fit of everything
#: (weak prior when the MLE does not exist), the behaviour before issue 11.
COMPONENT_MODES = ("largest", "joint")
_SIMULTANEOUS = (False, True, "max-t", "chi2")


@dataclass(frozen=True)
class Ratings:
    """Ratings with intervals, as consumed by tiering and the page.

    Attributes
    ----------
    rating, ci_low, ci_high, se : ndarray, shape (M,)
        NaN rating and SE for models outside the comparable set; their
        bounds are NaN, or a one-sided score interval (``ci_high = inf``
        for a model that never lost to the set) when they met it.
    samples : ndarray, shape (rounds, M)
        Bootstrap ratings (converged rounds), or for analytic methods
        ``rounds`` seeded draws from ``N(rating, cov)``, so downstream code
        treats every method alike.  NaN columns outside the comparable set.
    cov : ndarray (M, M) or None
        Analytic covariance (``None`` for the bootstrap).
    flags : list of tuple of str
    warnings : list of str
    diagnostics : dict
        JSON-serialisable run facts (method, convergence, failed rounds, ...).
    """

    rating: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    se: np.ndarray
    samples: np.ndarray
    cov: np.ndarray | None
    flags: list[tuple[str, ...]]
    warnings: list[str]
    diagnostics: dict
    fit: Fit = field(repr=False, default=None)
    boot: Bootstrap | None = field(repr=False, default=None)
    #: (M,) bool: on the common scale, so ranks, tiers and verdicts may use it.
    comparable: np.ndarray = field(repr=False, default=None)
    #: (M,) bool: interval set by the small-sample rule (``smallsample``).
    small_sample: np.ndarray = field(repr=False, default=None)
    #: Strongly connected components (``None`` for ``components="joint"``).
    components: Components | None = field(repr=False, default=None)

    def named_warnings(self, names) -> list[str]:
        """``warnings`` with models named by ``names[index]`` (at most 10 per sentence).

        (``rate(..., names=)`` names them from the start; this is for a result
        computed without names.)
        """
        flagged = set(flag_warnings(self.flags)) | set(flag_warnings(self.flags, names))
        rest = [w for w in self.warnings if w not in flagged]
        return flag_warnings(self.flags, names) + rest


def _opt(x):
    return None if x is None else float(x)


def check_interval_options(ci: str, simultaneous, level: float) -> None:
    """Reject unknown interval methods and combinations (``ValueError``)."""
    if ci not in CI_METHODS:
        raise ValueError(f"ci must be one of {CI_METHODS}, got {ci!r}")
    if simultaneous not in _SIMULTANEOUS:
        raise ValueError(f"simultaneous must be one of {_SIMULTANEOUS}, got {simultaneous!r}")
    check_level(level)
    if ci == "bootstrap" and simultaneous == "chi2":
        raise ValueError(
            "simultaneous='chi2' is for analytic intervals; use True (max-t) with the bootstrap"
        )


def base_diagnostics(point, ci, level, simultaneous, clusters, rounds, seed) -> dict:
    """Run facts shared by raw and style-controlled boards (JSON-serialisable)."""
    return {
        "method": ci,
        "level": float(level),
        "simultaneous": simultaneous if isinstance(simultaneous, str) else bool(simultaneous),
        "converged": point.converged,
        "grad_norm": point.grad_norm,
        "iterations": point.iterations,
        "mle_exists": point.mle_exists,
        "prior_used": point.prior_used,
        "tie_param": _opt(point.tie_param),
        "tie_param_se": _opt(point.tie_param_se),
        "n_battles": float(point.design.n_total),
        "clusters": None if clusters is None else int(clusters.shape[0]),
        "rounds": int(rounds),
        "seed": seed if isinstance(seed, int) else None,
        "failed_rounds": [],
        "n_failed_rounds": 0,
        "n_prior_rounds": 0,
    }


def report_rounds(boot: Bootstrap, diag: dict, warnings: list[str]) -> None:
    """Failed and prior-fitted bootstrap rounds into the diagnostics and warnings."""
    failed = boot.failed_rounds.tolist()
    diag.update(
        failed_rounds=failed,
        n_failed_rounds=len(failed),
        n_prior_rounds=int(boot.prior_rounds.size),
    )
    if failed:
        warnings.append(
            f"{len(failed)} bootstrap rounds did not converge and were left out: {failed[:20]}"
        )
    if boot.prior_rounds.size:
        warnings.append(
            f"{boot.prior_rounds.size} bootstrap rounds had no maximum-likelihood estimate "
            "(e.g. a model drew no battles) and were fitted with the weak prior"
        )


def normal_intervals(
    est: np.ndarray,
    cov: np.ndarray,
    *,
    level: float,
    simultaneous: bool | str,
    rounds: int,
    rng: np.random.Generator,
    df: int,
):
    """Normal intervals ``est +/- c * se`` from an analytic covariance.

    ``c`` is the normal quantile, the max-|t| quantile over ``rounds`` draws
    from ``N(est, cov)`` (``simultaneous`` True / "max-t"), or the chi-square
    ellipsoid projection with ``df`` degrees of freedom ("chi2").

    Returns
    -------
    low, high, se : ndarray
    samples : ndarray, shape (rounds, len(est))
        The seeded normal draws (downstream code treats them like bootstrap rounds).
    crit : float
    """
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    samples = rng.multivariate_normal(est, cov, size=rounds, method="eigh")
    if simultaneous in (True, "max-t"):
        crit = max_t_critical(samples - est, se, level)
    elif simultaneous == "chi2":
        crit = float(np.sqrt(special.chdtri(df, 1.0 - level)))
    else:
        crit = float(special.ndtri(0.5 + level / 2))
    return est - crit * se, est + crit * se, se, samples, crit


def rate(
    table: CountTable,
    options: FitOptions | None = None,
    /,
    *,
    ci: str = "bootstrap",
    level: float = 0.95,
    rounds: int = 1000,
    seed: int | np.random.Generator = 0,
    simultaneous: bool | str = False,
    clusters: sp.csr_matrix | None = None,
    workers: int | None = None,
    components: str = "largest",
    small_sample: bool = True,
    progress: Callable[[str], None] | None = None,
    names=None,
    **overrides,
) -> Ratings:
    """Fit ratings and put confidence intervals on them.

    Parameters
    ----------
    table : CountTable
    options : FitOptions, optional
        The model, as in :func:`arena.engine.fit.fit`.
    ci : {"bootstrap", "sandwich", "fisher"}
        Percentile bootstrap (battle- or cluster-level resampling), or normal
        intervals from sandwich (cluster-robust if ``clusters``) or Fisher SEs.
    level : float
    rounds : int
        Bootstrap rounds, or number of normal draws for analytic methods.
    seed : int or numpy.random.Generator
    simultaneous : bool or {"max-t", "chi2"}
        ``False``: per-model intervals.  ``True``/``"max-t"``: all intervals
        hold jointly (max-|t| quantile over bootstrap rounds or normal draws).
        ``"chi2"`` (analytic only): projections of the ``level`` confidence
        ellipsoid, ``sqrt(chi2_{level, M-1})`` standard errors (conservative).
    clusters : scipy.sparse matrix (K, C), optional
        Clusters x cells counts: cluster bootstrap / cluster-robust sandwich.
    workers : int, optional
        Bootstrap workers (see :func:`arena.engine.bootstrap.bootstrap`);
        ``1`` keeps everything in the calling thread.
    components : {"largest", "joint"}
        ``"largest"`` (default): when the beats graph is not strongly
        connected, fit only the comparable set (the strongly connected
        component with the most battles, :mod:`arena.engine.components`),
        exactly as if the other battles did not exist; every other model gets
        no rating on that scale (NaN) and the flag ``disconnected`` (no
        battles with the set) or ``no_mle`` (met it, but e.g. never lost).
        ``"joint"``: one fit of everything, with the weak prior when the MLE
        does not exist (ratings the data alone do not identify).
    small_sample : bool
        Apply the small-sample rule (:mod:`arena.engine.smallsample`) to
        models with few battles or degenerate resamples.
    progress : callable, optional
        Called with a short message as the fit and the bootstrap begin.
    names : sequence of str, optional
        Model names by table index: warnings and errors name models by them
        (``model gpt-4o never lost ...``); without, by index.
    **overrides
        Fields of :class:`FitOptions` given directly (``ties="davidson"``).

    Returns
    -------
    Ratings
    """
    check_interval_options(ci, simultaneous, level)
    if components not in COMPONENT_MODES:
        raise ValueError(f"components must be one of {COMPONENT_MODES}, got {components!r}")
    model = fit_options(options, **overrides)
    opts = dict(
        ci=ci,
        level=level,
        rounds=rounds,
        seed=seed,
        simultaneous=simultaneous,
        model=model,
        workers=workers,
        small_sample=small_sample,
        progress=progress,
        names=check_names(names, table.n_models),
    )
    if components == "largest":
        design = _design(table, model)
        comps = _components(design, table)
        if not comps.exists and comps.n_components:
            return _rate_comparable(table, design, comps, clusters, model.anchor, opts)
    return _rate_all(table, clusters, model.anchor, opts)


def _design(table: CountTable, model: FitOptions):
    return make_design(table, ties=model.ties, both_bad=model.both_bad, position=model.position)


def _rate_all(table: CountTable, clusters, anchor, opts: dict) -> Ratings:
    """One fit of every model (the MLE, or the weak prior when it does not exist)."""
    ci, level, rounds, seed = opts["ci"], opts["level"], opts["rounds"], opts["seed"]
    simultaneous = opts["simultaneous"]
    say = opts.get("progress") or (lambda _msg: None)
    say(f"fit: {table.n_models} models")
    point = fit(table, replace(opts["model"], anchor=anchor), names=opts.get("names"))
    warnings = list(point.warnings)
    diag = base_diagnostics(point, ci, level, simultaneous, clusters, rounds, seed)
    diag.update(
        position_param=_opt(point.position_param),
        position_se=_opt(point.position_se),
    )
    boot = None
    if ci == "bootstrap":
        say(f"bootstrap: {rounds} rounds")
        boot = bootstrap(
            table,
            rounds=rounds,
            rng=seed,
            clusters=clusters,
            point=point,
            workers=opts["workers"],
        )
        low, high = boot.interval(level, simultaneous=bool(simultaneous))
        se = boot.se
        samples = boot.good
        cov = None
        report_rounds(boot, diag, warnings)
    else:
        cov = point.cov if ci == "fisher" else sandwich_cov(point, clusters)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        df = max(point.design.n_active - (1 if point.prior_used == 0 else 0), 1)
        low, high, se, samples, crit = normal_intervals(
            point.rating, cov, level=level, simultaneous=simultaneous, rounds=rounds, rng=rng, df=df
        )
        diag["critical_value"] = crit
    widened = np.zeros(table.n_models, dtype=bool)
    if opts["small_sample"]:
        low, high, widened = widen_small_samples(point, low, high, se, level=level)
    diag["small_sample_models"] = np.flatnonzero(widened).tolist()
    diag["small_sample_battles"] = SMALL_SAMPLE_BATTLES
    # every active model is on the common scale when the MLE exists (or the
    # caller asked for the joint fit); none is when no two models connect
    comparable = point.design.battles_per_model > 0
    return Ratings(
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
        comparable=comparable,
        small_sample=widened,
    )


def _embed(values: np.ndarray, main: np.ndarray, m: int, axis: int = 0) -> np.ndarray:
    shape = list(values.shape)
    shape[axis] = m
    out = np.full(shape, np.nan)
    index = [slice(None)] * values.ndim
    index[axis] = main
    out[tuple(index)] = values
    return out


def _rate_comparable(
    table: CountTable, design, comps: Components, clusters, anchor, opts: dict
) -> Ratings:
    """Fit the comparable set alone; models outside it get no common-scale rating."""
    m = table.n_models
    main = comps.main
    if comps.sizes[0] < 2:
        # no two models can be compared: the joint prior fit is all there is,
        # and nothing in it is on a common scale
        joint = _rate_all(table, clusters, anchor, opts)
        warnings = [
            *joint.warnings,
            "no two models are connected by wins and losses both ways: no rating is "
            "comparable, so nothing can be ranked",
        ]
        return replace(
            joint,
            comparable=np.zeros(m, dtype=bool),
            warnings=warnings,
            components=comps,
        )
    names = opts.get("names")
    anchor = check_anchor(anchor, m, design, names)
    sub_anchor = None
    if anchor is not None:
        where = np.flatnonzero(main == anchor[0])
        if where.size == 0:
            raise ValueError(
                f"anchor model {model_label(anchor[0], names)} is not in the comparable set (the strongly "
                "connected group of models with the most battles), so it cannot fix its scale"
            )
        sub_anchor = (int(where[0]), anchor[1])
    sub, cells = subtable(table, main)
    sub_clusters = None if clusters is None else sp.csr_matrix(clusters)[:, cells]
    sub_names = None if names is None else [names[i] for i in main]
    inner = _rate_all(sub, sub_clusters, sub_anchor, {**opts, "names": sub_names})

    flags = _outside_flags(design, comps, inner, main)
    low = _embed(inner.ci_low, main, m)
    high = _embed(inner.ci_high, main, m)
    attached = [k for k in range(m) if comps.strong[k] > 0 and comps.weak[k] == comps.weak[main[0]]]
    if attached:
        lo, hi = _attached_bounds(table, main, inner.fit, np.asarray(attached), opts)
        low[attached], high[attached] = lo, hi

    n_out = int(np.count_nonzero(design.battles_per_model > 0) - main.size)
    point = inner.fit
    warnings = _warnings(flags, True, point.prior_used, names)
    warnings.append(
        f"ratings are on the scale of the comparable set ({main.size} models, "
        f"{comps.battles[0]:g} battles, the strongly connected group with the most battles); "
        f"{n_out} models outside it have no rating on that scale"
    )
    warnings += [w for w in inner.warnings if w not in point.warnings]
    diag = dict(inner.diagnostics)
    diag.update(
        mle_exists=False,
        n_battles=float(design.n_total),
        components={
            "mode": "largest",
            "n": comps.n_components,
            "comparable_models": int(main.size),
            "comparable_battles": float(comps.battles[0]),
            "outside_models": n_out,
        },
        small_sample_models=main[inner.small_sample[: main.size]].tolist(),
    )
    return Ratings(
        rating=_embed(inner.rating, main, m),
        ci_low=low,
        ci_high=high,
        se=_embed(inner.se, main, m),
        samples=_embed(inner.samples, main, m, axis=1),
        cov=None if inner.cov is None else _embed(_embed(inner.cov, main, m), main, m, axis=1),
        flags=flags,
        warnings=warnings,
        diagnostics=diag,
        fit=point,
        boot=inner.boot,
        comparable=_embed(np.ones(main.size), main, m) == 1,
        small_sample=_embed(inner.small_sample.astype(float), main, m) == 1,
        components=comps,
    )


def _outside_flags(design, comps: Components, inner: Ratings, main: np.ndarray):
    """Flags of every model: the set's own fit inside, data facts outside."""
    full = model_flags(design, design.point_stats()[0], existence(design, design.point_stats()[0]))
    flags: list[tuple[str, ...]] = []
    main_pos = {int(k): i for i, k in enumerate(main)}
    main_weak = comps.weak[main[0]]
    for k in range(design.n_models):
        if k in main_pos:
            flags.append(inner.flags[main_pos[k]])
            continue
        base = [f for f in full[k] if f not in ("disconnected", "no_mle")]
        if comps.strong[k] >= 0:
            base.append("no_mle" if comps.weak[k] == main_weak else "disconnected")
        flags.append(tuple(base))
    return flags


def _attached_bounds(table: CountTable, main: np.ndarray, point: Fit, models, opts: dict):
    """Score bounds, on the set's scale, of outside models that met the set.

    Each model is fitted alone against the set's ratings held fixed (its
    battles with other outside models carry no information about the set's
    scale).  A model that never lost to the set gets ``[low, inf)``.
    """
    lo = np.full(models.size, np.nan)
    hi = np.full(models.size, np.nan)
    ma = main.size
    theta = point.x[:ma]
    extra = point.x[ma:]
    ref_rating = point.rating[0] - SCALE * theta[0]  # rating of theta = 0 on the set's scale
    for i, k in enumerate(models.tolist()):
        members = np.sort(np.append(main, k))
        sub, _ = subtable(table, members)
        d = _design(sub, opts["model"])
        pos_k = int(np.searchsorted(members, k))
        if d.n_active != members.size:  # no usable battle with the set
            continue
        x = np.concatenate([np.insert(theta, pos_k, 0.0), extra])
        t_lo, _, t_hi = score_bounds(
            d, x, np.array([pos_k]), level=opts["level"], lam=point.prior_used
        )
        lo[i] = ref_rating + SCALE * t_lo[0]
        hi[i] = ref_rating + SCALE * t_hi[0]
    return lo, hi
