"""Style control at scale (issue 30): collapsed rows, the fast row sampler, the one-step bootstrap."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import chisquare, multinomial

from arena.core.outcomes import A_WINS, B_WINS, TIE
from arena.engine.counts import unique_rows
from arena.engine.resampling.sampling import RowResampler
from arena.engine.style import boot
from arena.engine.style.boot import _StyleJob, bootstrap_method
from arena.engine.style.design import _collapse, style_covariates, style_table
from arena.engine.style.rate import bootstrap_style, fit_style, rate_style, style_sandwich

from .style_data import simulate_style


def binned_board(seed: int, n: int = 20000, m: int = 4):
    """Battles whose features are 0 or 1, so many battles share a row; ties and weights."""
    rng = np.random.default_rng(seed)
    sim = simulate_style(rng, n_models=m, n_battles=n, gamma=[0.4, 0.1, -0.1, 0.05])
    cut = np.median(np.r_[sim.side_a, sim.side_b], axis=0)
    side_a, side_b = (sim.side_a > cut).astype(float), (sim.side_b > cut).astype(float)
    o = sim.outcome.copy()
    o[rng.random(n) < 0.15] = TIE
    w = np.where(rng.random(n) < 0.2, 3.0, 1.0)
    return sim, o, w, side_a, side_b


def uncollapsed(tab):
    """The same table with one row per battle (rows repeated, n = 1): no collapsing."""
    rep = tab.n.astype(np.intp)
    take = np.repeat(np.arange(tab.n_rows), rep)
    return replace(
        tab,
        a=tab.a[take],
        b=tab.b[take],
        outcome=tab.outcome[take],
        weight=tab.weight[take],
        n=np.ones(take.size),
        z=np.ascontiguousarray(tab.z[take]),
        battle_row=np.full(0, -1),
    )


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_collapsed_and_uncollapsed_fits_agree(ties):
    sim, o, w, fa, fb = binned_board(seed=1)
    m = sim.theta.size
    tab = style_table(sim.a, sim.b, o, fa, fb, n_models=m, weight=w)
    flat = uncollapsed(tab)
    assert tab.n_rows < 0.5 * flat.n_rows  # the collapse is real here
    assert flat.n_battles == tab.n_battles
    one, many = fit_style(tab, ties=ties), fit_style(flat, ties=ties)
    # same likelihood, other summation order: both solved far below 1e-9
    assert np.max(np.abs(one.theta - many.theta)) < 1e-9
    assert np.max(np.abs(one.coef - many.coef)) < 1e-9
    assert np.max(np.abs(one.se - many.se)) < 1e-9
    # the sandwich sums per-battle scores: n s s^T on a row is its battles' sum
    (c1, k1), (c2, k2) = style_sandwich(one), style_sandwich(many)
    assert np.max(np.abs(c1 - c2)) < 1e-9 * np.abs(c1).max()
    assert np.max(np.abs(k1 - k2)) < 1e-9 * np.abs(k1).max()


def test_collapse_is_unique_rows_faster():
    """Same rows, same order, same representatives as sorting by every column."""
    rng = np.random.default_rng(3)
    for n, levels in ((5000, 2), (20000, 40)):
        a, b = rng.integers(0, 4, n), rng.integers(0, 4, n)
        o, w = rng.integers(0, 4, n), rng.choice([1.0, 3.0], n)
        z = rng.integers(0, levels, (n, 4)).astype(float)
        z[rng.random(n) < 0.1, 2] = -0.0  # equal to 0.0, another bit pattern
        first, inverse = _collapse(4, a, b, o, w, z)
        ref_first, ref_inverse = unique_rows(a, b, o, w, *z.T)
        assert np.array_equal(first, ref_first)
        assert np.array_equal(inverse, ref_inverse)


@pytest.mark.slow
def test_row_resampler_is_multinomial():
    """Exact Multinomial(B, n / B): the empirical law of the vectors against the pmf."""
    n = np.array([1.0, 1.0, 2.0, 1.0, 3.0])
    rs = RowResampler(n)
    draws = rs.sample(np.random.default_rng(0), 60000)
    assert draws.flags["C_CONTIGUOUS"] and np.all(draws.sum(axis=1) == 8)
    vectors, seen = np.unique(draws.astype(int), axis=0, return_counts=True)
    p = multinomial.pmf(vectors, 8, n / 8)
    common = p * draws.shape[0] >= 20
    observed = np.r_[seen[common], seen[~common].sum()]
    expected = np.r_[p[common], 1.0 - p[common].sum()] * draws.shape[0]
    assert chisquare(observed, expected).pvalue > 1e-3
    # one battle per row at scale: the counts' mean and variance of Multinomial(B, 1/B)
    big = RowResampler(np.ones(200_000)).sample(np.random.default_rng(1), 3)
    assert np.all(big.sum(axis=1) == 200_000)
    assert abs(big.var() - (1 - 1 / 200_000)) < 0.01
    assert not RowResampler.applicable(np.array([1.0, 40.0]))


def test_one_step_bootstrap_close_to_exact_on_a_large_board():
    """The one-step rounds against exact rounds of the *same* resamples."""
    sim = simulate_style(
        np.random.default_rng(4), n_models=10, n_battles=40000, gamma=[0.5, 0.1, -0.1, 0.05]
    )
    tab = style_table(sim.a, sim.b, sim.outcome, sim.side_a, sim.side_b, n_models=10)
    point = fit_style(tab)
    exact = _StyleJob(point, None, 30, 12, 60, "exact")
    approx = _StyleJob(point, None, 30, 12, 60, "one-step")
    approx.sampler = None  # the exact job's sampler: identical counts
    seed = np.random.SeedSequence(5)
    re, ce = exact.run(30, seed)[:2]
    ra, ca = approx.run(30, seed)[:2]
    sd = re.std(axis=0)
    assert np.max(np.abs(ra - re) / sd) < 0.2
    assert np.median(np.abs(ra - re) / sd) < 0.05
    assert np.max(np.abs(ca - ce) / ce.std(axis=0)) < 0.2
    # through the public entry point: its own sampler, same spread as the exact bootstrap
    b1 = bootstrap_style(tab, rounds=300, seed=2, point=point, method="one-step")
    b2 = bootstrap_style(tab, rounds=300, seed=2, point=point, method="exact")
    assert b1.method == "one-step" and b2.method == "exact"
    ratio = b1.ratings.samples.std(axis=0) / b2.ratings.samples.std(axis=0)
    assert np.all(np.abs(ratio - 1) < 0.2)
    assert b1.ratings.failed_rounds.size == 0


def test_auto_is_exact_below_the_threshold_and_says_one_step_above(monkeypatch):
    sim = simulate_style(
        np.random.default_rng(6), n_models=6, n_battles=3000, gamma=[0.5, 0.1, -0.1, 0.05]
    )
    tab = style_table(sim.a, sim.b, sim.outcome, sim.side_a, sim.side_b, n_models=6)
    assert bootstrap_method("auto", tab.n_rows) == "exact"
    r = rate_style(tab, ci="bootstrap", rounds=40, seed=1)
    assert "style_bootstrap" not in r.diagnostics  # exact boards: as before
    monkeypatch.setattr(boot, "STYLE_EXACT_MAX_ROWS", 1000)
    assert bootstrap_method("auto", tab.n_rows) == "one-step"
    r = rate_style(tab, ci="bootstrap", rounds=40, seed=1)
    assert r.diagnostics["style_bootstrap"] == "one-step"
    assert np.all(r.ci_low < r.rating) and np.all(r.rating < r.ci_high)
    with pytest.raises(ValueError, match="style bootstrap"):
        bootstrap_method("newton", 10)


def test_covariates_unchanged_by_the_faster_collapse():
    """The table's covariates are LMArena's, whatever the collapse."""
    sim, o, w, fa, fb = binned_board(seed=9, n=2000)
    tab = style_table(sim.a, sim.b, o, fa, fb, n_models=sim.theta.size, weight=w)
    x = style_covariates(fa, fb, np.ones(4, dtype=bool))
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    kept = tab.battle_row >= 0
    assert np.array_equal(tab.z[tab.battle_row[kept]], z[kept])
    assert np.all(np.isin(tab.outcome, [A_WINS, B_WINS, TIE]))


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_chunked_sandwich_equals_the_whole_table_one(monkeypatch, ties):
    """Large tables sum the sandwich's meat over row chunks: the same covariances."""
    from arena.engine.style import rate as style_rate

    sim, o, w, fa, fb = binned_board(seed=12, n=6000)
    tab = uncollapsed(style_table(sim.a, sim.b, o, fa, fb, n_models=sim.theta.size, weight=w))
    point = fit_style(tab, ties=ties)
    whole_cov, whole_coef = style_sandwich(point)
    monkeypatch.setattr(style_rate, "SANDWICH_CHUNK_ROWS", 777)
    cov, coef = style_sandwich(point)
    assert np.max(np.abs(cov - whole_cov)) < 1e-12 * np.abs(whole_cov).max()
    assert np.max(np.abs(coef - whole_coef)) < 1e-12 * np.abs(whole_coef).max()
