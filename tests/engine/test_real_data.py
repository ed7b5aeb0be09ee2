"""Real data: LMArena 140k against an independent re-fit of LMArena's method; MT-Bench clusters."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from arena.core.outcomes import A_WINS, B_WINS
from arena.engine.counts import clustered_table
from arena.engine.fitting.fit import fit
from arena.engine.rate import rate
from arena.engine.resampling.bootstrap import bootstrap
from arena.engine.scale import BASE, SCALE

pytestmark = pytest.mark.slow  # fits of the 135,634 LMArena votes and MT-Bench

ELO_TOL = 0.1  # Elo points, per model with >= MIN_BATTLES battles
MIN_BATTLES = 50


def lmarena_reference(a, b, o, m):
    """LMArena's published method, written independently: logistic loss over unique
    (model_a, model_b, outcome) rows weighted by counts, ties (both kinds) as half a
    win for each side, no prior, scipy L-BFGS-B; rating = 1000 + 400/ln10 * theta with
    the thetas summing to zero."""
    keep = a != b
    y = np.where(o == A_WINS, 1.0, np.where(o == B_WINS, 0.0, 0.5))[keep]
    rows, counts = np.unique(
        np.stack([a[keep], b[keep], (2 * y).astype(int)]), axis=1, return_counts=True
    )
    ra, rb, ry = rows[0], rows[1], rows[2] / 2.0
    w = counts / counts.sum()

    def loss(theta):
        d = theta[ra] - theta[rb]
        p = expit(d)
        val = -(w * (ry * np.log(p) + (1 - ry) * np.log1p(-p))).sum()
        r = w * (p - ry)
        g = np.bincount(ra, r, m) - np.bincount(rb, r, m)
        return val, g

    res = minimize(
        loss,
        np.zeros(m),
        jac=True,
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20000},
    )
    theta = res.x - res.x.mean()
    return BASE + SCALE * theta


def test_lmarena_default_fit_reproduces_published_method(lmarena, lmarena_table):
    names, a, b, o = lmarena
    m = len(names)
    f = fit(lmarena_table)
    ref = lmarena_reference(a, b, o, m)
    keep = a != b
    battles = np.bincount(a[keep], minlength=m) + np.bincount(b[keep], minlength=m)
    big = battles >= MIN_BATTLES
    assert big.sum() >= 50
    assert np.abs(f.rating - ref)[big].max() < ELO_TOL
    assert f.mle_exists and f.prior_used == 0.0 and f.converged
    q = names.index("qwen3-coder-480b-a35b-instruct")
    assert "few_battles" in f.flags[q] and np.isfinite(f.rating[q])


def test_lmarena_bootstrap_and_sandwich_agree(lmarena_table):
    bs = bootstrap(lmarena_table, rounds=300, seed=0)
    assert np.all(np.isfinite(bs.samples)) and bs.failed_rounds.size == 0
    r = rate(lmarena_table, ci="sandwich", rounds=10)
    big = bs.fit.design.battles_per_model >= 2000
    # the battle bootstrap and the Huber-White sandwich estimate the same thing
    np.testing.assert_allclose(bs.se[big], r.se[big], rtol=0.2)


def test_mtbench_judge_clusters(mtbench):
    names, a, b, o, judge, question = mtbench
    m = len(names)
    tab, by_judge = clustered_table(a, b, o, judge, n_models=m)
    _, by_question = clustered_table(a, b, o, question, n_models=m)
    plain = rate(tab, rounds=400)
    for z in (by_judge, by_question):
        r = rate(tab, rounds=400, clusters=z)
        assert np.all(np.isfinite(r.samples)) and r.diagnostics["clusters"] == z.shape[0]
        sw = rate(tab, ci="sandwich", clusters=z, rounds=10)
        assert np.all(np.isfinite(sw.se))
    # judges cast many votes each: judge-level resampling should not be narrower on average
    assert np.mean(rate(tab, rounds=400, clusters=by_judge).se) > 0.9 * np.mean(plain.se)


@pytest.mark.parametrize("path", [("data", "llmfao", "crowd-comparisons.csv")])
def test_llmfao_worker_clusters(path):
    import csv

    from tests.helpers.paths import shared_path

    rows = list(csv.DictReader(open(shared_path(*path))))
    names = sorted({r["left"] for r in rows} | {r["right"] for r in rows})
    ix = {n: i for i, n in enumerate(names)}
    win = {"left": A_WINS, "right": B_WINS, "tie": 2}
    a = np.array([ix[r["left"]] for r in rows])
    b = np.array([ix[r["right"]] for r in rows])
    o = np.array([win[r["winner"]] for r in rows])
    tab, z = clustered_table(a, b, o, np.array([r["worker"] for r in rows]), n_models=len(names))
    r = rate(tab, rounds=200, clusters=z, position=True)
    assert np.all(np.isfinite(r.ci_low)) and np.all(np.isfinite(r.ci_high))
    assert r.diagnostics["position_param"] is not None
