"""Tests of arena.evals: a worked example (A right on 124 of 200 items, B on 120), closed forms and scipy cross-checks."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from scipy import stats

import arena
from arena.evals import (
    Interval,
    bca_interval,
    bootstrap_ci,
    bootstrap_models,
    chance_test,
    clopper_pearson_interval,
    cluster_bootstrap_ci,
    mcnemar,
    mcnemar_counts,
    paired_bootstrap,
    significant,
    wilson_interval,
)

#: Bootstrap quantiles of the worked example vary with the seed by about one item (1/200).
EXAMPLE_TOL = 0.0101
#: Closed forms vs scipy: floating-point agreement.
CLOSED_FORM_TOL = 1e-10
#: Same resamples, same formula: identical up to rounding.
SAME_DRAWS_TOL = 1e-12


def worked_example() -> tuple[np.ndarray, np.ndarray]:
    """A right on 124 of 200, B on 120; 6 questions only A gets, 2 only B."""
    both, a_only, b_only, neither = 118, 6, 2, 74
    a = np.r_[np.ones(both), np.ones(a_only), np.zeros(b_only), np.zeros(neither)]
    b = np.r_[np.ones(both), np.zeros(a_only), np.ones(b_only), np.zeros(neither)]
    return a, b


# --- the three functions fixed by the issue ---------------------------------------------


def test_worked_example_at_fixed_seed():
    a, b = worked_example()
    assert a.sum() == 124 and b.sum() == 120
    rng = np.random.default_rng(0)
    acc_a, lo_a, hi_a = bootstrap_ci(a, rng)
    acc_b, lo_b, hi_b = bootstrap_ci(b, rng)
    diff, lo, hi = paired_bootstrap(a, b, rng)
    assert acc_a == pytest.approx(0.62) and acc_b == pytest.approx(0.60)
    assert (lo_a, hi_a) == pytest.approx((0.555, 0.685), abs=EXAMPLE_TOL)
    assert (lo_b, hi_b) == pytest.approx((0.535, 0.665), abs=EXAMPLE_TOL)
    assert diff == pytest.approx(0.02)
    assert (lo, hi) == pytest.approx((-0.005, 0.05), abs=EXAMPLE_TOL)
    assert not significant(lo, hi)


def test_the_seed_designs_signatures_exactly():
    """The seed design fixes these three signatures; the rest of arena says ``rounds``."""
    assert str(inspect.signature(arena.bootstrap_ci)) == "(correct, rng, n_boot=2000, level=0.95)"
    assert (
        str(inspect.signature(arena.paired_bootstrap))
        == "(correct_a, correct_b, rng, n_boot=2000, level=0.95)"
    )
    assert str(inspect.signature(arena.significant)) == "(low, high)"


def test_worked_example_as_the_seed_writes_it():
    """A 124/200 vs B 120/200: the paired interval contains 0, ``significant`` is false."""
    a, b = worked_example()
    rng = np.random.default_rng(0)
    acc_a, lo_a, hi_a = arena.bootstrap_ci(a, rng, n_boot=2000, level=0.95)
    diff, lo, hi = arena.paired_bootstrap(a, b, rng, n_boot=2000, level=0.95)
    assert acc_a == pytest.approx(0.62) and lo_a < 0.62 < hi_a
    assert diff == pytest.approx(0.02) and lo <= 0 <= hi
    assert arena.significant(lo, hi) is False
    # the default is the seed's 2000 resamples: the same draws as n_boot=2000 written out
    assert arena.paired_bootstrap(a, b, np.random.default_rng(3)) == arena.paired_bootstrap(
        a, b, np.random.default_rng(3), 2000
    )


@pytest.mark.parametrize("seed", range(5))
def test_worked_example_not_significant_for_any_seed(seed):
    a, b = worked_example()
    diff, lo, hi = paired_bootstrap(a, b, np.random.default_rng(seed))
    assert lo <= 0 <= hi and not significant(lo, hi)
    assert hi - lo < 0.07  # paired: far narrower than the unpaired ~0.13


def _reference_bootstrap(correct, rng, rounds, level):
    """The issue's description, literally."""
    n = len(correct)
    idx = rng.integers(0, n, size=(rounds, n))
    accs = correct[idx].mean(axis=1)
    return correct.mean(), *np.quantile(accs, [(1 - level) / 2, (1 + level) / 2])


def _reference_paired(a, b, rng, rounds, level):
    n = len(a)
    idx = rng.integers(0, n, size=(rounds, n))
    d = a[idx].mean(axis=1) - b[idx].mean(axis=1)
    return a.mean() - b.mean(), *np.quantile(d, [(1 - level) / 2, (1 + level) / 2])


@pytest.mark.parametrize(
    "n, rounds, level",
    # single block; odd sizes; one row per block; several stacked products with a remainder
    [(200, 2000, 0.95), (37, 501, 0.9), (200000, 7, 0.5), (5000, 3001, 0.95)],
)
def test_rng_consumption_matches_the_literal_recipe(n, rounds, level):
    g = np.random.default_rng(42)
    a = (g.random(n) < 0.6).astype(float)
    b = (g.random(n) < 0.5).astype(float)
    ours, ref = np.random.default_rng(7), np.random.default_rng(7)
    assert bootstrap_ci(a, ours, rounds, level) == pytest.approx(
        _reference_bootstrap(a, ref, rounds, level), abs=SAME_DRAWS_TOL
    )
    assert paired_bootstrap(a, b, ours, rounds, level) == pytest.approx(
        _reference_paired(a, b, ref, rounds, level), abs=SAME_DRAWS_TOL
    )
    # Both generators are left in the same state.
    assert ours.integers(0, 2**62) == ref.integers(0, 2**62)


def test_significant():
    assert significant(0.01, 0.05)
    assert significant(-0.05, -0.01)
    assert not significant(-0.01, 0.05)
    assert not significant(0.0, 0.05)
    with pytest.raises(ValueError):
        significant(0.1, -0.1)


@pytest.mark.parametrize(
    "call",
    [
        lambda r: bootstrap_ci([], r),
        lambda r: bootstrap_ci([0, 1, 2], r),
        lambda r: bootstrap_ci([0.5, 1], r),
        lambda r: bootstrap_ci([[0, 1]], r),
        lambda r: bootstrap_ci([0, 1], r, level=1.0),
        lambda r: bootstrap_ci([0, 1], r, level=0),
        lambda r: bootstrap_ci([0, 1], r, n_boot=0),
        lambda r: paired_bootstrap([0, 1], [0, 1, 1], r),
        lambda r: paired_bootstrap([], [], r),
        lambda r: paired_bootstrap([0, 1], [0, 3], r),
        lambda r: paired_bootstrap([0, 1], [0, 1], r, level=-0.5),
        lambda r: mcnemar([1, 0], [1]),
        lambda r: chance_test([1, 0], 1.0),
        lambda r: wilson_interval(5, 3),
        lambda r: cluster_bootstrap_ci([1, 0], [1], r),
    ],
)
def test_malformed_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call(np.random.default_rng(0))


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError):
        bootstrap_ci([0, 1], 0)


def test_booleans_accepted():
    rng1, rng2 = np.random.default_rng(1), np.random.default_rng(1)
    assert bootstrap_ci([True, False, True], rng1, 50) == bootstrap_ci([1, 0, 1], rng2, 50)


# --- many models at once ------------------------------------------------------------------


def test_bootstrap_models_equals_pairwise_functions():
    g = np.random.default_rng(3)
    x = (g.random((150, 4)) < [0.5, 0.6, 0.7, 0.55]).astype(int)
    res = bootstrap_models(x, np.random.default_rng(9), rounds=300, level=0.9)
    for j in range(4):
        acc, lo, hi = bootstrap_ci(x[:, j], np.random.default_rng(9), 300, 0.9)
        assert (res.accuracy[j], res.low[j], res.high[j]) == pytest.approx((acc, lo, hi))
    for i in range(4):
        for j in range(4):
            if i == j:
                continue
            d, lo, hi = paired_bootstrap(x[:, i], x[:, j], np.random.default_rng(9), 300, 0.9)
            got = (res.diff[i, j], res.diff_low[i, j], res.diff_high[i, j])
            assert got == pytest.approx((d, lo, hi), abs=SAME_DRAWS_TOL)


def test_bootstrap_models_with_missing_items_uses_shared_items():
    g = np.random.default_rng(4)
    x = (g.random((400, 3)) < 0.6).astype(int)
    present = np.ones_like(x, dtype=bool)
    present[:50, 1] = False
    res = bootstrap_models(x, np.random.default_rng(0), present=present, rounds=500)
    assert res.n_items.tolist() == [400, 350, 400]
    assert res.shared[0, 1] == 350 and res.shared[0, 2] == 400
    assert res.accuracy[1] == pytest.approx(x[50:, 1].mean())
    assert res.diff[0, 1] == pytest.approx(x[50:, 0].mean() - x[50:, 1].mean())
    assert res.diff[0, 2] == pytest.approx(x[:, 0].mean() - x[:, 2].mean())
    assert res.diff_low[0, 1] < res.diff[0, 1] < res.diff_high[0, 1]
    assert res.diff_low[1, 0] == pytest.approx(-res.diff_high[0, 1])


def test_bootstrap_models_model_with_few_items():
    # A model scored on 2 of 50 items: some resamples draw neither; they are ignored.
    x = np.tile([1, 0], (50, 1))
    present = np.ones_like(x, dtype=bool)
    present[2:, 1] = False
    res = bootstrap_models(x, np.random.default_rng(0), present=present, rounds=400)
    assert np.isfinite([res.low, res.high]).all()
    assert res.shared[0, 1] == 2


@pytest.mark.parametrize(
    "correct, present",
    [
        (np.zeros(5), None),  # not 2-D
        (np.zeros((0, 2)), None),  # empty
        (np.full((3, 2), 2), None),  # not 0/1
        (np.zeros((3, 2)), np.ones((3, 3), dtype=bool)),  # shapes differ
        (np.zeros((2, 2)), np.array([[True, False], [True, False]])),  # a model with no items
        (np.zeros((2, 2)), np.array([[True, False], [False, True]])),  # a pair with no shared item
    ],
)
def test_bootstrap_models_validates(correct, present):
    with pytest.raises(ValueError):
        bootstrap_models(correct, np.random.default_rng(0), present=present)


# --- closed-form intervals vs scipy -------------------------------------------------------


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (124, 200), (1, 1), (999, 1000)])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_wilson_and_clopper_pearson_match_scipy(k, n, level):
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    got = wilson_interval(k, n, level=level)
    assert (got.low, got.high) == pytest.approx((ref.low, ref.high), abs=CLOSED_FORM_TOL)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    got = clopper_pearson_interval(k, n, level=level)
    assert (got.low, got.high) == pytest.approx((ref.low, ref.high), abs=CLOSED_FORM_TOL)
    assert got.estimate == k / n


def test_wilson_worked_example():
    w = wilson_interval(124, 200)
    assert (w.low, w.high) == pytest.approx((0.5511, 0.6844), abs=1e-4)  # by hand, z = 1.96


@pytest.mark.parametrize(
    "data_kind, statistic",
    # (the median of 0/1 data is degenerate: scipy returns NaN, so it is not compared)
    [
        ("binary", None),
        ("binary", np.std),
        ("continuous", None),
        ("continuous", np.median),
        ("continuous", np.std),
    ],
)
def test_bca_matches_scipy_on_the_same_draws(data_kind, statistic):
    g = np.random.default_rng(11)
    data = (g.random(60) < 0.7).astype(float) if data_kind == "binary" else g.gamma(2.0, size=60)
    ref = stats.bootstrap(
        (data,),
        statistic or np.mean,
        method="BCa",
        n_resamples=999,
        confidence_level=0.9,
        rng=np.random.default_rng(5),
    ).confidence_interval
    got = bca_interval(data, np.random.default_rng(5), statistic=statistic, rounds=999, level=0.9)
    assert isinstance(got, Interval)
    assert (got.low, got.high) == pytest.approx((ref.low, ref.high), abs=1e-9)


def test_bca_validates():
    with pytest.raises(ValueError):
        bca_interval([1.0], np.random.default_rng(0))
    with pytest.raises(ValueError):
        bca_interval([1.0, np.nan], np.random.default_rng(0))


# --- cluster bootstrap --------------------------------------------------------------------


def test_cluster_bootstrap_with_singletons_is_the_plain_bootstrap():
    a, _ = worked_example()
    got = cluster_bootstrap_ci(a, np.arange(a.size), np.random.default_rng(2), rounds=800)
    assert (got.estimate, got.low, got.high) == pytest.approx(
        bootstrap_ci(a, np.random.default_rng(2), 800), abs=SAME_DRAWS_TOL
    )


def test_cluster_bootstrap_matches_cluster_robust_standard_error():
    # 60 documents of 10 questions; difficulty is shared within a document.
    g = np.random.default_rng(8)
    n_docs, size = 60, 10
    p_doc = g.beta(2, 2, n_docs)
    correct = (g.random((n_docs, size)) < p_doc[:, None]).astype(float).ravel()
    docs = np.repeat(np.arange(n_docs), size)
    est = correct.mean()
    resid = np.bincount(docs, weights=correct - est)
    se_robust = np.sqrt(np.sum(resid**2)) / correct.size  # sandwich SE, no small-sample factor
    got = cluster_bootstrap_ci(correct, docs, np.random.default_rng(0), rounds=4000)
    se_boot = (got.high - got.low) / (2 * stats.norm.ppf(0.975))
    assert se_boot == pytest.approx(se_robust, rel=0.1)  # Monte Carlo and shape: 10 %
    iid = bootstrap_ci(correct, np.random.default_rng(0), 4000)
    assert got.high - got.low > 1.5 * (iid[2] - iid[1])  # clustering widens the interval


def test_cluster_bootstrap_of_paired_difference():
    a, b = worked_example()
    got = cluster_bootstrap_ci(a - b, np.arange(a.size) // 4, np.random.default_rng(0))
    assert got.estimate == pytest.approx(0.02)
    assert got.low < 0.02 < got.high


# --- McNemar ------------------------------------------------------------------------------


def test_mcnemar_worked_example_exact():
    a, b = worked_example()
    res = mcnemar(a, b)
    assert (res.a_only, res.b_only, res.method) == (6, 2, "exact")
    assert res.pvalue == pytest.approx(stats.binomtest(6, 8, 0.5).pvalue, abs=CLOSED_FORM_TOL)
    assert res.pvalue > 0.05


@pytest.mark.parametrize("b, c", [(0, 0), (0, 5), (12, 3), (10, 10), (1, 23)])
def test_mcnemar_exact_matches_binomtest(b, c):
    res = mcnemar_counts(b, c)
    assert res.method == "exact"
    expected = 1.0 if b + c == 0 else stats.binomtest(b, b + c, 0.5).pvalue
    assert res.pvalue == pytest.approx(expected, abs=CLOSED_FORM_TOL)


@pytest.mark.parametrize("b, c", [(30, 10), (13, 12), (100, 140), (25, 0)])
def test_mcnemar_chi2_closed_form(b, c):
    res = mcnemar_counts(b, c)
    assert res.method == "chi2"
    stat = (abs(b - c) - 1) ** 2 / (b + c)
    assert res.statistic == pytest.approx(stat)
    assert res.pvalue == pytest.approx(stats.chi2.sf(stat, 1), abs=CLOSED_FORM_TOL)


def test_mcnemar_threshold_is_configurable():
    assert mcnemar_counts(30, 10, exact_below=100).method == "exact"
    assert mcnemar_counts(3, 1, exact_below=0).method == "chi2"


# --- chance floor -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "k, n, p0", [(30, 100, 0.25), (40, 100, 0.25), (0, 10, 0.5), (10, 10, 0.5)]
)
def test_chance_test_matches_one_sided_binomtest(k, n, p0):
    correct = np.r_[np.ones(k), np.zeros(n - k)]
    res = chance_test(correct, p0)
    ref = stats.binomtest(k, n, p0, alternative="greater")
    assert res.pvalue == pytest.approx(ref.pvalue, abs=CLOSED_FORM_TOL)
    assert res.chance_corrected == pytest.approx((k / n - p0) / (1 - p0))
    low = ref.proportion_ci(confidence_level=0.95, method="exact").low
    assert res.chance_corrected_low == pytest.approx((low - p0) / (1 - p0), abs=CLOSED_FORM_TOL)


def test_chance_corrected_accuracy_scale():
    assert chance_test([1] * 8, 0.25).chance_corrected == pytest.approx(1.0)
    assert chance_test([1, 0, 0, 0], 0.25).chance_corrected == pytest.approx(0.0)
