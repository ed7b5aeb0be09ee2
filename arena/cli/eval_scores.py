"""How ``arena eval`` prints scores beyond plain 0/1 accuracy (issue 15).

Real-valued scores, runs over seeds/prompts/judges, document groups, ratio
metrics and variance components are evaluated by
:func:`arena.evals.itemeval.evaluate_scores` (chosen by
:func:`arena.evals.files.evaluate_files`); this module only formats the result.
"""

from __future__ import annotations

import sys
from dataclasses import asdict

import click

from arena.cli.output import emit

_MODEL_COLUMNS = ["rank_ub", "rank_lb", "tier", "model", "items", "cells", "mean", "low", "high", "floor_low", "floor_high"]  # fmt: skip
_PAIR_COLUMNS = ["model_a", "model_b", "items", "diff", "low", "high", "decided_by", "pvalue", "p_adjusted", "verdict"]  # fmt: skip
_COMPONENT_COLUMNS = ["model", "component", "variance", "share"]
_BUDGET_COLUMNS = ["model", "design", "se"]


def print_scores(ev, fmt: str) -> None:
    """Print a :class:`~arena.evals.itemeval.ScoreEvaluation` as a table or CSV sections."""
    models = [asdict(m) for m in ev.models]
    pairs = [asdict(p) for p in ev.pairs]
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
