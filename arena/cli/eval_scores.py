"""The part of ``arena eval`` for scores beyond plain 0/1 accuracy (issue 15).

Real-valued scores, runs over seeds/prompts/judges, document groups, ratio
metrics and variance components are evaluated by
:func:`arena.evals.itemeval.evaluate_scores`; this module only decides when
that path applies and formats its result.
"""

from __future__ import annotations

import sys
from dataclasses import asdict

import click

from arena.cli.output import emit, warn

_MODEL_COLUMNS = ["rank_ub", "rank_lb", "tier", "model", "items", "cells", "mean", "low", "high", "floor_low", "floor_high"]  # fmt: skip
_PAIR_COLUMNS = ["model_a", "model_b", "items", "diff", "low", "high", "decided_by", "pvalue", "p_adjusted", "verdict"]  # fmt: skip
#: Fewer levels of a run axis than this earn a warning: a variance from 1-3 df is a guess.
_FEW_LEVELS = 5
_COMPONENT_COLUMNS = ["model", "component", "variance", "share"]
_BUDGET_COLUMNS = ["model", "design", "se"]


def read_table(results, *, metric, filter_name, numerator, denominator):
    """Read RESULTS as scores of any metric; None when they are plain 0/1 accuracies
    with no design columns (the classic path then handles them)."""
    from arena.evals.itemfile import ItemFileError
    from arena.evals.scorefile import read_scores

    try:
        return read_scores(
            list(results),
            metric=metric,
            filter_name=filter_name,
            numerator=numerator,
            denominator=denominator,
        )
    except ItemFileError as exc:
        raise click.ClickException(str(exc)) from None


def table_metric(table, metric: str) -> str:
    """The metric's name: the harness key, or ``score`` when every input is a CSV."""
    files = [f for fs in table.files.values() for f in fs]
    return "score" if all(f.endswith((".csv", ".csv.gz")) for f in files) else metric


def needs_scores_path(table, *, test: str, components: bool, item_only: bool) -> bool:
    """True when the input or the options go beyond binary accuracy per item."""
    return bool(
        not table.binary
        or table.axes
        or (table.group is not None and len(set(table.group)) > 1)
        or test != "auto"
        or components
        or item_only
    )


def _components_doc(vc) -> dict:
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


def run_scores(table, *, metric, level, rounds, seed, correction, test, components, item_only, fmt, quiet):  # fmt: skip
    """Evaluate ``table`` and print the result in ``fmt``."""
    from arena.evals.itemeval import ScoreError, evaluate_scores

    if item_only:
        # The item-only analysis: every run axis ignored (each item's runs pooled).
        for axis in ("seed", "prompt", "judge"):
            setattr(table, axis, None)
    try:
        ev = evaluate_scores(
            table, metric=metric, level=level, rounds=rounds, seed=seed,
            correction=correction, test=test, components=components,
        )  # fmt: skip
    except ScoreError as exc:
        raise click.ClickException(str(exc)) from None
    for axis in ev.axes:
        n_levels = len(set(getattr(table, axis)))
        if n_levels < _FEW_LEVELS:
            warn(
                f"{axis} has {n_levels} levels: its variance is poorly determined "
                f"({n_levels - 1} degrees of freedom); intervals over it are rough"
            )
    if not quiet:
        axes = f", runs over {', '.join(ev.axes)}" if ev.axes else ""
        click.echo(
            f"{len(ev.models)} models, metric {metric}{axes}, {rounds} resamples, seed {seed}",
            err=True,
        )
        if item_only:
            warn("--item-only ignores run-to-run noise: the intervals are a floor")
    models = [asdict(m) for m in ev.models]
    pairs = [asdict(p) for p in ev.pairs]
    if fmt == "json":
        emit(
            [],
            [],
            fmt,
            json_obj={
                "metric": metric,
                "level": level,
                "rounds": rounds,
                "seed": seed,
                "correction": correction,
                "axes": list(ev.axes),
                "grouped": ev.grouped,
                "models": models,
                "pairs": pairs,
                "components": {m: _components_doc(vc) for m, vc in ev.components.items()},
            },
        )
        return
    sections = [(models, _MODEL_COLUMNS)]
    if pairs:
        sections.append((pairs, _PAIR_COLUMNS))
    if ev.components:
        comp_rows = [
            {"model": m, "component": k, "variance": v, "share": vc.share()[k]}
            for m, vc in ev.components.items()
            for k, v in vc.components.items()
        ]
        budget_rows = [
            {"model": m, "design": k, "se": v}
            for m, vc in ev.components.items()
            for k, v in {**vc.budget, "item-only (floor)": vc.item_only_se}.items()
        ]
        sections += [(comp_rows, _COMPONENT_COLUMNS), (budget_rows, _BUDGET_COLUMNS)]
    for n, (rows, cols) in enumerate(sections):
        if n:
            click.echo() if fmt == "table" else sys.stdout.write("\n")
        emit(rows, cols, fmt)
    if fmt == "table":
        click.echo()
        click.echo(f"intervals: {ev.models[0].interval}" + (
            "; floor_low/floor_high: items only (a floor: run-to-run noise left out)"
            if ev.axes else ""))  # fmt: skip
        for reason in dict.fromkeys(f"{p.decided_by}: {p.reason}" for p in ev.pairs):
            click.echo(f"decided by {reason}")
        for m, vc in ev.components.items():
            click.echo(
                f"{m}: {vc.method}; SE of the mean {vc.se:.4g} (df {vc.df:.1f}) under the design "
                f"run, {vc.item_only_se:.4g} counting items only"
                + (f"; {', '.join(vc.nested)} nested in items" if vc.nested else "")
                + (f"; residual includes {', '.join(vc.residual_includes)}" if vc.residual_includes else "")
            )  # fmt: skip
