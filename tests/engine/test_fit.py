"""Point fit: exactness against scipy and published values, invariances, robustness."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from arena.core.outcomes import A_WINS, B_WINS, TIE, TIE_BOTH_BAD
from arena.engine.counts import count_table, from_cells
from arena.engine.fitting.fit import DEFAULT_PRIOR, fit
from arena.engine.scale import BASE, SCALE
from tests.helpers.simulate import simulate

THETA_TOL = 1e-6  # logits: two exact optimisers agree far below this
PUBLISHED_TOL = 5e-5  # published tables are rounded to 4 decimals
GRAD_REL_TOL = 1e-10  # gradient / (battles per model) at the optimum

# Agresti (2002) Table 10.11 / BradleyTerry2 vignette, Baltimore = 0
BASEBALL = {
    "Boston": (1.1077, 0.3339),
    "Cleveland": (0.6839, 0.3319),
    "Detroit": (1.4364, 0.3396),
    "Milwaukee": (1.5814, 0.3433),
    "New York": (1.2476, 0.3359),
    "Toronto": (1.2945, 0.3367),
}
BASEBALL_HOME = {
    "Boston": (1.1438, 0.3378),
    "Cleveland": (0.7047, 0.3350),
    "Detroit": (1.4754, 0.3446),
    "Milwaukee": (1.6196, 0.3474),
    "New York": (1.2813, 0.3404),
    "Toronto": (1.3271, 0.3403),
}
HOME_ADVANTAGE = (0.3023, 0.1309)


def scipy_half_fit(a, b, o, m):
    """Independent reference: direct BFGS on the half-tie log-likelihood (theta_0 = 0)."""
    y = np.where(o == A_WINS, 1.0, np.where(o == B_WINS, 0.0, 0.5))
    keep = a != b
    a, b, y = a[keep], b[keep], y[keep]

    def nll(free):
        th = np.concatenate([[0.0], free])
        d = th[a] - th[b]
        return -(y * log_expit(d) + (1 - y) * log_expit(-d)).sum()

    def grad(free):
        th = np.concatenate([[0.0], free])
        r = y - expit(th[a] - th[b])
        g = np.bincount(a, r, m) - np.bincount(b, r, m)
        return -g[1:]

    res = minimize(
        nll, np.zeros(m - 1), jac=grad, method="BFGS", options={"gtol": 1e-11, "maxiter": 10000}
    )
    th = np.concatenate([[0.0], res.x])
    return th - th.mean()


def test_matches_direct_scipy_fit():
    rng = np.random.default_rng(1)
    theta = rng.normal(0, 1, 8)
    a, b, o = simulate(rng, theta, 3000, tie_rate=0.15)
    f = fit(count_table(a, b, o, n_models=8))
    ref = scipy_half_fit(a, b, o, 8)
    np.testing.assert_allclose(f.theta, ref, atol=THETA_TOL)
    np.testing.assert_allclose(f.rating, BASE + SCALE * ref, atol=SCALE * THETA_TOL)
    assert f.converged and f.mle_exists and f.prior_used == 0.0
    assert f.rating.mean() == pytest.approx(BASE)


def test_gradient_at_machine_precision():
    rng = np.random.default_rng(2)
    a, b, o = simulate(rng, rng.normal(0, 1, 20), 50_000)
    f = fit(count_table(a, b, o, n_models=20))
    assert f.grad_norm / f.design.battles_per_model.max() < GRAD_REL_TOL


@pytest.mark.parametrize("position", [False, True])
def test_baseball_published(baseball, position):
    teams, table = baseball
    bal = teams.index("Baltimore")
    f = fit(table, anchor=(bal, BASE), position=position)
    published = BASEBALL_HOME if position else BASEBALL
    for team, (est, se) in published.items():
        k = teams.index(team)
        assert f.theta[k] == pytest.approx(est, abs=PUBLISHED_TOL), team
        assert f.se[k] / SCALE == pytest.approx(se, abs=PUBLISHED_TOL), team
    assert f.theta[bal] == 0.0 and f.rating[bal] == BASE and f.se[bal] == 0.0
    if position:
        assert f.position_param == pytest.approx(HOME_ADVANTAGE[0], abs=PUBLISHED_TOL)
        assert f.position_se == pytest.approx(HOME_ADVANTAGE[1], abs=PUBLISHED_TOL)
    else:
        assert f.position_param is None


def test_baseball_deviance(baseball):
    teams, table = baseball
    f = fit(table)
    # saturated log-likelihood: each (home, away) row fitted by its own proportion
    key = table.a * 10 + table.b
    sat = 0.0
    for k in np.unique(key):
        n = table.n[key == k]
        tot = n.sum()
        sat += sum(x * np.log(x / tot) for x in n if x > 0)
    assert 2 * (sat - f.log_likelihood) == pytest.approx(44.053, abs=1e-3)


def scipy_davidson_fit(a, b, o, m):
    """Independent reference for the Davidson model (theta_0 = 0, log nu free)."""
    keep = a != b
    a, b, o = a[keep], b[keep], o[keep]

    def nll(v):
        th = np.concatenate([[0.0], v[:-1]])
        phi = v[-1]
        h = 0.5 * (th[a] - th[b])
        logz = np.logaddexp(np.logaddexp(h, -h), phi)
        ll = np.where(o == A_WINS, h, np.where(o == B_WINS, -h, phi)) - logz
        return -ll.sum()

    res = minimize(nll, np.zeros(m), method="BFGS", options={"gtol": 1e-9, "maxiter": 10000})
    th = np.concatenate([[0.0], res.x[:-1]])
    return th - th.mean(), np.exp(res.x[-1])


def test_davidson_matches_scipy():
    rng = np.random.default_rng(3)
    a, b, o = simulate(rng, rng.normal(0, 1, 6), 4000, tie_rate=0.25)
    f = fit(count_table(a, b, o, n_models=6), ties="davidson")
    th, nu = scipy_davidson_fit(a, b, o, 6)
    np.testing.assert_allclose(f.theta, th, atol=1e-5)
    assert f.tie_param == pytest.approx(nu, rel=1e-5)
    assert f.tie_param_se > 0


def test_davidson_on_real_ties():
    """EPL football: many draws, home advantage; the fit must converge with sane values."""
    import csv

    from tests.helpers.paths import shared_path

    rows = list(csv.DictReader(open(shared_path("data", "classic", "football_epl.csv"))))
    home, away = "home", "away"
    teams = sorted({r[home] for r in rows} | {r[away] for r in rows})
    ix = {t: i for i, t in enumerate(teams)}
    res = {1: A_WINS, -1: B_WINS, 0: TIE}
    a = np.array([ix[r[home]] for r in rows])
    b = np.array([ix[r[away]] for r in rows])
    o = np.array([res[round(float(r["result"]))] for r in rows])
    f = fit(count_table(a, b, o, n_models=len(teams)), ties="davidson", position=True)
    assert f.converged and np.all(np.isfinite(f.rating))
    assert 0.2 < f.tie_param < 2.0 and f.position_param > 0


# ---------------------------------------------------------------- invariances


def _random_battles(seed=4, m=7, n=1500):
    rng = np.random.default_rng(seed)
    a, b, o = simulate(rng, rng.normal(0, 1, m), n, tie_rate=0.2)
    o[rng.random(n) < 0.05] = TIE_BOTH_BAD
    return a, b, o, m


@pytest.mark.parametrize("opts", [{}, {"ties": "davidson"}, {"both_bad": "drop"}])
def test_swap_sides_with_flipped_outcome(opts):
    a, b, o, m = _random_battles()
    flipped = np.select([o == A_WINS, o == B_WINS], [B_WINS, A_WINS], o)
    f1 = fit(count_table(a, b, o, n_models=m), **opts)
    f2 = fit(count_table(b, a, flipped, n_models=m), **opts)
    np.testing.assert_allclose(f1.rating, f2.rating, atol=1e-9)


def test_swap_sides_flips_position_term():
    a, b, o, m = _random_battles()
    flipped = np.select([o == A_WINS, o == B_WINS], [B_WINS, A_WINS], o)
    f1 = fit(count_table(a, b, o, n_models=m), position=True)
    f2 = fit(count_table(b, a, flipped, n_models=m), position=True)
    np.testing.assert_allclose(f1.rating, f2.rating, atol=1e-9)
    assert f1.position_param == pytest.approx(-f2.position_param, abs=1e-12)


def test_relabel_models():
    a, b, o, m = _random_battles()
    perm = np.random.default_rng(9).permutation(m)
    f1 = fit(count_table(a, b, o, n_models=m))
    f2 = fit(count_table(perm[a], perm[b], o, n_models=m))
    np.testing.assert_allclose(f2.rating[perm], f1.rating, atol=1e-9)
    np.testing.assert_allclose(f2.se[perm], f1.se, atol=1e-9)


def test_duplicate_battles_same_point_fit():
    a, b, o, m = _random_battles()
    f1 = fit(count_table(a, b, o, n_models=m))
    f2 = fit(count_table(np.tile(a, 2), np.tile(b, 2), np.tile(o, 2), n_models=m))
    np.testing.assert_allclose(f1.rating, f2.rating, atol=1e-9)
    np.testing.assert_allclose(f2.se, f1.se / np.sqrt(2), rtol=1e-9)


def test_weights_equal_replication():
    a, b, o, m = _random_battles()
    w = np.where(np.arange(a.size) % 3 == 0, 2.0, 1.0)
    f1 = fit(count_table(a, b, o, n_models=m, weight=w))
    rep = np.repeat(np.arange(a.size), w.astype(int))
    f2 = fit(count_table(a[rep], b[rep], o[rep], n_models=m))
    np.testing.assert_allclose(f1.rating, f2.rating, atol=1e-9)


def test_anchor_shifts_only():
    a, b, o, m = _random_battles()
    t = count_table(a, b, o, n_models=m)
    f1 = fit(t)
    f2 = fit(t, anchor=(3, 1200.0))
    np.testing.assert_allclose(f2.rating - f2.rating[3], f1.rating - f1.rating[3], atol=1e-9)
    assert f2.rating[3] == 1200.0


def test_both_bad_modes():
    a, b, o, m = _random_battles()
    t = count_table(a, b, o, n_models=m)
    as_tie = fit(t)
    o2 = np.where(o == TIE_BOTH_BAD, TIE, o)
    np.testing.assert_allclose(
        as_tie.rating, fit(count_table(a, b, o2, n_models=m)).rating, atol=1e-9
    )
    keep = o != TIE_BOTH_BAD
    dropped = fit(t, both_bad="drop")
    np.testing.assert_allclose(
        dropped.rating, fit(count_table(a[keep], b[keep], o[keep], n_models=m)).rating, atol=1e-9
    )


# ---------------------------------------------------------------- robustness


def _cells(rows, m):
    a, b, o, n = (np.array(x) for x in zip(*rows, strict=True))
    return from_cells(a, b, o, n, n_models=m)


def _assert_finite(f):
    for arr in (f.theta, f.rating, f.se, f.cov):
        assert np.all(np.isfinite(arr))


def test_never_lost_uses_prior_and_flags():
    rows = [(0, 1, A_WINS, 5), (1, 2, A_WINS, 3), (2, 1, A_WINS, 2), (0, 2, A_WINS, 4)]
    t = _cells(rows, 3)
    f = fit(t)
    _assert_finite(f)
    assert not f.mle_exists and f.prior_used == DEFAULT_PRIOR
    assert "never_lost" in f.flags[0]
    assert any("never lost" in w for w in f.warnings)
    assert f.rating[0] > f.rating[1] and f.rating[0] > f.rating[2]
    with pytest.raises(ValueError, match="does not exist"):
        fit(t, prior=0)


def test_never_won_flag():
    rows = [(0, 1, B_WINS, 5), (1, 2, A_WINS, 3), (2, 1, A_WINS, 2), (2, 0, A_WINS, 1)]
    f = fit(_cells(rows, 3))
    _assert_finite(f)
    assert "never_won" in f.flags[0]


def test_two_battles_both_ties_is_fine():
    rng = np.random.default_rng(5)
    a, b, o = simulate(rng, rng.normal(0, 1, 5), 2000)
    a = np.concatenate([a, [5, 1]])
    b = np.concatenate([b, [0, 5]])
    o = np.concatenate([o, [TIE, TIE]])
    f = fit(count_table(a, b, o, n_models=6))
    _assert_finite(f)
    assert f.mle_exists and f.prior_used == 0.0  # ties connect both ways
    assert "few_battles" in f.flags[5]
    assert f.se[5] > 3 * f.se[:5].max()


def test_disconnected_pieces():
    rows = [(0, 1, A_WINS, 3), (1, 0, A_WINS, 2), (2, 3, A_WINS, 4), (3, 2, A_WINS, 1)]
    f = fit(_cells(rows, 4))
    _assert_finite(f)
    assert not f.mle_exists
    assert sum("disconnected" in fl for fl in f.flags) == 2
    with pytest.raises(ValueError):
        fit(_cells(rows, 4), prior=0)


def test_model_without_battles():
    rows = [(0, 1, A_WINS, 3), (1, 0, A_WINS, 2), (1, 2, TIE, 4)]
    f = fit(_cells(rows, 4))
    _assert_finite(f)
    assert f.mle_exists and f.prior_used == 0.0
    assert "no_battles" in f.flags[3]
    assert f.rating[3] == pytest.approx(BASE) and f.se[3] > 1000
    with pytest.raises(ValueError, match="no battles"):
        fit(_cells(rows, 4), anchor=(3, 1000.0))


def test_self_play_ignored():
    rows = [(0, 1, A_WINS, 3), (1, 0, A_WINS, 2), (1, 2, TIE, 4), (2, 2, A_WINS, 7)]
    rows2 = rows[:-1]
    np.testing.assert_allclose(
        fit(_cells(rows, 3)).rating, fit(_cells(rows2, 3)).rating, atol=1e-12
    )


def test_explicit_prior_is_map():
    a, b, o, m = _random_battles()
    t = count_table(a, b, o, n_models=m)
    mle, map_ = fit(t), fit(t, prior=5.0)
    assert map_.prior_used == 5.0
    assert np.abs(map_.theta).max() < np.abs(mle.theta).max()  # shrunk


def test_bad_options():
    t = _cells([(0, 1, A_WINS, 1), (1, 0, A_WINS, 1)], 2)
    with pytest.raises(ValueError):
        fit(t, ties="bogus")
    with pytest.raises(ValueError):
        fit(t, both_bad="bogus")
    with pytest.raises(ValueError):
        fit(t, prior=-1)
    with pytest.raises(ValueError):
        fit(t, anchor=(5, 1000))


def test_given_design_is_reused_and_must_match():
    """fit(..., design=) gives the same fit as compiling it, and refuses a design of another model."""
    from arena.engine.fitting.design import make_design

    rng = np.random.default_rng(11)
    a, b, o = simulate(rng, rng.normal(0, 1, 8), 800, tie_rate=0.2)
    table = count_table(a, b, o, n_models=8)
    own = fit(table)
    given = fit(table, design=make_design(table))
    np.testing.assert_array_equal(own.rating, given.rating)
    with pytest.raises(ValueError, match="another table or model"):
        fit(table, design=make_design(table, ties="davidson"))
    with pytest.raises(ValueError, match="another table or model"):
        fit(table, position=True, design=make_design(table))
