"""Invariances of the point fit on arbitrary small boards (property-based, hypothesis).

``test_fit.py`` checks the same invariances on one well-connected simulated board;
here hypothesis draws the awkward ones too: a handful of battles, models that never
won or never lost (the prior's path), all ties, disconnected pieces, models without
battles, self-play, and shrinks any counterexample to a minimal board.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.core.outcomes import A_WINS, B_WINS, TIE, TIE_BOTH_BAD
from arena.engine.counts import count_table
from arena.engine.fitting.fit import fit

#: Elo points: two solves of the same strictly concave problem agree far below this.
RATING_TOL = 1e-6
OUTCOMES = (A_WINS, B_WINS, TIE, TIE_BOTH_BAD)
OPTIONS = [{}, {"ties": "davidson"}, {"both_bad": "drop"}]

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def boards(draw):
    """(a, b, outcome, n_models): 1-40 battles among 2-6 models, any outcomes."""
    m = draw(st.integers(2, 6))
    battle = st.tuples(st.integers(0, m - 1), st.integers(0, m - 1), st.sampled_from(OUTCOMES))
    rows = draw(st.lists(battle, min_size=1, max_size=40))
    a, b, o = (np.array(col, dtype=np.int64) for col in zip(*rows, strict=True))
    return a, b, o, m


def flip(o: np.ndarray) -> np.ndarray:
    return np.select([o == A_WINS, o == B_WINS], [B_WINS, A_WINS], o)


@pytest.mark.parametrize("opts", OPTIONS)
@SETTINGS
@given(board=boards())
def test_swapping_sides_with_flipped_outcomes_changes_nothing(opts, board):
    a, b, o, m = board
    try:
        f1 = fit(count_table(a, b, o, n_models=m), **opts)
    except ValueError as err:  # a documented refusal (Davidson without a tie): both refuse
        with pytest.raises(ValueError, match=re.escape(str(err))):
            fit(count_table(b, a, flip(o), n_models=m), **opts)
        return
    f2 = fit(count_table(b, a, flip(o), n_models=m), **opts)
    assert np.all(np.isfinite(f1.rating)) and np.all(np.isfinite(f1.se))
    np.testing.assert_allclose(f1.rating, f2.rating, atol=RATING_TOL)
    assert f1.mle_exists == f2.mle_exists and f1.flags == f2.flags


@SETTINGS
@given(board=boards(), data=st.data())
def test_relabelling_models_permutes_ratings(board, data):
    a, b, o, m = board
    perm = np.array(data.draw(st.permutations(range(m))))
    f1 = fit(count_table(a, b, o, n_models=m))
    f2 = fit(count_table(perm[a], perm[b], o, n_models=m))
    np.testing.assert_allclose(f2.rating[perm], f1.rating, atol=RATING_TOL)
    np.testing.assert_allclose(f2.se[perm], f1.se, atol=RATING_TOL)


@SETTINGS
@given(board=boards(), data=st.data())
def test_integer_weights_equal_replicated_battles(board, data):
    a, b, o, m = board
    w = np.array(data.draw(st.lists(st.integers(1, 3), min_size=a.size, max_size=a.size)))
    f1 = fit(count_table(a, b, o, n_models=m, weight=w.astype(float)))
    rep = np.repeat(np.arange(a.size), w)
    f2 = fit(count_table(a[rep], b[rep], o[rep], n_models=m))
    np.testing.assert_allclose(f1.rating, f2.rating, atol=RATING_TOL)
