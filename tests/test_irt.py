"""2PL item response theory: item information, calibration, abilities, selection, adaptive tests.

Checked against (1) an independent direct maximisation of the LSAT-6 marginal
likelihood with scipy.optimize over a fine trapezoid quadrature (not the EM
code, not Gauss-Hermite), (2) the published ``ltm`` fit of the same data, and
(3) parameter recovery in simulation.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit, log_expit

from arena.evals import (
    ItemBank,
    adaptive_test,
    calibrate_2pl,
    item_information,
    score_abilities,
    select_items,
    simulate_adaptive,
)
from tests.helpers.lsat import LSAT6, RASCH_A, RASCH_B, RASCH_LOGLIK, RASCH_SE_A, RASCH_SE_B, lsat6

#: ltm(LSAT ~ z1) as printed by summary(): a, b, their standard errors, log-likelihood.
LTM_A = [0.8254, 0.7229, 0.8905, 0.6886, 0.6575]
LTM_B = [-3.3597, -1.3696, -0.2799, -1.8659, -3.1236]
LTM_SE_A = [0.2581, 0.1867, 0.2326, 0.1852, 0.2100]
LTM_SE_B = [0.8669, 0.3073, 0.0997, 0.4341, 0.8700]
LTM_LOGLIK = -2466.653
#: ltm stops its BFGS at max|grad| = 0.024, so its printed estimates sit up to ~2.5e-3 from
#: the optimum (most for the easiest items, where the likelihood is flattest).
LTM_TOL = 3e-3
#: Our EM optimum vs the independent direct optimum (both converged tightly).
DIRECT_TOL = 2e-4
#: Standard errors: Louis' formula vs a finite-difference Hessian of the direct likelihood.
SE_RTOL = 0.01
#: The issue's recovery targets.
RECOVERY_MAE = 0.1
ABILITY_R = 0.95


def _direct_negloglik(params: np.ndarray, patterns: np.ndarray, counts: np.ndarray) -> float:
    """Marginal likelihood of the 2PL by a 1601-point trapezoid rule on [-8, 8]."""
    a, b = params[:5], params[5:]
    t = np.linspace(-8.0, 8.0, 1601)
    z = a[:, None] * (t[None, :] - b[:, None])
    ll = patterns @ log_expit(z) + (1 - patterns) @ log_expit(-z)  # (patterns, nodes)
    dens = np.exp(ll - 0.5 * t**2) / np.sqrt(2 * np.pi)
    return -float(counts @ np.log(np.trapezoid(dens, t, axis=1)))


@pytest.fixture(scope="module")
def lsat_fit():
    return calibrate_2pl(lsat6(), tol=1e-7)


@pytest.fixture(scope="module")
def direct_fit():
    patterns = np.array([[int(c) for c in k] for k in LSAT6], dtype=float)
    counts = np.array(list(LSAT6.values()), dtype=float)
    x0 = np.r_[np.ones(5), np.zeros(5)]
    res = optimize.minimize(
        _direct_negloglik, x0, args=(patterns, counts), method="BFGS", options={"gtol": 1e-6}
    )
    # BFGS may report precision loss at the optimum of a sum of 1000 log terms; the gradient
    # says whether it got there.
    assert np.abs(res.jac).max() < 1e-3, res.message
    # Observed information by central differences of the direct likelihood.
    h = 1e-4
    k = res.x.size
    hess = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            e_i, e_j = np.eye(k)[i] * h, np.eye(k)[j] * h
            f = lambda x: _direct_negloglik(x, patterns, counts)  # noqa: E731
            hess[i, j] = (
                f(res.x + e_i + e_j)
                - f(res.x + e_i - e_j)
                - f(res.x - e_i + e_j)
                + f(res.x - e_i - e_j)
            ) / (4 * h * h)
    return res.x, -res.fun, np.sqrt(np.diag(np.linalg.inv(hess)))


def test_item_information_values_from_the_issue():
    assert float(item_information(0.0, 2.0, 0.0)) == pytest.approx(1.0)
    assert float(item_information(0.0, 1.0, 0.0)) == pytest.approx(0.25)
    assert float(item_information(0.0, 2.0, 2.0)) == pytest.approx(0.0707, abs=5e-4)
    grid = item_information(np.linspace(-3, 3, 7), 1.5, 0.5)
    assert grid.shape == (7,) and np.all(grid > 0)


@pytest.mark.slow
def test_lsat6_matches_an_independent_direct_fit(lsat_fit, direct_fit):
    x, loglik, se = direct_fit
    assert lsat_fit.quadrature.startswith("gauss-hermite")
    assert lsat_fit.discrimination == pytest.approx(x[:5], abs=DIRECT_TOL)
    assert lsat_fit.difficulty == pytest.approx(x[5:], abs=10 * DIRECT_TOL)
    assert lsat_fit.log_likelihood == pytest.approx(loglik, abs=1e-4)
    assert lsat_fit.se_discrimination == pytest.approx(se[:5], rel=SE_RTOL)
    assert lsat_fit.se_difficulty == pytest.approx(se[5:], rel=SE_RTOL)


def test_lsat6_matches_the_published_ltm_fit(lsat_fit):
    assert lsat_fit.log_likelihood == pytest.approx(LTM_LOGLIK, abs=1e-3)
    assert lsat_fit.discrimination == pytest.approx(LTM_A, abs=LTM_TOL)
    assert lsat_fit.difficulty == pytest.approx(LTM_B, abs=LTM_TOL)
    assert lsat_fit.se_discrimination == pytest.approx(LTM_SE_A, abs=LTM_TOL)
    assert lsat_fit.se_difficulty == pytest.approx(LTM_SE_B, abs=LTM_TOL)


def _simulate(n_exam, n_items, seed):
    g = np.random.default_rng(seed)
    a = g.uniform(0.7, 2.0, n_items)
    b = g.normal(0.0, 1.0, n_items)
    theta = g.standard_normal(n_exam)
    y = (g.random((n_exam, n_items)) < expit(a * (theta[:, None] - b))).astype(float)
    return a, b, theta, y


def test_parameter_recovery_2000_examinees_20_items():
    a, b, _, y = _simulate(2000, 20, seed=1)
    bank = calibrate_2pl(y)
    assert bank.converged and not bank.dropped
    assert np.abs(bank.discrimination - a).mean() < RECOVERY_MAE
    assert np.abs(bank.difficulty - b).mean() < RECOVERY_MAE
    # Standard errors describe the actual error: |z| scores look standard normal.
    z = np.r_[
        (bank.discrimination - a) / bank.se_discrimination,
        (bank.difficulty - b) / bank.se_difficulty,
    ]
    assert 0.6 < np.sqrt(np.mean(z**2)) < 1.5


def test_abilities_recovered_30_models_500_items():
    _, _, theta, y = _simulate(30, 500, seed=2)
    bank = calibrate_2pl(y, prior_sd=1.0)
    cols = [int(i) for i in bank.items]
    for method in ("eap", "map"):
        ab = score_abilities(bank, y[:, cols], method=method)
        assert np.corrcoef(ab.theta, theta)[0, 1] > ABILITY_R
        assert np.all(ab.se > 0) and np.all(ab.se < 0.5)


def test_eap_agrees_with_a_brute_force_posterior():
    bank = calibrate_2pl(lsat6())
    y = np.array([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=float)
    ab = score_abilities(bank, y)
    t = np.linspace(-10, 10, 20001)
    z = bank.discrimination[:, None] * (t[None, :] - bank.difficulty[:, None])
    for row, est, se in zip(y, ab.theta, ab.se, strict=True):
        logpost = row @ log_expit(z) + (1 - row) @ log_expit(-z) - 0.5 * t**2
        w = np.exp(logpost - logpost.max())
        w /= w.sum()
        mean = w @ t
        assert est == pytest.approx(mean, abs=1e-6)
        assert se == pytest.approx(np.sqrt(w @ (t - mean) ** 2), abs=1e-6)


def test_dropped_items_and_bounds():
    y = lsat6().astype(float)
    y = np.column_stack([y, np.ones(len(y)), np.zeros(len(y))])
    bank = calibrate_2pl(y, items=["i1", "i2", "i3", "i4", "i5", "easy", "hard"])
    assert bank.dropped == {"easy": "all right", "hard": "all wrong"}
    assert bank.items == ["i1", "i2", "i3", "i4", "i5"]
    # A response that perfectly splits examinees has no finite ML estimate: bounded, listed.
    g = np.random.default_rng(0)
    y = (g.random((200, 8)) < 0.6).astype(float)
    y[:, 0] = (y[:, 1:].sum(axis=1) >= 4).astype(float)
    bank = calibrate_2pl(y)
    assert "0" in bank.at_bound
    with pytest.raises(ValueError, match="0 or 1"):
        calibrate_2pl(np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match="nothing to calibrate"):
        calibrate_2pl(np.ones((4, 3)))


def test_bank_round_trip_through_json(lsat_fit):
    doc = json.loads(json.dumps(lsat_fit.to_dict()))
    assert set(doc["items"][0]) >= {"item", "discrimination", "difficulty"}
    again = ItemBank.from_dict(doc)
    assert again.items == lsat_fit.items
    np.testing.assert_array_equal(again.discrimination, lsat_fit.discrimination)
    np.testing.assert_array_equal(again.se_difficulty, lsat_fit.se_difficulty)
    with pytest.raises(ValueError, match="2PL"):
        ItemBank.from_dict({"items": []})
    bad = dict(doc, items=[{"item": "x", "discrimination": "high", "difficulty": 0}])
    with pytest.raises(ValueError, match=r"items\[1\]"):
        ItemBank.from_dict(bad)


def _bank(n_items, seed):
    g = np.random.default_rng(seed)
    a = g.uniform(0.7, 2.0, n_items)
    b = g.normal(0.0, 1.2, n_items)
    nan = np.full(n_items, np.nan)
    return ItemBank([f"q{i}" for i in range(n_items)], a, b, nan, nan)


def test_selection_spreads_information_over_the_range():
    bank = _bank(400, seed=3)
    sel = select_items(bank, 30)
    assert len(set(sel.items)) == 30
    # Greedy beats a random subset of the same size at every ability of the grid on the sum
    # of log information, and covers both ends of the range.
    g = np.random.default_rng(0)
    rand = g.choice(400, 30, replace=False)
    info_rand = item_information(
        sel.theta[None, :], bank.discrimination[rand, None], bank.difficulty[rand, None]
    ).sum(axis=0)
    assert np.log1p(sel.information).sum() > np.log1p(info_rand).sum()
    assert sel.information[0] > 0.5 and sel.information[-1] > 0.5
    with pytest.raises(ValueError, match="exceeds"):
        select_items(bank, 401)


def test_lazy_selection_equals_plain_greedy():
    bank = _bank(500, seed=9)
    theta = np.random.default_rng(1).normal(0, 1, 40)
    sel = select_items(bank, 40, theta=theta)
    info = item_information(
        sel.theta[None, :], bank.discrimination[:, None], bank.difficulty[:, None]
    )
    total, chosen = np.ones(sel.theta.size), []
    for _ in range(40):
        gain = np.log1p(info / total).sum(axis=1)
        gain[chosen] = -np.inf
        chosen.append(int(np.argmax(gain)))
        total += info[chosen[-1]]
    assert list(sel.indices) == chosen


def test_adaptive_test_stops_at_target_and_uses_the_answers():
    bank = _bank(500, seed=4)
    asked = []

    def answer(item):
        asked.append(item)
        j = int(item[1:])
        return int(bank.difficulty[j] < 1.0)  # an examinee of ability ~1

    res = adaptive_test(bank, answer, se_target=0.3, max_items=40)
    assert res.items == asked and len(set(asked)) == len(asked)
    assert res.stopped == "target se" and res.se <= 0.3
    assert res.theta == pytest.approx(1.0, abs=0.6)
    res = adaptive_test(bank, answer, se_target=0.01, max_items=5)
    assert res.stopped == "max items" and len(res.items) == 5
    with pytest.raises(ValueError, match="expected 0 or 1"):
        adaptive_test(bank, lambda item: 0.5)


@pytest.mark.slow
def test_adaptive_simulation_needs_fewer_items_than_fixed_tests():
    bank = _bank(600, seed=5)
    sim = simulate_adaptive(bank, np.random.default_rng(6), n_examinees=60, se_target=0.35)
    assert sim.reached > 0.9
    assert sim.random_items is not None and sim.n_items.mean() < sim.random_items
    # The errors match the reported standard errors.
    assert sim.rmse == pytest.approx(np.sqrt(np.mean(sim.se**2)), rel=0.35)
    again = simulate_adaptive(bank, np.random.default_rng(6), n_examinees=60, se_target=0.35)
    np.testing.assert_array_equal(again.theta, sim.theta)


def test_lsat6_rasch_matches_the_published_ltm_fit():
    from arena.evals import calibrate_1pl

    bank = calibrate_1pl(lsat6(), tol=1e-7)
    assert bank.model == "1PL" and bank.converged
    assert bank.difficulty == pytest.approx(RASCH_B, abs=1e-3)
    assert np.all(bank.discrimination == bank.discrimination[0])
    assert bank.discrimination[0] == pytest.approx(RASCH_A, abs=1e-4)
    assert bank.log_likelihood == pytest.approx(RASCH_LOGLIK, abs=1e-3)
    assert bank.se_difficulty == pytest.approx(RASCH_SE_B, abs=2e-4)
    assert bank.se_discrimination[0] == pytest.approx(RASCH_SE_A, abs=2e-4)
    # Independent check: the direct 2PL likelihood with every a equal, maximised by scipy.
    patterns = np.array([[int(c) for c in k] for k in LSAT6], dtype=float)
    counts = np.array(list(LSAT6.values()), dtype=float)
    f = lambda x: _direct_negloglik(np.r_[np.full(5, x[0]), x[1:]], patterns, counts)  # noqa: E731
    res = optimize.minimize(f, np.r_[1.0, np.zeros(5)], method="BFGS", options={"gtol": 1e-6})
    assert bank.discrimination[0] == pytest.approx(res.x[0], abs=DIRECT_TOL)
    assert bank.difficulty == pytest.approx(res.x[1:], abs=10 * DIRECT_TOL)
    assert bank.log_likelihood == pytest.approx(-res.fun, abs=1e-4)
    # Nested in the 2PL: the 2PL log-likelihood is higher, by a chi-square(4)-sized amount.
    assert calibrate_2pl(lsat6(), tol=1e-7).log_likelihood > bank.log_likelihood
    again = ItemBank.from_dict(json.loads(json.dumps(bank.to_dict())))
    assert again.model == "1PL" and again.difficulty == pytest.approx(bank.difficulty)
