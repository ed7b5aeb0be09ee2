"""CreditWitness: the bootstrap's shortcut for the per-round MLE check gives the full check's answer."""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.counts import count_table
from arena.engine.fitting.design import make_design
from arena.engine.fitting.graph import CreditWitness, credit_debit
from arena.engine.resampling.bootstrap import bootstrap, mle_possible
from arena.engine.resampling.sampling import multinomial_rows
from tests.helpers.simulate import simulate


def _rounds(design, rounds: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = design.cat_n.sum()
    counts = multinomial_rows(rng, int(n), design.cat_n / n, rounds)
    return design.stats_from_counts(counts)


def _board(m: int, n: int, seed: int, ties: str = "half"):
    rng = np.random.default_rng(seed)
    a, b, o = simulate(rng, rng.normal(0, 1.5, m), n, tie_rate=0.1)
    return make_design(count_table(a, b, o, n_models=m), ties=ties)


@pytest.mark.parametrize(
    ("m", "n", "ties"),
    [(40, 600, "half"), (40, 600, "davidson"), (200, 20_000, "half"), (8, 40, "half")],
)
def test_witnesses_agree_with_the_full_check(m, n, ties):
    """Rounds the witnesses settle are possible by the full sums; every impossible round is undecided."""
    d = _board(m, n, seed=m + n, ties=ties)
    witness = CreditWitness(d, d.point_stats()[0])
    stats = _rounds(d, 300, seed=1)
    full = mle_possible(d, stats, *credit_debit(d, stats))
    undecided = witness.undecided(stats)
    settled = np.setdiff1d(np.arange(stats.shape[0]), undecided)
    assert full[settled].all()
    assert np.isin(np.flatnonzero(~full), undecided).all()


def test_thin_board_has_impossible_rounds_and_dense_board_settles_them_all():
    """The check is not vacuous: thin data gives rounds without an MLE, dense data none undecided."""
    thin = _board(30, 200, seed=3)
    stats = _rounds(thin, 200, seed=4)
    assert not mle_possible(thin, stats, *credit_debit(thin, stats)).all()
    dense = _board(50, 50_000, seed=5)
    witness = CreditWitness(dense, dense.point_stats()[0])
    assert witness.complete
    assert witness.undecided(_rounds(dense, 100, seed=6)).size == 0


def test_no_witness_for_a_model_that_never_won_means_every_round_is_checked():
    d = _board(10, 400, seed=7)
    stats = d.point_stats()[0].copy()
    # take away model 0's credit: no group can witness it
    first_member = d.ga == 0
    stats[0, first_member] = 0.0
    second_member = d.gb == 0
    stats[0, second_member] = stats[1, second_member]
    witness = CreditWitness(d, stats)
    assert not witness.complete
    assert witness.undecided(_rounds(d, 5, seed=8)).size == 5


def test_bootstrap_is_the_same_with_and_without_witnesses(monkeypatch):
    """End to end on a thin board (rounds without an MLE): the shortcut changes no sample."""
    rng = np.random.default_rng(9)
    a, b, o = simulate(rng, rng.normal(0, 1, 25), 400, tie_rate=0.1)
    table = count_table(a, b, o, n_models=25)
    fast = bootstrap(table, rounds=200, seed=3, workers=1)
    monkeypatch.setattr(CreditWitness, "undecided", lambda self, st: np.arange(st.shape[0]))
    full = bootstrap(table, rounds=200, seed=3, workers=1)
    assert fast.prior_rounds.size > 0
    np.testing.assert_array_equal(fast.prior_rounds, full.prior_rounds)
    np.testing.assert_array_equal(fast.samples, full.samples)
