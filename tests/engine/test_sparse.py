"""The sparse engine path against the dense one, on boards both can run."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special

import arena.engine.resampling.bootstrap as dense_boot
import arena.engine.sparse.bootstrap as sparse_boot
from arena.engine.board import BoardOptions, rate_board
from arena.engine.counts import cluster_matrix, count_table
from arena.engine.fitting.fit import fit
from arena.engine.fitting.smallsample import score_bounds
from arena.engine.inference.tiers import tiers_paired
from arena.engine.options import FitOptions
from arena.engine.rate import rate
from arena.engine.scale import SCALE
from arena.engine.sparse.bootstrap import sparse_bootstrap
from arena.engine.sparse.fit import SPARSE_MIN_MODELS, sparse_fit, use_sparse
from arena.engine.sparse.score import sparse_score_bounds
from arena.engine.sparse.tiers import tiers_bounded

ELO_TOL = 1e-6


def board(m=12, n=4000, seed=3, spread=1.0, few=None):
    """Bradley-Terry battles with 10% ties (and a few both-bad ties); ``few`` gets 4 battles."""
    rng = np.random.default_rng(seed)
    s = rng.normal(0, spread, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    if few is not None:
        involved = (a == few) | (b == few)
        keep = ~involved | (np.cumsum(involved) <= 4)
        a, b = a[keep], b[keep]
    p = 1 / (1 + np.exp(-(s[a] - s[b])))
    u = rng.random(a.size)
    o = np.where(u < 0.1, 2, np.where(u < 0.1 + 0.9 * p, 0, 1))
    o[u > 0.98] = 3
    return count_table(a, b, o, n_models=m), a, b, o


@pytest.fixture
def tight(monkeypatch):
    """Bootstrap rounds solved to round-off on both paths, so 1e-6 Elo is a fair test."""
    monkeypatch.setattr(dense_boot, "GTOL_REL_BOOT", 1e-14)
    monkeypatch.setattr(sparse_boot, "GTOL_REL_BOOT", 1e-14)


VARIANTS = [
    {},
    {"ties": "davidson"},
    {"position": True, "both_bad": "drop"},
    {"prior": 0.3},
    {"anchor": (4, 1200.0)},
    {"ties": "davidson", "position": True, "anchor": (2, 900.0)},
]


@pytest.mark.parametrize("kw", VARIANTS)
def test_point_fit_equals_dense(kw):
    table = board()[0]
    dense, sparse = fit(table, **kw), sparse_fit(table, **kw)
    assert sparse.converged
    assert np.abs(sparse.rating - dense.rating).max() < ELO_TOL
    if dense.tie_param is not None:
        assert sparse.tie_param == pytest.approx(dense.tie_param, rel=1e-9)
    if dense.position_param is not None:
        assert sparse.position_param == pytest.approx(dense.position_param, abs=1e-9)
    # the Fisher SE is a lower bound of the dense one, and a close one
    live = dense.se > 0
    ratio = sparse.se[live] / dense.se[live]
    assert np.all(ratio <= 1 + 1e-12) and np.all(ratio > 0.8)


def test_point_fit_matches_scipy():
    """Independent reference: the half-tie log-likelihood maximised by scipy.optimize."""
    table, a, b, o = board(m=8, n=1500, seed=11)
    keep = o != 3
    a, b, o = a[keep], b[keep], o[keep]
    credit = np.where(o == 0, 1.0, np.where(o == 1, 0.0, 0.5))

    def neg(theta):
        d = theta[a] - theta[b]
        ll = credit * d - np.logaddexp(0, d)
        grad = np.bincount(a, credit - special.expit(d), minlength=8)
        grad -= np.bincount(b, credit - special.expit(d), minlength=8)
        return -ll.sum(), -grad

    ref = optimize.minimize(neg, np.zeros(8), jac=True, method="BFGS", options={"gtol": 1e-10})
    theta = ref.x - ref.x.mean()
    got = sparse_fit(table, both_bad="drop")
    assert np.abs(got.rating - (1000 + SCALE * theta)).max() < 1e-5


@pytest.mark.parametrize(
    "kw", [{}, {"ties": "davidson", "position": True}, {"anchor": (1, 1100.0)}]
)
def test_bootstrap_draws_the_same_resamples(tight, kw):
    table = board()[0]
    dense = dense_boot.bootstrap(table, rounds=60, seed=7, **kw)
    sparse = sparse_bootstrap(table, rounds=60, seed=7, **kw)
    assert np.abs(sparse.samples - dense.samples).max() < ELO_TOL
    assert np.array_equal(sparse.converged, dense.converged)
    # the batches depend on the problem only: one worker gives the same bytes
    alone = sparse_bootstrap(table, rounds=60, seed=7, workers=1, **kw)
    assert np.array_equal(alone.samples, sparse.samples)


def test_model_without_battles_as_dense(tight):
    _, a, b, o = board(m=10, n=2000, seed=6)
    table = count_table(a, b, o, n_models=11)  # model 10 never played
    dense = dense_boot.bootstrap(table, rounds=40, seed=9)
    sparse = sparse_bootstrap(table, rounds=40, seed=9)
    assert np.std(dense.samples[:, 10]) > 100  # the prior's spread, drawn alike
    assert np.abs(sparse.samples - dense.samples).max() < ELO_TOL
    assert sparse_fit(table).se[10] == pytest.approx(fit(table).se[10])


def test_prior_rounds_and_clusters_as_dense(tight):
    # model 5 plays only a few battles: some resamples have no MLE and take the prior
    table, a, b, o = board(m=10, n=3000, few=5)
    dense = dense_boot.bootstrap(table, rounds=80, seed=2)
    sparse = sparse_bootstrap(table, rounds=80, seed=2)
    assert dense.prior_rounds.size > 0
    assert np.array_equal(sparse.prior_rounds, dense.prior_rounds)
    assert np.abs(sparse.samples - dense.samples).max() < ELO_TOL
    cells = count_table(a, b, o, n_models=10)
    # a cluster bootstrap over 300 clusters of battles
    cluster_ids = np.arange(a.size) % 300
    key = (a * 10 + b) * 4 + o
    _, cell_of = np.unique(key, return_inverse=True)
    z = cluster_matrix(cluster_ids, cell_of.ravel(), n_cells=cells.n_cells)
    dense = dense_boot.bootstrap(cells, rounds=40, seed=4, clusters=z)
    sparse = sparse_bootstrap(cells, rounds=40, seed=4, clusters=z)
    assert np.abs(sparse.samples - dense.samples).max() < ELO_TOL


def test_rate_board_sparse_equals_dense(tight):
    table = board(m=12, n=5000)[0]
    opts = BoardOptions(
        fit=FitOptions(), ci="bootstrap", rounds=100, seed=5, min_battles=50, tiers="overlap"
    )
    dense = rate_board(table, opts, path="dense")
    sparse = rate_board(table, opts, path="sparse")
    assert sparse.ratings.diagnostics["engine_path"] == "sparse"
    assert "engine_path" not in dense.ratings.diagnostics
    for field in ("rating", "ci_low", "ci_high", "se"):
        got, want = getattr(sparse.ratings, field), getattr(dense.ratings, field)
        assert np.abs(got - want).max() < ELO_TOL, field
    assert np.array_equal(sparse.rank_ub, dense.rank_ub)
    assert np.array_equal(sparse.rank_lb, dense.rank_lb)
    assert np.array_equal(sparse.tier, dense.tier)


def test_small_sample_score_bounds_equal_dense():
    table = board(m=15, n=900, seed=8)[0]
    for kw in ({}, {"ties": "davidson", "position": True}, {"prior": 1.0}):
        point = fit(table, **kw)
        cols = np.arange(0, 15, 2)
        want = score_bounds(point.design, point.x, cols, lam=point.prior_used)
        got = sparse_score_bounds(point.design, point.x, cols, lam=point.prior_used, centre=True)
        for g, w in zip(got, want, strict=True):
            assert np.allclose(g, w, rtol=0, atol=1e-10)


def test_bounded_tiers_only_separate_what_the_family_allows():
    table = board(m=20, n=8000, spread=1.5)[0]
    boot = dense_boot.bootstrap(table, rounds=300, seed=1)
    r, s = boot.point, boot.samples
    m = r.size
    z = special.ndtri(1 - 0.05 / (2 * m * (m - 1) / 2))
    for rule in ("leader", "cut"):
        res = tiers_bounded(r, s, rule=rule)
        dense = tiers_paired(r, s, rule=rule, correction="maxt")
        assert res.critical_t == pytest.approx(z)
        assert res.critical_t >= dense.critical_t
        order = res.order
        assert res.tiers.max() > 1  # the board is spread enough to draw boundaries
        for k in range(1, m):
            if not res.starts_tier[order[k]]:
                continue
            above = order[:k] if rule == "cut" else [res.upper[order[k]]]
            for i in above:
                for j in order[k:] if rule == "cut" else [order[k]]:
                    d = s[:, i] - s[:, j]
                    assert (r[i] - r[j]) / d.std(ddof=1) > z


def test_path_choice_and_refusals():
    assert not use_sparse("auto", SPARSE_MIN_MODELS - 1)
    assert use_sparse("auto", SPARSE_MIN_MODELS)
    assert use_sparse("sparse", 3) and not use_sparse("dense", 10**6)
    with pytest.raises(ValueError, match="path must be one of"):
        use_sparse("fast", 10)
    table = board()[0]
    # the analytic methods need the covariance the sparse path never forms: a
    # long board falls back to the bootstrap, and its warnings say so
    fell = rate(table, ci="fisher", rounds=20, path="sparse")
    assert fell.diagnostics["method"] == "bootstrap"
    assert any("these are bootstrap intervals" in w for w in fell.warnings)


def test_split_board_comparable_set_as_dense(tight):
    """A model that never lost stays outside the comparable set on both paths."""
    table, a, b, o = board(m=9, n=3000, seed=4)
    # model 8 wins every battle it plays: no finite MLE, one-sided score interval
    o = np.where((a == 8) & (o != 2), 0, o)
    o = np.where((b == 8) & (o != 2), 1, o)
    o = np.where(((a == 8) | (b == 8)) & (o == 2), np.where(a == 8, 0, 1), o)
    table = count_table(a, b, o, n_models=9)
    dense = rate(table, ci="bootstrap", rounds=50, seed=3, path="dense")
    sparse = rate(table, ci="bootstrap", rounds=50, seed=3, path="sparse")
    assert not dense.comparable[8] and not sparse.comparable[8]
    assert "no_mle" in sparse.flags[8]
    for field in ("rating", "ci_low", "ci_high"):
        got, want = getattr(sparse, field), getattr(dense, field)
        assert np.array_equal(np.isnan(got), np.isnan(want)), field
        assert np.array_equal(np.isinf(got), np.isinf(want)), field
        fin = np.isfinite(want)
        assert np.abs(got[fin] - want[fin]).max() < ELO_TOL, field
