"""``arena eval``: accuracy intervals and paired verdicts from per-item benchmark results."""

from __future__ import annotations

import sys
from dataclasses import asdict

import click

from arena.cli.options import (
    format_option,
    hidden_alias,
    level_option,
    quiet_option,
    rounds_option,
    seed_option,
)
from arena.cli.output import emit, warn

_MODEL_COLUMNS = [
    "rank",
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
@hidden_alias("--boot", "--rounds", "rounds", type=click.IntRange(min=1))
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
    fmt,
    quiet,
):
    """Compare models scored item by item on the same benchmark.

    RESULTS are lm-evaluation-harness `--log_samples` files (JSON lines, one
    record per document with `doc_id` and the --metric key) or CSV files with
    a header `model,item,score`. Scores must be 0 or 1.

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
    interval equals arena.stats.bootstrap_ci / paired_bootstrap run with
    numpy.random.default_rng(N). From Python: arena.stats.evaluate(
    arena.stats.itemfile.read_results(paths)) returns the same numbers.

    Example:

    \b
        arena eval out/llama-3-8b/samples_arc_easy_2024-05-01T10-00-00.jsonl \\
                   out/mistral-7b/samples_arc_easy_2024-05-01T11-00-00.jsonl
        arena eval a.jsonl=model-a b.jsonl=model-b --seed 1 --format json
        arena eval results.csv --correction bh --to-battles battles.csv
        arena ingest battles.csv
    """
    from arena.stats import EvaluateError, evaluate, write_battles
    from arena.stats.itemfile import ItemFileError, read_results

    try:
        data = read_results(list(results), metric=metric, filter_name=filter_name)
        ev = evaluate(data, level=level, rounds=rounds, seed=seed, correction=correction)
        if not quiet:
            click.echo(
                f"{len(ev.models)} models, {len(ev.item_ids)} items, {rounds} resamples, "
                f"seed {seed}",
                err=True,
            )
        for message in ev.warnings:
            warn(message)
        if battles_path:
            written = write_battles(
                ev, battles_path, benchmark=benchmark, skip_concordant=skip_concordant
            )
            if not quiet:
                click.echo(f"wrote {written} battles to {battles_path}", err=True)
    except (ItemFileError, EvaluateError) as exc:
        raise click.ClickException(str(exc)) from None

    if fmt == "json":
        emit([], [], fmt, json_obj=ev.document(metric=metric))
        return
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
