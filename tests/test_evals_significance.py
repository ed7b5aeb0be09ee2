"""Tests of arena.evals: permutation test, multiple-comparison corrections, power planning."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from arena.evals import (
    adjust_pvalues,
    benjamini_hochberg,
    holm,
    items_needed,
    items_needed_paired,
    paired_permutation_test,
    simulate_power,
    simulate_power_paired,
)

#: Monte Carlo error of a p-value from 20,000 permutations is below 0.004; allow ~3 SE.
PERM_TOL = 0.012
#: Simulated power from 4,000 experiments has SE ~0.0065; allow ~3 SE plus the
#: normal approximation's own error.
POWER_TOL = 0.03


def _pair(n_both, a_only, b_only, n_neither):
    a = np.r_[np.ones(n_both), np.ones(a_only), np.zeros(b_only), np.zeros(n_neither)]
    b = np.r_[np.ones(n_both), np.zeros(a_only), np.ones(b_only), np.zeros(n_neither)]
    return a, b


# --- permutation test ---------------------------------------------------------------------


@pytest.mark.parametrize("a_only, b_only", [(6, 2), (15, 4), (9, 9)])
def test_permutation_of_accuracy_is_the_exact_sign_test(a_only, b_only):
    # For accuracy only discordant items move under a swap, so the exact
    # permutation distribution is the two-sided binomial(a_only + b_only, 1/2).
    a, b = _pair(100, a_only, b_only, 50)
    res = paired_permutation_test(a, b, np.random.default_rng(0), n_perm=20000)
    exact = stats.binomtest(a_only, a_only + b_only, 0.5).pvalue
    assert res.observed == pytest.approx((a_only - b_only) / a.size)
    assert res.pvalue == pytest.approx(exact, abs=PERM_TOL)


def test_permutation_one_sided():
    a, b = _pair(100, 15, 4, 50)
    greater = paired_permutation_test(
        a, b, np.random.default_rng(1), n_perm=20000, alternative="greater"
    )
    less = paired_permutation_test(a, b, np.random.default_rng(1), n_perm=20000, alternative="less")
    exact = stats.binomtest(15, 19, 0.5, alternative="greater").pvalue
    assert greater.pvalue == pytest.approx(exact, abs=PERM_TOL)
    assert less.pvalue > 0.99


def _f1_batch(batch: np.ndarray) -> np.ndarray:
    """Corpus F1 from per-item (tp, fp, fn) rows; batch shape (r, n, 3)."""
    tp, fp, fn = batch.sum(axis=1).T
    return 2 * tp / (2 * tp + fp + fn)


def test_permutation_for_a_corpus_metric():
    g = np.random.default_rng(3)
    n = 300
    a = np.column_stack([g.binomial(3, 0.7, n), g.binomial(2, 0.2, n), g.binomial(2, 0.3, n)])
    b = np.column_stack([g.binomial(3, 0.6, n), g.binomial(2, 0.3, n), g.binomial(2, 0.4, n)])
    res = paired_permutation_test(a, b, np.random.default_rng(0), metric=_f1_batch, n_perm=4000)
    ta, fa, na = a.sum(axis=0)
    tb, fb, nb = b.sum(axis=0)
    assert res.observed == pytest.approx(2 * ta / (2 * ta + fa + na) - 2 * tb / (2 * tb + fb + nb))
    assert res.pvalue < 0.01
    # Same system against itself: every swap is a no-op, p = 1.
    same = paired_permutation_test(a, a, np.random.default_rng(0), metric=_f1_batch, n_perm=200)
    assert same.pvalue == 1.0


def test_permutation_validates():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        paired_permutation_test([1, 0], [1], rng)
    with pytest.raises(ValueError):
        paired_permutation_test([], [], rng)
    with pytest.raises(ValueError):
        paired_permutation_test([1, 0], [0, 1], rng, alternative="bigger")
    with pytest.raises(ValueError):
        paired_permutation_test([1, 0], [0, 1], rng, metric=lambda x: x.sum())


# --- Holm and Benjamini-Hochberg ----------------------------------------------------------


P = np.array([0.01, 0.04, 0.03, 0.005, 0.20, 0.04])


def test_holm_by_hand():
    # sorted: .005 .01 .03 .04 .04 .20 times 6 5 4 3 2 1 -> .03 .05 .12 .12 .08 .20,
    # then running max -> .03 .05 .12 .12 .12 .20
    expected = np.array([0.05, 0.12, 0.12, 0.03, 0.20, 0.12])
    assert holm(P) == pytest.approx(expected)
    assert adjust_pvalues(P, "holm") == pytest.approx(expected)


def test_bh_by_definition():
    # adjusted p_(i) = min over j >= i of min(1, m p_(j) / j), by brute force
    g = np.random.default_rng(0)
    for p in (P, g.random(50) ** 3, np.array([0.5]), np.array([1.0, 0.0, 0.3])):
        m = p.size
        srt = np.sort(p)
        by_rank = [min(1.0, min(m * srt[j] / (j + 1) for j in range(i, m))) for i in range(m)]
        assert np.sort(benjamini_hochberg(p)) == pytest.approx(by_rank)
        assert adjust_pvalues(p, "bh") == pytest.approx(benjamini_hochberg(p))


def test_corrections_properties():
    g = np.random.default_rng(1)
    p = g.random(30) ** 2
    assert np.all(holm(p) >= benjamini_hochberg(p) - 1e-15)
    assert np.all(benjamini_hochberg(p) >= p - 1e-15)
    assert adjust_pvalues(p, "none") == pytest.approx(p)
    assert holm([]).size == 0
    for bad in ([0.5, 1.5], [np.nan], [[0.1]]):
        with pytest.raises(ValueError):
            holm(bad)
    with pytest.raises(ValueError):
        adjust_pvalues(p, "bonferroni-ish")


# --- sample-size planning -----------------------------------------------------------------


def test_items_needed_closed_form():
    # Classic two-proportion example: 0.60 vs 0.70, alpha 0.05, power 0.80 -> 356 per group.
    assert items_needed(0.6, 0.7) == 356
    assert items_needed(0.7, 0.6) == 356
    assert items_needed(0.6, 0.7, power=0.9) > 356


def test_items_needed_paired_closed_form():
    p10, p01 = 0.10, 0.05
    za, zb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    psi, delta = p10 + p01, p10 - p01
    n = (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2
    assert items_needed_paired(p10, p01) == math.ceil(n)
    # Pairing pays off: the same 5-point gap with little discordance needs far fewer items.
    assert items_needed_paired(p10, p01) < items_needed(0.65, 0.60)


def test_simulated_power_reaches_the_plan_unpaired():
    n = items_needed(0.6, 0.7)
    power = simulate_power(n, 0.6, 0.7, np.random.default_rng(0), n_sim=4000)
    assert power == pytest.approx(0.8, abs=POWER_TOL)


def test_simulated_power_reaches_the_plan_paired():
    n = items_needed_paired(0.10, 0.05)
    rng = np.random.default_rng(0)
    plain = simulate_power_paired(n, 0.10, 0.05, rng, n_sim=4000, continuity=False)
    assert plain == pytest.approx(0.8, abs=POWER_TOL)
    corrected = simulate_power_paired(n, 0.10, 0.05, rng, n_sim=4000)
    assert 0.8 - 2 * POWER_TOL < corrected <= plain + POWER_TOL  # continuity costs a little


def test_power_under_the_null_is_alpha():
    rng = np.random.default_rng(2)
    assert simulate_power(500, 0.6, 0.6, rng, n_sim=4000) == pytest.approx(0.05, abs=0.015)
    assert simulate_power_paired(500, 0.08, 0.08, rng, n_sim=4000) <= 0.05 + 0.015


def test_planning_validates():
    with pytest.raises(ValueError):
        items_needed(0.6, 0.6)
    with pytest.raises(ValueError):
        items_needed(0.6, 1.2)
    with pytest.raises(ValueError):
        items_needed_paired(0.7, 0.5)
    with pytest.raises(ValueError):
        items_needed(0.6, 0.7, power=1.0)
