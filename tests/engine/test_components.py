"""Comparable sets and the small-sample rule: who may be ranked, and against whom."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.special import logit

from arena.core.outcomes import A_WINS, B_WINS, TIE
from arena.engine.counts import clustered_table, count_table
from arena.engine.fitting.design import make_design
from arena.engine.fitting.smallsample import SMALL_SAMPLE_BATTLES, score_bounds, widen_small_samples
from arena.engine.rate import rate
from arena.engine.scale import SCALE
from arena.engine.sets.components import components, other_sets, subtable
from arena.evals import wilson_interval
from tests.helpers.simulate import simulate

#: Score bounds found by bisection vs the closed-form Wilson interval (logits).
BISECTION_TOL = 1e-9
ROUNDS = 200


def _group(rng, first: int, theta: np.ndarray, n: int):
    a, b, o = simulate(rng, theta, n, tie_rate=0.1)
    return a + first, b + first, o


@pytest.fixture(scope="module")
def split():
    """Group A (models 0-3, 2400 battles), group B (4-8, 600 battles), and
    model 9 that beat group A three times and never lost."""
    rng = np.random.default_rng(11)
    a1, b1, o1 = _group(rng, 0, np.array([0.0, 0.3, 0.6, 0.9]), 2400)
    a2, b2, o2 = _group(rng, 4, np.array([0.0, 0.4, 0.8, 1.2, 1.6]), 600)
    a3, b3, o3 = np.full(3, 9), np.array([0, 1, 2]), np.full(3, A_WINS)
    a = np.concatenate([a1, a2, a3])
    b = np.concatenate([b1, b2, b3])
    o = np.concatenate([o1, o2, o3])
    group_a = (a1, b1, o1)
    return a, b, o, group_a


def test_components_ordered_by_battles_not_size(split):
    a, b, o, _ = split
    comps = components(count_table(a, b, o, n_models=10))
    # group B has more models, group A more battles: A is the comparable set
    assert comps.main.tolist() == [0, 1, 2, 3]
    assert comps.battles[0] == 2400 and comps.battles[1] == 600
    assert comps.strong[9] > 1 and comps.weak[9] == comps.weak[0]
    assert comps.weak[4] != comps.weak[0]
    assert not comps.exists


def test_comparable_set_is_fitted_alone_same_bytes(split):
    a, b, o, (a1, b1, o1) = split
    full = rate(count_table(a, b, o, n_models=10), rounds=ROUNDS, seed=5)
    alone = rate(count_table(a1, b1, o1, n_models=4), rounds=ROUNDS, seed=5)
    for name in ("rating", "ci_low", "ci_high", "se"):
        assert np.array_equal(getattr(full, name)[:4], getattr(alone, name)), name
    assert np.array_equal(full.samples[:, :4], alone.samples)
    assert full.comparable.tolist() == [True] * 4 + [False] * 6


def test_cluster_bootstrap_of_the_set_same_bytes(split):
    a, b, o, (a1, b1, o1) = split
    rng = np.random.default_rng(3)
    judges = rng.integers(0, 40, a.size)
    table, clusters = clustered_table(a, b, o, judges, n_models=10)
    full = rate(table, rounds=ROUNDS, seed=5, clusters=clusters)
    t1, c1 = clustered_table(a1, b1, o1, judges[: a1.size], n_models=4)
    alone = rate(t1, rounds=ROUNDS, seed=5, clusters=c1)
    assert np.array_equal(full.ci_low[:4], alone.ci_low)
    assert np.array_equal(full.samples[:, :4], alone.samples)


def test_outside_models_have_no_common_scale_rating(split):
    a, b, o, _ = split
    r = rate(count_table(a, b, o, n_models=10), rounds=ROUNDS, seed=5)
    for k in range(4, 9):
        assert "disconnected" in r.flags[k]
        assert np.isnan(r.rating[k]) and np.isnan(r.ci_low[k]) and np.isnan(r.ci_high[k])
        assert np.isnan(r.samples[:, k]).all()
    # model 9 never lost: no finite rating, but the data put a floor under it
    assert {"never_lost", "no_mle"} <= set(r.flags[9])
    assert np.isnan(r.rating[9])
    assert np.isfinite(r.ci_low[9]) and r.ci_high[9] == np.inf
    assert r.ci_low[9] < r.rating[:4].max()  # three wins prove little
    assert any("comparable set" in w for w in r.warnings)
    assert r.diagnostics["components"]["outside_models"] == 6


def test_joint_mode_keeps_the_prior_fit(split):
    a, b, o, _ = split
    r = rate(count_table(a, b, o, n_models=10), rounds=ROUNDS, seed=5, comparable="joint")
    assert np.isfinite(r.rating).all() and r.fit.prior_used > 0


def test_anchor_outside_the_set_is_refused(split):
    a, b, o, _ = split
    with pytest.raises(ValueError, match="not in the comparable set"):
        rate(count_table(a, b, o, n_models=10), rounds=ROUNDS, anchor=(5, 1000.0))


def test_other_sets_one_board_per_set_of_two_or_more(split):
    a, b, o, _ = split
    # model 10 beat group B twice and never lost: it belongs on B's board, unranked
    a = np.concatenate([a, [10, 10]])
    b = np.concatenate([b, [4, 5]])
    o = np.concatenate([o, [A_WINS, A_WINS]])
    table = count_table(a, b, o, n_models=11)
    comps = components(table)
    sets = other_sets(comps)
    # model 9 (never lost to A) is a set of one: no board of its own, and not B's
    assert [s.tolist() for s in sets] == [[4, 5, 6, 7, 8, 10]]
    sub, _ = subtable(table, sets[0])
    ratings = rate(sub, rounds=ROUNDS, seed=5)
    assert ratings.comparable.tolist() == [True] * 5 + [False]
    assert "no_mle" in ratings.flags[5] and np.isinf(ratings.ci_high[5])
    # a connected table has no other set
    assert other_sets(components(count_table(*split[3], n_models=4))) == []


def test_subtable_renumbers_in_order(split):
    a, b, o, _ = split
    table = count_table(a, b, o, n_models=10)
    sub, cells = subtable(table, np.array([4, 5, 6, 7, 8]))
    assert sub.n_models == 5 and sub.n.sum() == 600
    assert np.array_equal(sub.a, table.a[cells] - 4)


def test_score_bounds_equal_wilson_against_one_fixed_opponent():
    # model 1 plays only model 0 (w wins, l losses): with model 0 held fixed the
    # score interval is the Wilson interval of the win rate, on the logit scale
    w, n = 7, 12
    a = np.array([1] * n)
    b = np.zeros(n, dtype=int)
    o = np.array([A_WINS] * w + [B_WINS] * (n - w))
    table = count_table(a, b, o, n_models=2)
    design = make_design(table, ties="half", both_bad="tie", position=False)
    x = np.array([0.0, 0.0])
    lo, _, hi = score_bounds(design, x, np.array([1]), level=0.95)
    ref = wilson_interval(w, n, level=0.95)
    assert lo[0] == pytest.approx(logit(ref.low), abs=BISECTION_TOL)
    assert hi[0] == pytest.approx(logit(ref.high), abs=BISECTION_TOL)


def test_score_bounds_infinite_when_never_lost():
    a, b, o = np.ones(3, dtype=int), np.zeros(3, dtype=int), np.full(3, A_WINS)
    table = count_table(a, b, o, n_models=2)
    design = make_design(table, ties="half", both_bad="tie", position=False)
    lo, mid, hi = score_bounds(design, np.zeros(2), np.array([1]), level=0.95)
    assert np.isfinite(lo[0]) and mid[0] == np.inf and hi[0] == np.inf


def test_two_ties_get_an_honest_interval(lmarena_table, lmarena):
    names = lmarena[0]
    k = names.index("qwen3-coder-480b-a35b-instruct")
    plain = rate(lmarena_table, rounds=ROUNDS, seed=2, small_sample=False)
    ruled = rate(lmarena_table, rounds=ROUNDS, seed=2)
    z = 1.959963984540054
    assert ruled.small_sample[k]
    fisher = ruled.fit.se[k]
    assert ruled.ci_low[k] <= ruled.rating[k] - z * fisher
    assert ruled.ci_high[k] >= ruled.rating[k] + z * fisher
    # the collapsed bootstrap interval was far narrower than two ties allow
    assert plain.ci_high[k] - plain.ci_low[k] < 0.2 * (ruled.ci_high[k] - ruled.ci_low[k])
    # every model with enough battles keeps its numbers, byte for byte
    keep = ~ruled.small_sample
    assert keep.sum() == len(names) - 1
    for name in ("rating", "se", "samples"):
        assert np.array_equal(getattr(plain, name), getattr(ruled, name)), name
    for name in ("ci_low", "ci_high"):
        assert np.array_equal(getattr(plain, name)[keep], getattr(ruled, name)[keep]), name


@pytest.mark.parametrize("ci", ["bootstrap", "sandwich", "fisher"])
def test_rule_never_narrower_than_method_or_fisher(ci):
    rng = np.random.default_rng(8)
    theta = rng.normal(0, 1, 8)
    a, b, o = simulate(rng, theta, 4000)
    # model 8: a handful of battles, won some and lost some, tied one
    a = np.concatenate([a, [8, 8, 8, 8, 8]])
    b = np.concatenate([b, [0, 1, 2, 3, 4]])
    o = np.concatenate([o, [A_WINS, B_WINS, TIE, A_WINS, B_WINS]])
    table = count_table(a, b, o, n_models=9)
    r = rate(table, ci=ci, rounds=ROUNDS, seed=1, small_sample=False)
    lo, hi, mask = widen_small_samples(r.fit, r.ci_low, r.ci_high, r.se)
    assert mask.tolist() == [False] * 8 + [True]
    assert np.all(lo <= r.ci_low) and np.all(hi >= r.ci_high)
    z = 1.959963984540054
    assert lo[8] <= r.rating[8] - z * r.fit.se[8] and hi[8] >= r.rating[8] + z * r.fit.se[8]
    assert r.fit.design.battles_per_model[8] < SMALL_SAMPLE_BATTLES


def test_rule_slope_maps_logits_to_centred_ratings():
    # a model outside nothing: its score bound moves its centred rating by (1 - 1/M)
    rng = np.random.default_rng(4)
    a, b, o = simulate(rng, np.zeros(5), 3000)
    a = np.concatenate([a, [5] * 6])
    b = np.concatenate([b, [0, 1, 2, 0, 1, 2]])
    o = np.concatenate([o, [A_WINS, A_WINS, B_WINS, TIE, B_WINS, A_WINS]])
    r = rate(count_table(a, b, o, n_models=6), ci="fisher", small_sample=False)
    lo, _, hi = score_bounds(r.fit.design, r.fit.x, np.array([5]))
    got_lo, got_hi, _ = widen_small_samples(r.fit, r.rating, r.rating, r.se)
    slope = SCALE * (1 - 1 / 6)
    expect = r.rating[5] + slope * (np.array([lo[0], hi[0]]) - r.fit.x[5])
    fisher = 1.959963984540054 * r.fit.se[5]
    assert got_lo[5] == pytest.approx(min(expect[0], r.rating[5] - fisher))
    assert got_hi[5] == pytest.approx(max(expect[1], r.rating[5] + fisher))


def test_library_warnings_and_errors_name_models_by_name(split):
    """``names=`` on the public entry points: no model is named by its table index."""
    from arena.engine.board import BoardOptions, rate_board
    from arena.engine.fitting.fit import fit

    a, b, o, _ = split
    table = count_table(a, b, o, n_models=10)
    names = [f"model-{chr(ord('a') + i)}" for i in range(10)]
    plain = rate(table, rounds=ROUNDS, seed=5)
    named = rate(table, rounds=ROUNDS, seed=5, names=names)
    assert any("models 4, 5, 6, 7 and 8" in w for w in plain.warnings)  # without: indices
    text = " ".join(named.warnings)
    assert "models model-e, model-f, model-g, model-h and model-i are not connected" in text
    assert "model model-j never lost" in text
    assert not any(re.search(r"\bmodels? \d", w) for w in named.warnings)
    # the same sentences as naming them afterwards, and no sentence twice
    assert named.warnings == plain.named_warnings(names)
    assert named.named_warnings(names) == named.warnings
    np.testing.assert_array_equal(named.rating, plain.rating)
    board = rate_board(table, BoardOptions(rounds=ROUNDS, seed=5), names=names)
    assert board.ratings.warnings == named.warnings
    assert any("model-j" in w for w in fit(table, names=names).warnings)
    with pytest.raises(ValueError, match="anchor model 'model-e' is not in the comparable set"):
        rate(table, rounds=ROUNDS, anchor=(4, 1000.0), names=names)
    with pytest.raises(ValueError, match="one name per model"):
        rate(table, rounds=ROUNDS, names=names[:3])
