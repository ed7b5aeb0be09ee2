"""``arena eval`` on scores of any metric: design columns, components, ratio metrics, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.helpers.cli import run_file_command

run = run_file_command


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """Three models, 40 items, judge scores 1-10 under 2 templates x 3 seeds."""
    g = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("scores") / "judged.csv"
    difficulty = g.normal(0, 1.5, 40)
    template = {"t1": 0.3, "t2": -0.3}
    lines = ["model,item,score,seed,prompt"]
    for model, skill in (("strong", 7.0), ("mid", 6.0), ("mid2", 6.1)):
        for i in range(40):
            for p, shift in template.items():
                for s in range(3):
                    y = skill + difficulty[i] + shift + g.normal(0, 0.7)
                    lines.append(f"{model},q{i},{y:.2f},{s},{p}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_real_scores_with_runs_json(judged):
    doc = json.loads(run(["eval", str(judged), "--components", "--rounds", "400", "--format", "json", "-q"]).stdout)  # fmt: skip
    assert doc["axes"] == ["seed", "prompt"] and doc["rounds"] == 400
    models = {m["model"]: m for m in doc["models"]}
    assert [m["model"] for m in doc["models"]][0] == "strong"
    for m in models.values():
        assert m["low"] < m["mean"] < m["high"] and isinstance(m["items"], int)
        # The item-only floor is narrower than the interval over every axis.
        assert m["floor_high"] - m["floor_low"] < m["high"] - m["low"]
    pairs = {(p["model_a"], p["model_b"]): p for p in doc["pairs"]}
    assert pairs["strong", "mid2"]["verdict"] == "strong better"
    assert pairs["mid2", "mid"]["verdict"] == "not significant"
    assert all(p["decided_by"] == "two-stage bootstrap" and p["reason"] for p in doc["pairs"])
    # ranks are what the verdicts back, not 1, 2, 3 (issue 11)
    assert "rank" not in models["strong"]
    assert (models["strong"]["rank_ub"], models["strong"]["tier"]) == (1, 1)
    assert models["mid2"]["rank_ub"] >= 2 and models["mid2"]["tier"] >= 2
    assert (
        models["mid"]["rank_ub"] == models["mid2"]["rank_ub"]
        or pairs["mid2", "mid"]["verdict"] != "not significant"
    )
    comp = doc["components"]["strong"]
    assert set(comp["components"]) >= {"item", "prompt", "seed", "residual"}
    assert {"as run", "2x items", "2x seeds", "2x prompts"} == set(comp["budget"])
    assert comp["budget"]["2x items"] < comp["budget"]["as run"]


def test_table_says_which_test_decided(judged):
    out = run(["eval", str(judged), "--rounds", "200", "-q", "--item-only"]).stdout
    assert "decided by permutation" in out and "normality" in out
    assert "floor low" in out  # the table says words; CSV and JSON keep floor_low


def test_ratio_metric(tmp_path):
    g = np.random.default_rng(1)
    lines = ["model,item,bits,bytes,group"]
    for i in range(30):
        size = int(g.integers(300, 3000))
        for model, bpb in (("a", 0.8), ("b", 0.9)):
            lines.append(f"{model},chunk{i},{size * (bpb + g.normal(0, 0.02)):.1f},{size},doc{i // 3}")  # fmt: skip
    path = tmp_path / "bpb.csv"
    path.write_text("\n".join(lines) + "\n")
    doc = json.loads(run(["eval", str(path), "--numerator", "bits", "--denominator", "bytes", "--format", "json", "-q"]).stdout)  # fmt: skip
    assert doc["metric"] == "bits/bytes" and doc["grouped"] is True
    (pair,) = doc["pairs"]
    assert pair["decided_by"] == "cluster bootstrap" and pair["high"] < 0 or pair["low"] > 0


@pytest.mark.parametrize(
    "content, args, needle",
    [
        ("model,item,score\na,1,0.3\na,2,x\n", [], "bad.csv:3: field 'score': not a number: 'x'"),
        ("model,item,score,seed\na,1,0.3,1\na,1,0.4,1\n", [], "bad.csv:3: design cell repeated"),
        ("model,item,score\na,1,0.3\nb,2,0.4\n", [], "no items in common: field 'item'"),
        (
            "model,item,score\na,1,0.3\nb,1,0.4\n",
            ["--test", "mcnemar"],
            "bad.csv:2: field 'score': 0.3 is not 0 or 1",
        ),  # fmt: skip
        (
            "model,item,bits\na,1,3\n",
            ["--numerator", "bits", "--denominator", "bytes"],
            "bad.csv:1: field 'bytes': missing column",
        ),  # fmt: skip
        (
            "model,item,score,seed\na,1,1,1\na,1,0,2\n",
            ["--to-battles", "x.csv"],
            "--to-battles needs plain 0/1 scores",
        ),  # fmt: skip
    ],
)
def test_bad_input_is_a_one_line_error(tmp_path, content, args, needle):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    result = run(["eval", str(path), *args], ok=False)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1 and needle in result.output
