"""Wilcoxon signed-rank test: fixed method rule, checked against R's published output and brute force.

R's ``sleep`` data (Cushny & Peebles 1905, as printed in R's datasets package):
``wilcox.test(extra ~ group, data = sleep, paired = TRUE)`` prints ``V = 0,
p-value = 0.009091`` (ties and a zero: R's normal approximation with
continuity correction, zeros dropped). The Hollander & Wolfe depression data
of R's ``?wilcox.test`` example (no ties, no zeros) gives, exactly,
``V = 40, p-value = 0.01953`` one-sided ("greater"), so 0.03906 two-sided.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from arena.evals import paired_verdict
from arena.evals.signedrank import EXACT_MAX, signed_rank_test

SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
DEPRESSION_X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
DEPRESSION_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def _brute_force(d, zero_method):
    """Two-sided p-value by enumerating every sign pattern of the non-zero ranks."""
    d = np.asarray(d, dtype=float)
    if zero_method == "wilcox":
        d = d[d != 0]
    ranks = stats.rankdata(np.abs(d))[d != 0]
    obs = ranks[d[d != 0] > 0].sum()
    sums = np.array([ranks[list(s)].sum() for k in range(ranks.size + 1)
                     for s in itertools.combinations(range(ranks.size), k)])  # fmt: skip
    low, high = np.mean(sums <= obs + 1e-9), np.mean(sums >= obs - 1e-9)
    return min(1.0, 2 * min(low, high))


def test_sleep_matches_r_published_value():
    d = np.array(SLEEP_1) - np.array(SLEEP_2)
    r = signed_rank_test(d, zero_method="wilcox", method="normal")
    assert r.statistic == 0.0
    assert r.pvalue == pytest.approx(0.009091, abs=5e-7)
    assert r.ties and r.n_zero == 1 and r.n_nonzero == 9
    assert "normal approximation with continuity correction" in r.description


def test_depression_exact_matches_r_published_value():
    d = np.array(DEPRESSION_X) - np.array(DEPRESSION_Y)
    r = signed_rank_test(d)
    assert r.method == "exact" and r.statistic == 40.0
    assert r.pvalue == pytest.approx(2 * 0.01953, abs=1e-5)


def test_default_rule_is_exact_and_does_not_depend_on_scipy():
    d = np.array(SLEEP_1) - np.array(SLEEP_2)
    r = signed_rank_test(d)
    assert r.method == "exact" and r.zero_method == "pratt"
    assert r.pvalue == pytest.approx(_brute_force(d, "pratt"), abs=1e-12)
    assert "Pratt" in r.description and "mid-ranks" in r.description
    v = paired_verdict(SLEEP_1, SLEEP_2, np.random.default_rng(0), test="wilcoxon")
    assert v.pvalue == r.pvalue and "exact distribution" in v.reason


@pytest.mark.parametrize("zero_method", ["pratt", "wilcox"])
def test_exact_equals_enumeration_with_ties_and_zeros(zero_method):
    g = np.random.default_rng(5)
    for _ in range(20):
        d = g.integers(-3, 4, size=12).astype(float)  # many ties and zeros
        r = signed_rank_test(d, zero_method=zero_method, method="exact")
        assert r.pvalue == pytest.approx(_brute_force(d, zero_method), abs=1e-12)


def test_normal_matches_scipy_approx_with_correction_without_ties():
    d = np.random.default_rng(6).normal(0.2, 1.0, 300)
    ours = signed_rank_test(d)
    assert ours.method == "normal" and ours.n_nonzero > EXACT_MAX
    ref = stats.wilcoxon(d, method="approx", correction=True)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_all_zero_and_bad_options():
    assert signed_rank_test([0.0, 0.0]).pvalue == 1.0
    with pytest.raises(ValueError, match="zero_method"):
        signed_rank_test([1.0], zero_method="zsplit")
    with pytest.raises(ValueError, match="method"):
        signed_rank_test([1.0], method="permutation")
