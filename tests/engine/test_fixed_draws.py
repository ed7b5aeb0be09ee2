"""The fixed normal draws of analytic intervals: no seed enters (issue 41)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.core.defaults import DEFAULT_CI
from arena.engine.board import BoardOptions, rate_board
from arena.engine.counts import count_table
from arena.engine.inference.intervals import fixed_normal_draws, normal_draws
from arena.engine.rate import rate
from tests.helpers.simulate import simulate


def _table(seed=0, m=8, n=4000):
    rng = np.random.default_rng(seed)
    a, b, o = simulate(rng, rng.normal(0, 1, m), n)
    return count_table(a, b, o, n_models=m)


def test_draws_are_whitened_exactly():
    z = fixed_normal_draws(500, 12)
    assert z.shape == (500, 12)
    np.testing.assert_allclose(z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.cov(z, rowvar=False), np.eye(12), atol=1e-10)
    with pytest.raises(ValueError):
        z[0, 0] = 1.0  # shared by every caller: read-only


def test_draws_of_the_first_models_do_not_change_when_a_model_is_added():
    # column j is drawn and whitened from columns <= j only
    np.testing.assert_allclose(fixed_normal_draws(400, 7), fixed_normal_draws(400, 8)[:, :7])


def test_independent_streams_differ():
    a, b = fixed_normal_draws(300, 5, 0), fixed_normal_draws(300, 5, 1)
    assert np.abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.1


def test_normal_draws_have_the_covariance_exactly():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(6, 6))
    cov = x @ x.T
    # a rank-deficient covariance, as a ratings covariance with an anchor is
    cov[:, 0] = cov[0, :] = 0.0
    est = rng.normal(size=6)
    s = normal_draws(est, cov, 800)
    np.testing.assert_allclose(s.mean(axis=0), est, atol=1e-10)
    np.testing.assert_allclose(np.cov(s, rowvar=False), cov, atol=1e-9)


def test_the_seed_changes_nothing_in_analytic_intervals():
    t = _table()
    for ci in ("sandwich", "fisher"):
        a = rate(t, ci=ci, rounds=300, seed=1, simultaneous=True)
        b = rate(t, ci=ci, rounds=300, seed=2, simultaneous=True)
        assert a.samples.tobytes() == b.samples.tobytes()
        assert a.ci_low.tobytes() == b.ci_low.tobytes()
        # the draws' SDs are the analytic ones, not estimates of them
        np.testing.assert_allclose(a.samples.std(axis=0, ddof=1), a.se, rtol=1e-9)
    boot1 = rate(t, ci="bootstrap", rounds=100, seed=1)
    boot2 = rate(t, ci="bootstrap", rounds=100, seed=2)
    assert boot1.samples.tobytes() != boot2.samples.tobytes()


def test_default_board_is_a_function_of_the_data_alone():
    assert DEFAULT_CI == "sandwich"
    t = _table(seed=4, m=10, n=6000)
    one = rate_board(t, BoardOptions(seed=1))
    two = rate_board(t, BoardOptions(seed=99))
    assert one.ratings.diagnostics["method"] == "sandwich"
    for field in ("rank_low", "rank_high", "tier"):
        assert np.array_equal(getattr(one, field), getattr(two, field)), field
    assert one.ratings.samples.tobytes() == two.ratings.samples.tobytes()


def test_a_small_change_of_the_data_moves_the_draws_a_little():
    # the symmetric square root is continuous in the covariance: one more
    # battle moves every draw by about as much as it moves the estimate
    rng = np.random.default_rng(8)
    a, b, o = simulate(rng, rng.normal(0, 1, 8), 5000)
    full = rate(count_table(a, b, o, n_models=8), ci="sandwich", rounds=200)
    less = rate(count_table(a[1:], b[1:], o[1:], n_models=8), ci="sandwich", rounds=200)
    moved = np.abs(full.samples - less.samples).max()
    assert moved < 5 * np.abs(full.rating - less.rating).max() + 0.5
