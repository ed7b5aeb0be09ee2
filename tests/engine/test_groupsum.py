"""GroupSums equals the sparse incidence products it replaces."""

import numpy as np
import pytest
import scipy.sparse as sp

from arena.engine.fitting.groupsum import GroupSums

TOL = 1e-12


def _incidence(ga, gb, m):
    g = np.arange(ga.size)
    return sp.csr_matrix(
        (np.r_[np.ones(g.size), -np.ones(g.size)], (np.r_[g, g], np.r_[ga, gb])), shape=(g.size, m)
    )


@pytest.mark.parametrize(
    "firsts",
    [
        [0, 0, 1, 2, 2, 2],  # every model leads a group
        [1, 1, 3],  # models 0, 2 and the last ones lead none (trailing empties)
        [0, 4],  # gaps in the middle and a last model that leads
        [],  # no groups at all
    ],
)
def test_sums_match_the_incidence_products(firsts):
    m = 6
    rng = np.random.default_rng(len(firsts))
    ga = np.array(firsts, dtype=np.intp)
    gb = (ga + rng.integers(1, m, ga.size)) % m
    v = rng.normal(size=(3, ga.size))
    inc = _incidence(ga, gb, m)
    sums = GroupSums(ga, gb, m)
    assert np.abs(sums.signed(v) - v @ inc.toarray()).max(initial=0) < TOL
    assert np.abs(sums.total(v) - v @ abs(inc).toarray()).max(initial=0) < TOL
    assert sums.signed(v).shape == (3, m)


def test_unsorted_first_members_are_refused():
    with pytest.raises(ValueError, match="sorted"):
        GroupSums(np.array([1, 0]), np.array([2, 2]), 3)
