"""Evaluate several models scored item by item on one benchmark (what ``arena eval`` prints).

:func:`evaluate` turns per-item 0/1 scores into each model's accuracy with a
percentile bootstrap and a Wilson interval, and, for every pair, the paired
difference with its bootstrap interval, McNemar's test, the p-value adjusted
over all pairs and a verdict. :func:`write_battles` turns the same scores into
pairwise battles for ``arena ingest``.
"""

from __future__ import annotations

import csv
import os
from dataclasses import asdict, dataclass, field

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.core.errors import ArenaError, OptionError, escape
from arena.engine.inference.multiple import adjust_pvalues
from arena.evals.binomial import mcnemar_counts, wilson_interval
from arena.evals.itemfile import ItemScores, item_sort_key
from arena.evals.models import bootstrap_models
from arena.evals.ranking import verdict_ranks, verdict_tiers

__all__ = [
    "EvaluateError",
    "Evaluation",
    "ModelAccuracy",
    "PairVerdict",
    "evaluate",
    "write_battles",
]

#: How many missing item ids a warning lists before "...".
SHOW_MISSING = 5


class EvaluateError(ArenaError, ValueError):
    """Scores that cannot be evaluated, or battles that cannot be written."""


class EvaluateOptionError(EvaluateError, OptionError):
    """A bad evaluation option, named by its parameter (the CLI names the flag)."""


@dataclass(frozen=True)
class ModelAccuracy:
    """One model's accuracy on the items it was scored on.

    ``rank_ub``..``rank_lb`` are the ranks the paired verdicts allow and
    ``tier`` the model's tier (:mod:`arena.evals.ranking`): no 1, 2, 3 that the
    tests do not back.  ``boot_low``/``boot_high`` are the percentile bootstrap interval,
    ``wilson_low``/``wilson_high`` the Wilson score interval; ``missing`` counts
    the benchmark's items this model has no score for.
    """

    rank_ub: int
    rank_lb: int
    tier: int
    model: str
    items: int
    correct: int
    accuracy: float
    boot_low: float
    boot_high: float
    wilson_low: float
    wilson_high: float
    missing: int


@dataclass(frozen=True)
class PairVerdict:
    """Model A against model B on the items both were scored on.

    ``diff`` is accuracy(A) - accuracy(B) with its paired bootstrap interval
    ``low``..``high``; ``a_only``/``b_only`` are the discordant items;
    ``test`` says whether McNemar's p-value is ``"exact"`` or ``"chi2"``.
    """

    model_a: str
    model_b: str
    items: int
    a_only: int
    b_only: int
    diff: float
    low: float
    high: float
    p_mcnemar: float
    test: str
    p_adjusted: float
    verdict: str


@dataclass(frozen=True)
class Evaluation:
    """Everything :func:`evaluate` found, plus the score matrix it used.

    ``models`` are sorted by accuracy (best first, ties by name) and ``pairs``
    follow that order. ``missing[model]`` lists the items a model has no score
    for; ``warnings`` say the same in words.
    """

    level: float
    rounds: int
    seed: int
    correction: str
    benchmarks: tuple[str, ...]
    item_ids: tuple[str, ...]
    models: tuple[ModelAccuracy, ...]
    pairs: tuple[PairVerdict, ...]
    missing: dict[str, list[str]]
    warnings: tuple[str, ...]
    names: tuple[str, ...] = field(repr=False)
    correct: np.ndarray = field(repr=False)
    present: np.ndarray = field(repr=False)

    def to_dict(self, **extra) -> dict:
        """The JSON document of ``arena eval --format json`` (``extra`` keys first)."""
        return {
            **extra,
            "level": self.level,
            "rounds": self.rounds,
            "seed": self.seed,
            "correction": self.correction,
            "items": len(self.item_ids),
            "benchmarks": list(self.benchmarks),
            "models": [asdict(m) for m in self.models],
            "pairs": [asdict(p) for p in self.pairs],
            "missing": self.missing,
        }


def _matrices(data: ItemScores) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    models = data.models
    items = sorted({i for s in data.scores.values() for i in s}, key=item_sort_key)
    row_of = {item: r for r, item in enumerate(items)}
    correct = np.zeros((len(items), len(models)), dtype=np.int8)
    present = np.zeros_like(correct, dtype=bool)
    for j, m in enumerate(models):
        for item, value in data.scores[m].items():
            correct[row_of[item], j] = value
            present[row_of[item], j] = True
    return models, items, correct, present


def evaluate(
    data: ItemScores,
    *,
    level: float = DEFAULT_LEVEL,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = DEFAULT_SEED,
    correction: str = "holm",
) -> Evaluation:
    """Accuracy intervals for every model and paired verdicts for every pair.

    Parameters
    ----------
    data : ItemScores
        Per-item 0/1 scores, e.g. from :func:`arena.evals.itemfile.read_results`.
    level : float
        Confidence level of the intervals; the verdicts test at ``1 - level``.
    rounds : int
        Bootstrap resamples.
    seed : int
        Seed of ``numpy.random.default_rng``; with no missing items each
        interval equals :func:`arena.evals.bootstrap_ci` /
        :func:`arena.evals.paired_bootstrap` run with that generator.
    correction : {"holm", "bh", "none"}
        Multiple-comparison correction of the McNemar p-values over all pairs.

    Returns
    -------
    Evaluation

    Raises
    ------
    EvaluateError
        No models, or an option out of range.

    Examples
    --------
    >>> from arena.evals.itemfile import read_results
    >>> ev = evaluate(read_results(["results.csv"]), seed=1)  # doctest: +SKIP
    >>> [(m.model, m.accuracy) for m in ev.models]  # doctest: +SKIP
    """
    names, items, correct, present = _matrices(data)
    if not names:
        raise EvaluateError("no models to evaluate")
    missing: dict[str, list[str]] = {}
    warnings = []
    for j, m in enumerate(names):
        if not present[:, j].all():
            missing[m] = [items[r] for r in np.flatnonzero(~present[:, j])]
            shown = ", ".join(missing[m][:SHOW_MISSING]) + (
                ", ..." if len(missing[m]) > SHOW_MISSING else ""
            )
            warnings.append(
                f"model {m!r} has no score for {len(missing[m])} of {len(items)} items "
                f"({shown}); its accuracy uses its {int(present[:, j].sum())} items, "
                "its pairs the items both models have"
            )
    try:
        boot = bootstrap_models(
            correct, np.random.default_rng(seed), present=present, rounds=rounds, level=level
        )
        # Validates the correction name before any pair is built.
        adjust_pvalues([], correction)
    except ValueError as exc:
        raise EvaluateError(str(exc)) from None

    order = sorted(range(len(names)), key=lambda j: (-boot.accuracy[j], names[j]))
    models_done: list[tuple[int, dict]] = []
    for j in order:
        k, n = int(correct[:, j].sum()), int(boot.n_items[j])
        w = wilson_interval(k, n, level=level)
        models_done.append(
            (
                j,
                dict(
                    model=names[j],
                    items=n,
                    correct=k,
                    accuracy=float(boot.accuracy[j]),
                    boot_low=float(boot.low[j]),
                    boot_high=float(boot.high[j]),
                    wilson_low=w.low,
                    wilson_high=w.high,
                    missing=len(missing.get(names[j], [])),
                ),
            )
        )

    tests = []
    for x, i in enumerate(order):
        for j in order[x + 1 :]:
            both = present[:, i] & present[:, j]
            a_only = int(np.count_nonzero(both & (correct[:, i] == 1) & (correct[:, j] == 0)))
            b_only = int(np.count_nonzero(both & (correct[:, i] == 0) & (correct[:, j] == 1)))
            tests.append((i, j, a_only, b_only, mcnemar_counts(a_only, b_only)))
    adjusted = adjust_pvalues([t[4].pvalue for t in tests], correction)
    alpha = 1.0 - level
    pairs = []
    better = np.zeros((len(names), len(names)), dtype=bool)
    for (i, j, a_only, b_only, test), p_adj in zip(tests, adjusted, strict=True):
        if p_adj < alpha and a_only != b_only:
            verdict = f"{names[i] if a_only > b_only else names[j]} better"
            better[(i, j) if a_only > b_only else (j, i)] = True
        else:
            verdict = "not significant"
        pairs.append(
            PairVerdict(
                model_a=names[i],
                model_b=names[j],
                items=int(boot.shared[i, j]),
                a_only=a_only,
                b_only=b_only,
                diff=float(boot.diff[i, j]),
                low=float(boot.diff_low[i, j]),
                high=float(boot.diff_high[i, j]),
                p_mcnemar=test.pvalue,
                test=test.method,
                p_adjusted=float(p_adj),
                verdict=verdict,
            )
        )
    rank_ub, rank_lb = verdict_ranks(better)
    tiers = verdict_tiers(order, better)
    model_rows = [
        ModelAccuracy(rank_ub=int(rank_ub[j]), rank_lb=int(rank_lb[j]), tier=int(tiers[j]), **row)
        for j, row in models_done
    ]
    return Evaluation(
        level=level,
        rounds=rounds,
        seed=seed,
        correction=correction,
        benchmarks=tuple(sorted(data.benchmarks)),
        item_ids=tuple(items),
        models=tuple(model_rows),
        pairs=tuple(pairs),
        missing=missing,
        warnings=tuple(warnings),
        names=tuple(names),
        correct=correct,
        present=present,
    )


def write_battles(
    evaluation: Evaluation,
    path: str | os.PathLike,
    *,
    benchmark: str | None = None,
    skip_concordant: bool = False,
) -> int:
    """Write one battle per (pair, shared item) as CSV for ``arena ingest``.

    A right and B wrong is a win for A, both right or both wrong a tie (left
    out with ``skip_concordant``). Pairs are taken in alphabetical order of
    model names and ids are ``eval:<benchmark>:<item>:<model_a>:<model_b>``,
    so ids depend neither on accuracies nor on the order of the input files.

    Parameters
    ----------
    evaluation : Evaluation
    path : path-like
        CSV file to write (columns id,model_a,model_b,winner,question_id).
    benchmark : str, optional
        Name used in ids; default the only benchmark of the inputs.
    skip_concordant : bool
        Leave out items both models got right or both got wrong.

    Returns
    -------
    int
        Battles written.

    Raises
    ------
    EvaluateError
        Several benchmarks and no ``benchmark``, ids that would be ambiguous
        (a name containing ``:``), or a file that cannot be written.
    """
    if benchmark is None:
        if len(evaluation.benchmarks) != 1:
            raise EvaluateOptionError(
                "benchmark",
                "battles from per-item results: the inputs name several benchmarks "
                + escape(f"({', '.join(evaluation.benchmarks)})")
                + "; choose one with {name}",
            )
        (benchmark,) = evaluation.benchmarks
    models, correct, present = evaluation.names, evaluation.correct, evaluation.present
    items = evaluation.item_ids
    order = sorted(range(len(models)), key=lambda j: models[j])
    item_arr = np.array(items, dtype=object)
    check_ids = any(":" in str(x) for x in (*models, *items))
    seen_ids: set[str] = set()
    written = 0
    try:
        fh = open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise EvaluateError(f"{path}: cannot write: {exc.strerror}") from None
    with fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["id", "model_a", "model_b", "winner", "question_id"])
        for x, i in enumerate(order):
            a = models[i]
            for j in order[x + 1 :]:
                b = models[j]
                keep = present[:, i] & present[:, j]
                if skip_concordant:
                    keep &= correct[:, i] != correct[:, j]
                ci, cj = correct[keep, i], correct[keep, j]
                winner = np.where(ci > cj, "model_a", np.where(ci < cj, "model_b", "tie"))
                ids = [f"eval:{benchmark}:{item}:{a}:{b}" for item in item_arr[keep]]
                if check_ids:
                    clash = seen_ids.intersection(ids)
                    if clash or len(set(ids)) != len(ids):
                        raise EvaluateError(
                            f"battles from per-item results: battle ids are ambiguous (e.g. "
                            f"{next(iter(clash), ids[0])!r}: a model or item name contains "
                            "':'); rename models with PATH=NAME"
                        )
                    seen_ids.update(ids)
                writer.writerows(
                    zip(
                        ids,
                        (a,) * len(ids),
                        (b,) * len(ids),
                        winner.tolist(),
                        [f"{benchmark}:{item}" for item in item_arr[keep]],
                        strict=True,
                    )
                )
                written += len(ids)
    return written
