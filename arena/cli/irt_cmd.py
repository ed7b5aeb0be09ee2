"""``arena irt``: calibrate a 2PL item bank, pick informative subsets, run adaptive tests."""

from __future__ import annotations

import click

from arena.cli.options import format_option, level_option, quiet_option, seed_option
from arena.cli.output import emit

_PRIOR_HELP = (
    "SD of the normal priors on a (mean 1) and the intercept d (mean 0); keeps items that "
    "separate the models perfectly finite. --no-prior for pure maximum likelihood (as ltm)."
)


def _say(quiet: bool, message: str) -> None:
    if not quiet:
        click.echo(message, err=True)


@click.group("irt")
def irt_group():
    """Item response theory: 2PL item banks, informative subsets, adaptive tests.

    Example:

    \b
        arena irt fit results.csv --save bank.json
        arena irt select results.csv --n 100 --holdout 10
        arena irt adapt bank.json --simulate 500 --se 0.3
    """


_results_options = [
    click.argument("results", nargs=-1, required=True, metavar="RESULTS..."),
    click.option(
        "--metric",
        default="acc",
        show_default=True,
        help="Per-item metric key in lm-eval-harness samples.",
    ),  # fmt: skip
    click.option(
        "--filter",
        "filter_name",
        default=None,
        help="lm-eval-harness filter when a file holds several.",
    ),  # fmt: skip
    click.option(
        "--prior-sd",
        type=click.FloatRange(min=0, min_open=True),
        default=2.0,
        show_default=True,
        help=_PRIOR_HELP,
    ),  # fmt: skip
    click.option("--no-prior", is_flag=True, help="Pure marginal maximum likelihood (no priors)."),
]


def _with(options):
    def decorate(f):
        for opt in reversed(options):
            f = opt(f)
        return f

    return decorate


@irt_group.command("fit")
@_with(_results_options)
@click.option("--abilities", "method", type=click.Choice(["eap", "map"]), default="eap", show_default=True, help="How model abilities are estimated.")  # fmt: skip
@click.option("--model", "irt_model", type=click.Choice(["2pl", "1pl"]), default="2pl", show_default=True, help="2pl: a discrimination per item; 1pl (Rasch): one discrimination shared by every item.")  # fmt: skip
@click.option("--save", "save_path", type=click.Path(dir_okay=False), default=None, help="Write the item bank (JSON) for `irt select --bank` / `irt adapt`.")  # fmt: skip
@format_option
@quiet_option
def irt_fit(results, metric, filter_name, prior_sd, no_prior, method, irt_model, save_path, fmt, quiet):  # fmt: skip
    """Calibrate a 2PL (or 1PL, Rasch) item bank from many models' 0/1 results.

    RESULTS are read as by `arena eval` (lm-eval-harness samples or CSV
    model,item,score with 0/1 scores); each model is an examinee. Marginal
    maximum likelihood (EM over Gauss-Hermite quadrature, or a fine uniform
    grid when models answer so many items that their posteriors are narrower
    than the Gauss-Hermite nodes), abilities N(0, 1); standard errors from
    the observed information (Louis). Items everyone got right (or wrong)
    carry no information and are listed as dropped. --model 1pl fits the
    Rasch model as ltm::rasch does: P = expit(a (theta - b_i)) with one a for
    every item (equivalently, abilities with SD a and unit slopes).

    --format json: {"items": [{"item", "discrimination", "difficulty",
    "se_discrimination", "se_difficulty"}], "log_likelihood", "abilities":
    [{"model", "theta", "se", "items"}], ...}.

    Example:

    \b
        arena irt fit out/*/samples_mmlu_*.jsonl --save mmlu-bank.json
        arena irt fit results.csv --no-prior --format json
        arena irt fit results.csv --model 1pl --no-prior
    """
    from arena.evals.irt_files import irt_fit as fit

    result = fit(
        list(results),
        metric=metric,
        filter_name=filter_name,
        prior_sd=prior_sd,
        no_prior=no_prior,
        abilities=method,
        model=irt_model,
        save=save_path,
    )
    bank = result.bank
    _say(quiet, f"calibrated {result.n_items} items ({irt_model.upper()}) on {result.n_models} models")  # fmt: skip
    _say(quiet, f"{bank.iterations} EM iterations, {bank.quadrature}, {len(bank.dropped)} items dropped")  # fmt: skip
    for message in result.warnings:
        click.echo(f"warning: {message}", err=True)
    if save_path:
        _say(quiet, f"wrote the bank to {save_path}")
    doc = result.to_dict()
    if fmt == "json":
        emit([], [], fmt, json_obj=doc)
        return
    item_cols = ["item", "discrimination", "se_discrimination", "difficulty", "se_difficulty"]
    emit(doc["items"], item_cols, fmt)
    click.echo()
    emit(doc["abilities"], ["model", "theta", "se", "items"], fmt)


@irt_group.command("select")
@_with(_results_options)
@click.option("--n", "n_items", type=click.IntRange(min=1), required=True, help="Subset size.")
@click.option("--holdout", type=click.IntRange(min=2), default=None, help="Models held out for validation [default: a fifth, at least 2].")  # fmt: skip
@seed_option
@level_option
@format_option
@quiet_option
def irt_select(results, metric, filter_name, prior_sd, no_prior, n_items, holdout, seed, level, fmt, quiet):  # fmt: skip
    """Pick N items whose scores recover the full benchmark's ranking, checked on held-out models.

    The bank is calibrated on all models but the held-out ones; N items are
    chosen greedily to be informative over the training models' abilities
    (summed log test information). Each held-out model is then scored on the
    N items alone and compared with its accuracy on every item: rank
    correlations, the share of pairs in the same order, the share not
    contradicted (same order, or the subset's interval for the difference
    includes 0) and the share resolved (subset confident and right).

    Example:

    \b
        arena irt select results.csv --n 100 --holdout 10 --format json
    """
    from arena.evals.irt_files import irt_select as select

    _say(quiet, f"calibrating, then validating {n_items} items on held-out models ...")
    result = select(
        list(results), n=n_items, metric=metric, filter_name=filter_name, prior_sd=prior_sd,
        no_prior=no_prior, holdout=holdout, seed=seed, level=level,
    )  # fmt: skip
    for message in result.warnings:
        _say(quiet, f"warning: {message}")
    _say(quiet, f"held out {len(result.heldout_models)} models: {', '.join(result.heldout_models)}")
    if fmt == "json":
        emit([], [], fmt, json_obj=result.to_dict())
        return
    chosen = [dict(i) for i in result.items]
    if fmt == "table":
        summary = result.summary()
        rows = [{"measure": k, "value": summary[k]} for k in ("n", "spearman", "kendall", "pairs", "same_order", "not_contradicted", "resolved")]  # fmt: skip
        emit(rows, ["measure", "value"], fmt)
        click.echo()
    emit(chosen, ["item", "discrimination", "difficulty"], fmt)


@irt_group.command("adapt")
@click.argument("bank_path", metavar="BANK")
@click.option("--simulate", "n_sim", type=click.IntRange(min=1), default=200, show_default=True, help="Simulated examinees (abilities N(0, 1)).")  # fmt: skip
@click.option("--se", "se_target", type=click.FloatRange(min=0, min_open=True), default=0.3, show_default=True, help="Stop when the ability's standard error reaches this.")  # fmt: skip
@click.option("--max-items", type=click.IntRange(min=1), default=40, show_default=True, help="Longest adaptive test.")  # fmt: skip
@seed_option
@format_option
@quiet_option
def irt_adapt(bank_path, n_sim, se_target, max_items, seed, fmt, quiet):
    """Simulate computerized adaptive tests on a saved bank; compare with fixed tests.

    Each simulated examinee gets the most informative unused item at the
    current ability estimate (EAP) until the standard error reaches --se or
    --max-items are given. The report gives the items used, and how long a
    fixed test must be for the same share of examinees to reach the same
    precision: with the most informative items in a fixed order, and with
    items in a random order (a random subset of the benchmark). In Python,
    arena.evals.adaptive_test(bank, answer) runs a test against any model
    through an answer(item) callback.

    Example:

    \b
        arena irt fit results.csv --save bank.json
        arena irt adapt bank.json --simulate 500 --se 0.3 --max-items 40
    """
    from arena.evals.irt_files import irt_adapt as adapt
    from arena.evals.irt_files import load_bank

    bank = load_bank(bank_path)
    _say(quiet, f"simulating {n_sim} adaptive tests on {len(bank.items)} items ...")
    doc = adapt(bank, simulate=n_sim, se=se_target, max_items=max_items, seed=seed).to_dict()
    if fmt == "json":
        emit([], [], fmt, json_obj=doc)
        return
    emit([{"measure": k, "value": v} for k, v in doc.items()], ["measure", "value"], fmt)


COMMANDS = [irt_group]
