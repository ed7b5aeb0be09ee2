"""Reading scores of any metric with design columns, and evaluating them (library level)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.special import expit

from arena.evals.itemeval import ScoreError, evaluate_scores
from arena.evals.itemfile import ItemFileError
from arena.evals.scorefile import read_scores
from arena.evals.subset import validate_subset


def _write(path, text):
    path.write_text(text)
    return str(path)


def test_real_scores_with_design_columns(tmp_path):
    g = np.random.default_rng(0)
    lines = ["model,item,score,run,prompt,judge,group"]
    difficulty = g.normal(0, 1, 30)
    for m, shift in (("a", 0.5), ("b", 0.0)):
        for i in range(30):
            base = difficulty[i]
            for s in range(3):
                lines.append(
                    f"{m},q{i},{base + shift + g.normal(0, 0.3):.4f},{s},p0,j0,doc{i // 3}"
                )
    path = _write(tmp_path / "s.csv", "\n".join(lines) + "\n")
    table = read_scores([path])
    assert table.axes == ["seed"] and table.group is not None and not table.binary
    ev = evaluate_scores(table, rounds=300, components=True)
    assert [m.model for m in ev.models] == ["a", "b"]
    assert ev.models[0].interval.startswith("two-stage bootstrap: groups, then seed")
    (pair,) = ev.pairs
    assert pair.decided_by == "two-stage bootstrap" and "seed" in pair.reason
    assert pair.verdict == "a better" and pair.low > 0
    assert set(ev.components["a"].components) >= {"item", "seed", "residual"}
    again = evaluate_scores(read_scores([path]), rounds=300, components=True)
    assert again.pairs == ev.pairs and again.models == ev.models  # same seed, same numbers


def test_bad_input_names_file_line_and_field(tmp_path):
    bad = _write(tmp_path / "bad.csv", "model,item,score\na,1,0.5\na,2,high\n")
    with pytest.raises(ItemFileError, match=r"bad.csv:3: field 'score': not a number: 'high'"):
        read_scores([bad])
    rep = _write(tmp_path / "rep.csv", "model,item,score,seed\na,1,0.5,1\na,2,0.1,1\na,1,0.7,1\n")
    with pytest.raises(
        ItemFileError, match=r"rep.csv:4: design cell repeated: .* already at .*rep.csv:2"
    ):
        read_scores([rep])
    real = _write(tmp_path / "real.csv", "model,item,score\na,1,1\na,2,0.25\nb,1,0\nb,2,1\n")
    with pytest.raises(ScoreError, match=r"real.csv:3: field 'score': 0.25 is not 0 or 1: McNemar"):
        evaluate_scores(read_scores([real]), test="mcnemar")
    apart = _write(tmp_path / "apart.csv", "model,item,score\na,1,0.5\na,2,0.1\nb,3,0.2\nb,4,0.9\n")
    with pytest.raises(ScoreError, match=r"no items in common: field 'item'"):
        evaluate_scores(read_scores([apart]))


def test_harness_runs_of_one_model_are_joined(tmp_path):
    for seed in (1, 2, 3):
        folder = tmp_path / f"seed{seed}" / "model-x"
        folder.mkdir(parents=True)
        rows = [{"doc_id": i, "acc": int((i + seed) % 3 != 0)} for i in range(12)]
        (folder / "samples_arc_2024-05-01T10-00-00.jsonl").write_text(
            "\n".join(json.dumps(r) for r in rows)
        )
    files = sorted(str(p) for p in tmp_path.rglob("*.jsonl"))
    table = read_scores(files)
    assert table.models == ["model-x"] and table.axes == ["seed"] and len(table.model) == 36


def test_bits_per_byte_from_numerator_and_denominator(tmp_path):
    g = np.random.default_rng(1)
    lines = ["model,item,bits,bytes,group"]
    for i in range(40):
        size = int(g.integers(200, 4000))
        for m, bpb in (("a", 0.80), ("b", 0.85)):
            lines.append(f"{m},c{i},{size * (bpb + g.normal(0, 0.01)):.2f},{size},d{i // 4}")
    path = _write(tmp_path / "bpb.csv", "\n".join(lines) + "\n")
    table = read_scores([path], numerator="bits", denominator="bytes")
    ev = evaluate_scores(table, metric="bits_per_byte", rounds=400)
    best = ev.models[-1]  # lower is better for bits per byte; the table is sorted by value
    bits = np.array([float(r.split(",")[2]) for r in lines[1:] if r.startswith("a,")])
    size = np.array([float(r.split(",")[3]) for r in lines[1:] if r.startswith("a,")])
    assert best.model == "a" and best.mean == pytest.approx(bits.sum() / size.sum())
    assert "ratio of sums" in best.interval
    (pair,) = ev.pairs
    assert pair.decided_by == "cluster bootstrap" and pair.high < 0 or pair.low > 0


def test_subset_keeps_the_ranking_of_held_out_models():
    g = np.random.default_rng(2)
    a = g.uniform(0.5, 2.0, 600)
    b = g.normal(0, 1.2, 600)
    theta = g.normal(0, 1, 40)
    y = (g.random((40, 600)) < expit(a * (theta[:, None] - b))).astype(float)
    v = validate_subset(y, np.random.default_rng(3), n=60, holdout=12)
    assert v.heldout.size == 12 and len(v.selection.items) == 60
    assert v.spearman > 0.9 and v.same_order > 0.8 and v.not_contradicted > 0.95
