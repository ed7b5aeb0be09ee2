"""Step-down max-t from the pairs that matter equals the full computation, bit for bit.

:func:`arena.engine.inference.maxt_bounded.maxt_bounded` lists, per round, only the pairs
whose deviation can matter and computes those exactly; ``tiers_paired`` uses it
for ``correction="maxt"`` on large boards.  Here it is forced on small boards
(``FAST_MIN_WORK = 0``) and every output of ``tiers_paired`` is compared with
the full computation (``FAST_MIN_WORK`` out of reach): tiers, deciding pairs,
raw and adjusted p-values, critical value.
"""

from __future__ import annotations

import numpy as np
import pytest

import arena.engine.inference.maxt_bounded as MB
from arena.engine.inference import pairs as P
from arena.engine.inference.tiers import tiers_paired

FIELDS = ("tiers", "order", "starts_tier", "upper", "lower", "p_value", "p_adjusted")


def board(seed: int, kind: str, m: int = 60, rounds: int = 300):
    rng = np.random.default_rng(seed)
    rating = rng.normal(size=m) * 40
    if kind == "ties":
        rating = np.round(rating / 25) * 25  # exact ties on the board
    se = rng.uniform(3, 15, size=m)
    samples = rating + rng.normal(size=(rounds, m)) * se + rng.normal(size=(rounds, 1)) * 10
    if kind == "correlated":
        samples[:, 1:] = 0.7 * samples[:, :-1] + 0.3 * samples[:, 1:]
    if kind == "coarse":
        samples = np.round(samples)  # many equal differences
    return rating, samples


def both(monkeypatch, rating, samples, **kw):
    monkeypatch.setattr(MB, "FAST_MIN_WORK", 10**18)
    full = tiers_paired(rating, samples, **kw)
    monkeypatch.setattr(MB, "FAST_MIN_WORK", 0)
    fast = tiers_paired(rating, samples, **kw)
    return full, fast


def assert_same(full, fast) -> None:
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(full, f), getattr(fast, f), err_msg=f)
    assert full.critical_t == fast.critical_t


@pytest.mark.parametrize("kind", ["plain", "ties", "correlated", "coarse"])
@pytest.mark.parametrize("rule", ["leader", "cut"])
def test_bounded_maxt_equals_full(monkeypatch, kind: str, rule: str) -> None:
    for seed in range(3):
        rating, samples = board(seed, kind)
        pvalues = "normal" if seed % 2 else "percentile"
        full, fast = both(
            monkeypatch, rating, samples, correction="maxt", rule=rule, pvalues=pvalues
        )
        assert_same(full, fast)
    # boards with something to separate, and something not
    assert np.any(full.p_adjusted <= 0.05) or rule == "cut"
    assert np.any(full.p_adjusted > 0.05)


def test_bounded_maxt_uses_the_bounds_and_lists_few_pairs(monkeypatch) -> None:
    rating, samples = board(7, "plain", m=120, rounds=400)
    rating *= 4  # a long board: most pairs lie far apart
    samples = rating + (samples - samples.mean(axis=0))
    order = np.argsort(-rating, kind="stable")
    rb, sb = rating[order], samples[:, order]
    st = P.pair_stats(rb, sb, "normal")
    iu = np.triu_indices(rating.size, k=1)
    full = P.maxt_stepdown(sb, iu, st)
    monkeypatch.setattr(MB, "FAST_MIN_WORK", 0)
    listed = []
    real = P.exact_pairs

    def counted(r, s, a, b):
        listed.append(a.size)
        return real(r, s, a, b)

    monkeypatch.setattr(MB, "exact_pairs", counted)
    p_adj, max_t = MB.maxt_bounded(rb, sb)
    np.testing.assert_array_equal(p_adj[iu], full)
    np.testing.assert_array_equal(max_t, st.max_t)
    # the point: far fewer pairs than all of them got the full computation
    assert sum(listed) < 0.6 * iu[0].size


def test_exact_pairs_match_pair_stats_in_both_layouts(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    rating = np.sort(rng.normal(size=30) * 50)[::-1]
    base = rating + rng.normal(size=(200, 30)) * 10
    for chunk in (4_000_000, 200 * 4, 200 * 2):  # whole rows; chunks leaving one pair alone
        monkeypatch.setattr(P, "_CHUNK_ELEMENTS", chunk)
        for samples in (np.ascontiguousarray(base), np.asfortranarray(base)):
            st = P.pair_stats(rating, samples, "normal")
            iu = np.triu_indices(30, k=1)
            pick = rng.permutation(iu[0].size)[:50]
            for sel in (pick, pick[:1]):
                c, sd, t = P.exact_pairs(rating, samples, iu[0][sel], iu[1][sel])
                np.testing.assert_array_equal(c, st.centre[iu][sel])
                np.testing.assert_array_equal(sd, st.sd[iu][sel])
                np.testing.assert_array_equal(t, st.t_obs[iu][sel])


def test_samples_the_bounds_cannot_serve_fall_back(monkeypatch) -> None:
    rating, samples = board(2, "plain", m=20, rounds=100)
    samples[:, 5] = rating[5]  # a model without spread
    monkeypatch.setattr(MB, "FAST_MIN_WORK", 0)
    order = np.argsort(-rating, kind="stable")
    assert MB.maxt_bounded(rating[order], samples[:, order]) is None
    full, fast = both(monkeypatch, rating, samples, correction="maxt")
    assert_same(full, fast)
