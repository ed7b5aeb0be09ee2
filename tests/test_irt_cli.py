"""``arena irt fit / select / adapt`` through the click group."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.special import expit

from arena.cli import cli
from tests.helpers.cli import run_file_command

run = run_file_command


@pytest.fixture(scope="module")
def results_csv(tmp_path_factory):
    g = np.random.default_rng(0)
    a = g.uniform(0.6, 2.0, 120)
    b = g.normal(0, 1.2, 120)
    theta = np.linspace(-1.5, 1.5, 16)
    y = (g.random((16, 120)) < expit(a * (theta[:, None] - b))).astype(int)
    path = tmp_path_factory.mktemp("irt") / "results.csv"
    with path.open("w") as fh:
        fh.write("model,item,score\n")
        for m in range(16):
            for i in range(120):
                fh.write(f"m{m:02d},q{i},{y[m, i]}\n")
    return path


def test_fit_json_saves_a_reusable_bank(results_csv, tmp_path):
    bank = tmp_path / "bank.json"
    doc = json.loads(run(["irt", "fit", str(results_csv), "--save", str(bank), "--format", "json", "-q"]).stdout)  # fmt: skip
    assert {"item", "discrimination", "difficulty"} <= set(doc["items"][0])
    assert isinstance(doc["log_likelihood"], float) and doc["model"] == "2PL"
    abilities = doc["abilities"]
    assert len(abilities) == 16 and isinstance(abilities[0]["items"], int)
    # Models were simulated with increasing ability: the estimates keep that order closely.
    order = [int(r["model"][1:]) for r in abilities]
    assert order[0] >= 12 and order[-1] <= 3
    saved = json.loads(bank.read_text())
    assert saved["items"] == doc["items"]
    sim = json.loads(run(["irt", "adapt", str(bank), "--simulate", "30", "--format", "json", "-q"]).stdout)  # fmt: skip
    assert sim["examinees"] == 30 and 1 <= sim["adaptive_mean_items"] <= 40
    again = run(["irt", "adapt", str(bank), "--simulate", "30", "--format", "json", "-q"]).stdout
    assert json.loads(again) == sim


def test_select_reports_held_out_validation(results_csv):
    doc = json.loads(run(["irt", "select", str(results_csv), "--n", "25", "--holdout", "5", "--format", "json", "-q"]).stdout)  # fmt: skip
    assert doc["n"] == 25 and len(doc["items"]) == 25 and len(doc["heldout_models"]) == 5
    assert doc["pairs"] == 10 and 0 <= doc["same_order"] <= 1
    assert doc["spearman"] > 0.5


def test_select_with_too_few_held_out_models_reports_no_correlation(results_csv):
    """Two held-out models agree in order half the time by chance: no 'spearman 1.0'."""
    result = CliRunner().invoke(
        cli, ["irt", "select", str(results_csv), "--n", "25", "--holdout", "2", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["spearman"] is None and doc["kendall"] is None and doc["pairs"] <= 1
    assert "too few for a rank correlation" in result.stderr


def test_bad_input_is_one_line(results_csv, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("model,item,score\na,1,1\na,2,0.5\n")
    result = run(["irt", "fit", str(bad)], ok=False)
    assert result.exit_code != 0 and "bad.csv:3: field 'score'" in result.output
    assert "Traceback" not in result.output
    broken = tmp_path / "bank.json"
    broken.write_text('{"model": "2PL", "items": [{"item": "x"}]}')
    result = run(["irt", "adapt", str(broken)], ok=False)
    assert result.exit_code != 0 and "bank.json: items[1]" in result.output


def test_fit_1pl_on_lsat6_prints_the_published_rasch_fit(tmp_path):
    from tests.helpers.lsat import RASCH_A, RASCH_B, lsat6

    y = lsat6()
    path = tmp_path / "lsat.csv"
    rows = [f"s{p:04d},item{i + 1},{y[p, i]}" for p in range(y.shape[0]) for i in range(5)]
    path.write_text("model,item,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    doc = json.loads(run(["irt", "fit", str(path), "--model", "1pl", "--no-prior", "--format", "json", "-q"]).stdout)  # fmt: skip
    assert doc["model"] == "1PL"
    assert [r["difficulty"] for r in doc["items"]] == pytest.approx(RASCH_B, abs=2e-3)
    assert {round(r["discrimination"], 3) for r in doc["items"]} == {round(RASCH_A, 3)}


def test_fit_is_the_front_doors_irt_fit(results_csv):
    """``arena.irt_fit`` (options named as the flags) gives ``arena irt fit --format json``."""
    import arena
    from arena.core.formats import to_json

    for args, kwargs in [
        ([], {}),
        (["--model", "1pl", "--abilities", "map", "--no-prior"], dict(model="1pl", abilities="map", no_prior=True)),
    ]:  # fmt: skip
        out = run(["irt", "fit", str(results_csv), *args, "--format", "json", "-q"]).stdout
        assert out == to_json(arena.irt_fit([str(results_csv)], **kwargs).to_dict()) + "\n"


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_select_and_adapt_are_the_front_doors_irt_select_and_irt_adapt(results_csv, tmp_path):
    """``arena.irt_select`` / ``arena.irt_adapt`` (options named as the flags) give the
    commands' ``--format json`` documents, for the defaults and for other values."""
    import arena
    from arena.core.formats import to_json

    for args, kwargs in [
        (["--n", "25"], dict(n=25)),
        (["--n", "15", "--holdout", "5", "--seed", "3", "--level", "0.9", "--no-prior"], dict(n=15, holdout=5, seed=3, level=0.9, no_prior=True)),
    ]:  # fmt: skip
        out = run(["irt", "select", str(results_csv), *args, "--format", "json", "-q"]).stdout
        assert out == to_json(arena.irt_select([str(results_csv)], **kwargs).to_dict()) + "\n"
    bank = tmp_path / "bank.json"
    run(["irt", "fit", str(results_csv), "--save", str(bank), "-q"])
    for args, kwargs in [
        ([], {}),
        (["--simulate", "40", "--se", "0.4", "--max-items", "20", "--seed", "5"], dict(simulate=40, se=0.4, max_items=20, seed=5)),
    ]:  # fmt: skip
        out = run(["irt", "adapt", str(bank), *args, "--format", "json", "-q"]).stdout
        assert out == to_json(arena.irt_adapt(str(bank), **kwargs).to_dict()) + "\n"
    # a library error names the parameter, not the flag
    with pytest.raises(arena.OptionError, match="max_items"):
        arena.irt_adapt(str(bank), max_items=0)
