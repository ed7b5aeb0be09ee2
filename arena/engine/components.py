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

from arena.engine.counts import CountTable
from arena.engine.design import Design, make_design
from arena.engine.graph import existence

__all__ = ["Components", "components", "other_sets", "subtable"]


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
    ties: str = "half",
    both_bad: str = "tie",
    position: bool = False,
) -> Components:
    """Strongly connected components of a table's beats graph.

    Parameters
    ----------
    table : CountTable
    ties, both_bad, position
        As in :func:`arena.engine.fit.fit` (``both_bad="drop"`` removes
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
    """
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
