"""Style control: exactness against direct scipy fits, FastChat's objective, edge cases, simulation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from arena.core.outcomes import A_WINS, B_WINS, TIE
from arena.engine.counts import cluster_matrix, count_table
from arena.engine.fitting.fit import fit
from arena.engine.options import FitOptions
from arena.engine.scale import SCALE
from arena.engine.style.design import STYLE_FEATURES, style_table
from arena.engine.style.rate import bootstrap_style, fit_style, rate_style
from tests.helpers.paths import shared_path

from .style_data import load_ko_arena_hard, simulate_style

THETA_TOL = 1e-6  # logits and coefficients: two exact optimisers agree far below this
LN10 = np.log(10.0)


def standardised(side_a, side_b):
    """LMArena's covariates, computed here independently of the engine."""
    x = (side_a - side_b) / (side_a + side_b + 1.0)
    return (x - x.mean(axis=0)) / x.std(axis=0)


def scipy_style_fit(a, b, o, w, z, m, *, reg=0.0):
    """Direct L-BFGS-B fit of the contextual BT likelihood, ties half a win.

    Parameters ``[theta_1..theta_{m-1}, gamma]`` with theta_0 = 0 (MLE), or all
    thetas when ``reg > 0`` (FastChat's penalty on r = theta / ln 10 and gamma).
    Returns mean-centred thetas and gamma.
    """
    y = np.where(o == A_WINS, 1.0, np.where(o == B_WINS, 0.0, 0.5))
    nf = z.shape[1]
    free0 = 0 if reg else 1
    scale = w.sum()  # normalised objective: gradient tolerances mean the same at any size

    def unpack(p):
        th = np.concatenate([np.zeros(free0), p[: m - free0]])
        return th, p[m - free0 :]

    def obj(p):
        th, g = unpack(p)
        d = th[a] - th[b] + z @ g
        val = -(w * (y * log_expit(d) + (1 - y) * log_expit(-d))).sum()
        r = w * (y - expit(d))
        gt = np.bincount(a, r, m) - np.bincount(b, r, m)
        grad = -np.concatenate([gt[free0:], z.T @ r])
        if reg:
            val += 0.5 * reg * ((th / LN10) @ (th / LN10) + g @ g)
            grad += reg * np.concatenate([th / LN10**2, g])
        return val / scale, grad / scale

    res = minimize(
        obj,
        np.zeros(m - free0 + nf),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-13, "ftol": 0.0, "maxiter": 20000, "maxcor": 30},
    )
    th, g = unpack(res.x)
    return th - th.mean(), g


def small_board(seed=0, n=600, m=6):
    rng = np.random.default_rng(seed)
    sim = simulate_style(rng, n_models=m, n_battles=n, gamma=[0.8, 0.2, -0.3, 0.1])
    o = sim.outcome.copy()
    o[rng.random(n) < 0.15] = TIE
    w = np.where(rng.random(n) < 0.2, 3.0, 1.0)
    return sim, o, w


def test_small_board_equals_direct_scipy_fit():
    sim, o, w = small_board()
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m, weight=w)
    res = fit_style(tab)
    assert res.converged and res.mle_exists
    th, g = scipy_style_fit(sim.a, sim.b, o, w, standardised(sim.side_a, sim.side_b), m)
    assert np.abs(res.theta - th).max() < THETA_TOL
    assert np.abs(res.coef - g).max() < THETA_TOL
    assert np.allclose(res.rating, 1000 + SCALE * th, atol=SCALE * THETA_TOL)
    assert res.features == STYLE_FEATURES


def test_style_reg_reproduces_fastchat_objective():
    """style_reg=0.5: the minimiser of FastChat's penalised loss (r in base-10 logits)."""
    sim, o, w = small_board(seed=1)
    m = sim.theta.size
    w = np.ones_like(w)  # FastChat has no battle weights
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m)
    res = fit_style(tab, style_reg=0.5)
    th, g = scipy_style_fit(sim.a, sim.b, o, w, standardised(sim.side_a, sim.side_b), m, reg=0.5)
    assert np.abs(res.theta - th).max() < THETA_TOL
    assert np.abs(res.coef - g).max() < THETA_TOL
    # the penalty shrinks: the MLE differs by far more than the tolerance
    mle = fit_style(tab)
    assert np.abs(mle.coef - res.coef).max() > 100 * THETA_TOL


@pytest.mark.slow
def test_ko_arena_hard_equals_direct_scipy_fit():
    path = shared_path("data", "ko-arena-hard", "battles.jsonl.gz")
    d = load_ko_arena_hard(path)
    assert d.n_without_metadata == 4000
    m = len(d.models)
    tab = style_table(d.a, d.b, d.outcome, d.side_a, d.side_b, n_models=m, weight=d.weight)
    res = fit_style(tab)
    assert res.converged and res.mle_exists and not res.warnings
    keep = d.a != d.b
    z = standardised(d.side_a[keep], d.side_b[keep])
    th, g = scipy_style_fit(d.a[keep], d.b[keep], d.outcome[keep], d.weight[keep], z, m)
    assert np.abs(res.theta - th).max() < THETA_TOL
    assert np.abs(res.coef - g).max() < THETA_TOL
    # longer answers win: the length coefficient is large and clearly positive
    assert res.coef[0] > 1.0 and res.coef[0] - 3 * res.coef_se[0] > 0


def test_constant_feature_is_dropped_with_a_warning():
    sim, o, w = small_board(seed=2)
    m = sim.theta.size
    sa, sb = sim.side_a.copy(), sim.side_b.copy()
    sa[:, 3] = sb[:, 3] = 0.0  # nobody uses bold
    tab = style_table(sim.a, sim.b, o, sa, sb, n_models=m, weight=w)
    assert tab.features == ("tokens", "headers", "lists")
    assert tab.dropped == ("bold",)
    res = fit_style(tab)
    assert res.converged
    assert any("bold" in msg and "constant" in msg for msg in res.warnings)
    th, g = scipy_style_fit(sim.a, sim.b, o, w, standardised(sa[:, :3], sb[:, :3]), m)
    assert np.abs(res.coef - g).max() < THETA_TOL
    out = rate_style(tab, rounds=50, seed=0)
    assert [c["feature"] for c in out.coefficients()] == ["tokens", "headers", "lists"]


def test_all_features_constant_is_the_raw_fit():
    sim, o, w = small_board(seed=3)
    m = sim.theta.size
    zeros = np.zeros_like(sim.side_a)
    tab = style_table(sim.a, sim.b, o, zeros, zeros, n_models=m, weight=w)
    assert tab.features == () and len(tab.dropped) == 4
    res = fit_style(tab)
    raw = fit(count_table(sim.a, sim.b, o, n_models=m, weight=w))
    assert np.abs(res.rating - raw.rating).max() < SCALE * THETA_TOL


def test_user_covariate_uses_plain_difference():
    sim, o, w = small_board(seed=4)
    m = sim.theta.size
    rng = np.random.default_rng(9)
    senti_a, senti_b = rng.normal(size=sim.a.size), rng.normal(size=sim.a.size)
    sa = np.column_stack([sim.side_a, senti_a])
    sb = np.column_stack([sim.side_b, senti_b])
    tab = style_table(
        sim.a, sim.b, o, sa, sb, n_models=m, weight=w, features=(*STYLE_FEATURES, "sentiment")
    )
    res = fit_style(tab)
    x = senti_a - senti_b
    z = np.column_stack([standardised(sim.side_a, sim.side_b), (x - x.mean()) / x.std()])
    th, g = scipy_style_fit(sim.a, sim.b, o, w, z, m)
    assert np.abs(res.coef - g).max() < THETA_TOL
    assert res.features[-1] == "sentiment"


def test_davidson_matches_direct_fit():
    sim, o, w = small_board(seed=5)
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m, weight=w)
    res = fit_style(tab, ties="davidson")
    z = standardised(sim.side_a, sim.side_b)
    wa, wb, wt = (w * (o == k) for k in (A_WINS, B_WINS, TIE))

    def nll(p):
        th = np.concatenate([[0.0], p[: m - 1]])
        g, phi = p[m - 1 : -1], p[-1]
        h = 0.5 * (th[sim.a] - th[sim.b] + z @ g)
        lz = np.logaddexp(np.logaddexp(h, -h), phi)
        return -(wa * h - wb * h + wt * phi - (wa + wb + wt) * lz).sum() / w.sum()

    ref = minimize(nll, np.zeros(m + 4), method="BFGS", options={"gtol": 1e-12})
    th = np.concatenate([[0.0], ref.x[: m - 1]])
    assert np.abs(res.theta - (th - th.mean())).max() < 1e-5
    assert np.abs(res.coef - ref.x[m - 1 : -1]).max() < 1e-5
    assert abs(np.log(res.tie_param) - ref.x[-1]) < 1e-5


def test_style_entry_points_take_fit_options():
    """fit_style / bootstrap_style / rate_style take FitOptions like fit / rate, keywords override."""
    sim, o, w = small_board(seed=5)
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m, weight=w)
    opts = FitOptions(ties="davidson", position=True, anchor=(1, 1100.0))
    by_options = fit_style(tab, opts)
    by_keywords = fit_style(tab, ties="davidson", position=True, anchor=(1, 1100.0))
    assert by_options.features[-1] == "position" and by_options.tie_param is not None
    assert np.array_equal(by_options.x, by_keywords.x)
    assert by_options.rating[1] == 1100.0
    half = fit_style(tab, opts, ties="half")
    assert half.tie_param is None and not np.array_equal(half.x[:m], by_options.x[:m])
    boot = bootstrap_style(tab, opts, rounds=10, seed=2, workers=1)
    assert np.array_equal(boot.ratings.point, by_options.rating)
    rated = rate_style(tab, opts, ci="fisher", rounds=10)
    assert np.array_equal(rated.rating, by_options.rating)
    with pytest.raises(TypeError, match="unknown fit option"):
        fit_style(tab, tie="davidson")


def test_bootstrap_reproducible_and_worker_independent():
    sim, o, w = small_board(seed=6, n=3000)
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m, weight=w)
    one = bootstrap_style(tab, rounds=40, seed=7, workers=1)
    two = bootstrap_style(tab, rounds=40, seed=7, workers=2)
    assert np.array_equal(one.ratings.samples, two.ratings.samples)
    assert np.array_equal(one.coef.samples, two.coef.samples)
    assert one.ratings.failed_rounds.size == 0
    other = bootstrap_style(tab, rounds=40, seed=8, workers=1)
    assert not np.array_equal(one.ratings.samples, other.ratings.samples)


def test_bootstrap_rounds_are_exact_fits():
    """Each round's fixed point is the MLE of its resample (refit one round from scratch)."""
    sim, o, w = small_board(seed=7, n=3000)
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m, weight=w)
    point = fit_style(tab)
    b = bootstrap_style(tab, rounds=10, seed=3, point=point, workers=1)
    # the per-round gradient at the returned parameters is below the tolerance
    assert (b.ratings.grad_norm <= 1e-8 * tab.n.dot(tab.weight) * 2).all()


def test_intervals_all_methods_and_clusters():
    sim, o, w = small_board(seed=8, n=4000, m=8)
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m, weight=w)
    question = np.arange(sim.a.size) // 4
    kept = tab.battle_row >= 0
    clusters = cluster_matrix(question[kept], tab.battle_row[kept], n_cells=tab.n_rows)
    out = {}
    for ci in ("bootstrap", "sandwich", "fisher"):
        r = rate_style(tab, ci=ci, rounds=200, seed=1)
        assert np.all(r.ci_low <= r.rating) and np.all(r.rating <= r.ci_high)
        assert np.all(r.coef_low < r.coef) and np.all(r.coef < r.coef_high)
        out[ci] = r
    # three estimates of the same SEs agree roughly
    for ci in ("sandwich", "fisher"):
        ratio = out[ci].coef_se / out["bootstrap"].coef_se
        assert np.all((ratio > 0.7) & (ratio < 1.4)), (ci, ratio)
    sim_r = rate_style(tab, rounds=200, seed=1, simultaneous=True)
    assert np.all(sim_r.ci_high - sim_r.ci_low > out["bootstrap"].ci_high - out["bootstrap"].ci_low)
    cl = rate_style(tab, rounds=200, seed=1, clusters=clusters)
    assert cl.diagnostics["clusters"] == clusters.shape[0]
    sw = rate_style(tab, ci="sandwich", clusters=clusters)
    assert np.all(np.isfinite(sw.se))


def test_gamma_zero_style_ratings_equal_raw_within_noise():
    rng = np.random.default_rng(11)
    sim = simulate_style(rng, n_models=10, n_battles=20000, gamma=[0, 0, 0, 0])
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, sim.outcome, sim.side_a, sim.side_b, n_models=m)
    style = fit_style(tab)
    raw = fit(count_table(sim.a, sim.b, sim.outcome, n_models=m))
    # Under gamma = 0 both estimate the same ratings and the raw fit is the
    # efficient one, so the difference has variance var(style) - var(raw)
    # (Hausman): each difference is within 4 of its own SDs, and far below
    # the ratings' own noise.
    sd_diff = np.sqrt(style.se**2 - raw.se**2)
    diff = style.rating - raw.rating
    assert np.abs(diff / sd_diff).max() < 4.0
    assert np.sqrt(np.mean(diff**2)) < raw.se.mean()
    assert np.all(np.abs(style.coef) < 4 * style.coef_se)


def test_no_mle_uses_weak_prior_and_says_so():
    sim, o, w = small_board(seed=9)
    m = sim.theta.size
    o = o.copy()
    o[sim.a == 0] = A_WINS
    o[sim.b == 0] = B_WINS  # model 0 never loses
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m, weight=w)
    res = fit_style(tab)
    assert not res.mle_exists and res.prior_used > 0 and np.isfinite(res.rating).all()
    assert any("never_lost" in f for f in res.flags)
    with pytest.raises(ValueError, match="prior=0"):
        fit_style(tab, prior=0)


def test_bad_input():
    sim, o, w = small_board(seed=10, n=50)
    m = sim.theta.size
    with pytest.raises(ValueError, match="shape"):
        style_table(sim.a, sim.b, o, sim.side_a[:, :3], sim.side_b, n_models=m)
    neg = sim.side_a.copy()
    neg[0, 0] = -1
    with pytest.raises(ValueError, match="non-negative"):
        style_table(sim.a, sim.b, o, neg, sim.side_b, n_models=m)
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m)
    with pytest.raises(ValueError, match="not both"):
        fit_style(tab, prior=1.0, style_reg=0.5)


@pytest.mark.slow
def test_coverage_light():
    """A light version of bench_style's coverage run (the benchmark prints the full one)."""
    rng = np.random.default_rng(2024)
    gamma = np.array([0.6, 0.0, -0.2, 0.1])
    hit_r = hit_c = n_r = n_c = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(40):
            sim = simulate_style(rng, n_models=6, n_battles=1500, gamma=gamma)
            tab = style_table(sim.a, sim.b, sim.outcome, sim.side_a, sim.side_b, n_models=6)
            r = rate_style(tab, ci="sandwich", rounds=10, seed=0)
            true_r = 1000 + SCALE * sim.theta
            hit_r += int(((r.ci_low <= true_r) & (true_r <= r.ci_high)).sum())
            hit_c += int(((r.coef_low <= gamma) & (gamma <= r.coef_high)).sum())
            n_r += 6
            n_c += 4
    # 240 and 160 intervals: binomial SDs of 1.4 and 1.7 points around 95%
    assert 0.89 <= hit_r / n_r <= 0.99
    assert 0.88 <= hit_c / n_c <= 0.995


def test_resampled_counts_are_multinomial():
    """Uniform draws of units counted per category: Multinomial(n, counts / n)."""
    from arena.engine.resampling.sampling import resampled_counts

    counts = np.array([1, 3, 1, 5])
    unit_of = np.repeat(np.arange(4), counts)
    draws = resampled_counts(np.random.default_rng(0), unit_of, 4, 20000)
    assert draws.flags["C_CONTIGUOUS"] and draws.shape == (20000, 4)
    assert np.all(draws.sum(axis=1) == counts.sum())
    p = counts / counts.sum()
    n = counts.sum()
    # means n p and variances n p (1 - p), to a few Monte Carlo SEs
    assert np.allclose(draws.mean(axis=0), n * p, atol=4 * np.sqrt(n * p / 20000))
    assert np.allclose(draws.var(axis=0), n * p * (1 - p), rtol=0.05)
    # one unit per category (unit_of=None): Multinomial(q, uniform)
    same = resampled_counts(np.random.default_rng(0), None, 5, 20000)
    assert np.all(same.sum(axis=1) == 5)
    assert np.allclose(same.var(axis=0), 5 * 0.2 * 0.8, rtol=0.05)


def test_anchor_shifts_the_scale_like_the_raw_board():
    sim, o, w = small_board(seed=12)
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, o, sim.side_a, sim.side_b, n_models=m, weight=w)
    free = fit_style(tab)
    pinned = fit_style(tab, anchor=(2, 1200.0))
    assert abs(pinned.rating[2] - 1200.0) < 1e-9 and pinned.se[2] == 0.0
    diff = pinned.rating - free.rating
    assert np.allclose(diff, diff[0], atol=1e-9)
    assert np.allclose(pinned.coef, free.coef, atol=1e-12)
    boot = bootstrap_style(tab, rounds=20, seed=1, point=pinned, workers=1)
    assert np.allclose(boot.ratings.samples[:, 2], 1200.0)
