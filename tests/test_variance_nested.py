"""Variance components of nested designs: lme4's Dyestuff, nested seeds, confounded factors.

Dyestuff (tests/data/dyestuff.csv, attribution in dyestuff.README.md): the
published lme4 REML fit is batch variance 1764.0, residual 2451.3, intercept
1527.50 with SE 19.38 (Bates 2010, ch. 1); on balanced data the ANOVA
(method of moments) estimates are the REML ones when positive.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from arena.evals import variance_components

DATA = Path(__file__).parent / "data" / "dyestuff.csv"
#: lme4's printed estimates (4 significant digits).
LME4_BATCH, LME4_RESIDUAL, LME4_MEAN, LME4_SE = 1764.0, 2451.3, 1527.50, 19.38


def _dyestuff():
    with DATA.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return np.array([float(r["score"]) for r in rows]), np.array([r["item"] for r in rows])


def test_dyestuff_replicates_match_lme4():
    y, batch = _dyestuff()
    vc = variance_components(y, item=batch)
    assert vc.components["item"] == pytest.approx(LME4_BATCH, abs=0.1)
    assert vc.components["residual"] == pytest.approx(LME4_RESIDUAL, abs=0.1)
    assert vc.mean == pytest.approx(LME4_MEAN, abs=0.005)
    assert vc.se == pytest.approx(LME4_SE, abs=0.005)
    assert vc.balanced and vc.replicates == 5.0 and vc.nested == []


def test_dyestuff_with_one_seed_label_per_run_is_the_same_fit():
    # Every run has its own seed label (the StopIteration crash of issue 27): the seed
    # is nested in the batch, one score per seed, so it is the residual.
    y, batch = _dyestuff()
    vc = variance_components(y, item=batch, seed=[f"run{k}" for k in range(y.size)])
    assert vc.nested == ["seed"] and vc.levels["seed"] == 5
    assert vc.components["item"] == pytest.approx(LME4_BATCH, abs=0.1)
    assert vc.components["residual"] == pytest.approx(LME4_RESIDUAL, abs=0.1)
    assert "item:seed" in vc.residual_includes
    assert vc.se == pytest.approx(LME4_SE, abs=0.005)


def test_nested_seeds_with_replicates_match_the_nested_anova():
    # Items, 3 seeds of their own each, 4 scores per seed: classical nested ANOVA.
    g = np.random.default_rng(3)
    n_i, n_s, n_r = 40, 3, 4
    item_eff = g.normal(0, 1.0, n_i)[:, None, None]
    seed_eff = g.normal(0, 0.7, (n_i, n_s))[:, :, None]
    y = (item_eff + seed_eff + g.normal(0, 0.5, (n_i, n_s, n_r))).ravel()
    item = np.repeat(np.arange(n_i), n_s * n_r)
    seed = np.repeat(np.arange(n_i * n_s), n_r)  # labels unique to each item
    vc = variance_components(y, item=item, seed=seed)
    grid = y.reshape(n_i, n_s, n_r)
    ms_e = grid.var(axis=2, ddof=1).mean()
    ms_s = n_r * ((grid.mean(axis=2) - grid.mean(axis=(1, 2))[:, None]) ** 2).sum() / (n_i * (n_s - 1))  # fmt: skip
    ms_i = n_s * n_r * grid.mean(axis=(1, 2)).var(ddof=1)
    assert vc.nested == ["seed"] and vc.balanced
    assert vc.raw["residual"] == pytest.approx(ms_e)
    assert vc.raw["item:seed"] == pytest.approx((ms_s - ms_e) / n_r)
    assert vc.raw["item"] == pytest.approx((ms_i - ms_s) / (n_s * n_r))
    # SE of the grand mean of a balanced nested design: MS_item / N.
    assert vc.se == pytest.approx(np.sqrt(ms_i / y.size))


def test_confounded_factors_are_a_clear_error():
    g = np.random.default_rng(0)
    labels = np.arange(30) % 5
    with pytest.raises(ValueError, match="cannot separate the (seed|prompt) variance"):
        variance_components(g.normal(size=30), item=np.repeat(np.arange(6), 5), seed=labels, prompt=labels)  # fmt: skip


def test_eval_components_with_one_seed_per_run(tmp_path):
    from tests.helpers.cli import run_file_command

    y, batch = _dyestuff()
    path = tmp_path / "runs.csv"
    lines = ["model,item,score,seed"]
    for k, (v, b) in enumerate(zip(y, batch, strict=True)):
        lines += [f"m1,{b},{v},r{k}", f"m2,{b},{v + 10},r{k}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = run_file_command(["eval", str(path), "--components", "--rounds", "200", "-q"]).output
    assert "seed nested in items" in out and "residual includes item:seed" in out
    assert "1764.0" in out and "SE of the mean 19.38" in out
