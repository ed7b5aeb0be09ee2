"""One call from a count table to ratings with intervals: :func:`rate`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from arena.core.defaults import DEFAULT_CI, DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.core.errors import ArgumentError
from arena.engine.counts import CountTable
from arena.engine.fitting.analytic import sandwich_cov
from arena.engine.fitting.design import Design, make_design
from arena.engine.fitting.fit import check_anchor, fit
from arena.engine.fitting.smallsample import SMALL_SAMPLE_BATTLES, score_bounds, widen_small_samples
from arena.engine.inference.intervals import (
    analytic_intervals,
    base_diagnostics,
    bootstrap_intervals,
    check_interval_options,
    optional_float,
    ratings_fields,
    report_rounds,
)
from arena.engine.messages import check_names, model_label
from arena.engine.options import FitOptions, RateRun, fit_options
from arena.engine.ratings import Ratings
from arena.engine.resampling.bootstrap import bootstrap
from arena.engine.sets.comparable import extend_to_all
from arena.engine.sets.components import Components, design_components, subtable
from arena.engine.sparse.bootstrap import sparse_bootstrap
from arena.engine.sparse.fit import SPARSE_MIN_MODELS, sparse_fit, use_sparse
from arena.engine.sparse.score import sparse_score_bounds

__all__ = ["rate", "COMPARABLE_MODES"]

#: ``largest``: fit the comparable set only; ``joint``: one fit of everything
#: (weak prior when the MLE does not exist), the behaviour before issue 11.
COMPARABLE_MODES = ("largest", "joint")


def rate(
    table: CountTable,
    options: FitOptions | None = None,
    /,
    *,
    ci: str = DEFAULT_CI,
    level: float = DEFAULT_LEVEL,
    rounds: int | None = None,
    seed: int | np.random.Generator = DEFAULT_SEED,
    simultaneous: bool | str = False,
    clusters: sp.csr_matrix | None = None,
    workers: int | None = None,
    comparable: str = COMPARABLE_MODES[0],
    small_sample: bool = True,
    progress: Callable[[str], None] | None = None,
    names: Sequence[str] | None = None,
    path: str = "auto",
    start: np.ndarray | None = None,
    **overrides: Any,
) -> Ratings:
    """Fit ratings and put confidence intervals on them.

    Parameters
    ----------
    table : CountTable
    options : FitOptions, optional
        The model, as in :func:`arena.engine.fitting.fit.fit`.
    ci : {"bootstrap", "sandwich", "fisher"}
        Percentile bootstrap (battle- or cluster-level resampling), or normal
        intervals from sandwich (cluster-robust if ``clusters``) or Fisher SEs.
    level : float
    rounds : int, optional
        Bootstrap rounds, or number of fixed normal draws for analytic methods;
        ``None``: ``DEFAULT_ROUNDS`` (a board chooses more draws when its
        inference needs them: :func:`arena.engine.board.enough_draws`).
    seed : int or numpy.random.Generator
    simultaneous : bool or {"max-t", "chi2"}
        ``False``: per-model intervals.  ``True``/``"max-t"``: all intervals
        hold jointly (max-|t| quantile over bootstrap rounds or normal draws).
        ``"chi2"`` (analytic only): projections of the ``level`` confidence
        ellipsoid, ``sqrt(chi2_{level, M-1})`` standard errors (conservative).
    clusters : scipy.sparse matrix (K, C), optional
        Clusters x cells counts: cluster bootstrap / cluster-robust sandwich.
    workers : int, optional
        Bootstrap workers (see :func:`arena.engine.resampling.bootstrap.bootstrap`);
        ``1`` keeps everything in the calling thread.
    comparable : {"largest", "joint"}
        ``"largest"`` (default): when the beats graph is not strongly
        connected, fit only the comparable set (the strongly connected
        component with the most battles, :mod:`arena.engine.sets.components`),
        exactly as if the other battles did not exist; every other model gets
        no rating on that scale (NaN) and the flag ``disconnected`` (no
        battles with the set) or ``no_mle`` (met it, but e.g. never lost).
        ``"joint"``: one fit of everything, with the weak prior when the MLE
        does not exist (ratings the data alone do not identify).
    small_sample : bool
        Apply the small-sample rule (:mod:`arena.engine.fitting.smallsample`) to
        models with few battles or degenerate resamples.
    progress : callable, optional
        Called with a short message as the fit and the bootstrap begin.
    names : sequence of str, optional
        Model names by table index: warnings and errors name models by them
        (``model gpt-4o never lost ...``); without, by index.
    path : {"auto", "dense", "sparse"}
        The engine: dense solvers, or the sparse comparison graph
        (:mod:`arena.engine.sparse.fit`; bootstrap intervals only); ``"auto"``
        takes the sparse path from ``SPARSE_MIN_MODELS`` models on.
    start : ndarray, shape (M,), optional
        Log-strengths to warm-start the dense point fit from (a previous fit of
        the board): the same estimate in fewer Newton steps; NaN for models
        without one.  The sparse path starts as usual.
    **overrides
        Fields of :class:`FitOptions` given directly (``ties="davidson"``).

    Returns
    -------
    Ratings
    """
    check_interval_options(ci, simultaneous, level)
    rounds = DEFAULT_ROUNDS if rounds is None else rounds
    if comparable not in COMPARABLE_MODES:
        raise ArgumentError(f"comparable must be one of {COMPARABLE_MODES}, got {comparable!r}")
    model = fit_options(options, **overrides)
    sparse = use_sparse(path, table.n_models)
    fallback = None
    if sparse and ci != "bootstrap":
        # the analytic methods need the models x models covariance, which the
        # sparse path never forms: a long board gets bootstrap intervals, and says so
        fallback = (
            f"ci={ci!r} needs the models x models covariance; boards of "
            f"{SPARSE_MIN_MODELS} models or more are rated on the sparse path, which gives "
            "bootstrap intervals: these are bootstrap intervals"
        )
        ci = "bootstrap"
    run = RateRun(
        model=model,
        ci=ci,
        level=level,
        rounds=rounds,
        seed=seed,
        simultaneous=simultaneous,
        workers=workers,
        small_sample=small_sample,
        progress=progress,
        names=check_names(names, table.n_models),
        sparse=sparse,
        start=None if start is None else np.asarray(start, dtype=np.float64),
    )
    if comparable == "largest":
        design = _design(table, model)
        comps = design_components(design, table)
        if not comps.exists and comps.n_components:
            rated = _rate_comparable(table, design, comps, clusters, model.anchor, run)
        else:
            # the whole table is rated: its fit reuses this design
            rated = _rate_all(table, clusters, model.anchor, replace(run, design=design))
    else:
        rated = _rate_all(table, clusters, model.anchor, run)
    if fallback is not None:
        rated = replace(rated, warnings=[*rated.warnings, fallback])
    return rated


def _design(table: CountTable, model: FitOptions) -> Design:
    return make_design(table, ties=model.ties, both_bad=model.both_bad, position=model.position)


def _rate_all(
    table: CountTable,
    clusters: sp.csr_matrix | None,
    anchor: tuple[int, float] | None,
    run: RateRun,
) -> Ratings:
    """One fit of every model (the MLE, or the weak prior when it does not exist)."""
    ci, level, rounds, seed = run.ci, run.level, run.rounds, run.seed
    simultaneous = run.simultaneous
    run.say(f"fit: {table.n_models} models")
    sparse = run.sparse
    if sparse:
        point = sparse_fit(
            table, replace(run.model, anchor=anchor), names=run.names, design=run.design
        )
    else:
        point = fit(
            table,
            replace(run.model, anchor=anchor),
            names=run.names,
            design=run.design,
            start=run.start,
        )
    warnings = list(point.warnings)
    diag = base_diagnostics(point, ci, level, simultaneous, clusters, rounds, seed)
    diag.update(
        position_param=optional_float(point.position_param),
        position_se=optional_float(point.position_se),
    )
    boot = None
    if ci == "bootstrap":
        run.say(f"bootstrap: {rounds} rounds")
        boot = (sparse_bootstrap if sparse else bootstrap)(
            table,
            rounds=rounds,
            seed=seed,
            clusters=clusters,
            point=point,
            workers=run.workers,
        )
        low, high, se, samples = bootstrap_intervals(boot, level, simultaneous)
        cov = None
        report_rounds(boot, diag, warnings)
    else:
        run.say(f"{ci}: {rounds} fixed draws")
        cov = point.cov if ci == "fisher" else sandwich_cov(point, clusters)
        low, high, se, samples, crit = analytic_intervals(
            point, cov, level=level, simultaneous=simultaneous, rounds=rounds
        )
        diag["critical_value"] = crit
    widened = np.zeros(table.n_models, dtype=bool)
    if run.small_sample:
        bounds = sparse_score_bounds if sparse else score_bounds
        low, high, widened = widen_small_samples(point, low, high, se, level=level, bounds=bounds)
    if sparse:
        diag["engine_path"] = "sparse"
    diag["small_sample_models"] = np.flatnonzero(widened).tolist()
    diag["small_sample_battles"] = SMALL_SAMPLE_BATTLES
    fields = ratings_fields(point, low, high, se, samples, cov, warnings, diag, boot)
    return Ratings(**fields, small_sample=widened)


def _rate_comparable(
    table: CountTable,
    design: Design,
    comps: Components,
    clusters: sp.csr_matrix | None,
    anchor: tuple[int, float] | None,
    run: RateRun,
) -> Ratings:
    """Fit the comparable set alone; models outside it get no common-scale rating."""
    m = table.n_models
    main = comps.main
    if comps.sizes[0] < 2:
        # no two models can be compared: the joint prior fit is all there is,
        # and nothing in it is on a common scale
        joint = _rate_all(table, clusters, anchor, run)
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
    names = run.names
    anchor = check_anchor(anchor, m, design, names)
    sub_anchor = None
    if anchor is not None:
        where = np.flatnonzero(main == anchor[0])
        if where.size == 0:
            raise ArgumentError(
                f"anchor model {model_label(anchor[0], names)} is not in the comparable set (the strongly "
                "connected group of models with the most battles), so it cannot fix its scale"
            )
        sub_anchor = (int(where[0]), anchor[1])
    sub, cells = subtable(table, main)
    sub_clusters = None if clusters is None else sp.csr_matrix(clusters)[:, cells]
    sub_names = None if names is None else [names[i] for i in main]
    sub_start = None if run.start is None else run.start[main]
    inner = _rate_all(sub, sub_clusters, sub_anchor, replace(run, names=sub_names, start=sub_start))

    return extend_to_all(table, design, comps, inner, run)
