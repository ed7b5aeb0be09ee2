"""Tests of ``arena eval`` through the click group."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import run_file_command
from tests.helpers.paths import DATA, X_FILE, Y_FILE

#: The worked example's intervals move by about one item (1/200) with the seed.
EXAMPLE_TOL = 0.0101


run = run_file_command


def write_worked_example(path: Path) -> Path:
    """A right on 124 of 200, B on 120; 6 only A, 2 only B (items shuffled)."""
    a = [1] * 118 + [1] * 6 + [0] * 2 + [0] * 74
    b = [1] * 118 + [0] * 6 + [1] * 2 + [0] * 74
    order = np.random.default_rng(0).permutation(200)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "item", "score"])
        for i in order:
            w.writerow(["model-a", f"q{i}", a[i]])
        for i in order[::-1]:
            w.writerow(["model-b", f"q{i}", b[i]])
    return path


def test_worked_example_json(tmp_path):
    path = write_worked_example(tmp_path / "example.csv")
    doc = json.loads(run(["eval", str(path), "--seed", "0", "--format", "json"]).stdout)
    models = {m["model"]: m for m in doc["models"]}
    assert models["model-a"]["accuracy"] == pytest.approx(0.62)
    assert models["model-b"]["accuracy"] == pytest.approx(0.60)
    assert models["model-a"]["items"] == 200 and models["model-a"]["correct"] == 124
    assert (models["model-a"]["boot_low"], models["model-a"]["boot_high"]) == pytest.approx(
        (0.555, 0.685), abs=EXAMPLE_TOL
    )
    assert models["model-a"]["wilson_low"] == pytest.approx(0.5511, abs=1e-4)
    (pair,) = doc["pairs"]
    assert (pair["model_a"], pair["model_b"]) == ("model-a", "model-b")
    assert (pair["a_only"], pair["b_only"], pair["items"]) == (6, 2, 200)
    assert pair["diff"] == pytest.approx(0.02)
    assert (pair["low"], pair["high"]) == pytest.approx((-0.005, 0.05), abs=EXAMPLE_TOL)
    assert pair["p_mcnemar"] == pytest.approx(0.2890625)  # 2 * P[Bin(8, 1/2) <= 2]
    assert pair["verdict"] == "not significant"
    assert doc["seed"] == 0 and doc["missing"] == {}
    # not separated: no 1, 2 that the test does not back (issue 11)
    for m in doc["models"]:
        assert "rank" not in m
        assert (m["rank_ub"], m["rank_lb"], m["tier"]) == (1, 2, 1)


def test_same_seed_same_output(tmp_path):
    path = write_worked_example(tmp_path / "example.csv")
    args = ["eval", str(path), "--seed", "3", "--boot", "300", "--format", "json"]
    assert run(args).stdout == run(args).stdout


def test_clear_difference_is_significant_after_correction(tmp_path):
    path = tmp_path / "three.csv"
    g = np.random.default_rng(1)
    with path.open("w") as fh:
        fh.write("model,item,score\n")
        for name, p in (("strong", 0.9), ("weak", 0.5), ("weak2", 0.5)):
            for i, s in enumerate(g.random(300) < p):
                fh.write(f"{name},{i},{int(s)}\n")
    doc = json.loads(
        run(["eval", str(path), "--seed", "1", "--format", "json", "--correction", "bh"]).stdout
    )
    assert [m["model"] for m in doc["models"]][0] == "strong"
    verdicts = {(p["model_a"], p["model_b"]): p["verdict"] for p in doc["pairs"]}
    assert len(verdicts) == 3
    assert verdicts["strong", "weak"] == "strong better"
    for p in doc["pairs"]:
        assert p["p_adjusted"] >= p["p_mcnemar"]
        assert p["low"] <= p["diff"] <= p["high"]
    models = {m["model"]: m for m in doc["models"]}
    assert (models["strong"]["rank_ub"], models["strong"]["tier"]) == (1, 1)
    assert models["weak"]["rank_ub"] == 2 and models["weak"]["tier"] == 2
    assert models["weak"]["rank_lb"] == 3 and models["weak2"]["rank_lb"] == 3


def test_harness_samples_names_and_missing_items():
    result = run(["eval", str(X_FILE), str(Y_FILE), "--seed", "0", "--format", "json"])
    doc = json.loads(result.stdout)
    models = {m["model"]: m for m in doc["models"]}
    assert set(models) == {"model-x", "model-y"}  # named after the harness's model folder
    assert models["model-x"]["items"] == 10 and models["model-y"]["items"] == 9
    assert models["model-y"]["missing"] == 1 and doc["missing"] == {"model-y": ["9"]}
    assert doc["benchmarks"] == ["arc_easy"]
    (pair,) = doc["pairs"]
    assert pair["items"] == 9  # shared items only
    assert "model-y" in result.stderr and "no score for 1 of 10 items" in result.stderr


def test_path_equals_name_and_metric(tmp_path):
    args = [
        "eval",
        f"{X_FILE}=x",
        f"{Y_FILE}=y",
        "--metric",
        "acc_norm",
        "--seed",
        "0",
        "--format",
        "json",
        "-q",
    ]
    result = run(args)
    doc = json.loads(result.stdout)
    assert {m["model"] for m in doc["models"]} == {"x", "y"}
    acc = {m["model"]: m["correct"] for m in doc["models"]}
    assert acc == {"x": 5, "y": 4}  # acc_norm flips docs 0 and 1 in the fixture
    assert "resamples" not in result.stderr  # -q hides progress


def test_table_and_csv_formats():
    table = run(["eval", str(DATA / "eval_results.csv"), "--seed", "0", "-q"]).stdout
    assert (
        "alpha" in table and "verdict" in table and "wilson low" in table
    )  # words; CSV keeps keys
    out = run(["eval", str(DATA / "eval_results.csv"), "--seed", "0", "--format", "csv"]).stdout
    models_part, pairs_part = out.strip().split("\n\n")
    rows = list(csv.DictReader(models_part.splitlines()))
    assert [r["model"] for r in rows] == ["alpha", "beta"]
    assert float(rows[0]["accuracy"]) == pytest.approx(0.75)
    (pair,) = list(csv.DictReader(pairs_part.splitlines()))
    assert pair["a_only"] == "1" and pair["b_only"] == "0"


def _battles(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_to_battles(tmp_path):
    out = tmp_path / "battles.csv"
    run(["eval", str(X_FILE), str(Y_FILE), "--to-battles", str(out), "-q"])
    rows = _battles(out)
    assert list(rows[0]) == ["id", "model_a", "model_b", "winner", "question_id"]
    assert len(rows) == 9  # one per shared item
    assert len({r["id"] for r in rows}) == len(rows)
    by_item = {r["id"].split(":")[2]: r for r in rows}
    assert by_item["0"]["id"] == "eval:arc_easy:0:model-x:model-y"
    assert by_item["0"]["winner"] == "tie"  # both right
    assert by_item["4"]["winner"] == "model_a"  # only x right
    assert by_item["7"]["winner"] == "model_b"  # only y right
    assert "9" not in by_item  # model-y has no doc 9
    assert {r["model_a"] for r in rows} == {"model-x"}  # alphabetical order

    skipped = tmp_path / "discordant.csv"
    run(["eval", str(Y_FILE), str(X_FILE), "--to-battles", str(skipped), "--skip-concordant", "-q"])
    disc = _battles(skipped)
    assert sorted(r["winner"] for r in disc) == ["model_a"] * 3 + ["model_b"] * 2
    # Stable ids: same battles whatever the order of the input files.
    assert {r["id"] for r in disc} <= {r["id"] for r in rows}


def test_to_battles_needs_one_benchmark_name(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("model,item,score\nm1,1,1\nm1,2,0\n")
    b.write_text("model,item,score\nm2,1,0\nm2,2,0\n")
    out = tmp_path / "battles.csv"
    result = run(["eval", str(a), str(b), "--to-battles", str(out)], ok=False)
    assert result.exit_code == 1 and "--benchmark" in result.output
    run(["eval", str(a), str(b), "--to-battles", str(out), "--benchmark", "mini", "-q"])
    assert {r["id"] for r in _battles(out)} == {"eval:mini:1:m1:m2", "eval:mini:2:m1:m2"}


def test_battles_are_accepted_by_ingest(run_cli, tmp_path):
    out = tmp_path / "battles.csv"
    run(["eval", str(X_FILE), str(Y_FILE), "--to-battles", str(out), "-q"])
    assert "9 inserted" in run_cli("ingest", str(out)).output


@pytest.mark.parametrize(
    "content, needle",
    [
        (
            "model,item,score\nalpha,q1,1\nalpha,q2,high\n",
            ":3: field 'score': not a number: 'high'",
        ),
        ("model,item\nalpha,q1\n", ":1: field 'score': missing column"),
        ("model,item,score\nalpha,q1,1\nalpha,q1,0\n", ":3: duplicate item 'q1' for model 'alpha'"),
        ("model,item,score\nalpha,,1\n", ":2: field 'item': missing"),
        ("", ":1: empty file"),
        ("model,item,score\n", "no data rows"),
    ],
)
def test_malformed_csv_is_a_one_line_error(tmp_path, content, needle):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    result = run(["eval", str(path)], ok=False)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    message = result.output.strip().splitlines()[-1]
    assert message.startswith(f"Error: {path}") and needle in message


@pytest.mark.parametrize(
    "lines, args, needle",
    [
        (['{"doc_id": 0, "acc": 1}', '{"doc_id": 1}'], [], ":2: field 'acc': missing"),
        (['{"doc_id": 0, "acc": 1}', "{not json"], [], ":2: invalid JSON"),
        (['{"acc": 1}'], [], ":1: field 'doc_id': missing"),
        (['{"doc_id": 0, "acc": "n/a"}'], [], ":1: field 'acc': not a number: 'n/a'"),
        (
            [
                '{"doc_id": 0, "acc": 1, "filter": "strict"}',
                '{"doc_id": 0, "acc": 0, "filter": "flex"}',
            ],
            [],
            "choose one",
        ),
    ],
)
def test_malformed_samples_are_one_line_errors(tmp_path, lines, args, needle):
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = run(["eval", str(path), *args], ok=False)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert needle in result.output


def test_fixture_with_a_real_score_is_a_real_metric_but_not_for_mcnemar():
    path = DATA / "eval_bad_score.csv"
    doc = json.loads(run(["eval", str(path), "--format", "json", "-q"]).stdout)
    assert doc["models"][0]["mean"] == pytest.approx(0.75) and doc["pairs"] == []
    result = run(["eval", str(path), "--test", "mcnemar"], ok=False)
    assert result.exit_code == 1
    assert result.output.strip().startswith(
        f"Error: {path}:3: field 'score': 0.5 is not 0 or 1: McNemar's test needs 0/1 scores"
    )


def test_filter_selects_records(tmp_path):
    path = tmp_path / "gsm.jsonl"
    path.write_text(
        '{"doc_id": 0, "exact_match": 1, "filter": "strict"}\n'
        '{"doc_id": 0, "exact_match": 0, "filter": "flex"}\n'
    )
    doc = json.loads(
        run(
            [
                "eval",
                f"{path}=m",
                "--metric",
                "exact_match",
                "--filter",
                "flex",
                "--format",
                "json",
                "-q",
            ]
        ).stdout
    )
    assert doc["models"][0]["correct"] == 0


def test_missing_file_and_bad_options(tmp_path):
    result = run(["eval", str(tmp_path / "nope.csv")], ok=False)
    assert result.exit_code == 1 and "no such file" in result.output
    result = run(["eval", str(DATA / "eval_results.csv"), "--level", "1.5"], ok=False)
    assert result.exit_code == 1 and "Error: --level must be greater than 0" in result.output
    result = run(["eval"], ok=False)
    assert result.exit_code == 2


def test_help_has_example():
    out = run(["eval", "--help"]).output
    assert "Example:" in out and "PATH=NAME" in out and "--to-battles" in out
