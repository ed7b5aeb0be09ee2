"""``split_board`` cuts every comparable set's cells in one pass: the same
tables, cluster matrices and style battles as cutting each set on its own."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from arena.boards.split import StyleBoard, split_board
from arena.core.outcomes import A_WINS, B_WINS, TIE
from arena.engine.counts import clustered_table
from arena.engine.options import FitOptions
from arena.engine.sets.components import components, other_sets, split_pairs, subtable, subtables
from arena.store.read import BoardData
from arena.store.style import StyleBattles


def _many_sets(seed: int = 5, groups: int = 60):
    """Battles of ``groups`` groups that never met, shuffled together.

    Each group has one to three strongly connected sets of two to four models
    (a set beats the next one but never loses to it: one weak group, several
    comparable sets), and zero to two models that only ever won (sets of one,
    listed on every set of their group); group 0 is the largest (the main board).
    """
    rng = np.random.default_rng(seed)
    a, b, o = [], [], []
    nxt = 0
    for g in range(groups):
        sets = []
        for _ in range(rng.integers(1, 4)):
            size = 12 if g == 0 and not sets else int(rng.integers(2, 5))
            members = list(range(nxt, nxt + size))
            nxt += size
            for _ in range(40 * size):
                i, j = rng.choice(members, 2, replace=False)
                a.append(i)
                b.append(j)
                o.append(int(rng.choice([A_WINS, B_WINS, TIE])))
            sets.append(members)
        for upper, lower in zip(sets[:-1], sets[1:], strict=False):
            for _ in range(3):  # one-way: upper always wins
                a.append(int(rng.choice(upper)))
                b.append(int(rng.choice(lower)))
                o.append(A_WINS)
        for _ in range(rng.integers(0, 3)):  # never lost: a set of one
            for target in rng.choice(sum(sets, []), 3):
                a.append(nxt)
                b.append(int(target))
                o.append(A_WINS)
            nxt += 1
    perm = rng.permutation(len(a))
    # model indices shuffled too: sets and groups interleave in index order
    label = rng.permutation(nxt)
    return label[np.array(a)[perm]], label[np.array(b)[perm]], np.array(o)[perm], nxt


def _other_sets_one_by_one(comps):
    """The previous implementation: one scan of all models per set."""
    alone = comps.sizes[comps.strong[comps.strong >= 0]] == 1
    lonely = np.flatnonzero(comps.strong >= 0)[alone]
    out = []
    for k in range(1, comps.n_components):
        if comps.sizes[k] < 2:
            continue
        members = np.flatnonzero(comps.strong == k)
        group = comps.weak[members[0]]
        out.append(np.union1d(members, lonely[comps.weak[lonely] == group]))
    return out


@pytest.fixture(scope="module")
def board():
    a, b, o, m = _many_sets()
    judge = np.random.default_rng(1).integers(0, 25, a.size)
    table, clusters = clustered_table(a, b, o, judge, n_models=m)
    return a, b, o, m, table, clusters


def test_sets_and_cells_equal_cutting_each_set_alone(board):
    *_, table, _ = board
    comps = components(table)
    sets = other_sets(comps)
    expected = _other_sets_one_by_one(comps)
    assert len(sets) > 40 and len(sets) == len(expected)
    for got, want in zip(sets, expected, strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    # models listed on more than one board (a set of one beside several sets)
    assert np.unique(np.concatenate(sets)).size < sum(s.size for s in sets)
    for (sub, cells), models in zip(subtables(table, sets), sets, strict=True):
        ref, ref_cells = subtable(table, models)
        assert np.array_equal(cells, ref_cells) and cells.dtype == ref_cells.dtype
        assert sub.n_models == ref.n_models
        for f in ("a", "b", "outcome", "n", "weight"):
            x, y = getattr(sub, f), getattr(ref, f)
            assert x.dtype == y.dtype and np.array_equal(x, y), f


def test_split_pairs_skips_unknown_models_and_keeps_order():
    sets = [np.array([0, 2, 5]), np.array([2, 3]), np.array([7])]
    a = np.array([5, 2, 3, -1, 0, 3, 2, 7, 2])
    b = np.array([0, 3, 2, 2, 2, 5, 2, 7, 5])
    index, la, lb, bounds = split_pairs(a, b, sets, 8)
    # pair 6 (model 2 against itself) lies in both sets holding model 2
    assert index.tolist() == [0, 4, 6, 8, 1, 2, 6, 7]
    assert bounds.tolist() == [0, 4, 7, 8]
    # every pair is in a set iff both its models are
    for s, models in enumerate(sets):
        want = [k for k in range(a.size) if a[k] in models and b[k] in models]
        got = index[bounds[s] : bounds[s + 1]]
        assert got.tolist() == want
        pos = {int(m): i for i, m in enumerate(models)}
        assert la[bounds[s] : bounds[s + 1]].tolist() == [pos[int(a[k])] for k in want]
        assert lb[bounds[s] : bounds[s + 1]].tolist() == [pos[int(b[k])] for k in want]


def test_split_board_cuts_clusters_and_style_battles_per_set(board):
    a, b, o, m, table, clusters = board
    ids = np.arange(m, dtype=np.int64) * 3 + 7  # model ids are not table indices
    data = BoardData(None, ids, table, clusters, n_excluded=2)
    rng = np.random.default_rng(2)
    keep = rng.random(a.size) < 0.8  # a fifth of the battles carry no style metadata
    n = int(keep.sum())
    style = StyleBattles(
        battle_id=np.arange(n, dtype=np.int64),
        model_a=ids[a[keep]],
        model_b=ids[b[keep]],
        outcome=o[keep].astype(np.int8),
        weight=np.ones(n),
        cluster=rng.integers(0, 9, n),
        features=("x",),
        features_a=rng.random((n, 1)),
        features_b=rng.random((n, 1)),
        n_missing=a.size - n,
    )
    parts = split_board(data, FitOptions(), StyleBoard(style, np.unique(ids)))
    sets = other_sets(components(table))
    assert [p.number for p in parts] == list(range(2, len(sets) + 2))
    for part, models in zip(parts, sets, strict=True):
        _, cells = subtable(table, models)
        assert np.array_equal(part.data.model_ids, ids[models])
        want = sp.csr_matrix(clusters)[:, cells]
        got = part.data.clusters
        assert got.shape == want.shape and (got != want).nnz == 0
        assert part.data.n_excluded == 0
        # the battles of the set's style board: both models among its ids
        mask = np.isin(style.model_a, ids[models]) & np.isin(style.model_b, ids[models])
        sb, model_ids = part.style.battles, part.style.model_ids
        for f in ("battle_id", "model_a", "model_b", "outcome", "cluster", "features_a"):
            assert np.array_equal(getattr(sb, f), getattr(style, f)[mask]), f
        assert sb.n_missing == int(round(part.data.table.n.sum())) - int(mask.sum())
        assert np.array_equal(model_ids, np.unique(np.r_[sb.model_a, sb.model_b]))
