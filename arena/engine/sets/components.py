"""Comparable sets: which models share one rating scale.

Bradley–Terry ratings are identified only within a set of models whose beats
graph (edge ``i -> j`` when ``i`` won or tied against ``j``) is strongly
connected: only there does the likelihood have a finite maximiser, and only
there do two ratings mean anything relative to each other.  Two groups that
never met (or a model that never lost) have no common scale: any rating put
on them comes from a prior, not from the data.

:func:`components` labels every model with its strongly connected component
and picks the *comparable set*, the component holding the most battles among
its own members; :func:`subtable` cuts a count table down to a set of models
(renumbered in order), so the set is fitted on its own battles exactly as if
the others had never been ingested.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.core.defaults import DEFAULT_BOTH_BAD, DEFAULT_TIES
from arena.engine.counts import CountTable
from arena.engine.fitting.design import Design, make_design
from arena.engine.fitting.graph import existence

__all__ = ["Components", "components", "other_sets", "split_pairs", "subtable", "subtables"]


@dataclass(frozen=True)
class Components:
    """Strongly connected components of the beats graph, by model.

    Attributes
    ----------
    strong : ndarray of int, shape (M,)
        Component of each model, numbered ``0 ..`` in decreasing order of the
        battles among its members (ties: more models first, then the lowest
        model index); ``-1`` for models the fit does not use (no battles).
    weak : ndarray of int, shape (M,)
        Weakly connected component (models linked by any battle, whoever
        won); ``-1`` for models without battles.
    battles : ndarray of float, shape (K,)
        Battles among the members of each strong component.
    sizes : ndarray of int, shape (K,)
        Models in each strong component.
    exists : bool
        The MLE of the whole table exists (one strong component holds every
        model with battles).
    """

    strong: np.ndarray
    weak: np.ndarray
    battles: np.ndarray
    sizes: np.ndarray
    exists: bool

    @property
    def main(self) -> np.ndarray:
        """Indices of the comparable set (component 0), in model order."""
        return np.flatnonzero(self.strong == 0)

    @property
    def n_components(self) -> int:
        return int(self.sizes.size)


def design_components(design: Design, table: CountTable) -> Components:
    m = design.n_models
    ex = existence(design, design.point_stats()[0])
    strong = np.full(m, -1, dtype=np.int64)
    weak = np.full(m, -1, dtype=np.int64)
    if design.n_active == 0:
        return Components(strong, weak, np.zeros(0), np.zeros(0, np.int64), False)
    raw = np.full(m, -1, dtype=np.int64)
    raw[design.active] = ex.strong
    weak[design.active] = ex.component
    n_raw = int(ex.strong.max()) + 1
    used = design.cell_cat >= 0
    a, b = table.a[used], table.b[used]
    inside = raw[a] == raw[b]
    battles = np.bincount(raw[a[inside]], weights=table.n[used][inside], minlength=n_raw)
    sizes = np.bincount(ex.strong, minlength=n_raw)
    first = np.full(n_raw, m, dtype=np.int64)
    np.minimum.at(first, ex.strong, design.active)
    order = np.lexsort((first, -sizes, -battles))
    relabel = np.empty(n_raw, dtype=np.int64)
    relabel[order] = np.arange(n_raw)
    strong[design.active] = relabel[ex.strong]
    return Components(strong, weak, battles[order], sizes[order], bool(ex.exists))


def components(
    table: CountTable,
    *,
    ties: str = DEFAULT_TIES,
    both_bad: str = DEFAULT_BOTH_BAD,
    position: bool = False,
) -> Components:
    """Strongly connected components of a table's beats graph.

    Parameters
    ----------
    table : CountTable
    ties, both_bad, position
        As in :func:`arena.engine.fitting.fit.fit` (``both_bad="drop"`` removes
        battles, which can split the graph).

    Returns
    -------
    Components
    """
    design = make_design(table, ties=ties, both_bad=both_bad, position=position)
    return design_components(design, table)


def subtable(table: CountTable, models: np.ndarray) -> tuple[CountTable, np.ndarray]:
    """The cells whose two models both lie in ``models``, renumbered ``0 .. K-1``.

    Parameters
    ----------
    table : CountTable
    models : array_like of int
        Model indices (sorted, distinct).

    Returns
    -------
    sub : CountTable
        Cells kept in their original order, models renumbered in index order.
    cells : ndarray of int
        Index (into ``table``'s cells) of each kept cell, to cut a clusters x
        cells matrix the same way.
    """
    models = np.asarray(models, dtype=np.int64)
    new_index = np.full(table.n_models, -1, dtype=np.int64)
    new_index[models] = np.arange(models.size)
    keep = np.flatnonzero((new_index[table.a] >= 0) & (new_index[table.b] >= 0))
    sub = CountTable(
        n_models=int(models.size),
        a=new_index[table.a[keep]].astype(table.a.dtype),
        b=new_index[table.b[keep]].astype(table.b.dtype),
        outcome=table.outcome[keep],
        n=table.n[keep],
        weight=table.weight[keep],
    )
    return sub, keep


def other_sets(comps: Components) -> list[np.ndarray]:
    """Models of one board per comparable set other than the largest.

    For ``arena rebuild --components separate``: every strong component
    ``k >= 1`` with at least two models (one model alone has nothing to be
    rated against) gets a board holding its members plus the models with no
    comparable set of their own (a strong component of one: never lost, or
    never won) that battled in the same weakly connected group, so they are
    listed there, unranked, with their one-sided score interval.

    Returns
    -------
    list of ndarray of int
        Sorted model indices, in component order (``k = 1, 2, ...``); the
        component itself is the only one with two or more models among them.

    Notes
    -----
    One stable sort by component and one by group, then slices: O(M log M)
    however many sets there are (a scan per set would cost sets x models).
    """
    used = np.flatnonzero(comps.strong >= 0)
    alone = comps.sizes[comps.strong[used]] == 1
    lonely = used[alone]
    # members of every component, each in index order (stable sort of the labels)
    by_comp = used[np.argsort(comps.strong[used], kind="stable")]
    comp_end = np.cumsum(comps.sizes)
    # models alone, grouped by their weakly connected group, each group in index order
    lonely = lonely[np.argsort(comps.weak[lonely], kind="stable")]
    groups, first, count = np.unique(comps.weak[lonely], return_index=True, return_counts=True)
    lonely_of = {int(g): lonely[f : f + c] for g, f, c in zip(groups, first, count, strict=True)}
    none = np.zeros(0, dtype=lonely.dtype)
    out = []
    for k in range(1, comps.n_components):
        if comps.sizes[k] < 2:
            continue
        members = by_comp[comp_end[k] - comps.sizes[k] : comp_end[k]]
        group = int(comps.weak[members[0]])
        out.append(np.union1d(members, lonely_of.get(group, none)))
    return out


def split_pairs(
    a: np.ndarray, b: np.ndarray, sets: list[np.ndarray], n_models: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Which pairs ``(a[k], b[k])`` lie inside each set of models, for all sets at once.

    Parameters
    ----------
    a, b : ndarray of int, shape (C,)
        Model indices of each pair (cells, battles); negative: no model.
    sets : list of ndarray of int
        Sorted, distinct model indices per set; sets may share models.
    n_models : int

    Returns
    -------
    index : ndarray of intp
        Pairs inside set 0, then set 1, ...; ascending within a set.
    local_a, local_b : ndarray of intp
        Position of ``a[index]`` and ``b[index]`` within their set.
    bounds : ndarray of intp, shape (len(sets) + 1,)
        Set ``s`` owns ``index[bounds[s]:bounds[s + 1]]``.

    Notes
    -----
    Equal to ``subtable``'s ``keep`` per set, in O((C + memberships) log) time
    rather than O(sets x C): each pair is expanded over the sets of the end
    that belongs to fewer of them (one set, unless both ends are models shared
    by several sets), and kept where the other end belongs to the same set.
    """
    n_sets = len(sets)
    sizes = np.array([s.size for s in sets], dtype=np.intp)
    set_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    mem_model = np.concatenate([np.asarray(s, np.intp) for s in sets] or [np.zeros(0, np.intp)])
    mem_set = np.repeat(np.arange(n_sets, dtype=np.intp), sizes)
    # sorted by (set, model): a key's position minus its set's start is the local index
    mem_key = mem_set.astype(np.int64) * n_models + mem_model
    # the sets of each model, as slices of one array
    by_model = np.argsort(mem_model, kind="stable")
    per_model = np.bincount(mem_model, minlength=n_models)
    model_start = np.concatenate([[0], np.cumsum(per_model)])
    a = np.asarray(a, dtype=np.intp)
    b = np.asarray(b, dtype=np.intp)
    valid = (a >= 0) & (b >= 0)
    na = np.where(valid, per_model[np.where(valid, a, 0)], 0)
    nb = np.where(valid, per_model[np.where(valid, b, 0)], 0)
    expand_a = na <= nb
    x, y = np.where(expand_a, a, b), np.where(expand_a, b, a)
    rep = np.minimum(na, nb)
    pair = np.repeat(np.arange(a.size, dtype=np.intp), rep)
    offset = np.arange(pair.size, dtype=np.intp) - np.repeat(np.cumsum(rep) - rep, rep)
    sets_e = mem_set[by_model[model_start[x[pair]] + offset]]
    key = sets_e.astype(np.int64) * n_models + y[pair]
    at = np.minimum(np.searchsorted(mem_key, key), max(mem_key.size - 1, 0))
    hit = mem_key[at] == key if mem_key.size else np.zeros(key.size, bool)
    pair, sets_e = pair[hit], sets_e[hit]
    # pairs were expanded in ascending order: a stable sort by set keeps that order
    order = np.argsort(sets_e, kind="stable")
    index, sets_e = pair[order], sets_e[order]
    base = sets_e.astype(np.int64) * n_models
    local_a = np.searchsorted(mem_key, base + a[index]) - set_start[sets_e]
    local_b = np.searchsorted(mem_key, base + b[index]) - set_start[sets_e]
    bounds = np.searchsorted(sets_e, np.arange(n_sets + 1)).astype(np.intp)
    return index, local_a.astype(np.intp), local_b.astype(np.intp), bounds


def subtables(table: CountTable, sets: list[np.ndarray]) -> list[tuple[CountTable, np.ndarray]]:
    """``[subtable(table, s) for s in sets]`` in O(cells) rather than O(sets x cells).

    See :func:`split_pairs`; the tables and cell indices are equal to
    :func:`subtable`'s, array for array.
    """
    index, la, lb, bounds = split_pairs(table.a, table.b, sets, table.n_models)
    out = []
    for s, models in enumerate(sets):
        lo, hi = bounds[s], bounds[s + 1]
        keep = index[lo:hi]
        sub = CountTable(
            n_models=int(models.size),
            a=la[lo:hi].astype(table.a.dtype),
            b=lb[lo:hi].astype(table.b.dtype),
            outcome=table.outcome[keep],
            n=table.n[keep],
            weight=table.weight[keep],
        )
        out.append((sub, keep))
    return out
