"""Ranks and tiers from paired verdicts (``arena eval``): only the order the verdicts back."""

import itertools

import numpy as np
import pytest

from arena.evals.ranking import verdict_ranks, verdict_tiers


def test_nothing_separated_means_no_order():
    better = np.zeros((3, 3), dtype=bool)
    ub, lb = verdict_ranks(better)
    assert ub.tolist() == [1, 1, 1] and lb.tolist() == [3, 3, 3]
    assert verdict_tiers([2, 0, 1], better).tolist() == [1, 1, 1]


def test_chain_and_leader_rule():
    # 0 > 2 and 1 > 2 separated; 0 vs 1 not
    better = np.zeros((3, 3), dtype=bool)
    better[0, 2] = better[1, 2] = True
    ub, lb = verdict_ranks(better)
    assert ub.tolist() == [1, 1, 3] and lb.tolist() == [2, 2, 3]
    assert verdict_tiers([0, 1, 2], better).tolist() == [1, 1, 2]


def test_every_order_consistent_with_the_verdicts_lies_within_the_bounds():
    rng = np.random.default_rng(0)
    m = 5
    for _ in range(30):
        score = rng.normal(size=m)
        better = (score[:, None] - score[None, :] > 0.8) & (rng.random((m, m)) < 0.7)
        ub, lb = verdict_ranks(better)
        # every total order consistent with the verdicts puts each model within [ub, lb]
        seen = {i: set() for i in range(m)}
        for perm in itertools.permutations(range(m)):
            pos = {k: r + 1 for r, k in enumerate(perm)}
            if all(pos[i] < pos[j] for i, j in zip(*np.nonzero(better), strict=True)):
                for i in range(m):
                    seen[i].add(pos[i])
        for i in range(m):
            assert ub[i] <= min(seen[i]) and max(seen[i]) <= lb[i]


def test_contradictory_verdicts_are_refused():
    better = np.array([[False, True], [True, False]])
    with pytest.raises(ValueError):
        verdict_ranks(better)
