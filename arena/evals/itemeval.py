"""Evaluate models on per-item scores of any metric, repeated over seeds, prompts and judges.

:func:`evaluate_scores` is what ``arena eval`` runs when scores are not plain
0/1 accuracies, when the input has design columns (seed, prompt, judge, group)
or a ratio metric: each model's mean with an interval that respects every axis
of the design, every pair's paired verdict (with the test that decided and
why), p-values adjusted over the pairs, and optionally the variance components
of each model's scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.core.errors import ArenaError
from arena.engine.inference.multiple import adjust_pvalues
from arena.evals.paired import PAIRED_TESTS, paired_verdict
from arena.evals.ranking import verdict_ranks, verdict_tiers
from arena.evals.ratio import compare_ratios, ratio_interval
from arena.evals.scorefile import DESIGN_COLUMNS, ScoreTable
from arena.evals.twostage import two_stage_difference, two_stage_interval
from arena.evals.variance import VarianceComponents, variance_components

__all__ = ["ModelScore", "ScoreError", "ScoreEvaluation", "ScorePair", "evaluate_scores"]


class ScoreError(ArenaError, ValueError):
    """Scores that cannot be evaluated as asked; the message names file, line and field."""


@dataclass(frozen=True)
class ModelScore:
    """One model's mean score and its interval.

    ``interval`` names how the interval was made; ``floor_low``/``floor_high``
    are the item-only interval (None without run axes), a lower bound on the
    honest width.
    """

    rank_ub: int
    rank_lb: int
    tier: int
    model: str
    items: int
    cells: int
    mean: float
    low: float
    high: float
    interval: str
    floor_low: float | None
    floor_high: float | None


@dataclass(frozen=True)
class ScorePair:
    """Model A against model B on the items both have."""

    model_a: str
    model_b: str
    items: int
    diff: float
    low: float
    high: float
    decided_by: str
    reason: str
    pvalue: float | None
    p_adjusted: float | None
    verdict: str
    p_mcnemar: float | None = None
    p_t: float | None = None
    p_wilcoxon: float | None = None
    p_permutation: float | None = None
    wilcoxon_method: str | None = None


@dataclass(frozen=True)
class ScoreEvaluation:
    """Result of :func:`evaluate_scores`."""

    level: float
    rounds: int
    seed: int
    correction: str
    metric: str
    axes: tuple[str, ...]
    grouped: bool
    models: tuple[ModelScore, ...]
    pairs: tuple[ScorePair, ...]
    components: dict[str, VarianceComponents] = field(default_factory=dict)


def _item_means(table: ScoreTable, rows: np.ndarray, items: np.ndarray, score: np.ndarray):
    labels = items[rows]
    uniq, code = np.unique(labels, return_inverse=True)
    sums = np.bincount(code, weights=score[rows])
    counts = np.bincount(code)
    return uniq, sums / counts


def _first_non_binary(table: ScoreTable, rows: np.ndarray) -> str:
    for r in rows:
        if table.score[r] not in (0.0, 1.0):
            return f"{table.origin[r]}: field 'score': {table.score[r]!r} is not 0 or 1"
    return ""


def evaluate_scores(
    table: ScoreTable,
    *,
    metric: str = "score",
    level: float = DEFAULT_LEVEL,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = DEFAULT_SEED,
    correction: str = "holm",
    test: str = "auto",
    components: bool = False,
) -> ScoreEvaluation:
    """Means, intervals and paired verdicts of every model in ``table``.

    Parameters
    ----------
    table : ScoreTable
        From :func:`arena.evals.scorefile.read_scores`.
    metric : str
        Name used in the output.
    level, rounds, seed : float, int, int
        Interval level, bootstrap resamples and the seed of
        ``numpy.random.default_rng``; the same seed gives the same numbers.
    correction : {"holm", "bh", "none"}
    test : {"auto", "mcnemar", "t", "wilcoxon", "permutation", "bootstrap"}
        The test that decides each pair (``"auto"``: the rule of
        :mod:`arena.evals.paired`; with run axes the two-stage bootstrap).
    components : bool
        Also estimate each model's variance components (needs run axes or
        several items; :func:`arena.evals.variance_components`).

    Returns
    -------
    ScoreEvaluation

    Raises
    ------
    ScoreError
        A binary-only test asked of real scores (names the first offending
        row), two models with no items in common (names their files).
    """
    if test not in PAIRED_TESTS:
        raise ScoreError(f"test must be one of {', '.join(PAIRED_TESTS)}, got {test!r}")
    if not table.model:
        raise ScoreError("no scores")
    rng = np.random.default_rng(seed)
    models = table.models
    items = np.asarray(table.item, dtype=object)
    score = np.asarray(table.score, dtype=np.float64)
    ratio = table.numerator is not None
    if test == "mcnemar":
        if ratio:
            raise ScoreError("McNemar's test needs 0/1 scores; this input is a ratio metric")
        bad = _first_non_binary(table, np.arange(len(score)))
        if bad:
            raise ScoreError(f"{bad}: McNemar's test needs 0/1 scores (choose test t, wilcoxon, permutation or bootstrap)")  # fmt: skip
    axes = tuple(table.axes)
    grouped = table.group is not None and len(set(table.group)) > 1
    group_of = (
        dict(zip(table.item, table.group, strict=True))
        if grouped and table.group is not None
        else {}
    )
    design = {c: np.asarray(getattr(table, c), dtype=object) for c in axes}
    num = np.asarray(table.numerator, dtype=np.float64) if ratio else None
    den = np.asarray(table.denominator, dtype=np.float64) if ratio else None
    units = np.asarray([group_of[i] for i in table.item], dtype=object) if grouped else items

    model_rows: list[dict[str, Any]] = []
    for m in models:
        rows = table.rows_of(m)
        n_items = int(np.unique(items[rows]).size)
        floor: tuple[float | None, float | None] = (None, None)
        if ratio:
            assert num is not None and den is not None  # ratio data
            iv = ratio_interval(num[rows], den[rows], rng, clusters=units[rows], rounds=rounds, level=level)  # fmt: skip
            how = f"cluster bootstrap over {'groups' if grouped else 'items'} (ratio of sums)"
            mean, low, high = iv.estimate, iv.low, iv.high
        else:
            runs = {c: design[c][rows] for c in axes}
            two = two_stage_interval(score[rows], rng, item=units[rows], runs=runs, rounds=rounds, level=level)  # fmt: skip
            unit = "groups" if grouped else "items"
            how = (
                f"two-stage bootstrap: {unit}, then {', '.join(axes)}"
                if axes
                else f"bootstrap over {unit}"
            )
            mean, low, high = two.interval.estimate, two.interval.low, two.interval.high
            if axes:
                floor = (two.floor.low, two.floor.high)
        model_rows.append(
            {"model": m, "items": n_items, "cells": int(rows.size), "mean": float(mean),
             "low": float(low), "high": float(high), "interval": how,
             "floor_low": floor[0], "floor_high": floor[1]}
        )  # fmt: skip
    model_rows.sort(key=lambda r: (-r["mean"], r["model"]))
    order = [r["model"] for r in model_rows]

    pairs = []
    for x, ma in enumerate(order):
        for mb in order[x + 1 :]:
            ra, rb = table.rows_of(ma), table.rows_of(mb)
            ia, mean_a = _item_means(table, ra, items, score)
            ib, mean_b = _item_means(table, rb, items, score)
            shared, pa, pb = np.intersect1d(ia, ib, return_indices=True)
            if shared.size == 0:
                raise ScoreError(
                    f"models {ma!r} ({', '.join(table.files[ma])}) and {mb!r} "
                    f"({', '.join(table.files[mb])}) have no items in common: field 'item'"
                )
            groups = np.asarray([group_of[i] for i in shared], dtype=object) if grouped else None
            if ratio:
                row = _ratio_pair(
                    ma, mb, ra, rb, items, num, den, shared, groups, rng, rounds, level
                )
            else:
                row = _score_pair(
                    ma, mb, mean_a[pa], mean_b[pb], shared, groups, rng, rounds, level, test,
                    axes, score, items, design, ra, rb, units,
                )  # fmt: skip
            pairs.append(row)
    pvals = [p.pvalue for p in pairs]
    have = [i for i, p in enumerate(pvals) if p is not None]
    adjusted: np.ndarray | list[float] = (
        adjust_pvalues([pvals[i] for i in have], correction) if have else []
    )
    alpha = 1.0 - level
    final = []
    for k, p in enumerate(pairs):
        p_adj = float(adjusted[have.index(k)]) if k in have else None
        significant = (p_adj < alpha) if p_adj is not None else (p.low > 0 or p.high < 0)
        if significant and p.diff != 0:
            verdict = f"{p.model_a if p.diff > 0 else p.model_b} better"
        else:
            verdict = "not significant"
        final.append(replace(p, p_adjusted=p_adj, verdict=verdict))

    comps = {}
    if components:
        for m in models:
            rows = table.rows_of(m)
            kwargs = {c: design[c][rows] for c in axes if c in DESIGN_COLUMNS}
            try:
                comps[m] = variance_components(score[rows], item=items[rows], **kwargs)
            except ValueError as exc:
                raise ScoreError(f"model {m!r}: {exc}") from None
    return ScoreEvaluation(
        level=float(level),
        rounds=int(rounds),
        seed=int(seed),
        correction=correction,
        metric=metric,
        axes=axes,
        grouped=grouped,
        models=_ranked(model_rows, final),
        pairs=tuple(final),
        components=comps,
    )


def _score_pair(ma, mb, a, b, shared, groups, rng, rounds, level, test, axes, score, items, design, ra, rb, units):  # fmt: skip
    v = paired_verdict(a, b, rng, groups=groups, test=test, rounds=rounds, level=level)
    low, high, decided_by, reason, pvalue = v.low, v.high, v.decided_by, v.reason, v.pvalue
    if axes:
        two = two_stage_difference(
            score[ra], score[rb], rng, item_a=units[ra], item_b=units[rb],
            runs_a={c: design[c][ra] for c in axes}, runs_b={c: design[c][rb] for c in axes},
            rounds=rounds, level=level,
        )  # fmt: skip
        low, high = two.interval.low, two.interval.high
        if test == "auto":
            decided_by, pvalue = "two-stage bootstrap", None
            reason = (
                f"scores repeated over {', '.join(axes)}: only the two-stage bootstrap "
                f"(items, then {', '.join(axes)}) counts the run-to-run noise; the other tests "
                "use each item's mean over runs"
            )
    return ScorePair(
        model_a=ma, model_b=mb, items=int(shared.size), diff=v.diff, low=float(low),
        high=float(high), decided_by=decided_by, reason=reason, pvalue=pvalue,
        p_adjusted=None, verdict="", p_mcnemar=v.pvalues.get("mcnemar"), p_t=v.pvalues["t"],
        p_wilcoxon=v.pvalues["wilcoxon"], p_permutation=v.pvalues["permutation"],
        wilcoxon_method=v.wilcoxon_method,
    )  # fmt: skip


def _ratio_pair(ma, mb, ra, rb, items, num, den, shared, groups, rng, rounds, level):
    def sums(rows):
        keep = rows[np.isin(items[rows], shared)]
        code = np.searchsorted(shared, items[keep].astype(str).astype(object))
        k = shared.size
        return (
            np.bincount(code, weights=num[keep], minlength=k),
            np.bincount(code, weights=den[keep], minlength=k),
        )

    na, da = sums(ra)
    nb, db = sums(rb)
    cmp = compare_ratios(na, da, nb, db, rng, clusters=groups, rounds=rounds, level=level)
    unit = "groups" if groups is not None else "items"
    return ScorePair(
        model_a=ma, model_b=mb, items=int(shared.size), diff=cmp.diff.estimate,
        low=cmp.diff.low, high=cmp.diff.high, decided_by="cluster bootstrap",
        reason=(f"a ratio of sums is not a mean of per-item scores: both ratios are "
                f"recomputed on the same resampled {unit}"),
        pvalue=None, p_adjusted=None, verdict="",
    )  # fmt: skip


def _ranked(model_rows, pairs) -> tuple[ModelScore, ...]:
    """Rank interval and tier of each model from the paired verdicts, not 1, 2, 3."""
    index = {r["model"]: k for k, r in enumerate(model_rows)}
    better = np.zeros((len(model_rows), len(model_rows)), dtype=bool)
    for p in pairs:
        if p.verdict != "not significant":
            win, lose = (p.model_a, p.model_b) if p.diff > 0 else (p.model_b, p.model_a)
            better[index[win], index[lose]] = True
    rank_ub, rank_lb = verdict_ranks(better)
    tiers = verdict_tiers(range(len(model_rows)), better)
    return tuple(
        ModelScore(rank_ub=int(rank_ub[k]), rank_lb=int(rank_lb[k]), tier=int(tiers[k]), **r)
        for k, r in enumerate(model_rows)
    )
