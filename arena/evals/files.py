"""``arena eval`` as one function: read result files once, pick the analysis, evaluate.

:func:`evaluate_files` reads the files with one reader
(:func:`arena.evals.scorefile.read_scores`); plain 0/1 accuracies (one score
per model and item, no runs or groups) go to :func:`arena.evals.evaluate`
(Wilson and bootstrap intervals, McNemar), everything else to
:func:`arena.evals.itemeval.evaluate_scores` (any metric, runs over seeds,
prompts and judges, groups, ratios, variance components). The result's
``to_dict()`` is the ``--format json`` document of either path.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.core.errors import OptionError
from arena.evals.evaluation import Evaluation, evaluate, write_battles
from arena.evals.itemeval import ScoreEvaluation, evaluate_scores
from arena.evals.itemfile import (
    ItemScores,
    detect_kind,
    harness_names,
    item_sort_key,
    name_without_gz,
    read_results,
)
from arena.evals.scorefile import ScoreTable, read_scores
from arena.evals.variance import VarianceComponents

__all__ = [
    "FEW_LEVELS",
    "FileEvaluation",
    "Responses",
    "evaluate_files",
    "item_scores",
    "needs_scores_path",
    "read_responses",
]

#: Fewer levels of a run axis than this earn a warning: a variance from 1-3 df is a guess.
FEW_LEVELS = 5


def needs_scores_path(
    table: ScoreTable, *, test: str = "auto", components: bool = False, item_only: bool = False
) -> bool:
    """True when the input or the options go beyond binary accuracy per item."""
    return bool(
        not table.binary
        or table.axes
        or (table.group is not None and len(set(table.group)) > 1)
        or test != "auto"
        or components
        or item_only
    )


def table_metric(table: ScoreTable, metric: str) -> str:
    """The metric's name: the harness key, or ``score`` when every input is a CSV."""
    files = [f for fs in table.files.values() for f in fs]
    return "score" if all(f.endswith((".csv", ".csv.gz")) for f in files) else metric


def item_scores(table: ScoreTable) -> ItemScores:
    """The 0/1 scores of a binary table with one score per model and item, as
    :func:`arena.evals.itemfile.read_results` reads them (no second read of the files)."""
    out = ItemScores()
    for files in table.files.values():
        for f in files:
            path = Path(f)
            if detect_kind(path) == "jsonl":
                out.benchmarks.add(harness_names(path)[1])
            else:
                out.benchmarks.add(name_without_gz(path).rsplit(".", 1)[0])
    for model, item, score, where in zip(
        table.model, table.item, table.score, table.origin, strict=True
    ):
        out.scores.setdefault(model, {})[item] = int(score)
        out.origin[model, item] = where
    return out


def _components_doc(vc: VarianceComponents) -> dict[str, Any]:
    return {
        "components": vc.components,
        "share": vc.share(),
        "raw": vc.raw,
        "levels": vc.levels,
        "observations": vc.n,
        "balanced": vc.balanced,
        "mean": vc.mean,
        "se": vc.se,
        "df": vc.df,
        "item_only_se": vc.item_only_se,
        "residual_includes": vc.residual_includes,
        "method": vc.method,
        "budget": vc.budget,
    }


@dataclass(frozen=True)
class FileEvaluation:
    """What ``arena eval`` found: accuracies (``accuracy``) or scores of any metric (``scores``).

    Exactly one of ``accuracy`` and ``scores`` is set. ``warnings`` are the
    sentences the command prints on stderr; ``battles_written`` counts the
    rows of ``to_battles`` (None without it).
    """

    metric: str
    items: int
    accuracy: Evaluation | None
    scores: ScoreEvaluation | None
    warnings: tuple[str, ...]
    battles_written: int | None = None

    @property
    def seed(self) -> int:
        return (self.accuracy or self.scores).seed  # type: ignore[union-attr]

    @property
    def rounds(self) -> int:
        return (self.accuracy or self.scores).rounds  # type: ignore[union-attr]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``arena eval --format json``."""
        if self.accuracy is not None:
            return self.accuracy.to_dict(metric=self.metric)
        ev = self.scores
        assert ev is not None
        return {
            "metric": self.metric,
            "level": ev.level,
            "rounds": ev.rounds,
            "seed": ev.seed,
            "correction": ev.correction,
            "axes": list(ev.axes),
            "grouped": ev.grouped,
            "models": [asdict(m) for m in ev.models],
            "pairs": [asdict(p) for p in ev.pairs],
            "components": {m: _components_doc(vc) for m, vc in ev.components.items()},
        }


def evaluate_files(
    results: list[str] | tuple[str, ...],
    *,
    metric: str = "acc",
    filter_name: str | None = None,
    level: float = DEFAULT_LEVEL,
    rounds: int | None = None,
    seed: int = DEFAULT_SEED,
    correction: str = "holm",
    test: str = "auto",
    components: bool = False,
    item_only: bool = False,
    numerator: str | None = None,
    denominator: str | None = None,
    to_battles: str | os.PathLike | None = None,
    skip_concordant: bool = False,
    benchmark: str | None = None,
) -> FileEvaluation:
    """Evaluate models scored item by item (``arena eval``; options as its flags).

    ``results`` are lm-evaluation-harness samples files or CSV files
    (``PATH=NAME`` names a file's model). ``filter_name`` is ``--filter``;
    ``to_battles`` writes every pair's items as battles (plain 0/1 scores only).

    Raises
    ------
    arena.evals.itemfile.ItemFileError
        Unreadable or malformed input (file, line and field named).
    arena.evals.EvaluateError, arena.evals.itemeval.ScoreError
        Data that cannot be evaluated.
    OptionError
        ``to_battles`` with scores that are not plain 0/1 accuracies.
    """
    # item bootstraps: the declared default when not given (boards choose their own)
    rounds = DEFAULT_ROUNDS if rounds is None else rounds
    table = read_scores(
        list(results),
        metric=metric,
        filter_name=filter_name,
        numerator=numerator,
        denominator=denominator,
    )
    if not needs_scores_path(table, test=test, components=components, item_only=item_only):
        data = item_scores(table)
        ev = evaluate(data, level=level, rounds=rounds, seed=seed, correction=correction)
        written = None
        if to_battles:
            written = write_battles(
                ev, to_battles, benchmark=benchmark, skip_concordant=skip_concordant
            )
        return FileEvaluation(metric, len(ev.item_ids), ev, None, ev.warnings, written)
    if to_battles:
        raise OptionError(
            "to_battles",
            "{name} needs plain 0/1 scores, one per model and item (no runs or groups)",
        )
    name = f"{numerator}/{denominator}" if numerator else table_metric(table, metric)
    if item_only:
        # The item-only analysis: every run axis ignored (each item's runs pooled).
        table = replace(table, seed=None, prompt=None, judge=None)
    ev_scores = evaluate_scores(
        table,
        metric=name,
        level=level,
        rounds=rounds,
        seed=seed,
        correction=correction,
        test=test,
        components=components,
    )
    warnings = []
    for axis in ev_scores.axes:
        n_levels = len(set(getattr(table, axis)))
        if n_levels < FEW_LEVELS:
            warnings.append(
                f"{axis} has {n_levels} levels: its variance is poorly determined "
                f"({n_levels - 1} degrees of freedom); intervals over it are rough"
            )
    if item_only:
        warnings.append("item-only intervals ignore run-to-run noise: they are a floor")
    return FileEvaluation(name, len(set(table.item)), None, ev_scores, tuple(warnings))


@dataclass(frozen=True)
class Responses:
    """0/1 responses of models (rows) to items (columns), NaN where a model has no score."""

    models: tuple[str, ...]
    items: tuple[str, ...]
    y: np.ndarray


def read_responses(
    results: list[str] | tuple[str, ...], *, metric: str = "acc", filter_name: str | None = None
) -> Responses:
    """Read 0/1 result files (as ``arena eval`` does) into the response matrix of ``arena irt``.

    Items are in natural order (``item_sort_key``: numbers by value); models in
    the order first read.

    Raises
    ------
    arena.evals.itemfile.ItemFileError
        Unreadable or malformed input, a score that is not 0/1, a duplicate item.
    """
    data = read_results(list(results), metric=metric, filter_name=filter_name)
    models = data.models
    items = sorted({i for s in data.scores.values() for i in s}, key=item_sort_key)
    col = {item: j for j, item in enumerate(items)}
    y = np.full((len(models), len(items)), np.nan)
    for r, m in enumerate(models):
        for item, value in data.scores[m].items():
            y[r, col[item]] = value
    return Responses(tuple(models), tuple(items), y)
