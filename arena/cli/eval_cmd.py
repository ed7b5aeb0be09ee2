"""``arena eval``: accuracy intervals and paired verdicts from per-item benchmark results."""

from __future__ import annotations

import sys
from dataclasses import asdict

import click

from arena.cli.eval_scores import print_scores
from arena.cli.options import (
    DeclaredType,
    format_option,
    hidden_alias,
    level_option,
    quiet_option,
    rounds_option,
    seed_option,
)
from arena.cli.output import emit, warn
from arena.core.options import option

_MODEL_COLUMNS = [
    "rank_ub",
    "rank_lb",
    "tier",
    "model",
    "items",
    "correct",
    "accuracy",
    "boot_low",
    "boot_high",
    "wilson_low",
    "wilson_high",
    "missing",
]
_PAIR_COLUMNS = [
    "model_a",
    "model_b",
    "items",
    "a_only",
    "b_only",
    "diff",
    "low",
    "high",
    "p_mcnemar",
    "p_adjusted",
    "verdict",
]


@click.command("eval")
@click.argument("results", nargs=-1, required=True, metavar="RESULTS...")
@click.option(
    "--metric",
    default="acc",
    show_default=True,
    help="Per-item metric key in lm-eval-harness samples (acc, acc_norm, exact_match, ...).",
)
@click.option(
    "--filter",
    "filter_name",
    default=None,
    help="lm-eval-harness filter to use when a samples file holds several.",
)
@level_option
@rounds_option
@hidden_alias("--boot", "--rounds", "rounds", type=DeclaredType(option("rounds")))
@seed_option
@click.option(
    "--correction",
    type=click.Choice(["holm", "bh", "none"]),
    default="holm",
    show_default=True,
    help="Multiple-comparison correction of the pairwise p-values.",
)
@click.option(
    "--to-battles",
    "battles_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write every pair's items as battles (CSV for `arena ingest`).",
)
@click.option(
    "--skip-concordant",
    is_flag=True,
    help="With --to-battles: leave out items both models got right or both wrong.",
)
@click.option(
    "--benchmark",
    default=None,
    help="Benchmark name used in battle ids (default: harness task or file stem).",
)
@click.option(
    "--test",
    type=click.Choice(["auto", "mcnemar", "t", "wilcoxon", "permutation", "bootstrap"]),
    default="auto",
    show_default=True,
    help="Test that decides each pair (auto: McNemar for 0/1, permutation for real scores, "
    "cluster bootstrap with groups, two-stage bootstrap with runs).",
)
@click.option(
    "--components",
    is_flag=True,
    help="Variance components of each model's scores (item, prompt, seed, judge, residual), "
    "the SE under the design run and what more items/seeds/prompts would buy.",
)
@click.option("--numerator", default=None, help="Ratio metric: column summed on top (e.g. bits).")
@click.option("--denominator", default=None, help="Ratio metric: column summed below (e.g. bytes).")
@click.option(
    "--item-only",
    is_flag=True,
    help="Ignore seed/prompt/judge columns: item-only intervals (a floor on the honest width).",
)
@format_option
@quiet_option
def eval_command(
    results,
    metric,
    filter_name,
    level,
    rounds,
    seed,
    correction,
    battles_path,
    skip_concordant,
    benchmark,
    test,
    components,
    numerator,
    denominator,
    item_only,
    fmt,
    quiet,
):
    """Compare models scored item by item on the same benchmark.

    RESULTS are lm-evaluation-harness `--log_samples` files (JSON lines, one
    record per document with `doc_id` and the --metric key) or CSV files with
    a header `model,item,score`.

    Scores of any metric: when scores are not all 0/1, or a CSV has columns
    `seed` (or `run`), `prompt`, `judge` or `group`, or several harness files
    hold one model (one run each), each model gets its mean with an interval
    over every axis (two-stage bootstrap: items or groups, then seeds,
    prompts, judges; the item-only interval beside it as `floor_low`/
    `floor_high`), and each pair a verdict from the test that decides (the
    output names it and why; t-test, Wilcoxon and permutation p-values for
    reference). --numerator bits --denominator bytes evaluates a ratio of
    sums (bits per byte) by a cluster bootstrap over documents (`group`).
    --components adds each model's variance components. The rest of this
    help describes plain 0/1 accuracies, which keep their output unchanged.

    Model names: write PATH=NAME to name a file's model. Otherwise a harness
    file named samples_<task>_<timestamp>.jsonl takes the name of its parent
    directory (the harness's per-model folder), any other JSON lines file its
    file stem; a CSV takes names from its `model` column (with PATH=NAME the
    column is optional and all rows belong to NAME).

    Items are joined on their id. An item missing for a model is reported
    (warning on stderr, `missing` column, `missing` in JSON): the model's
    accuracy uses its own items and each pair only the items both have.

    Output: each model's accuracy with a percentile bootstrap and a Wilson
    interval; for every pair the paired difference (A - B) with its bootstrap
    interval, McNemar's p-value (exact below 25 discordant items), the
    p-value adjusted over all pairs and the verdict at alpha = 1 - level.
    With --format csv the models table comes first, then a blank line, then
    the pairs table; --format json holds both plus the seed and missing items.

    --to-battles FILE writes columns id,model_a,model_b,winner,question_id:
    A right and B wrong is a win for A, both right or both wrong a tie (or
    skipped with --skip-concordant). Pairs are in alphabetical order and ids
    are eval:<benchmark>:<item>:<model_a>:<model_b>, so re-running gives the
    same ids.

    With seed N (--seed, fixed by default) and no missing items, each
    interval equals arena.evals.bootstrap_ci / paired_bootstrap run with
    numpy.random.default_rng(N). From Python: arena.evaluate(paths, ...)
    (the same options) returns the same numbers; to_dict() is --format json.

    Example:

    \b
        arena eval out/llama-3-8b/samples_arc_easy_2024-05-01T10-00-00.jsonl \\
                   out/mistral-7b/samples_arc_easy_2024-05-01T11-00-00.jsonl
        arena eval a.jsonl=model-a b.jsonl=model-b --seed 1 --format json
        arena eval results.csv --correction bh --to-battles battles.csv
        arena ingest battles.csv
        arena eval judge_scores.csv --components     # columns model,item,score,seed,prompt
        arena eval wiki.csv --numerator bits --denominator bytes
    """
    from arena.evals.files import evaluate_files

    result = evaluate_files(
        list(results),
        metric=metric,
        filter_name=filter_name,
        level=level,
        rounds=rounds,
        seed=seed,
        correction=correction,
        test=test,
        components=components,
        item_only=item_only,
        numerator=numerator,
        denominator=denominator,
        to_battles=battles_path,
        skip_concordant=skip_concordant,
        benchmark=benchmark,
    )
    for message in result.warnings:
        warn(message)
    if not quiet:
        if result.accuracy is not None:
            what = f"{len(result.accuracy.models)} models, {result.items} items"
        else:
            assert result.scores is not None  # an evaluation is of accuracy or of scores
            axes = result.scores.axes
            runs = f", runs over {', '.join(axes)}" if axes else ""
            what = f"{len(result.scores.models)} models, metric {result.metric}{runs}"
        click.echo(f"{what}, {result.rounds} resamples, seed {result.seed}", err=True)
        if result.battles_written is not None:
            click.echo(f"wrote {result.battles_written} battles to {battles_path}", err=True)
    if fmt == "json":
        emit([], [], fmt, json_obj=result.to_dict())
        return
    if result.scores is not None:
        print_scores(result.scores, fmt)
        return
    ev = result.accuracy
    assert ev is not None  # no scores: an accuracy evaluation
    model_rows = [asdict(m) for m in ev.models]
    pair_rows = [asdict(p) for p in ev.pairs]
    emit(model_rows, _MODEL_COLUMNS, fmt)
    if pair_rows:
        if fmt == "table":
            click.echo()
        else:
            sys.stdout.write("\n")
            sys.stdout.flush()
        emit(pair_rows, _PAIR_COLUMNS, fmt)


COMMANDS = [eval_command]
