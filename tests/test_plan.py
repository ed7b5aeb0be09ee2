"""`arena plan`: sampling weights, draws and battles needed (checked by simulation)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from arena.plan.weights import battles_needed, draw_pairs, pair_weights, simulate_power

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
    from tests.helpers.files import synth_battles

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


# --- many models (issue 17): arena.plan.pairs, a block of pairs at a time ---


def _wide_board(m=70, r=300, seed=2):
    """Ratings, bootstrap samples (correlated through a common shift) and battles, a
    third of the pairs unplayed."""
    rng = np.random.default_rng(seed)
    rating = rng.normal(1000, 150, m)
    samples = rating + rng.normal(0, 30, (r, m)) + rng.normal(0, 10, (r, 1))
    battles = np.zeros((m, m))
    iu, ju = np.triu_indices(m, 1)
    played = rng.random(iu.size) < 0.6
    battles[iu[played], ju[played]] = rng.integers(1, 60, played.sum())
    return rating, samples, battles + battles.T


def _same(a, b):
    return all(
        np.array_equal(getattr(a, f), getattr(b, f)) for f in ("i", "j", "battles", "probability")
    )


@pytest.mark.parametrize("rule", ["paper", "tiers"])
@pytest.mark.parametrize("block", [None, 128, 1000])
def test_blocks_give_pair_weights_bit_for_bit(monkeypatch, rule, block):
    import scipy.sparse as sp

    import arena.plan.pairs as pp

    if block is not None:  # many blocks (the board has 2,278 pairs)
        monkeypatch.setattr(pp, "BLOCK", block)
        monkeypatch.setattr(pp, "DIRECT_BLOCK", block * 300)
    rating, samples, battles = _wide_board()
    models = np.delete(np.arange(70), [3, 40, 41])  # a subset, as the ranked models are
    full = pair_weights(rating, samples, battles, models=models, rule=rule)
    got = pp.plan_pairs(rating, samples, sp.csr_matrix(battles), models=models, rule=rule)
    assert got.n_pairs == full.i.size == 67 * 66 // 2
    assert _same(got.plan, full)  # the same pairs, order and floats
    head = np.argsort(-full.probability, kind="stable")
    for top in (1, 7, 300):
        part = pp.plan_pairs(rating, samples, battles, models=models, rule=rule, top=top).plan
        order = np.argsort(-part.probability, kind="stable")
        assert part.i.size == top
        for f in ("i", "j", "battles", "probability"):
            assert np.array_equal(getattr(part, f)[order], getattr(full, f)[head[:top]]), f


def test_top_keeps_ties_in_pair_order():
    import arena.plan.pairs as pp

    # equal ratings, no battles: every pair has the same weight; the top are the first pairs
    m = 30
    plan = pp.plan_pairs(np.zeros(m), np.zeros((5, m)), np.zeros((m, m)), top=4).plan
    assert list(zip(plan.i.tolist(), plan.j.tolist(), strict=True)) == [
        (0, j) for j in (1, 2, 3, 4)
    ]
    assert np.allclose(plan.probability, 1 / (m * (m - 1) / 2))


def test_tiers_from_the_covariance_list_the_same_pairs(monkeypatch):
    import arena.plan.pairs as pp

    monkeypatch.setattr(pp, "BLOCK", 256)
    rating, samples, battles = _wide_board()
    full = pair_weights(rating, samples, battles, rule="tiers")
    cov = pp.plan_pairs(rating, samples, battles, rule="tiers", direct_se_max=0)
    assert cov.se_from == "covariance"
    assert np.array_equal(cov.plan.i, full.i) and np.array_equal(cov.plan.j, full.j)
    np.testing.assert_allclose(cov.plan.probability, full.probability, rtol=1e-12)
    head = np.argsort(-full.probability, kind="stable")[:50]
    part = pp.plan_pairs(rating, samples, battles, rule="tiers", top=50, direct_se_max=0).plan
    order = np.argsort(-part.probability, kind="stable")
    assert np.array_equal(part.i[order], full.i[head]) and np.array_equal(
        part.j[order], full.j[head]
    )


@pytest.mark.parametrize("rule", ["paper", "tiers"])
def test_streamed_draws_follow_the_probabilities(monkeypatch, rule):
    import arena.plan.pairs as pp

    monkeypatch.setattr(pp, "BLOCK", 128)  # rows drawn in many batches
    rating, samples, battles = _wide_board(m=25)
    plan = pair_weights(rating, samples, battles, rule=rule)
    n = 40000
    a1, b1 = pp.draw_streamed(rating, samples, battles, n, seed=3, rule=rule)
    a2, b2 = pp.draw_streamed(rating, samples, battles, n, seed=3, rule=rule)
    assert np.array_equal(a1, a2) and np.array_equal(b1, b2)
    lo, hi = np.minimum(a1, b1), np.maximum(a1, b1)
    share = np.zeros((25, 25))
    np.add.at(share, (lo, hi), 1 / n)
    for i, j, p in zip(plan.i, plan.j, plan.probability, strict=True):
        assert abs(share[i, j] - p) < 4.5 * np.sqrt(p * (1 - p) / n) + 1e-4
    assert 0.48 < np.mean(a1 < b1) < 0.52  # shown order is a fair coin
    # in random order, not grouped by model
    assert np.mean(np.diff(lo) == 0) < 0.2


def test_plan_cli_top_and_many_pairs(run_cli, tmp_path, monkeypatch):
    import arena.plan.board_plan as board_plan
    from tests.helpers.files import synth_battles

    path = tmp_path / "b.csv"
    synth_battles(path, n=3000, models=8)
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "100")
    full = run_cli("plan", "--rule", "tiers", "--format", "csv").output.splitlines()
    top = run_cli("plan", "--rule", "tiers", "--top", "5", "--format", "csv").output.splitlines()
    assert len(full) == 29 and top == full[:6]  # header + the 5 most probable, same text
    doc = json.loads(run_cli("plan", "--top", "3", "--format", "json").output)
    assert doc["top"] == 3 and doc["pairs_total"] == 28 and len(doc["pairs"]) == 3
    bad = run_cli("plan", "--top", "0", ok=False)
    assert bad.exit_code != 0 and "--top" in bad.output
    draws = run_cli("plan", "--n", "30", "--seed", "2", "--format", "csv").output
    # beyond MAX_LISTED pairs: no listing without --top, and draws stream
    monkeypatch.setattr(board_plan, "MAX_LISTED", 10)
    refused = run_cli("plan", ok=False)
    assert refused.exit_code != 0 and "8 ranked models make 28 pairs" in refused.output
    assert "--top K" in refused.output
    assert (
        run_cli("plan", "--top", "5", "--rule", "tiers", "--format", "csv").output.splitlines()
        == top
    )
    streamed = run_cli("plan", "--n", "30", "--seed", "2", "--format", "csv").output
    assert streamed != draws and len(streamed.splitlines()) == 31
    assert streamed == run_cli("plan", "--n", "30", "--seed", "2", "--format", "csv").output
    names = {f"model-{k}" for k in range(8)}
    for row in csv.DictReader(io.StringIO(streamed)):
        assert row["model_a"] in names and row["model_b"] in names
        assert row["model_a"] != row["model_b"]
