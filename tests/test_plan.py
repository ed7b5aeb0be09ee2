"""`arena plan`: sampling weights, draws and battles needed (checked by simulation)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from arena.plan import battles_needed, draw_pairs, pair_weights, simulate_power

#: Monte Carlo tolerance on a simulated power of 0.8 with 6000 replicates (SD ~0.005),
#: plus the normal approximation of the closed form.
POWER_TOL = 0.03


@pytest.mark.parametrize(
    "delta, se0", [(20.0, 15.0), (10.0, 10.0), (40.0, 30.0), (60.0, 80.0), (15.0, 40.0)]
)
def test_battles_needed_gives_80_percent_power_by_simulation(delta, se0):
    k = battles_needed(delta, se0)
    assert np.isfinite(k) and k > 0
    got = simulate_power(delta, se0, int(k), reps=6000, seed=1)
    assert abs(got - 0.8) < POWER_TOL
    # and fewer battles are not enough
    assert simulate_power(delta, se0, int(k * 0.5), reps=6000, seed=2) < 0.8 - POWER_TOL


def test_battles_needed_edges():
    assert battles_needed(30.0, 8.0) == 0  # already separated with power to spare
    assert np.isinf(battles_needed(0.0, 10.0))
    more = battles_needed(20.0, 15.0, level=0.99)
    assert more > battles_needed(20.0, 15.0, level=0.95)


def _board(m=5, seed=0):
    rng = np.random.default_rng(seed)
    rating = np.array([1100.0, 1050.0, 1048.0, 1000.0, 900.0])[:m]
    samples = rating + rng.normal(0, 10, size=(400, m))
    battles = np.full((m, m), 200.0)
    np.fill_diagonal(battles, 0)
    return rating, samples, battles


def test_paper_rule_favours_few_battles_and_unplayed_pairs():
    rating, samples, battles = _board()
    battles[0, 4] = battles[4, 0] = 0  # unplayed
    battles[1, 3] = battles[3, 1] = 20
    plan = pair_weights(rating, samples, battles, rule="paper")
    assert plan.probability.sum() == pytest.approx(1.0)
    prob = {(int(i), int(j)): p for i, j, p in zip(plan.i, plan.j, plan.probability, strict=True)}
    assert max(prob, key=prob.get) == (0, 4)
    assert prob[(1, 3)] > prob[(1, 4)]
    # equal battles: the closer pair (more outcome variance) gets more
    assert prob[(1, 2)] > prob[(2, 4)]


def test_tier_rule_aims_at_undecided_pairs():
    rating, samples, battles = _board()
    plan = pair_weights(rating, samples, battles, rule="tiers")
    prob = {(int(i), int(j)): p for i, j, p in zip(plan.i, plan.j, plan.probability, strict=True)}
    # 0-1 (50 Elo, SE ~14: z ~3.5) is near the boundary; 0-4 (200 Elo) is long settled
    assert prob[(0, 1)] > 10 * prob[(0, 4)]
    assert plan.probability.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="rule"):
        pair_weights(rating, samples, battles, rule="nope")


def test_draws_follow_probabilities_and_seed():
    rating, samples, battles = _board()
    plan = pair_weights(rating, samples, battles)
    a1, b1 = draw_pairs(plan, 20000, seed=3)
    a2, b2 = draw_pairs(plan, 20000, seed=3)
    assert np.array_equal(a1, a2) and np.array_equal(b1, b2)
    lo, hi = np.minimum(a1, b1), np.maximum(a1, b1)
    for i, j, p in zip(plan.i, plan.j, plan.probability, strict=True):
        share = np.mean((lo == i) & (hi == j))
        assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / 20000) + 1e-4
    assert 0.45 < np.mean(a1 < b1) < 0.55  # shown order is a fair coin


def test_plan_cli(run_cli, tmp_path):
    from tests.test_rebuild import synth_battles

    path = tmp_path / "b.csv"
    synth_battles(path, n=2000, models=6)
    run_cli("ingest", str(path), "-q")
    none = run_cli("plan", ok=False)
    assert none.exit_code != 0 and "arena rebuild" in none.output
    run_cli("rebuild", "--rounds", "100")
    rows = list(csv.DictReader(io.StringIO(run_cli("plan", "--format", "csv").output)))
    assert len(rows) == 15
    assert sum(float(r["probability"]) for r in rows) == pytest.approx(1.0, abs=1e-6)
    draws = run_cli("plan", "--n", "50", "--seed", "4", "--format", "csv").output
    assert draws == run_cli("plan", "--n", "50", "--seed", "4", "--format", "csv").output
    assert len(draws.strip().splitlines()) == 51
    doc = json.loads(run_cli("plan", "power", "--format", "json").output)
    assert len(doc["pairs"]) == 5
    for r in doc["pairs"]:
        assert r["battles_needed"] is None or isinstance(r["battles_needed"], int)
    one = json.loads(run_cli("plan", "power", "model-0", "model-1", "--format", "json").output)
    assert [(r["model_a"], r["model_b"]) for r in one["pairs"]] == [("model-0", "model-1")]
    bad = run_cli("plan", "power", "model-0", "nobody", ok=False)
    assert bad.exit_code != 0 and "unknown model 'nobody'" in bad.output
