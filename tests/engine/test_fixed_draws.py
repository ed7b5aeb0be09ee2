"""The fixed normal draws of analytic intervals: no seed enters (issue 41)."""

from __future__ import annotations

import numpy as np
import pytest

import arena.engine.board as board_module
from arena.core.defaults import DEFAULT_CI, DEFAULT_ROUNDS
from arena.engine.board import BoardOptions, rate_board, with_draws
from arena.engine.counts import count_table
from arena.engine.inference.intervals import fixed_normal_draws, normal_draws
from arena.engine.rate import rate
from arena.engine.style.design import style_table
from arena.engine.style.rate import StyleRatings, rate_style
from tests.engine.style_data import simulate_style
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


# ---------------------------------------------------------------- draws chosen by the data


def test_with_draws_gives_what_rate_gives_with_that_many():
    t = _table(seed=2, m=9, n=5000)
    small = rate(t, ci="sandwich", rounds=300)
    big = rate(t, ci="sandwich", rounds=1200)
    assert with_draws(small, 1200).samples.tobytes() == big.samples.tobytes()
    assert with_draws(small, 1200).diagnostics["rounds"] == 1200
    with pytest.raises(ValueError, match="only analytic"):
        with_draws(rate(t, ci="bootstrap", rounds=50), 100)


def test_with_draws_redraws_a_style_boards_coefficients():
    sim = simulate_style(
        np.random.default_rng(3), n_models=6, n_battles=3000, gamma=[0.5, 0.1, -0.1, 0.05]
    )
    tab = style_table(sim.a, sim.b, sim.outcome, sim.side_a, sim.side_b, n_models=6)
    small = rate_style(tab, ci="sandwich", rounds=200)
    big = rate_style(tab, ci="sandwich", rounds=800)
    again = with_draws(small, 800)
    assert again.samples.tobytes() == big.samples.tobytes()
    assert isinstance(again, StyleRatings)
    assert again.coef_samples.tobytes() == big.coef_samples.tobytes()


def test_a_failing_check_doubles_the_draws_up_to_the_cap(monkeypatch):
    t = _table(seed=5, m=12, n=8000)
    # every check fails: the draws double from the default to the cap
    monkeypatch.setattr(board_module, "DRAWS_CHECK_SHARE", 1.5)
    monkeypatch.setattr(board_module, "DRAWS_MAX", 4 * DEFAULT_ROUNDS)
    br = rate_board(t, BoardOptions(min_battles=1))
    check = br.tier_info["draws_check"]
    assert check["tried"] == [DEFAULT_ROUNDS, 2 * DEFAULT_ROUNDS, 4 * DEFAULT_ROUNDS]
    assert check["chosen"] and not check["passed"]
    assert br.ratings.samples.shape[0] == 4 * DEFAULT_ROUNDS
    assert br.ratings.diagnostics["rounds"] == 4 * DEFAULT_ROUNDS
    # the board is the one its kept draws give
    direct = rate_board(t, BoardOptions(min_battles=1, rounds=4 * DEFAULT_ROUNDS))
    assert direct.ratings.samples.tobytes() == br.ratings.samples.tobytes()
    assert np.array_equal(direct.rank_low, br.rank_low)
    assert np.array_equal(direct.rank_high, br.rank_high)
    # a given number of rounds is kept, and so are the bootstrap's
    fixed = rate_board(t, BoardOptions(min_battles=1, rounds=500))
    assert fixed.ratings.samples.shape[0] == 500
    assert "chosen" not in fixed.tier_info["draws_check"]
    boot = rate_board(t, BoardOptions(min_battles=1, ci="bootstrap", rounds=50))
    assert "draws_check" not in boot.tier_info


def test_a_passing_check_keeps_the_default_draws():
    t = _table(seed=6, m=5, n=20000)  # five models far apart: nothing sits on the edge
    br = rate_board(t, BoardOptions(min_battles=1))
    check = br.tier_info["draws_check"]
    assert check["passed"] and check["tried"] == [DEFAULT_ROUNDS]
    assert check["sets_moved"] == 0 and check["tiers_equal"]


def test_a_board_can_skip_the_check_and_keeps_its_draws():
    t = _table(seed=5, m=12, n=8000)
    br = rate_board(t, BoardOptions(min_battles=1), check_draws=False)
    assert "draws_check" not in br.tier_info
    assert br.ratings.samples.shape[0] == DEFAULT_ROUNDS
    checked = rate_board(t, BoardOptions(min_battles=1, rounds=DEFAULT_ROUNDS))
    assert np.array_equal(checked.rank_low, br.rank_low)
    assert np.array_equal(checked.rank_high, br.rank_high)
