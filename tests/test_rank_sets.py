"""Rank confidence sets (Mogstad, Romano, Shaikh & Wilhelm), separation and tiers.

Simulation model (as in tests/test_tiers.py): a normal parametric bootstrap.
The estimate is ``theta + e`` and each bootstrap row ``estimate + e*``, with
``e``, ``e*`` independent draws of ``se_i z_i + 10 w`` (``w`` one shared shift
per draw, like a rating anchor; it cancels in every difference).
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.core.defaults import MC_MARGIN
from arena.engine.inference.rank_sets import (
    _stepdown_rejected,
    board_inference,
    marginal_rank_set,
    mc_alpha,
    near_twins,
    separated_pairs,
    tiers_from_separation,
)

#: simulation slack on a coverage of 1 - alpha (500 boards: SE of 0.95 is ~0.01)
COVERAGE_TOL = 0.03


def _board(rng, theta, rounds=300, se=(5.0, 10.0)):
    m = theta.size
    sd = rng.uniform(*se, m)

    def draw(n):
        return sd * rng.standard_normal((n, m)) + 10.0 * rng.standard_normal((n, 1))

    est = theta + draw(1)[0]
    return est, est + draw(rounds)


def _true_ranks(theta):
    return 1 + (theta[None, :] > theta[:, None]).sum(axis=1)


def _brute_stepdown(est, samples, alpha):
    """MRSW step-down, literally: reject, recompute the max over what is left, repeat."""
    m = est.size
    hyps = [(a, b) for a in range(m) for b in range(m) if a != b]
    d = {(a, b): samples[:, a] - samples[:, b] for a, b in hyps}
    sd = {h: d[h].std(ddof=1) for h in hyps}
    t = {(a, b): (est[a] - est[b]) / sd[(a, b)] for a, b in hyps}
    dev = {h: (d[h] - d[h].mean()) / sd[h] for h in hyps}
    left = set(hyps)
    rounds = samples.shape[0]
    while True:
        mx = np.max([dev[h] for h in left], axis=0)
        new = {h for h in left if (1 + np.count_nonzero(mx >= t[h])) / (rounds + 1) <= alpha}
        if not new:
            break
        left -= new
    return {h for h in hyps if h not in left}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stepdown_matches_literal_algorithm(seed):
    rng = np.random.default_rng(seed)
    theta = np.sort(rng.uniform(0, 80, 7))[::-1]
    est, s = _board(rng, theta, rounds=200)
    inf = board_inference(est, s, method="stepdown", margin=0.0)
    got = {(int(a), int(b)) for a, b in separated_pairs(est, s, method="stepdown", margin=0.0)}
    want = _brute_stepdown(est, s, 0.05)
    # the board closes the rejections under transitivity; before closing they agree exactly
    order = np.argsort(-est, kind="stable")
    iu = np.triu_indices(7, k=1)
    rej, _ = _stepdown_rejected(est[order], s[:, order], iu[0], iu[1], 0.05)
    raw = {(int(order[a]), int(order[b])) for a, b in zip(iu[0][rej], iu[1][rej], strict=True)}
    assert raw == want
    assert want <= got
    assert len(got) == inf.n_separated
    # with the Monte-Carlo margin (the default since issue 41): the literal
    # algorithm at the lowered level, and never more than without it
    alpha = mc_alpha(0.05, s.shape[0], MC_MARGIN)
    assert alpha < 0.05
    rej_m, _ = _stepdown_rejected(est[order], s[:, order], iu[0], iu[1], alpha)
    raw_m = {
        (int(order[a]), int(order[b])) for a, b in zip(iu[0][rej_m], iu[1][rej_m], strict=True)
    }
    assert raw_m == _brute_stepdown(est, s, alpha) and raw_m <= raw
    assert board_inference(est, s, method="stepdown").n_separated <= inf.n_separated


def test_the_margin_keeps_a_count_clear_of_its_monte_carlo_error():
    assert mc_alpha(0.05, 1000, 0.0) == 0.05
    assert mc_alpha(0.05, 1000, 1.645) == pytest.approx(0.05 - 1.645 * np.sqrt(0.0475 / 1001))
    assert mc_alpha(0.05, 10, 1.645) == 0.0  # ten rounds cannot show 5%: nothing is separated
    assert mc_alpha(0.05, 16000, 1.645) > 0.047


def test_single_step_separates_no_more_than_stepdown():
    rng = np.random.default_rng(5)
    for _ in range(20):
        est, s = _board(rng, np.linspace(0, 120, 10))
        step = board_inference(est, s, method="stepdown")
        single = board_inference(est, s, method="single-step")
        assert not np.any(single.better & ~step.better)
        assert np.all(step.rank_low >= single.rank_low)
        assert np.all(step.rank_high <= single.rank_high)


def test_simultaneous_coverage():
    """All true ranks in their sets on >= 1 - alpha - tol of boards (ties in theta share a rank)."""
    rng = np.random.default_rng(20261202)
    theta = np.array([100, 100, 80, 70, 70, 70, 40, 20.0])
    truth = _true_ranks(theta)
    # equal models have true rank sets {r, ..., r + ties - 1}: cover the best rank and the worst
    worst = (theta[None, :] >= theta[:, None]).sum(axis=1)
    hits = hits_m = 0
    n = 300
    for _ in range(n):
        est, s = _board(rng, theta)
        inf = board_inference(est, s)
        hits += bool(np.all((inf.rank_low <= truth) & (inf.rank_high >= worst)))
        lo, hi = marginal_rank_set(est, s, 3)
        hits_m += lo <= truth[3] and hi >= worst[3]
    assert hits / n >= 0.95 - COVERAGE_TOL
    assert hits_m / n >= 0.95 - COVERAGE_TOL


def _check_invariants(inf):
    o = inf.order
    low, high, tiers = inf.rank_low[o], inf.rank_high[o], inf.tiers[o]
    m = o.size
    assert tiers[0] == 1 and np.all(np.diff(tiers) >= 0) and np.all(np.diff(tiers) <= 1)
    assert np.all(low <= high) and np.all(low >= 1) and np.all(high <= m)
    sep = np.array([[inf.separated(o[a], o[b]) for b in range(m)] for a in range(m)])
    assert np.all(sep == -sep.T)
    for a in range(m):
        if low[a] == high[a]:
            assert np.count_nonzero(tiers == tiers[a]) == 1
        for b in range(a + 1, m):
            assert sep[a, b] >= 0  # never shown better against the board order
            # twins, and near twins (issue 41), that the board does not separate share a tier
            if sep[a, b] == 0 and near_twins(low[a], high[a], low[b], high[b]):
                assert tiers[a] == tiers[b]
    # the tier sentence: each tier's top model is shown better than every model below its tier
    for k in range(1, tiers.max() + 1):
        top = int(np.flatnonzero(tiers == k)[0])
        assert np.all(sep[top, tiers > k] == 1)


@pytest.mark.parametrize("method", ["stepdown", "single-step", "bonferroni"])
def test_invariants_on_random_boards(method):
    rng = np.random.default_rng(11)
    for design in range(12):
        m = 6 + design
        theta = np.sort(rng.choice([0, 30, 60, 200, 400], m) + rng.uniform(0, 25, m))[::-1]
        est, s = _board(rng, theta, rounds=200, se=(2.0, 30.0))
        _check_invariants(board_inference(est, s, method=method))


def test_far_apart_models_are_single_ranks_and_tiers():
    rng = np.random.default_rng(3)
    est, s = _board(rng, np.array([400.0, 200.0, 0.0, -200.0]))
    inf = board_inference(est, s)
    assert inf.rank_low.tolist() == inf.rank_high.tolist() == [1, 2, 3, 4]
    assert inf.tiers.tolist() == [1, 2, 3, 4]


def test_equal_models_one_tier_and_full_sets():
    rng = np.random.default_rng(4)
    est, s = _board(rng, np.zeros(5), se=(10.0, 10.0))
    inf = board_inference(est, s)
    assert inf.n_separated == 0
    assert inf.tiers.tolist() == [1] * 5
    assert inf.rank_low.tolist() == [1] * 5 and inf.rank_high.tolist() == [5] * 5


def test_relabelling_and_determinism():
    rng = np.random.default_rng(8)
    est, s = _board(rng, np.linspace(0, 150, 9))
    a = board_inference(est, s)
    perm = rng.permutation(9)
    b = board_inference(est[perm], s[:, perm])
    assert np.array_equal(a.rank_low[perm], b.rank_low)
    assert np.array_equal(a.rank_high[perm], b.rank_high)
    assert np.array_equal(a.tiers[perm], b.tiers)
    c = board_inference(est, s)
    assert np.array_equal(a.better, c.better)


def test_tier_merge_removes_boundary_between_twins():
    # positions 0 > 1, 0 > 2 shown better only through the leader rule; 1 and 2 not separated
    better = np.zeros((4, 4), dtype=bool)
    better[0, 1] = better[0, 2] = better[0, 3] = True
    better[1, 3] = True
    low = np.array([1, 2, 2, 3])
    high = np.array([1, 3, 3, 4])
    # 1 leads tier 2 until 3; 2 is unseparated from 1 and shares its set: same tier
    tiers = tiers_from_separation(better, low, high)
    assert tiers.tolist() == [1, 2, 2, 3]
    high2 = np.array([1, 3, 4, 4])  # different sets: the walk alone decides
    assert tiers_from_separation(better, low, high2).tolist() == [1, 2, 2, 3]


def test_near_twins():
    """Equal up to one rank at each end and sharing >= 80% of the union's ranks."""
    assert near_twins(12, 29, 12, 29)  # identical sets always
    assert near_twins(11, 29, 12, 29) and near_twins(11, 30, 12, 29)  # issue 41's o4-mini
    assert near_twins(1, 9, 2, 10)  # 8 of 10 ranks shared
    assert not near_twins(1, 9, 3, 9)  # an end two ranks away
    assert not near_twins(1, 3, 2, 4)  # short sets: one rank is half the union
    assert not near_twins(5, 5, 6, 6)  # two certain ranks are never near twins
    got = near_twins(np.array([11, 1]), np.array([29, 3]), np.array([12, 2]), np.array([29, 4]))
    assert got.tolist() == [True, False]


def test_tier_merge_removes_boundary_between_near_twins():
    """A one-rank Monte-Carlo move of a long set's end does not draw a boundary (issue 41)."""
    better = np.zeros((4, 4), dtype=bool)
    better[0, 1] = better[0, 2] = better[0, 3] = True
    better[1, 3] = True  # the walk draws a boundary between positions 2 and 3
    low, high = np.array([1, 11, 11, 11]), np.array([1, 29, 29, 29])
    assert tiers_from_separation(better, low, high).tolist() == [1, 2, 2, 2]  # twins
    low = np.array([1, 11, 11, 12])  # 2 and 3 now differ by one rank at the top
    assert tiers_from_separation(better, low, high).tolist() == [1, 2, 2, 2]
    low = np.array([1, 11, 11, 13])  # two ranks: not near twins, the walk decides
    assert tiers_from_separation(better, low, high).tolist() == [1, 2, 2, 3]
    # a separated pair is never merged, however close its sets
    better[2, 3] = True
    low = np.array([1, 11, 11, 12])
    assert tiers_from_separation(better, low, high).tolist() == [1, 2, 2, 3]


def test_twin_rule_parameters():
    """``twin_ends=0, twin_overlap=1`` is the rule before issue 41 (identical sets only)."""
    better = np.zeros((4, 4), dtype=bool)
    better[0, 1:] = True
    better[1, 3] = True
    low, high = np.array([1, 11, 11, 12]), np.array([1, 29, 29, 29])
    old = tiers_from_separation(better, low, high, twin_ends=0, twin_overlap=1.0)
    assert old.tolist() == [1, 2, 2, 3]
    assert tiers_from_separation(better, low, high).tolist() == [1, 2, 2, 2]
    assert not near_twins(11, 29, 12, 29, ends=0, overlap=1.0)
    assert near_twins(1, 3, 2, 4, ends=1, overlap=0.5)
    for bad in ({"twin_ends": -1}, {"twin_ends": 0.5}, {"twin_overlap": 1.5}):
        with pytest.raises(ValueError, match="twin_"):
            tiers_from_separation(better, low, high, **bad)


def test_bonferroni_tiers_are_the_dense_rule():
    """The sparse path's tiers (walk on bounds, near twins by groups of equal lows) are
    :func:`tiers_from_separation` of its own separation and sets."""
    rng = np.random.default_rng(41)
    for design in range(15):
        m = 8 + design
        theta = np.sort(rng.choice([0, 25, 50, 300], m) + rng.uniform(0, 20, m))[::-1]
        est, s = _board(rng, theta, rounds=200, se=(2.0, 30.0))
        inf = board_inference(est, s, method="bonferroni")
        o = inf.order
        better = np.array([[inf.separated(o[a], o[b]) == 1 for b in range(m)] for a in range(m)])
        want = tiers_from_separation(better, inf.rank_low[o], inf.rank_high[o])
        assert inf.tiers[o].tolist() == want.tolist()


def test_one_model_and_errors():
    inf = board_inference(np.array([1.0]), np.zeros((10, 1)))
    assert inf.rank_low.tolist() == inf.rank_high.tolist() == inf.tiers.tolist() == [1]
    with pytest.raises(ValueError, match="unknown method"):
        board_inference(np.zeros(2), np.zeros((5, 2)), method="x")
    with pytest.raises(ValueError):
        marginal_rank_set(np.zeros(2), np.ones((5, 2)), 5)


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_long_board_single_step_is_exact():
    """Above FAST_MIN_WORK the single-step comes from bounds + max-t per round: the same
    separation as computing every pair's deviations."""
    from arena.engine.inference.maxt_bounded import FAST_MIN_WORK

    rng = np.random.default_rng(9)
    m, rounds = 205, 1000
    assert rounds * m * (m - 1) // 2 >= FAST_MIN_WORK
    est, s = _board(rng, np.sort(rng.uniform(0, 400, m))[::-1], rounds=rounds)
    fast = board_inference(est, s)
    assert fast.method == "single-step"
    order = fast.order
    iu = np.triu_indices(m, k=1)
    alpha = mc_alpha(0.05, rounds, MC_MARGIN)  # the board's level, its Monte-Carlo margin kept
    rej, _ = _stepdown_rejected(est[order], s[:, order], iu[0], iu[1], alpha, stepwise=False)
    full = np.zeros((m, m), dtype=bool)
    full[iu[0][rej], iu[1][rej]] = True
    from arena.engine.inference.rank_sets import _close

    assert np.array_equal(fast.better, _close(full))
    _check_invariants(fast)
