"""Degenerate per-item data: no zero-width resampling intervals (constant data falls back, and says so)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.evals import (
    bca_interval,
    bootstrap_ci,
    clopper_pearson_interval,
    cluster_bootstrap_ci,
    paired_bootstrap,
)
from arena.evals.bootstrap import FALLBACK_NOTE
from arena.evals.checks import DegenerateResamplesWarning

N_BOOT = 300


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_bootstrap_ci_falls_back_to_clopper_pearson(value):
    x = np.full(25, value)
    with pytest.warns(DegenerateResamplesWarning, match="Clopper-Pearson"):
        acc, lo, hi = bootstrap_ci(x, np.random.default_rng(0), n_boot=N_BOOT)
    cp = clopper_pearson_interval(int(x.sum()), x.size)
    assert (acc, lo, hi) == (value, cp.low, cp.high)
    assert hi > lo


def test_bootstrap_ci_consumes_rng_as_before():
    rng1, rng2 = np.random.default_rng(4), np.random.default_rng(4)
    with pytest.warns(DegenerateResamplesWarning):
        bootstrap_ci(np.ones(10), rng1, n_boot=N_BOOT)
    rng2.integers(0, 10, size=(N_BOOT, 10))
    assert rng1.integers(1 << 30) == rng2.integers(1 << 30)


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_bca_falls_back_and_says_so(value):
    x = np.full(30, value)
    with pytest.warns(DegenerateResamplesWarning):
        iv = bca_interval(x, np.random.default_rng(1), rounds=N_BOOT)
    cp = clopper_pearson_interval(int(x.sum()), x.size)
    assert (iv.low, iv.high) == (cp.low, cp.high)
    assert iv.note == FALLBACK_NOTE


def test_bca_constant_non_binary_warns_zero_width():
    with pytest.warns(DegenerateResamplesWarning, match="zero"):
        iv = bca_interval(np.full(10, 0.4), np.random.default_rng(1), rounds=N_BOOT)
    assert iv.low == iv.high == pytest.approx(0.4) and "zero width" in iv.note


def test_ordinary_data_do_not_warn():
    import warnings

    x = np.r_[np.ones(12), np.zeros(8)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateResamplesWarning)
        bootstrap_ci(x, np.random.default_rng(0), n_boot=N_BOOT)
        assert bca_interval(x, np.random.default_rng(0), rounds=N_BOOT).note is None


@pytest.mark.parametrize(
    ("a", "b", "sign"), [(1.0, 0.0, 1), (0.0, 1.0, -1), (1.0, 1.0, 0), (0.0, 0.0, 0)]
)
def test_paired_constant_difference(a, b, sign):
    n = 20
    with pytest.warns(DegenerateResamplesWarning):
        d, lo, hi = paired_bootstrap(
            np.full(n, a), np.full(n, b), np.random.default_rng(2), n_boot=N_BOOT
        )
    assert d == a - b and lo < hi and lo <= d <= hi
    u = clopper_pearson_interval(0, n).high
    if sign == 0:
        assert (lo, hi) == (-u, u)
    else:
        assert min(abs(lo), abs(hi)) == pytest.approx(1 - u)


def test_cluster_bootstrap_falls_back_on_clusters():
    x = np.ones(40)
    clusters = np.arange(40) // 8  # 5 clusters
    with pytest.warns(DegenerateResamplesWarning):
        iv = cluster_bootstrap_ci(x, clusters, np.random.default_rng(0), rounds=N_BOOT)
    assert iv.low == clopper_pearson_interval(5, 5).low and iv.high == 1.0
