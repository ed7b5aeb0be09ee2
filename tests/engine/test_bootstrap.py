"""Vectorised bootstrap: exactness of the batched solver and sampler, determinism, coverage."""

from __future__ import annotations

import numpy as np
import pytest

from arena.core.defaults import DEFAULT_SEED
from arena.core.outcomes import TIE
from arena.engine.counts import clustered_table, count_table
from arena.engine.fitting.fit import fit, initial_params
from arena.engine.fitting.likelihood import gradient_scale, hessian_diagonal
from arena.engine.fitting.newton import GTOL_REL, chord, newton
from arena.engine.resampling.bootstrap import bootstrap
from arena.engine.resampling.sampling import multinomial_rows
from arena.engine.scale import BASE, SCALE
from tests.helpers.simulate import simulate

BATCH_TOL = 1e-7  # Elo: batched vs one-at-a-time exact fits
COVERAGE_RANGE = (0.93, 0.97)


def _table(seed=0, m=6, n=3000, tie_rate=0.1):
    rng = np.random.default_rng(seed)
    a, b, o = simulate(rng, rng.normal(0, 1, m), n, tie_rate=tie_rate)
    return count_table(a, b, o, n_models=m)


@pytest.mark.parametrize("opts", [{}, {"ties": "davidson"}, {"position": True}])
def test_batched_solvers_equal_individual_fits(opts):
    """Chord and batched Newton on R perturbed data sets = R separate point fits."""
    table = _table(1)
    point = fit(table, **opts)
    d = point.design
    rng = np.random.default_rng(2)
    counts = multinomial_rows(rng, int(d.cat_n.sum()), d.cat_n / d.cat_n.sum(), 12)
    stats = d.stats_from_counts(counts)
    gtol = GTOL_REL * gradient_scale(d, stats)
    x0 = np.tile(point.x, (12, 1))
    diag0 = hessian_diagonal(d, point.x[None], d.point_stats(), 0.0)[0]
    xc, cc, _, _ = chord(d, stats, x0, point.kinv, lam=0.0, gtol=gtol, diag0=diag0)
    xn, cn, _, _ = newton(d, stats, np.tile(initial_params(d), (12, 1)), lam=0.0, gtol=gtol)
    assert cn.all()
    for r in range(12):
        # rebuild round r as its own table and fit it from scratch
        keep = d.cell_cat >= 0
        n_cell = np.zeros(table.n_cells)
        per_cat = counts[r] / np.maximum(d.cat_n, 1)
        n_cell[keep] = table.n[keep] * per_cat[d.cell_cat[keep]]
        # categories merge cells only when they are statistically identical, so
        # scaling cells of a category proportionally reproduces its statistics
        t_r = type(table)(table.n_models, table.a, table.b, table.outcome, n_cell, table.weight)
        f_r = fit(t_r, **opts)
        th_n = xn[r, : d.n_active] - xn[r, : d.n_active].mean()
        np.testing.assert_allclose(BASE + SCALE * th_n, f_r.rating, atol=BATCH_TOL)
        if cc[r]:
            th_c = xc[r, : d.n_active] - xc[r, : d.n_active].mean()
            np.testing.assert_allclose(BASE + SCALE * th_c, f_r.rating, atol=BATCH_TOL)
    assert cc.mean() > 0.5


def test_poisson_sampler_is_multinomial():
    p = np.random.default_rng(0).dirichlet(np.ones(40))
    n, r = 5000, 4000
    x = multinomial_rows(np.random.default_rng(1), n, p, r, method="poisson")
    y = multinomial_rows(np.random.default_rng(2), n, p, r, method="multinomial")
    assert np.all(x.sum(axis=1) == n) and np.all(x >= 0)
    # mean and covariance n p, n (diag p - p p^T) within Monte Carlo error
    np.testing.assert_allclose(x.mean(0), n * p, atol=5 * np.sqrt(n * p / r).max())
    cov_true = n * (np.diag(p) - np.outer(p, p))
    for z in (x, y):
        np.testing.assert_allclose(np.cov(z.T), cov_true, atol=0.1 * cov_true.diagonal().max())


def test_same_seed_identical_and_threads_irrelevant():
    t = _table(3)
    b1 = bootstrap(t, rounds=300, seed=42)
    b2 = bootstrap(t, rounds=300, seed=42, workers=1)
    b3 = bootstrap(t, rounds=300, seed=43)
    np.testing.assert_array_equal(b1.samples, b2.samples)
    assert not np.array_equal(b1.samples, b3.samples)
    b4 = bootstrap(t, rounds=300, seed=np.random.default_rng(7))
    b5 = bootstrap(t, rounds=300, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(b4.samples, b5.samples)


def test_intervals_and_diff():
    t = _table(4)
    bs = bootstrap(t, rounds=400, seed=0)
    assert bs.samples.shape == (400, 6) and bs.converged.all() and bs.failed_rounds.size == 0
    lo, hi = bs.interval(0.95)
    lo90, hi90 = bs.interval(0.90)
    slo, shi = bs.interval(0.95, simultaneous=True)
    assert np.all(lo <= bs.point) and np.all(bs.point <= hi)
    assert np.all(lo90 >= lo) and np.all(hi90 <= hi)
    assert np.all(shi - slo > hi - lo)  # joint intervals are wider
    np.testing.assert_allclose(bs.diff(0, 1), bs.samples[:, 0] - bs.samples[:, 1])
    np.testing.assert_allclose(bs.samples.mean(axis=1), BASE)  # every round centred
    with pytest.raises(ValueError):
        bs.interval(1.5)


def test_anchor_in_rounds():
    t = _table(5)
    bs = bootstrap(t, rounds=50, seed=0, anchor=(2, 1100.0))
    assert np.all(bs.samples[:, 2] == 1100.0)


def test_cluster_of_singletons_matches_battle_bootstrap():
    """Clusters of one battle each: same law as the battle bootstrap."""
    rng = np.random.default_rng(6)
    a, b, o = simulate(rng, rng.normal(0, 1, 5), 2000)
    table, z = clustered_table(a, b, o, np.arange(a.size), n_models=5)
    plain = bootstrap(table, rounds=1500, seed=1)
    clus = bootstrap(table, rounds=1500, seed=2, clusters=z)
    np.testing.assert_allclose(clus.se, plain.se, rtol=0.12)


def test_cluster_bootstrap_wider_with_correlated_clusters():
    """Each judge repeats one verdict many times: cluster resampling must see that."""
    rng = np.random.default_rng(7)
    a, b, o = simulate(rng, rng.normal(0, 0.5, 5), 300)
    rep = 10  # every vote copied 10 times by the same judge
    judge = np.repeat(np.arange(a.size), rep)
    table, z = clustered_table(
        np.repeat(a, rep), np.repeat(b, rep), np.repeat(o, rep), judge, n_models=5
    )
    plain = bootstrap(table, rounds=600, seed=1)
    clus = bootstrap(table, rounds=600, seed=1, clusters=z)
    ratio = np.median(clus.se / plain.se)
    assert ratio == pytest.approx(np.sqrt(rep), rel=0.2)


def test_rounds_without_mle_do_not_corrupt():
    """A model with two tied battles: many rounds draw none of them."""
    rng = np.random.default_rng(8)
    a, b, o = simulate(rng, rng.normal(0, 1, 5), 3000)
    a = np.concatenate([a, [5, 1]])
    b = np.concatenate([b, [0, 5]])
    o = np.concatenate([o, [TIE, TIE]])
    t = count_table(a, b, o, n_models=6)
    bs = bootstrap(t, rounds=500, seed=0)
    assert np.all(np.isfinite(bs.samples))
    assert bs.prior_rounds.size > 30  # P(no battle of model 5) = e^-2
    assert bs.failed_rounds.size == 0
    lo, hi = bs.interval(0.95)
    assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
    # comparisons among the well-measured models are unaffected by model 5's
    # bad rounds (their centred ratings do move with model 5 via the mean)
    clean = bootstrap(count_table(a[:-2], b[:-2], o[:-2], n_models=5), rounds=500, seed=0)
    for k in range(1, 5):
        assert bs.diff(0, k).std() == pytest.approx(clean.diff(0, k).std(), rel=0.15)


def test_point_fit_with_prior_bootstraps_with_prior():
    rows_a, rows_b = np.array([0, 1, 1, 2, 3, 4]), np.array([1, 0, 2, 1, 4, 3])
    o = np.array([0, 0, 0, 0, 0, 0])
    t = count_table(np.repeat(rows_a, 5), np.repeat(rows_b, 5), np.repeat(o, 5), n_models=5)
    bs = bootstrap(t, rounds=100, seed=0)
    assert bs.fit.prior_used > 0 and np.all(np.isfinite(bs.samples))


@pytest.mark.slow
def test_coverage_simulation():
    """95% percentile intervals cover the (centred) truth 93-97% of the time."""
    rng = np.random.default_rng(2024)
    m, arenas, battles, rounds = 8, 250, 1500, 250
    hits = total = 0
    for _ in range(arenas):
        theta = rng.normal(0, 0.6, m)
        truth = BASE + SCALE * (theta - theta.mean())
        a, b, o = simulate(rng, theta, battles, tie_rate=0.0)
        bs = bootstrap(count_table(a, b, o, n_models=m), rounds=rounds, seed=rng, workers=1)
        lo, hi = bs.interval(0.95)
        hits += int(((lo <= truth) & (truth <= hi)).sum())
        total += m
    coverage = hits / total
    assert COVERAGE_RANGE[0] <= coverage <= COVERAGE_RANGE[1], coverage


def test_poisson_table_exact_law():
    """Tabulated inversion reproduces Poisson pmfs (chi-square) for small to large means."""
    from scipy.stats import chisquare, poisson

    from arena.engine.resampling.sampling import PoissonTable

    means = np.array([0.0, 0.3, 3.0, 40.0, 2500.0])
    z = PoissonTable(means).sample(np.random.default_rng(11), 200_000)
    assert np.all(z[:, 0] == 0) and np.all(z == np.round(z))
    for i, lam in enumerate(means[1:], start=1):
        ks = np.arange(int(lam + 10 * np.sqrt(lam) + 20))
        obs = np.bincount(z[:, i].astype(int), minlength=ks.size)[: ks.size]
        exp = poisson.pmf(ks, lam) * z.shape[0]
        keep = exp > 5
        assert chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > 1e-3


@pytest.mark.slow
def test_poisson_table_is_the_exact_inverse_cdf():
    """Every draw equals scipy's Poisson quantile of the same uniform (guide, linear and bisection paths).

    Repeated means share one table; the uniforms are reproduced from the seed.
    """
    from scipy.stats import poisson

    from arena.engine.resampling.sampling import PoissonTable

    means = np.array([0.0, 0.3, 3.0, 40.0, 2500.0, 40.0, 3.0, 1e5, 0.0, 67.3])
    table = PoissonTable(means)
    assert table.n_tables == 7  # one per distinct mean, zero included
    rounds = 50_000
    z = table.sample(np.random.default_rng(5), rounds)
    u = np.random.default_rng(5).random((rounds, means.size))  # one row of uniforms per round
    expected = np.where(means > 0, poisson.ppf(u, np.maximum(means, 1e-300)), 0.0)
    assert z.flags.c_contiguous
    np.testing.assert_array_equal(z, expected)


def test_categorical_table_frequencies():
    from arena.engine.resampling.sampling import CategoricalTable

    p = np.array([0.5, 0.0, 0.25, 0.125, 0.125])
    c = CategoricalTable(p).sample(np.random.default_rng(3), 400_000)
    freq = np.bincount(c, minlength=5) / c.size
    np.testing.assert_allclose(freq, p, atol=4e-3)
    assert freq[1] == 0.0


def test_one_seed_knob_and_its_default_are_reproducible():
    t = _table(9)
    np.testing.assert_array_equal(
        bootstrap(t, rounds=50, seed=5).samples,
        bootstrap(t, rounds=50, seed=np.random.SeedSequence(5)).samples,
    )
    np.testing.assert_array_equal(
        bootstrap(t, rounds=50).samples, bootstrap(t, rounds=50, seed=DEFAULT_SEED).samples
    )
    assert not np.array_equal(
        bootstrap(t, rounds=50).samples, bootstrap(t, rounds=50, seed=0).samples
    )
    with pytest.raises(TypeError):
        bootstrap(t, rounds=50, rng=1)
