"""Count tables, rate(), analytic intervals and online Elo."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arena.core.outcomes import A_WINS, B_WINS, TIE, TIE_BOTH_BAD
from arena.engine.counts import (
    cluster_matrix,
    clustered_cells,
    clustered_table,
    count_table,
    from_cells,
)
from arena.engine.elo import online_elo
from arena.engine.fitting.fit import fit
from arena.engine.options import FitOptions
from arena.engine.rate import rate
from tests.helpers.simulate import simulate


def test_count_table_aggregates_cells():
    a = [0, 0, 1, 0, 2]
    b = [1, 1, 0, 1, 0]
    o = [A_WINS, A_WINS, TIE, B_WINS, TIE_BOTH_BAD]
    t = count_table(a, b, o, n_models=3)
    assert t.n_cells == 4 and t.n.sum() == 5
    cell = (t.a == 0) & (t.b == 1) & (t.outcome == A_WINS)
    assert t.n[cell] == 2 and t.weight[cell] == 1.0


def test_weights_split_cells_and_validation():
    t = count_table([0, 0], [1, 1], [A_WINS, A_WINS], n_models=2, weight=[1.0, 2.0])
    assert t.n_cells == 2
    with pytest.raises(ValueError):
        count_table([0], [2], [A_WINS], n_models=2)
    with pytest.raises(ValueError):
        count_table([0], [1], [7], n_models=2)
    with pytest.raises(ValueError):
        count_table([0], [1], [0], n_models=2, weight=[0.0])


def test_from_cells_merges_duplicates():
    t = from_cells([0, 0, 1], [1, 1, 0], [0, 0, 1], [2, 3, 0], n_models=2)
    assert t.n_cells == 1 and t.n[0] == 5


def test_cluster_matrix_counts():
    table, z = clustered_table(
        [0, 0, 1, 0], [1, 1, 0, 1], [0, 0, 2, 0], ["j1", "j2", "j1", "j1"], n_models=2
    )
    assert z.shape == (2, table.n_cells)
    np.testing.assert_array_equal(np.asarray(z.sum(axis=0)).ravel(), table.n)
    z2 = cluster_matrix(["x", "y"], [0, 0], n_cells=table.n_cells)
    assert z2.shape == (2, table.n_cells)


def test_clustered_cells_match_per_battle_aggregation():
    """SQL-style (cluster, cell, count) rows give the table and matrix of the battles."""
    rng = np.random.default_rng(5)
    a, b, o = simulate(rng, rng.normal(0, 1, 5), 2000)
    w = rng.choice([1.0, 0.5], size=a.size)
    judge = rng.choice(["j1", "j2", "j10", "battle:7"], size=a.size)
    want, want_z = clustered_table(a, b, o, judge, n_models=5, weight=w)
    # GROUP BY judge, a, b, outcome, weight, in a shuffled row order, plus an empty row
    first, inverse = np.unique(
        np.stack([np.unique(judge, return_inverse=True)[1], a, b, o, w * 2]),
        axis=1,
        return_index=True,
        return_inverse=True,
    )[1:]
    inverse = inverse.ravel()
    n = np.bincount(inverse).astype(float)
    rows = rng.permutation(first.size)
    ga, gb, go, gw, gj = (x[first][rows] for x in (a, b, o, w, judge))
    gn = n[rows]
    ga, gb, go, gw, gj = (np.append(x, x[:1]) for x in (ga, gb, go, gw, gj))
    gn = np.append(gn, 0.0)
    table, z = clustered_cells(ga, gb, go, gn, gj, n_models=5, weight=gw)
    for field in ("a", "b", "outcome", "n", "weight"):
        np.testing.assert_array_equal(getattr(table, field), getattr(want, field))
    np.testing.assert_array_equal(z.toarray(), want_z.toarray())


def test_fit_options_object_or_keywords():
    t = _table()
    opts = FitOptions(ties="davidson", position=True)
    by_object = fit(t, opts)
    by_keywords = fit(t, ties="davidson", position=True)
    np.testing.assert_array_equal(by_object.rating, by_keywords.rating)
    assert by_object.position_param == by_keywords.position_param
    # keywords override the object's fields
    np.testing.assert_array_equal(fit(t, opts, ties="half", position=False).rating, fit(t).rating)
    with pytest.raises(TypeError, match="tie_model"):
        fit(t, tie_model="davidson")


def _table(seed=0, m=6, n=3000):
    rng = np.random.default_rng(seed)
    a, b, o = simulate(rng, rng.normal(0, 1, m), n)
    return count_table(a, b, o, n_models=m)


@pytest.mark.parametrize("ci", ["bootstrap", "sandwich", "fisher"])
def test_rate_methods(ci):
    t = _table()
    r = rate(t, ci=ci, rounds=300)
    assert r.samples.shape == (300, 6)
    assert np.all(r.ci_low < r.rating) and np.all(r.rating < r.ci_high)
    json.dumps(r.diagnostics)
    assert r.diagnostics["method"] == ci
    assert (r.cov is None) == (ci == "bootstrap")
    r2 = rate(t, ci=ci, rounds=300)
    np.testing.assert_array_equal(r.samples, r2.samples)


def test_analytic_simultaneous_wider():
    t = _table(1)
    plain = rate(t, ci="sandwich", rounds=2000)
    maxt = rate(t, ci="sandwich", rounds=2000, simultaneous=True)
    chi = rate(t, ci="sandwich", rounds=10, simultaneous="chi2")
    w = plain.ci_high - plain.ci_low
    assert np.all(maxt.ci_high - maxt.ci_low > w)
    assert np.all(chi.ci_high - chi.ci_low >= maxt.ci_high - maxt.ci_low)
    with pytest.raises(ValueError):
        rate(t, ci="bootstrap", simultaneous="chi2")
    with pytest.raises(ValueError):
        rate(t, ci="nope")


def test_sandwich_equals_fisher_without_ties_when_model_holds():
    """No ties and a correct model: the sandwich meat equals the information."""
    rng = np.random.default_rng(3)
    a, b, o = simulate(rng, rng.normal(0, 1, 5), 40_000, tie_rate=0.0)
    t = count_table(a, b, o, n_models=5)
    f = rate(t, ci="fisher", rounds=10)
    s = rate(t, ci="sandwich", rounds=10)
    np.testing.assert_allclose(s.se, f.se, rtol=0.05)


def test_sandwich_cluster_robust_inflates():
    rng = np.random.default_rng(4)
    a, b, o = simulate(rng, rng.normal(0, 0.5, 5), 400, tie_rate=0.0)
    rep = 9
    tab, z = clustered_table(
        np.repeat(a, rep),
        np.repeat(b, rep),
        np.repeat(o, rep),
        np.repeat(np.arange(a.size), rep),
        n_models=5,
    )
    s = rate(tab, ci="sandwich", rounds=10)
    c = rate(tab, ci="sandwich", rounds=10, clusters=z)
    assert np.median(c.se / s.se) == pytest.approx(3.0, rel=0.1)


def test_rate_flags_and_warnings_pass_through():
    t = from_cells([0, 1, 1, 2], [1, 2, 0, 1], [A_WINS] * 4, [3, 2, 1, 1], n_models=4)
    r = rate(t, rounds=100)
    assert "no_battles" in r.flags[3]
    assert (
        np.all(np.isfinite(r.ci_low))
        and np.all(np.isfinite(r.ci_high))
        and np.all(np.isfinite(r.samples))
    )
    assert r.warnings


def test_online_elo():
    r = online_elo([0], [1], [A_WINS], n_models=2, k=32.0)
    np.testing.assert_allclose(r, [1016.0, 984.0])
    r = online_elo([0, 0], [1, 1], [TIE, TIE_BOTH_BAD], n_models=2)
    np.testing.assert_allclose(r, [1000.0, 1000.0])
    # order matters, and `order` sorts by key
    a, b, o = [0, 0], [1, 1], [A_WINS, B_WINS]
    r1 = online_elo(a, b, o, n_models=2, k=32)
    r2 = online_elo(a, b, o, n_models=2, k=32, order=[2, 1])
    assert r1[0] != r2[0]
    np.testing.assert_allclose(r2, online_elo(a[::-1], b[::-1], o[::-1], n_models=2, k=32))
    assert online_elo([1], [1], [A_WINS], n_models=2).tolist() == [1000.0, 1000.0]


def test_online_elo_tracks_bt_order():
    rng = np.random.default_rng(5)
    theta = np.linspace(-1, 1, 5)
    a, b, o = simulate(rng, theta, 20_000)
    e = online_elo(a, b, o, n_models=5, k=4)
    assert np.all(np.diff(e) > 0)
    assert np.all(np.diff(fit(count_table(a, b, o, n_models=5)).rating) > 0)


def test_count_table_keys_do_not_collide():
    # (0, 3) and (1, 0) would share a key if the pair code used too small a base
    t = count_table([0, 1, 0], [3, 0, 3], [A_WINS, A_WINS, B_WINS], n_models=4)
    assert t.n_cells == 3
    assert sorted(zip(t.a.tolist(), t.b.tolist(), t.outcome.tolist(), strict=True)) == [
        (0, 3, 0),
        (0, 3, 1),
        (1, 0, 0),
    ]


def test_fit_runs_with_one_blas_thread_and_restores(monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits

    import arena.engine.fitting.fit as fit_module

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    seen = []
    real = fit_module.newton

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(fit_module, "newton", spy)
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        fit(_table())
        assert blas_threads() == before
    assert seen and all(n == 1 for threads in seen for n in threads)
