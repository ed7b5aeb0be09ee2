"""Confidence intervals from a point fit: bootstrap percentiles or normal (Fisher, sandwich).

Shared by the raw engine (:func:`arena.engine.rate.rate`) and the
style-controlled one (:func:`arena.engine.style.rate.rate_style`): the option
checks, the run facts stored with a snapshot, normal intervals (per model,
max-|t| or chi-square simultaneous) and the fields of a
:class:`~arena.engine.ratings.Ratings` that come from the point fit.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Final, SupportsFloat

import numpy as np

# scipy.special, not scipy.stats: the latter costs ~0.5 s of start-up per command.
from scipy import linalg, special

from arena.core.defaults import CI_METHODS
from arena.core.errors import ArgumentError
from arena.engine.resampling.bootstrap import Bootstrap, max_t_critical
from arena.engine.validate import check_level

if TYPE_CHECKING:
    import scipy.sparse as sp

    from arena.engine.fitting.fit import Fit
    from arena.engine.style.fit import StyleFit

__all__ = [
    "CI_METHODS",
    "check_interval_options",
    "base_diagnostics",
    "report_rounds",
    "FIXED_DRAWS_KEY",
    "fixed_normal_draws",
    "normal_draws",
    "normal_intervals",
    "analytic_intervals",
    "bootstrap_intervals",
    "ratings_fields",
]

_SIMULTANEOUS = (False, True, "max-t", "chi2")


def optional_float(x: SupportsFloat | None) -> float | None:
    return None if x is None else float(x)


def check_interval_options(ci: str, simultaneous: bool | str, level: float) -> None:
    """Reject unknown interval methods and combinations (``ValueError``)."""
    if ci not in CI_METHODS:
        raise ArgumentError(f"ci must be one of {CI_METHODS}, got {ci!r}")
    if simultaneous not in _SIMULTANEOUS:
        raise ArgumentError(f"simultaneous must be one of {_SIMULTANEOUS}, got {simultaneous!r}")
    check_level(level)
    if ci == "bootstrap" and simultaneous == "chi2":
        raise ArgumentError(
            "simultaneous='chi2' is for analytic intervals; use True (max-t) with the bootstrap"
        )


def base_diagnostics(
    point: Fit | StyleFit,
    ci: str,
    level: float,
    simultaneous: bool | str,
    clusters: sp.csr_matrix | None,
    rounds: int,
    seed: int | np.random.Generator,
) -> dict[str, Any]:
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
        "tie_param": optional_float(point.tie_param),
        "tie_param_se": optional_float(point.tie_param_se),
        "n_battles": float(point.design.n_total),
        "clusters": None if clusters is None else int(clusters.shape[0]),
        "rounds": int(rounds),
        "seed": seed if isinstance(seed, int) else None,
        "failed_rounds": [],
        "n_failed_rounds": 0,
        "n_prior_rounds": 0,
    }


def report_rounds(boot: Bootstrap, diag: dict[str, Any], warnings: list[str]) -> None:
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


#: Key of the fixed normal draws of analytic intervals (:func:`fixed_normal_draws`).
#: A constant, not the run's seed: the draws are a quadrature rule for the
#: max-|t| and step-down tail probabilities, the same on every seed and every
#: night, so that rank sets and tiers are a function of the data alone (issue 41).
FIXED_DRAWS_KEY: Final = 41


@functools.lru_cache(maxsize=8)
def fixed_normal_draws(rounds: int, m: int, stream: int = 0) -> np.ndarray:
    """``rounds`` standard normal draws in ``m`` dimensions that do not follow any seed.

    Column ``j`` is drawn before column ``j + 1`` from one fixed stream, so the
    draws of the first ``m`` models do not change when a model is added. The
    draws are then centred and, when ``rounds > m``, whitened so that their mean
    is exactly 0 and their sample covariance (``ddof=1``) exactly the identity:
    the draws' SDs of every rating and every difference are then the analytic
    ones, and only the tail counts of the max-|t| carry quadrature error.

    Parameters
    ----------
    rounds, m : int
    stream : int
        Independent fixed sets for independent uses (ratings 0, style
        coefficients 1).

    Returns
    -------
    ndarray, shape (rounds, m), read-only
    """
    gen = np.random.default_rng([FIXED_DRAWS_KEY, stream])
    z = gen.standard_normal((m, rounds)).T
    z = z - z.mean(axis=0)
    if rounds > m + 1:
        gram = (z.T @ z) / (rounds - 1)
        chol = np.linalg.cholesky(gram)
        # z @ inv(L).T has sample covariance inv(L) gram inv(L).T = I
        z = linalg.solve_triangular(chol, z.T, lower=True).T
    z = np.ascontiguousarray(z)
    z.setflags(write=False)
    return z


def normal_draws(est: np.ndarray, cov: np.ndarray, rounds: int, stream: int = 0) -> np.ndarray:
    """``rounds`` draws of ``N(est, cov)`` from :func:`fixed_normal_draws`.

    Mapped by the symmetric square root of ``cov`` (a continuous function of
    it, also where eigenvalues meet, unlike a choice of eigenvectors), so a
    small change of the data moves every draw a little instead of redrawing it.
    """
    vals, vecs = np.linalg.eigh(cov)
    root = (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T
    draws: np.ndarray = est + fixed_normal_draws(rounds, est.size, stream) @ root
    return draws


def normal_intervals(
    est: np.ndarray,
    cov: np.ndarray,
    *,
    level: float,
    simultaneous: bool | str,
    rounds: int,
    df: int,
    stream: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Normal intervals ``est +/- c * se`` from an analytic covariance.

    ``c`` is the normal quantile, the max-|t| quantile over ``rounds`` draws
    from ``N(est, cov)`` (``simultaneous`` True / "max-t"), or the chi-square
    ellipsoid projection with ``df`` degrees of freedom ("chi2").

    Returns
    -------
    low, high, se : ndarray
    samples : ndarray, shape (rounds, len(est))
        The fixed normal draws (:func:`normal_draws`; downstream code treats
        them like bootstrap rounds).
    crit : float
    """
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    samples = normal_draws(est, cov, rounds, stream)
    if simultaneous in (True, "max-t"):
        crit = max_t_critical(samples - est, se, level)
    elif simultaneous == "chi2":
        crit = float(np.sqrt(special.chdtri(df, 1.0 - level)))
    else:
        crit = float(special.ndtri(0.5 + level / 2))
    return est - crit * se, est + crit * se, se, samples, crit


def bootstrap_intervals(
    boot: Bootstrap, level: float, simultaneous: bool | str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, se, samples)`` of a bootstrap (converged rounds)."""
    low, high = boot.interval(level, simultaneous=bool(simultaneous))
    return low, high, boot.se, boot.good


def analytic_intervals(
    point: Fit | StyleFit,
    cov: np.ndarray,
    *,
    level: float,
    simultaneous: bool | str,
    rounds: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Normal intervals of a point fit's ratings from the covariance ``cov``.

    The chi-square projection uses the identified dimensions (active models,
    one fewer without a prior). The draws are the fixed ones of
    :func:`normal_draws`: no seed enters.

    Returns
    -------
    low, high, se, samples, crit
        As :func:`normal_intervals`.
    """
    df = max(point.design.n_active - (1 if point.prior_used == 0 else 0), 1)
    return normal_intervals(
        point.rating, cov, level=level, simultaneous=simultaneous, rounds=rounds, df=df
    )


def ratings_fields(
    point: Fit | StyleFit,
    low: np.ndarray,
    high: np.ndarray,
    se: np.ndarray,
    samples: np.ndarray,
    cov: np.ndarray | None,
    warnings: list[str],
    diag: dict[str, Any],
    boot: Bootstrap | None,
) -> dict[str, Any]:
    """The fields of a :class:`~arena.engine.ratings.Ratings` of one joint fit.

    Every model with battles is on the common scale (the MLE exists, or the
    caller asked for the joint fit with the weak prior, as flagged).
    """
    return dict(
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
        comparable=point.design.battles_per_model > 0,
    )
