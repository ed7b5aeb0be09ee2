"""Style-controlled ratings: the contextual Bradley–Terry model of LMArena.

``logit P(A beats B) = theta_A - theta_B + x . gamma`` with ``x`` the
standardised style covariates of the battle (:mod:`arena.engine.style.design`),
ties as half a win or by Davidson's model, battle weights as given.

* Default: the exact MLE (no penalty).  When the raw beats graph is not
  strongly connected the MLE does not exist and, as for raw boards, a weak
  Gaussian prior on theta is used (``prior``, see :mod:`arena.engine.fitting.fit`).
* ``style_reg=lam``: LMArena's objective, the L2 penalty ``lam / 2 *
  (||r||^2 + ||gamma||^2)`` with ``r = theta / ln 10`` (FastChat fits ratings
  in base-10 logits and features in natural logits); ``0.5`` is their default.
* Ratings are on the raw board's scale: ``1000 + 400 / ln 10 * theta``,
  mean-centred over the models with battles, or anchored.
* Coefficients ``gamma`` are reported in logits per standard deviation of
  the covariate (FastChat's ``params``).

Intervals: the bootstrap (:mod:`arena.engine.style.boot`), or Fisher and
sandwich (optionally cluster-robust) normal intervals, and simultaneous
intervals (max-|t| or the chi-square projection) as for raw boards; the
coefficients get intervals by the same method (simultaneous over the
coefficients when asked).

Modules: :mod:`~arena.engine.style.design` (covariates and rows),
:mod:`~arena.engine.style.model` (the likelihood),
:mod:`~arena.engine.style.fit` (:func:`fit_style`),
:mod:`~arena.engine.style.boot` (:func:`bootstrap_style`) and this one
(:func:`rate_style`, which the rebuild calls).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from arena.core.defaults import DEFAULT_CI, DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.engine.fields import filled_by_producer
from arena.engine.fitting.analytic import sandwich_param_cov
from arena.engine.fitting.fit import rating_transform
from arena.engine.inference.intervals import (
    analytic_intervals,
    base_diagnostics,
    bootstrap_intervals,
    check_interval_options,
    normal_intervals,
    ratings_fields,
    report_rounds,
)
from arena.engine.options import FitOptions, fit_options
from arena.engine.ratings import Ratings
from arena.engine.scale import SCALE
from arena.engine.style.boot import ONE_STEP, StyleBootstrap, bootstrap_style, clusters_by_row
from arena.engine.style.design import StyleTable
from arena.engine.style.fit import LN10, StyleFit, fit_style

__all__ = [
    "StyleFit",
    "StyleRatings",
    "StyleBootstrap",
    "fit_style",
    "bootstrap_style",
    "rate_style",
    "style_sandwich",
    "LN10",
]


@dataclass(frozen=True)
class StyleRatings(Ratings):
    """:class:`~arena.engine.ratings.Ratings` of a style-controlled board plus its coefficients.

    Extra attributes
    ----------------
    features : tuple of str
    coef, coef_low, coef_high, coef_se : ndarray, shape (F,)
    coef_samples : ndarray, shape (rounds, F)
    coef_cov : ndarray, shape (F, F), or None
        The coefficients' analytic covariance (``None`` for the bootstrap).
    """

    features: tuple[str, ...] = ()
    coef: np.ndarray = filled_by_producer(repr=True)
    coef_low: np.ndarray = filled_by_producer(repr=True)
    coef_high: np.ndarray = filled_by_producer(repr=True)
    coef_se: np.ndarray = filled_by_producer(repr=True)
    coef_samples: np.ndarray = filled_by_producer()
    coef_cov: np.ndarray | None = None

    def coefficients(self) -> list[dict[str, Any]]:
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


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (forked bootstrap workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _took(wall0: float, cpu0: float) -> str:
    return f"{time.perf_counter() - wall0:.2f} s ({cpu_seconds() - cpu0:.2f} s CPU)"


#: Rows whose score vectors are built at a time for the sandwich's meat on large
#: tables (a whole table's (N, P) score matrix and its products took ~320 bytes a row).
SANDWICH_CHUNK_ROWS = 1_000_000


def _sandwich_chunked(point: StyleFit) -> np.ndarray:
    """:func:`sandwich_param_cov` (battles as units) with the meat summed over row chunks."""
    d = point.design
    terms = d.score_terms(point.x)
    n = d.cat_n
    meat = np.zeros((d.n_params, d.n_params))
    for lo in range(0, n.size, SANDWICH_CHUNK_ROWS):
        part = slice(lo, lo + SANDWICH_CHUNK_ROWS)
        s = d.scores(point.x, part, terms)
        meat += np.asarray((s.T @ sp.diags(n[part]) @ s).todense())
    units = n.sum()
    if units > 1:
        meat *= units / (units - 1)
    cov: np.ndarray = point.param_cov @ meat @ point.param_cov
    return cov


def style_sandwich(
    point: StyleFit, clusters: sp.csr_matrix | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Sandwich covariances of the ratings (M, M) and coefficients (F, F)."""
    d = point.design
    zq = None if clusters is None else clusters_by_row(d, clusters)
    if zq is None and d.cat_n.size > SANDWICH_CHUNK_ROWS:
        pcov = _sandwich_chunked(point)
    else:
        pcov = sandwich_param_cov(d.scores(point.x), d.cat_n, zq, point.param_cov)
    t = rating_transform(d, point.anchor)
    cov = SCALE**2 * (t @ pcov @ t.T)
    none_idx = np.flatnonzero(d.battles_per_model == 0)
    cov[none_idx, none_idx] = point.cov[none_idx, none_idx]
    ma, nf = d.n_active, d.n_features
    return cov, pcov[ma : ma + nf, ma : ma + nf]


def rate_style(
    table: StyleTable,
    options: FitOptions | None = None,
    /,
    *,
    ci: str = DEFAULT_CI,
    level: float = DEFAULT_LEVEL,
    rounds: int | None = None,
    seed: int | np.random.Generator = DEFAULT_SEED,
    simultaneous: bool | str = False,
    clusters: sp.csr_matrix | None = None,
    style_reg: float | None = None,
    workers: int | None = None,
    bootstrap: str = "auto",
    progress: Callable[[str], None] | None = None,
    **overrides: Any,
) -> StyleRatings:
    """Style-controlled ratings and coefficients with intervals.

    Parameters are those of :func:`arena.engine.rate.rate` (``options`` the
    model, ``clusters`` clusters x rows of ``table``) plus ``style_reg``
    (:func:`~arena.engine.style.fit.fit_style`), ``bootstrap`` the method of
    :func:`~arena.engine.style.boot.bootstrap_style` and ``progress`` a
    callable told each phase's time.  With ``simultaneous``, the
    rating intervals hold jointly over the models and the coefficient
    intervals jointly over the coefficients.

    Returns
    -------
    StyleRatings
    """
    check_interval_options(ci, simultaneous, level)
    rounds = DEFAULT_ROUNDS if rounds is None else rounds
    say = progress or (lambda _msg: None)
    t0, c0 = time.perf_counter(), cpu_seconds()
    point = fit_style(table, fit_options(options, **overrides), style_reg=style_reg)
    say(
        f"point fit in {_took(t0, c0)} ({point.iterations} Newton iterations, {table.n_rows:,} rows)"
    )
    t0, c0 = time.perf_counter(), cpu_seconds()
    warnings = list(point.warnings)
    diag = base_diagnostics(point, ci, level, simultaneous, clusters, rounds, seed)
    diag.update(
        style_reg=point.style_reg,
        n_rows=int(table.n_rows),
        style_features=list(point.features),
        style_features_dropped=list(table.dropped),
    )
    boot = None
    coef_cov: np.ndarray | None = None
    if ci == "bootstrap":
        sb = bootstrap_style(
            table, rounds=rounds, seed=seed, clusters=clusters, point=point, workers=workers,
            method=bootstrap,
        )  # fmt: skip
        boot = sb.ratings
        if sb.method == ONE_STEP:  # an approximation: say so (exact boards stay as they were)
            diag["style_bootstrap"] = sb.method
        say(f"bootstrap, {rounds} rounds ({sb.method}), in {_took(t0, c0)}")
        low, high, se, samples = bootstrap_intervals(boot, level, simultaneous)
        cov = None
        c_low, c_high, c_se, c_samples = bootstrap_intervals(sb.coef, level, simultaneous)
        report_rounds(boot, diag, warnings)
    else:
        if ci == "fisher":
            cov, coef_cov = point.cov, point.coef_cov
        else:
            cov, coef_cov = style_sandwich(point, clusters)
        low, high, se, samples, crit = analytic_intervals(
            point, cov, level=level, simultaneous=simultaneous, rounds=rounds
        )
        c_low, c_high, c_se, c_samples, c_crit = normal_intervals(
            point.coef, coef_cov, level=level, simultaneous=simultaneous, rounds=rounds,
            df=max(point.coef.size, 1), stream=1,
        )  # fmt: skip
        diag["critical_value"] = crit
        diag["coef_critical_value"] = c_crit
        say(f"{ci} intervals in {_took(t0, c0)}")
    return StyleRatings(
        **ratings_fields(point, low, high, se, samples, cov, warnings, diag, boot),
        # one joint fit (the weak prior when the MLE does not exist, as flagged)
        small_sample=np.zeros(point.rating.size, dtype=bool),
        features=point.features,
        coef=point.coef,
        coef_low=np.asarray(c_low),
        coef_high=np.asarray(c_high),
        coef_se=np.asarray(c_se),
        coef_samples=c_samples,
        coef_cov=coef_cov,
    )
