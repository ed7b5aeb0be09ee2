"""Rank intervals (brute-force bounds) and the verdict rules for unranked models."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.engine.inference.compare import compare_pair
from arena.engine.inference.ranks import rank_lb, rank_ub
from arena.engine.messages import unranked_reason


def _brute_lb(low, high):
    return np.array([sum(high[j] >= low[i] for j in range(low.size)) for i in range(low.size)])


@pytest.mark.parametrize("seed", range(5))
def test_rank_lb_matches_brute_force_and_brackets(seed):
    rng = np.random.default_rng(seed)
    m = 30
    centre = np.round(rng.normal(0, 30, m))  # rounding makes exact ties common
    half = np.round(rng.uniform(0, 20, m))
    low, high = centre - half, centre + half
    lb = rank_lb(low, high)
    assert np.array_equal(lb, _brute_lb(low, high))
    ub = rank_ub(low, high)
    assert np.all(ub <= lb) and np.all(lb >= 1) and np.all(lb <= m)


def test_rank_lb_touching_intervals_do_not_separate():
    low = np.array([10.0, 0.0])
    high = np.array([20.0, 10.0])
    assert rank_lb(low, high).tolist() == [2, 2]
    assert rank_ub(low, high).tolist() == [1, 1]
    low2 = np.array([10.5, 0.0])
    assert rank_lb(low2, high).tolist() == [1, 2]


def test_unranked_reason_words():
    assert unranked_reason("m", (), 120, min_battles=50) is None
    few = unranked_reason("qwen", ("few_battles",), 2, min_battles=50)
    assert few == "qwen has only 2 battles (fewer than 50)"
    assert "never met" in unranked_reason("gpt-4", ("disconnected",), 900, min_battles=50)
    assert "finite rating" in unranked_reason("x", ("never_lost", "no_mle"), 60, min_battles=50)
    # min_battles 0 still needs one battle
    assert "no battles" in unranked_reason("y", ("no_battles",), 0, min_battles=0)


def test_compare_pair_gives_no_verdict_for_unranked():
    rng = np.random.default_rng(0)
    samples = rng.normal(0, 5, (400, 3))
    samples[:, 0] += 200.0
    samples[:, 2] = 0.0  # collapsed bootstrap: every round identical
    rating = np.array([200.0, 0.0, 0.0])
    sure = compare_pair(samples, 0, 2, rating=rating)
    assert sure.significant and sure.verdict == "i"  # what the collapse would claim
    why = "qwen has only 2 battles (fewer than 50)"
    c = compare_pair(samples, 0, 2, rating=rating, unranked={2: why})
    assert not c.significant and c.verdict == "unranked" and c.reason == why
    assert math.isnan(c.low) and math.isnan(c.p_better)


def test_compare_pair_with_a_model_off_the_scale():
    samples = np.zeros((50, 2))
    samples[:, 1] = np.nan
    rating = np.array([1000.0, np.nan])
    c = compare_pair(samples, 0, 1, rating=rating, unranked={1: "b never met the set"})
    assert c.reason == "b never met the set" and math.isnan(c.diff)
    with pytest.raises(ValueError, match="finite"):
        compare_pair(samples, 0, 1, rating=rating)
