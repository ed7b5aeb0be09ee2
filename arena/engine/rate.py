"""One call from a count table to ratings with intervals: :func:`rate`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

# scipy.special, not scipy.stats: the latter costs ~0.5 s of start-up per command.
from scipy import special

from arena.engine.analytic import sandwich_cov
from arena.engine.bootstrap import Bootstrap, bootstrap, max_t_critical
from arena.engine.counts import CountTable
from arena.engine.fit import Fit, fit
from arena.engine.options import FitOptions, fit_options
from arena.engine.validate import check_level

__all__ = ["Ratings", "rate", "CI_METHODS"]

CI_METHODS = ("bootstrap", "sandwich", "fisher")
_SIMULTANEOUS = (False, True, "max-t", "chi2")


@dataclass(frozen=True)
class Ratings:
    """Ratings with intervals, as consumed by tiering and the page.

    Attributes
    ----------
    rating, ci_low, ci_high, se : ndarray, shape (M,)
    samples : ndarray, shape (rounds, M)
        Bootstrap ratings (converged rounds), or for analytic methods
        ``rounds`` seeded draws from ``N(rating, cov)``, so downstream code
        treats every method alike.
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


def _opt(x):
    return None if x is None else float(x)


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
    **overrides
        Fields of :class:`FitOptions` given directly (``ties="davidson"``).

    Returns
    -------
    Ratings
    """
    if ci not in CI_METHODS:
        raise ValueError(f"ci must be one of {CI_METHODS}, got {ci!r}")
    if simultaneous not in _SIMULTANEOUS:
        raise ValueError(f"simultaneous must be one of {_SIMULTANEOUS}, got {simultaneous!r}")
    check_level(level)
    point = fit(table, fit_options(options, **overrides))
    warnings = list(point.warnings)
    diag: dict = {
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
        "position_param": _opt(point.position_param),
        "position_se": _opt(point.position_se),
        "n_battles": float(point.design.n_total),
        "clusters": None if clusters is None else int(clusters.shape[0]),
        "rounds": int(rounds),
        "seed": seed if isinstance(seed, int) else None,
        "failed_rounds": [],
        "n_failed_rounds": 0,
        "n_prior_rounds": 0,
    }
    boot = None
    if ci == "bootstrap":
        if simultaneous == "chi2":
            raise ValueError(
                "simultaneous='chi2' is for analytic intervals; use True (max-t) with the bootstrap"
            )
        boot = bootstrap(
            table, rounds=rounds, rng=seed, clusters=clusters, point=point, workers=workers
        )
        low, high = boot.interval(level, simultaneous=bool(simultaneous))
        se = boot.se
        samples = boot.good
        cov = None
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
    else:
        cov = point.cov if ci == "fisher" else sandwich_cov(point, clusters)
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        samples = rng.multivariate_normal(point.rating, cov, size=rounds, method="eigh")
        if simultaneous in (True, "max-t"):
            crit = max_t_critical(samples - point.rating, se, level)
        elif simultaneous == "chi2":
            df = max(point.design.n_active - (1 if point.prior_used == 0 else 0), 1)
            crit = float(np.sqrt(special.chdtri(df, 1.0 - level)))
        else:
            crit = float(special.ndtri(0.5 + level / 2))
        low, high = point.rating - crit * se, point.rating + crit * se
        diag["critical_value"] = crit
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
    )
