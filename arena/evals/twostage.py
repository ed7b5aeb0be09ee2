"""Intervals that respect every axis of an evaluation: the two-stage bootstrap.

:func:`two_stage_interval`: stage one draws items with replacement, stage two
draws the levels of each run axis (seeds, prompts, judges) with replacement,
shared by all items because a seed or a template is the same for every item.
The item-only interval of the same item draws is returned beside it and
labelled a floor: it leaves out the run-level noise.
:func:`two_stage_difference` compares two models, the axes that are the same
conditions for both (:data:`SHARED_AXES`) drawn jointly.  The variance
components behind them are in :mod:`arena.evals.variance`.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS
from arena.core.errors import ArgumentError
from arena.evals.checks import (
    Interval,
    as_finite,
    check_count,
    check_level,
    check_rng,
    percentile_bounds,
)
from arena.evals.resample import resample_sums
from arena.evals.variance import label_codes

__all__ = ["SHARED_AXES", "TwoStageInterval", "two_stage_difference", "two_stage_interval"]

#: Run axes that are the same conditions for every model (resampled jointly in comparisons).
SHARED_AXES = ("prompt", "judge")


@dataclass(frozen=True)
class TwoStageInterval:
    """Result of :func:`two_stage_interval`.

    Attributes
    ----------
    interval : Interval
        Items, then every run axis, resampled.
    floor : Interval
        Items only (the same item draws): leaves out run-level noise, so it is
        a lower bound on the honest width.
    axes : list of str
        Run axes resampled in stage two.
    """

    interval: Interval
    floor: Interval
    axes: list[str]


def two_stage_interval(
    scores,
    rng,
    *,
    item,
    runs: dict[str, object] | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> TwoStageInterval:
    """Two-stage bootstrap interval of a mean score: items, then runs.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One value per cell (a model's score, or the paired difference of two
        models on the same cell).
    rng : numpy.random.Generator
        Consumed as ``rng.integers(0, n_items, size=(rounds, n_items))`` (in
        row blocks), then for each run axis in the order given
        ``rng.integers(0, L, size=(rounds, L))``.
    item : array_like, shape (n,)
    runs : dict, optional
        Axis name -> labels of shape (n,), e.g. ``{"seed": seeds}``.
    rounds : int, default DEFAULT_ROUNDS (1000)
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    TwoStageInterval

    Notes
    -----
    Resample mean: ``sum w_item * w_run * y / sum w_item * w_run`` over cells,
    ``w`` the number of times each item and each run level was drawn, so
    missing cells are handled as in a ratio estimate.
    """
    y = as_finite(scores, "scores")
    n = y.size
    level = check_level(level)
    rounds = check_count(rounds, "rounds")
    check_rng(rng)
    item_code, n_items = label_codes(item, n, "item")
    runs = dict(runs or {})
    run_codes = [(name, *label_codes(labels, n, name)) for name, labels in runs.items()]
    table = _cell_table(y, item_code, n_items, run_codes)
    full, items_only = _two_stage_means([table], rng, rounds)
    full, items_only = full[:, 0], items_only[:, 0]
    est = float(y.mean())
    lo, hi = percentile_bounds(full, level)
    flo, fhi = percentile_bounds(items_only, level)
    return TwoStageInterval(
        Interval(est, float(lo), float(hi), level),
        Interval(est, float(flo), float(fhi), level),
        list(runs),
    )


def _cell_table(y, item_code, n_items, run_codes):
    """Per (item, run) sums and counts; ``run_codes`` is a list of (name, codes, levels)."""
    run_index = np.zeros(y.size, dtype=np.int64)
    for _, code, count in run_codes:
        run_index = run_index * count + code
    n_runs = prod(c for _, _, c in run_codes) if run_codes else 1
    flat = item_code * n_runs + run_index
    ysum = np.bincount(flat, weights=y, minlength=n_items * n_runs).reshape(n_items, n_runs)
    cnt = np.bincount(flat, minlength=n_items * n_runs).astype(np.float64).reshape(n_items, n_runs)
    counts = [c for _, _, c in run_codes]
    levels = np.unravel_index(np.arange(n_runs), tuple(counts)) if counts else ()
    axes = [(name, c, lev) for (name, _, c), lev in zip(run_codes, levels, strict=True)]
    return ysum, cnt, axes


def _axis_counts(rng, count: int, rounds: int) -> np.ndarray:
    draws = rng.integers(0, count, size=(rounds, count))
    draws += (np.arange(rounds) * count)[:, None]
    return np.bincount(draws.ravel(), minlength=rounds * count).reshape(rounds, count)


def _two_stage_means(tables, rng, rounds, shared_axes=()):
    """Resampled means of several tables over the same items: shared item draws, then
    run draws, one per table except for the axes in ``shared_axes``, drawn once for all."""
    cols = np.hstack([np.hstack([t[0], t[1]]) for t in tables])
    sums = resample_sums(cols, rng, rounds)
    full = np.empty((rounds, len(tables)))
    floor = np.empty_like(full)
    common = {}
    start = 0
    for k, (ysum, _, axes) in enumerate(tables):
        n_runs = ysum.shape[1]
        s_y = sums[:, start : start + n_runs]
        s_n = sums[:, start + n_runs : start + 2 * n_runs]
        start += 2 * n_runs
        weight = np.ones((rounds, n_runs))
        for name, count, lev in axes:
            if name in shared_axes:
                if name not in common:
                    common[name] = _axis_counts(rng, count, rounds)
                counts = common[name]
            else:
                counts = _axis_counts(rng, count, rounds)
            weight *= counts[:, lev]
        with np.errstate(invalid="ignore", divide="ignore"):
            full[:, k] = (s_y * weight).sum(axis=1) / (s_n * weight).sum(axis=1)
            floor[:, k] = s_y.sum(axis=1) / s_n.sum(axis=1)
    return full, floor


def two_stage_difference(
    scores_a,
    scores_b,
    rng,
    *,
    item_a,
    item_b,
    runs_a: dict[str, object] | None = None,
    runs_b: dict[str, object] | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> TwoStageInterval:
    """Two-stage bootstrap interval of ``mean(A) - mean(B)`` over the items both have.

    Items are drawn once for both models (the comparison is paired by item).
    Prompt templates and judges are conditions both models meet, so each of
    those axes is drawn once for both (by label); seeds are drawn separately
    per model, since seed 1 of one model has nothing to do with seed 1 of
    another. Means are over each model's cells on the shared items.

    Parameters
    ----------
    scores_a, scores_b : array_like
        Cell scores of models A and B.
    rng : numpy.random.Generator
    item_a, item_b : array_like
        Item of each cell.
    runs_a, runs_b : dict, optional
        Run axes of each model's cells.
    rounds : int, default DEFAULT_ROUNDS (1000)
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    TwoStageInterval
    """
    ya, yb = as_finite(scores_a, "scores_a"), as_finite(scores_b, "scores_b")
    level = check_level(level)
    rounds = check_count(rounds, "rounds")
    check_rng(rng)
    la, lb = np.asarray(item_a), np.asarray(item_b)
    shared = np.intersect1d(la, lb)
    if shared.size == 0:
        raise ArgumentError("the two models have no items in common")
    runs_a, runs_b = dict(runs_a or {}), dict(runs_b or {})
    common = [c for c in SHARED_AXES if c in runs_a and c in runs_b]
    # Shared axes are coded over the union of both models' labels, so that template
    # "p1" is the same level (and gets the same draw) for both.
    union = {
        c: np.unique(np.concatenate([np.asarray(runs_a[c]), np.asarray(runs_b[c])])) for c in common
    }
    tables, means = [], []
    for y, labels, runs in ((ya, la, runs_a), (yb, lb, runs_b)):
        keep = np.isin(labels, shared)
        code = np.searchsorted(shared, labels[keep])
        run_codes = []
        for name, values in runs.items():
            values = np.asarray(values)[keep]
            if name in union:
                run_codes.append((name, np.searchsorted(union[name], values), union[name].size))
            else:
                run_codes.append((name, *label_codes(values, values.size, name)))
        tables.append(_cell_table(y[keep], code, shared.size, run_codes))
        means.append(float(y[keep].mean()))
    full, floor = _two_stage_means(tables, rng, rounds, shared_axes=common)
    est = means[0] - means[1]
    lo, hi = percentile_bounds(full[:, 0] - full[:, 1], level)
    flo, fhi = percentile_bounds(floor[:, 0] - floor[:, 1], level)
    axes = sorted(set(runs_a or {}) | set(runs_b or {}))
    return TwoStageInterval(
        Interval(est, float(lo), float(hi), level),
        Interval(est, float(flo), float(fhi), level),
        axes,
    )
