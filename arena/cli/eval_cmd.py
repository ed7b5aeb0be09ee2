"""``arena eval``: accuracy intervals and paired verdicts from per-item benchmark results."""

from __future__ import annotations

import csv
import sys

import click

from arena.cli.output import emit, format_option, quiet_option

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
#: How many missing item ids a warning lists before "...".
_SHOW_MISSING = 5


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def _load(results: tuple[str, ...], metric: str, filter_name: str | None):
    from arena.stats.itemfile import ItemFileError, read_results

    try:
        return read_results(list(results), metric=metric, filter_name=filter_name)
    except ItemFileError as exc:
        raise click.ClickException(str(exc)) from None


def _benchmark_name(data, benchmark: str | None) -> str:
    if benchmark:
        return benchmark
    if len(data.benchmarks) == 1:
        return next(iter(data.benchmarks))
    raise click.ClickException(
        "--to-battles: inputs name several benchmarks "
        f"({', '.join(sorted(data.benchmarks))}); give one with --benchmark NAME"
    )


def _write_battles(path, models, items, correct, present, bench, skip_concordant) -> int:
    """Write one battle per (pair, shared item); return the number written.

    Pairs are taken in alphabetical order of model names so that ids do not
    depend on accuracies or on the order of the input files.
    """
    import numpy as np

    order = sorted(range(len(models)), key=lambda j: models[j])
    item_arr = np.array(items, dtype=object)
    check_ids = any(":" in str(x) for x in (*models, *items))
    seen_ids: set[str] = set()
    written = 0
    try:
        fh = open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot write: {exc.strerror}") from None
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
                ids = [f"eval:{bench}:{item}:{a}:{b}" for item in item_arr[keep]]
                if check_ids:
                    clash = seen_ids.intersection(ids)
                    if clash or len(set(ids)) != len(ids):
                        raise click.ClickException(
                            f"--to-battles: battle ids are ambiguous (e.g. {next(iter(clash), ids[0])!r}: "
                            "a model or item name contains ':'); rename models with PATH=NAME"
                        )
                    seen_ids.update(ids)
                writer.writerows(
                    zip(
                        ids,
                        (a,) * len(ids),
                        (b,) * len(ids),
                        winner.tolist(),
                        [f"{bench}:{item}" for item in item_arr[keep]],
                        strict=True,
                    )
                )
                written += len(ids)
    return written


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
@click.option(
    "--level",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="Confidence level of intervals and tests.",
)
@click.option(
    "--boot",
    "n_boot",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Bootstrap resamples.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="Random seed (default: fresh; the seed used is in the JSON output).",
)
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
    n_boot,
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

    With --seed N and no missing items, each interval equals
    arena.stats.bootstrap_ci / paired_bootstrap run with
    numpy.random.default_rng(N).

    Example:

    \b
        arena eval out/llama-3-8b/samples_arc_easy_2024-05-01T10-00-00.jsonl \\
                   out/mistral-7b/samples_arc_easy_2024-05-01T11-00-00.jsonl
        arena eval a.jsonl=model-a b.jsonl=model-b --seed 1 --format json
        arena eval results.csv --correction bh --to-battles battles.csv
        arena ingest battles.csv
    """
    import numpy as np

    from arena.stats import (
        adjust_pvalues,
        bootstrap_models,
        mcnemar_counts,
        wilson_interval,
    )
    from arena.stats.itemfile import item_sort_key

    data = _load(results, metric, filter_name)
    bench = _benchmark_name(data, benchmark) if battles_path else None
    models = data.models
    items = sorted({i for s in data.scores.values() for i in s}, key=item_sort_key)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    if not quiet:
        click.echo(
            f"{len(models)} models, {len(items)} items, {n_boot} resamples, seed {seed}", err=True
        )

    row_of = {item: r for r, item in enumerate(items)}
    correct = np.zeros((len(items), len(models)), dtype=np.int8)
    present = np.zeros_like(correct, dtype=bool)
    for j, m in enumerate(models):
        for item, value in data.scores[m].items():
            correct[row_of[item], j] = value
            present[row_of[item], j] = True

    missing: dict[str, list[str]] = {}
    for j, m in enumerate(models):
        if not present[:, j].all():
            missing[m] = [items[r] for r in np.flatnonzero(~present[:, j])]
            shown = ", ".join(missing[m][:_SHOW_MISSING]) + (
                ", ..." if len(missing[m]) > _SHOW_MISSING else ""
            )
            _warn(
                f"model {m!r} has no score for {len(missing[m])} of {len(items)} items "
                f"({shown}); its accuracy uses its {int(present[:, j].sum())} items, "
                "its pairs the items both models have"
            )

    try:
        boot = bootstrap_models(
            correct, np.random.default_rng(seed), present=present, n_boot=n_boot, level=level
        )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None

    order = sorted(range(len(models)), key=lambda j: (-boot.accuracy[j], models[j]))
    model_rows = []
    for rank, j in enumerate(order, 1):
        k, n = int(correct[:, j].sum()), int(boot.n_items[j])
        w = wilson_interval(k, n, level=level)
        model_rows.append(
            {
                "rank": rank,
                "model": models[j],
                "items": n,
                "correct": k,
                "accuracy": float(boot.accuracy[j]),
                "boot_low": float(boot.low[j]),
                "boot_high": float(boot.high[j]),
                "wilson_low": w.low,
                "wilson_high": w.high,
                "missing": len(missing.get(models[j], [])),
            }
        )

    pair_rows = []
    for x, i in enumerate(order):
        for j in order[x + 1 :]:
            both = present[:, i] & present[:, j]
            a_only = int(np.count_nonzero(both & (correct[:, i] == 1) & (correct[:, j] == 0)))
            b_only = int(np.count_nonzero(both & (correct[:, i] == 0) & (correct[:, j] == 1)))
            test = mcnemar_counts(a_only, b_only)
            pair_rows.append(
                {
                    "model_a": models[i],
                    "model_b": models[j],
                    "items": int(boot.shared[i, j]),
                    "a_only": a_only,
                    "b_only": b_only,
                    "diff": float(boot.diff[i, j]),
                    "low": float(boot.diff_low[i, j]),
                    "high": float(boot.diff_high[i, j]),
                    "p_mcnemar": test.pvalue,
                    "test": test.method,
                }
            )
    adjusted = adjust_pvalues([r["p_mcnemar"] for r in pair_rows], correction)
    alpha = 1.0 - level
    for row, p_adj in zip(pair_rows, adjusted, strict=True):
        row["p_adjusted"] = float(p_adj)
        if p_adj < alpha and row["a_only"] != row["b_only"]:
            better = row["model_a"] if row["a_only"] > row["b_only"] else row["model_b"]
            row["verdict"] = f"{better} better"
        else:
            row["verdict"] = "not significant"

    if battles_path:
        written = _write_battles(
            battles_path, models, items, correct, present, bench, skip_concordant
        )
        if not quiet:
            click.echo(f"wrote {written} battles to {battles_path}", err=True)

    if fmt == "json":
        emit(
            model_rows,
            _MODEL_COLUMNS,
            fmt,
            json_obj={
                "level": level,
                "n_boot": n_boot,
                "seed": seed,
                "correction": correction,
                "metric": metric,
                "items": len(items),
                "benchmarks": sorted(data.benchmarks),
                "models": model_rows,
                "pairs": pair_rows,
                "missing": missing,
            },
        )
        return
    emit(model_rows, _MODEL_COLUMNS, fmt)
    if pair_rows:
        if fmt == "table":
            click.echo()
        else:
            sys.stdout.write("\n")
            sys.stdout.flush()
        emit(pair_rows, _PAIR_COLUMNS, fmt)


COMMANDS = [eval_command]
