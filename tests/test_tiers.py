"""Tests for arena.engine.inference.tiers: rank (UB), tier rules, head-to-head, rank intervals.

The simulation tests at the bottom state and check what each tier rule
guarantees.  The rating engine's bootstrap is replaced there by a *normal
parametric bootstrap* (see :func:`simulate`), so these tests exercise the tier
logic, not the Bradley-Terry fit.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
import pytest

from arena.engine.inference import pairs as P
from arena.engine.inference.compare import compare_pair
from arena.engine.inference.ranks import rank_interval, rank_ub
from arena.engine.inference.tiers import tiers_leader_overlap, tiers_paired

LEVEL = 0.95
ALPHA = 1.0 - LEVEL

ALL_PAIRED = [
    dict(rule=rule, correction=corr, pvalues=pv)
    for rule in ("leader", "cut")
    for corr, pv in (
        ("maxt", "percentile"),
        ("holm", "normal"),
        ("bh", "percentile"),
        ("none", "percentile"),
    )
]


def assert_partition(tiers: np.ndarray, rating: np.ndarray) -> None:
    """Tiers start at 1, never decrease down the board and have no gaps."""
    down_board = tiers[np.argsort(-np.asarray(rating), kind="stable")]
    assert down_board[0] == 1
    steps = np.diff(down_board)
    assert np.all((steps == 0) | (steps == 1))


# ---------------------------------------------------------------------------
# rank (UB)
# ---------------------------------------------------------------------------


def rank_ub_brute(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    m = low.size
    return np.array([1 + sum(low[j] > high[i] for j in range(m)) for i in range(m)])


@pytest.mark.parametrize("seed", range(20))
def test_rank_ub_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    centre = rng.normal(0.0, 30.0, m)
    half = rng.uniform(0.0, 20.0, m)
    # Rounding makes exact ties between bounds common, to test strictness.
    low, high = np.round(centre - half), np.round(centre + half)
    np.testing.assert_array_equal(rank_ub(low, high), rank_ub_brute(low, high))


def test_rank_ub_small_example() -> None:
    low = np.array([10.0, 8.0, 0.0, 4.0])
    high = np.array([14.0, 12.0, 5.0, 9.0])
    # model 2: [0, 5] lies below [10, 14], [8, 12]; model 3: [4, 9] below [10, 14] only.
    np.testing.assert_array_equal(rank_ub(low, high), [1, 1, 3, 2])
    # touching intervals do not separate
    np.testing.assert_array_equal(rank_ub(np.array([5.0, 0.0]), np.array([9.0, 5.0])), [1, 1])


def test_rank_ub_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        rank_ub(np.array([1.0]), np.array([0.0]))
    with pytest.raises(ValueError):
        rank_ub(np.array([np.nan]), np.array([0.0]))
    with pytest.raises(ValueError):
        rank_ub(np.array([0.0, 1.0]), np.array([1.0]))


# ---------------------------------------------------------------------------
# leader-overlap tiers
# ---------------------------------------------------------------------------


def test_leader_overlap_avoids_chaining() -> None:
    # A overlaps B, B overlaps C, but A lies clearly above C.
    rating = np.array([100.0, 85.0, 70.0])
    low = np.array([92.0, 77.0, 62.0])
    high = np.array([108.0, 93.0, 78.0])
    np.testing.assert_array_equal(tiers_leader_overlap(rating, low, high), [1, 1, 2])


def test_leader_overlap_known_board() -> None:
    # Model order in the arrays is shuffled on purpose; the board is by rating.
    rating = np.array([50.0, 100.0, 10.0, 95.0, 45.0])
    low = np.array([40.0, 90.0, 0.0, 85.0, 35.0])
    high = np.array([60.0, 110.0, 20.0, 105.0, 55.0])
    np.testing.assert_array_equal(tiers_leader_overlap(rating, low, high), [2, 1, 3, 1, 2])


@pytest.mark.parametrize("seed", range(10))
def test_leader_overlap_is_partition_of_board(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    rating = rng.normal(0.0, 50.0, m)
    half = rng.uniform(1.0, 30.0, m)
    tiers = tiers_leader_overlap(rating, rating - half, rating + half)
    assert_partition(tiers, rating)


# ---------------------------------------------------------------------------
# paired tiers: structure
# ---------------------------------------------------------------------------


def random_board(seed: int, m: int, rounds: int = 200) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    rating = rng.normal(0.0, 40.0, m)
    samples = rating + rng.normal(0.0, 10.0, (rounds, m))
    return rating, samples


@pytest.mark.parametrize("opts", ALL_PAIRED, ids=lambda o: "-".join(o.values()))
@pytest.mark.parametrize("seed", range(4))
def test_paired_tiers_are_partition_and_deterministic(opts: dict, seed: int) -> None:
    rating, samples = random_board(seed, m=3 + 5 * seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = tiers_paired(rating, samples, level=LEVEL, **opts)
        b = tiers_paired(rating, samples.copy(), level=LEVEL, **opts)
    assert_partition(a.tiers, rating)
    np.testing.assert_array_equal(a.tiers, b.tiers)
    np.testing.assert_array_equal(a.p_adjusted, b.p_adjusted)
    # starts_tier marks exactly the tier boundaries, decided by p_adjusted <= alpha.
    top = a.order[0]
    rest = a.order[1:]
    np.testing.assert_array_equal(a.starts_tier[rest], np.diff(a.tiers[a.order]) == 1)
    np.testing.assert_array_equal(a.starts_tier[rest], a.p_adjusted[rest] <= ALPHA)
    assert not a.starts_tier[top] and np.isnan(a.p_adjusted[top]) and a.upper[top] == -1
    assert np.all(np.isfinite(a.p_adjusted[rest]))
    assert np.all(a.p_adjusted[rest] >= a.p_value[rest] - 1e-12) or opts["correction"] == "maxt"


@pytest.mark.parametrize("seed", range(3))
def test_paired_tiers_equivariant_under_relabelling(seed: int) -> None:
    rating, samples = random_board(seed, m=12)
    perm = np.random.default_rng(seed + 100).permutation(rating.size)
    for rule in ("leader", "cut"):
        base = tiers_paired(rating, samples, rule=rule).tiers
        moved = tiers_paired(rating[perm], samples[:, perm], rule=rule).tiers
        np.testing.assert_array_equal(moved, base[perm])


def chain_samples(rounds: int = 2000, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A, B, C 15 apart with difference SE ~10: A vs C separable, B vs either not."""
    rng = np.random.default_rng(seed)
    rating = np.array([30.0, 15.0, 0.0])
    samples = rating + rng.normal(0.0, 7.0, (rounds, 3))
    return rating, samples


def test_paired_chaining_example_leader_vs_cut() -> None:
    rating, samples = chain_samples()
    assert compare_pair(samples, 0, 2, rating=rating).significant
    assert not compare_pair(samples, 0, 1, rating=rating).significant
    assert not compare_pair(samples, 1, 2, rating=rating).significant
    leader = tiers_paired(rating, samples, rule="leader", correction="none")
    cut = tiers_paired(rating, samples, rule="cut", correction="none")
    # leader: C is below the leader A, so it starts tier 2 (B and C are split
    # although the data cannot order them).
    np.testing.assert_array_equal(leader.tiers, [1, 1, 2])
    assert leader.upper[2] == 0 and leader.lower[2] == 2
    # cut: no boundary has every cross pair separated -> one tier (chaining).
    np.testing.assert_array_equal(cut.tiers, [1, 1, 1])
    assert (cut.upper[2], cut.lower[2]) == (1, 2)  # the weakest link across the cut


def test_paired_edge_cases_single_model_and_all_equal() -> None:
    one = tiers_paired(np.array([3.0]), np.ones((10, 1)))
    np.testing.assert_array_equal(one.tiers, [1])
    np.testing.assert_array_equal(tiers_leader_overlap([3.0], [1.0], [4.0]), [1])
    np.testing.assert_array_equal(rank_ub([1.0], [4.0]), [1])
    assert rank_interval(np.ones((10, 1))).low.tolist() == [1]

    # All equal, identical samples in every column: zero spread of every
    # difference.  Must give one tier without any NaN or numpy warning.
    m, rounds = 5, 50
    rating = np.zeros(m)
    column = np.random.default_rng(0).normal(0.0, 5.0, rounds)
    samples = np.repeat(column[:, None], m, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for opts in ALL_PAIRED:
            res = tiers_paired(rating, samples, **opts)
            np.testing.assert_array_equal(res.tiers, np.ones(m))
            assert np.all(np.isfinite(res.p_adjusted[res.order[1:]]))
        np.testing.assert_array_equal(rank_ub(rating, rating), np.ones(m))
        np.testing.assert_array_equal(tiers_leader_overlap(rating, rating, rating), np.ones(m))


def test_paired_zero_spread_distinct_ratings_separate() -> None:
    # A bootstrap with no spread is certain: distinct ratings are separated.
    rating = np.array([2.0, 1.0, 0.0])
    samples = np.tile(rating, (100, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = tiers_paired(rating, samples, correction="maxt")
    np.testing.assert_array_equal(res.tiers, [1, 2, 3])


def test_holm_warns_when_rounds_cannot_resolve() -> None:
    rating, samples = random_board(0, m=12, rounds=200)  # 66 pairs, floor 2/201
    with pytest.warns(UserWarning, match="cannot separate"):
        tiers_paired(rating, samples, correction="holm")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiers_paired(rating, samples, correction="holm", pvalues="normal")


def test_bad_options_raise() -> None:
    rating, samples = random_board(0, m=4)
    for kwargs in ({"correction": "bonf"}, {"rule": "x"}, {"pvalues": "x"}, {"level": 1.0}):
        with pytest.raises(ValueError):
            tiers_paired(rating, samples, **kwargs)
    with pytest.raises(ValueError):
        tiers_paired(rating, samples[:, :3])


def maxt_reference(rating: np.ndarray, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force single-step and step-down max-t adjusted p-values, pairs in
    board-position triu order, from the full rounds x pairs matrix."""
    order = np.argsort(-rating, kind="stable")
    s, r = samples[:, order], rating[order]
    rounds, m = s.shape
    pairs = list(itertools.combinations(range(m), 2))
    d = np.stack([s[:, a] - s[:, b] for a, b in pairs], axis=1)
    t = np.array([r[a] - r[b] for a, b in pairs]) / d.std(axis=0, ddof=1)
    dev = np.abs(d - d.mean(axis=0)) / d.std(axis=0, ddof=1)
    single = (1 + (dev.max(axis=1)[:, None] >= t).sum(axis=0)) / (rounds + 1)
    idx = np.argsort(-t, kind="stable")
    steps = [
        (1 + (dev[:, idx[k:]].max(axis=1) >= t[idx[k]]).sum()) / (rounds + 1)
        for k in range(len(pairs))
    ]
    down = np.empty(len(pairs))
    down[idx] = np.maximum.accumulate(steps)
    return single, down


@pytest.mark.parametrize("seed", range(3))
def test_maxt_stepdown_matches_brute_force(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rating, samples = random_board(seed, m=7, rounds=150)
    single, down = maxt_reference(rating, samples)
    order = np.argsort(-rating, kind="stable")
    iu = np.triu_indices(rating.size, k=1)
    st = P.pair_stats(rating[order], samples[:, order], "percentile")
    np.testing.assert_allclose(P.maxt_stepdown(samples[:, order], iu, st), down)
    # step-down never rejects less than single-step and starts from it
    assert np.all(down <= single + 1e-12)
    assert down.min() == pytest.approx(single.min())  # the first step is single-step
    monkeypatch.setattr(P, "_CHUNK_ELEMENTS", 21 * 5)  # 5 rounds per chunk
    np.testing.assert_allclose(P.maxt_stepdown(samples[:, order], iu, st), down)


def test_chunked_statistics_match_unchunked(monkeypatch: pytest.MonkeyPatch) -> None:
    rating, samples = random_board(9, m=9, rounds=64)
    whole = tiers_paired(rating, samples, correction="maxt")
    monkeypatch.setattr(P, "_CHUNK_ELEMENTS", 64 * 2)  # two columns per chunk
    chunked = tiers_paired(rating, samples, correction="maxt")
    np.testing.assert_array_equal(whole.tiers, chunked.tiers)
    np.testing.assert_allclose(whole.p_adjusted, chunked.p_adjusted, equal_nan=True)
    assert whole.critical_t == pytest.approx(chunked.critical_t)


# ---------------------------------------------------------------------------
# head-to-head and rank intervals
# ---------------------------------------------------------------------------


def test_compare_pair_values_and_antisymmetry() -> None:
    rating, samples = chain_samples()
    ab = compare_pair(samples, 0, 2, rating=rating, level=LEVEL)
    ba = compare_pair(samples, 2, 0, rating=rating, level=LEVEL)
    assert ab.diff == pytest.approx(30.0) and ba.diff == pytest.approx(-30.0)
    assert ab.low == pytest.approx(-ba.high) and ab.high == pytest.approx(-ba.low)
    assert ab.p_better + ba.p_better == pytest.approx(1.0)
    assert ab.win_prob + ba.win_prob == pytest.approx(1.0)
    assert ab.win_prob == pytest.approx(1.0 / (1.0 + 10.0 ** (-30.0 / 400.0)))
    assert ab.significant and ba.significant and ab.low > 0.0
    d = samples[:, 0] - samples[:, 2]
    assert ab.p_better == pytest.approx(np.mean(d > 0.0))


def test_compare_pair_ties_and_extremes() -> None:
    samples = np.zeros((10, 2))
    c = compare_pair(samples, 0, 1, rating=np.array([0.0, 0.0]))
    assert (c.p_better, c.win_prob, c.significant) == (0.5, 0.5, False)
    far = compare_pair(samples, 0, 1, rating=np.array([1e6, 0.0]))
    assert far.win_prob == 1.0 and np.isfinite(far.win_prob)
    assert compare_pair(samples, 0, 1, rating=np.array([400.0, 0.0])).win_prob == pytest.approx(
        10 / 11
    )
    with pytest.raises(ValueError):
        compare_pair(samples, 0, 0, rating=np.zeros(2))
    with pytest.raises(ValueError):
        compare_pair(samples, 0, 2, rating=np.zeros(2))


def test_rank_interval_simple() -> None:
    rng = np.random.default_rng(1)
    theta = np.array([100.0, 0.0, -1.0, -200.0])
    samples = theta + rng.normal(0.0, 5.0, (400, 4))
    ri = rank_interval(samples, level=LEVEL)
    np.testing.assert_array_equal(ri.low, [1, 2, 2, 4])
    np.testing.assert_array_equal(ri.high, [1, 3, 3, 4])


# ---------------------------------------------------------------------------
# guarantees in simulation
# ---------------------------------------------------------------------------

SIM_MODELS = 8
SIM_ROUNDS = 300
SIM_BOARDS = 500
SIM_COMMON_SE = 10.0  # shared shift of all ratings; cancels in differences
# Monte Carlo slack on a rate of 0.05 over 500 boards (SE ~0.01), plus room for
# the bootstrap approximation with 300 rounds.
FWER_TOL = 0.03
# Observed (not guaranteed) per-pair inversion rate of the leader rules on the
# 10-apart continuum is ~0.002-0.006; regression bound.
LEADER_INVERSION_PER_PAIR_MAX = 0.02
# Pairs at least 7 SE of the difference apart must be found almost always.
POWER_MIN_WIDE = 0.97
# Paired verdicts use the correlation that marginal overlap ignores.
PAIRED_POWER_GAIN_MIN = 0.05

# True ratings of the simulated designs (and the seed of each).
DESIGNS = {
    # all equal: any tier boundary is a false separation
    "null": (np.zeros(SIM_MODELS), 11),
    # four pairs of equal models, pairs 40 Elo (~3-5 SE of a difference) apart
    "pairs40": (-40.0 * (np.arange(SIM_MODELS) // 2), 12),
    # no ties; neighbours 10 Elo (~1 SE) apart, so adjacent pairs are not separable
    "continuum": (-10.0 * np.arange(SIM_MODELS), 13),
    # pairs 80 Elo (>= 7 SE) apart: power check
    "pairs80": (-80.0 * (np.arange(SIM_MODELS) // 2), 14),
}


def simulate(theta: np.ndarray, boards: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Simulated boards from known true ratings ``theta``.

    Normal parametric bootstrap standing in for the rating engine: the
    estimate is ``theta + e`` and each of ``SIM_ROUNDS`` bootstrap rows is
    ``estimate + e*``, with ``e`` and ``e*`` independent draws of
    ``se_i * z_i + SIM_COMMON_SE * w`` (per-model standard errors 5-10 Elo,
    plus one shared shift ``w`` per draw, which correlates the estimates the
    way a rating anchor does).
    """
    m = theta.size
    se = np.random.default_rng(2024).uniform(5.0, 10.0, m)
    rng = np.random.default_rng(seed)

    def noise(n: int) -> np.ndarray:
        return se * rng.standard_normal((n, m)) + SIM_COMMON_SE * rng.standard_normal((n, 1))

    out = []
    for _ in range(boards):
        estimate = theta + noise(1)[0]
        out.append((estimate, estimate + noise(SIM_ROUNDS)))
    return out


def overlap_tiers(rating: np.ndarray, samples: np.ndarray) -> np.ndarray:
    low, high = np.quantile(samples, [ALPHA / 2, 1 - ALPHA / 2], axis=0)
    return tiers_leader_overlap(rating, low, high)


def paired(**opts):
    return lambda rating, samples: tiers_paired(rating, samples, level=LEVEL, **opts).tiers


METHODS = {
    "overlap": overlap_tiers,
    "leader-maxt": paired(rule="leader", correction="maxt"),
    "leader-holm": paired(rule="leader", correction="holm", pvalues="normal"),
    "cut-maxt": paired(rule="cut", correction="maxt"),
    "cut-holm": paired(rule="cut", correction="holm", pvalues="normal"),
}
FWER_METHODS = ["leader-maxt", "leader-holm", "cut-maxt", "cut-holm"]


@functools.cache
def boards_of(design: str) -> list[tuple[np.ndarray, np.ndarray]]:
    theta, seed = DESIGNS[design]
    n = 150 if design == "pairs80" else SIM_BOARDS
    return simulate(theta, n, seed)


@functools.cache
def rates(design: str, method: str) -> dict[str, float]:
    """Board-level and pair-level error rates and power of a method on a design.

    ``eq_split_any``: boards where some truly equal pair is in different tiers;
    ``inversion_any``: boards where some truly better model is in a lower tier;
    ``error_any``: either; ``*_pair``: the same per pair; ``power``: truly
    different pairs put in different tiers, the better one higher.
    """
    theta, _ = DESIGNS[design]
    iu = np.triu_indices(theta.size, k=1)
    diff = (theta[:, None] - theta[None, :])[iu]
    eq = diff == 0.0
    sign = np.sign(diff)
    boards = boards_of(design)
    eq_any = inv_any = err_any = eq_pairs = inv_pairs = sep = 0
    for rating, samples in boards:
        tiers = METHODS[method](rating, samples)
        gap = (tiers[:, None] - tiers[None, :])[iu]
        split = eq & (gap != 0)
        inverted = ~eq & (sign * gap > 0)  # truly better, larger tier number
        eq_any += split.any()
        inv_any += inverted.any()
        err_any += split.any() or inverted.any()
        eq_pairs += split.sum()
        inv_pairs += inverted.sum()
        sep += (~eq & (sign * gap < 0)).sum()
    n = len(boards)
    return {
        "eq_split_any": eq_any / n,
        "inversion_any": inv_any / n,
        "error_any": err_any / n,
        "eq_split_pair": eq_pairs / max(1, n * eq.sum()),
        "inversion_pair": inv_pairs / max(1, n * (~eq).sum()),
        "power": sep / max(1, n * (~eq).sum()),
    }


@pytest.mark.parametrize("method", FWER_METHODS)
def test_global_null_split_rate_at_most_alpha(method: str) -> None:
    """All models equal: any tier boundary is a false separation, so every
    FWER-controlled paired method splits some equal pair in <= alpha of boards."""
    r = rates("null", method)
    assert r["eq_split_any"] <= ALPHA + FWER_TOL, r


def test_overlap_rule_global_null_is_conservative() -> None:
    """Observed: two 95% marginal intervals rarely miss each other for equal
    models (disjointness needs |diff| > 1.96 (se_i + se_j)), so under the
    global null the overlap rule almost never splits."""
    assert rates("null", "overlap")["eq_split_any"] <= ALPHA


@pytest.mark.parametrize("method", ["cut-maxt", "cut-holm"])
@pytest.mark.parametrize("design", ["pairs40", "continuum"])
def test_cut_rule_familywise_guarantee(method: str, design: str) -> None:
    """Cut rule + FWER correction: P(some truly equal pair split OR some truly
    better model in a lower tier) <= alpha, whatever the true ratings."""
    r = rates(design, method)
    assert r["error_any"] <= ALPHA + FWER_TOL, r


@pytest.mark.parametrize("method", ["leader-maxt", "overlap"])
def test_leader_rules_can_split_equal_models(method: str) -> None:
    """Documents the limit of leader anchoring: with equal pairs at a
    borderline distance, one member can join the tier above while its twin
    starts the next tier.  The split rate is NOT bounded by alpha (observed
    ~0.3-0.5 of boards here), even with max-t control of every pair verdict."""
    assert rates("pairs40", method)["eq_split_any"] > 3 * ALPHA


@pytest.mark.parametrize("method", ["leader-maxt", "leader-holm", "overlap"])
def test_leader_rules_inversions_rare_but_not_zero(method: str) -> None:
    """Observed, not guaranteed: on a continuum a truly better model sits in a
    lower tier for < 2% of ordered pairs (it happens on a good share of boards)."""
    r = rates("continuum", method)
    assert r["inversion_pair"] <= LEADER_INVERSION_PER_PAIR_MAX, r


@pytest.mark.parametrize("method", list(METHODS))
def test_power_wide_gaps(method: str) -> None:
    """Pairs 80 Elo apart (>= 7 SE of the difference): every method puts them
    in the right order in different tiers almost always."""
    r = rates("pairs80", method)
    assert r["power"] >= POWER_MIN_WIDE, r


def test_paired_verdict_more_powerful_than_overlap() -> None:
    """With correlated estimates the paired difference is sharper than two
    marginal intervals: the paired leader rule separates the 40-apart pairs
    more often than interval overlap, even after max-t correction."""
    p_paired = rates("pairs40", "leader-maxt")["power"]
    p_overlap = rates("pairs40", "overlap")["power"]
    assert p_paired >= p_overlap + PAIRED_POWER_GAIN_MIN, (p_paired, p_overlap)


def test_simulation_is_seeded() -> None:
    a = simulate(np.zeros(3), 2, seed=1)
    b = simulate(np.zeros(3), 2, seed=1)
    for (ra, sa), (rb, sb) in zip(a, b, strict=True):
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(sa, sb)
