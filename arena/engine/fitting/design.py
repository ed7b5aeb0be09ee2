"""From a count table to the sufficient statistics of one Bradley–Terry model.

The likelihood of every model variant we fit depends on the data only through
per-*group* statistics, where a group is an unordered pair of models (or an
ordered pair when a position term is fitted):

* ``ties="half"``: ``(s, n)`` = (weighted wins of the group's first model,
  ties counting one half; weighted battles);
* ``ties="davidson"``: ``(wa, wb, wt)`` = weighted wins of the first model,
  of the second model, and ties.

Cells that contribute identically to those statistics (same group, same
outcome class, same weight) are merged into *categories*.  Resampling battles
with replacement and then summing per category is exactly a multinomial draw
over categories (sums of multinomial cells are multinomial), so the bootstrap
samples categories, which are fewer than cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from arena.core.defaults import BOTH_BAD_RULES, DEFAULT_BOTH_BAD, DEFAULT_TIES, TIE_MODELS
from arena.core.errors import ArgumentError
from arena.core.outcomes import A_WINS, B_WINS, TIE, TIE_BOTH_BAD
from arena.engine.counts import CountTable, unique_rows
from arena.engine.fitting.groupsum import GroupSums

__all__ = ["Design", "make_design", "TIE_MODELS"]

# outcome classes after mapping: first model of the group wins / second wins / tie
CLASS_A, CLASS_B, CLASS_T = 0, 1, 2


class ParameterCounts:
    """``n_params`` and ``n_total`` of a design (raw or style-controlled).

    The design supplies ``n_active`` (models fitted), ``n_extra`` (the other
    parameters) and ``cat_n`` (battles per category or row).
    """

    if TYPE_CHECKING:  # supplied by the subclass (field or property); nothing at run time

        @property
        def n_active(self) -> int: ...

        @property
        def n_extra(self) -> int: ...

        cat_n: np.ndarray

    @property
    def n_params(self) -> int:
        return self.n_active + self.n_extra

    @property
    def n_total(self) -> float:
        return float(self.cat_n.sum())


@dataclass(frozen=True)
class Design(ParameterCounts):
    """Compiled model: groups, categories and the maps between them.

    Attributes
    ----------
    n_models : int
        Models in the table.
    active : ndarray of intp, shape (Ma,)
        Models with at least one battle that the fit uses.
    ga, gb : ndarray of intp, shape (G,)
        Group members as indices into ``active``.
    ties, position : str, bool
        Model options.
    n_stats : int
        Statistics per group (2 for half ties, 3 for Davidson).
    cat_n : ndarray, shape (Q,)
        Battles per category.
    cat_stats : csr_matrix, shape (Q, n_stats * G)
        Statistics contributed by one battle of each category (column
        ``j * G + g`` is statistic ``j`` of group ``g``: statistic-major, so
        each statistic is a contiguous ``(R, G)`` block).
    cell_cat : ndarray of intp, shape (C,)
        Category of each table cell, -1 for dropped cells (self-play, or
        ``tie_both_bad`` with ``both_bad="drop"``).
    incidence : csr_matrix, shape (G, Ma)
        +1 at ``ga``, -1 at ``gb``: the linear predictor is ``incidence @ theta``.
    pair_of_group : ndarray of intp, shape (G,)
        Unordered pair of each group (groups are pairs unless ``position``).
    pair_i, pair_j : ndarray of intp, shape (U,)
        Members of each unordered pair (``pair_i < pair_j``).
    """

    n_models: int
    active: np.ndarray
    ga: np.ndarray
    gb: np.ndarray
    ties: str
    position: bool
    n_stats: int
    cat_n: np.ndarray
    cat_stats: sp.csr_matrix
    cell_cat: np.ndarray
    incidence: sp.csr_matrix
    pair_of_group: np.ndarray
    pair_i: np.ndarray
    pair_j: np.ndarray
    battles_per_model: np.ndarray  # (n_models,) unweighted battle counts used by the fit
    incidence_abs: sp.csr_matrix  # |incidence|: sums group terms onto both members
    pair_map: sp.csr_matrix  # (G, U) group -> unordered pair indicator
    # transposes, stored once: the solvers multiply dense (R, G) blocks from the left
    incidence_t: sp.csr_matrix
    incidence_abs_t: sp.csr_matrix
    pair_map_t: sp.csr_matrix
    cat_stats_t: sp.csr_matrix
    #: fast ``v @ incidence`` / ``v @ |incidence|`` for dense (R, G) blocks
    sums: GroupSums
    #: group of each category, and statistic j of one battle of each category
    #: (``None`` where that is 1 for every category): ``cat_stats`` by rows
    cat_group: np.ndarray
    cat_coef: tuple[np.ndarray | None, ...]

    @property
    def n_active(self) -> int:
        return int(self.active.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.ga.shape[0])

    @property
    def n_extra(self) -> int:
        return int(self.position) + int(self.ties == "davidson")

    def stats_from_counts(self, counts: np.ndarray) -> np.ndarray:
        """Group statistics ``(R, n_stats, G)`` from category counts ``(R, Q)``."""
        counts = np.atleast_2d(counts)
        r, g = counts.shape[0], self.n_groups
        # C order: every statistic is a contiguous (R, G) block for the solvers.
        # Each category feeds one group, so statistic j of a round is one
        # weighted bincount of its own row (no transposed copies).
        out = np.empty((r, self.n_stats, g))
        for i in range(r):
            row = np.ascontiguousarray(counts[i], dtype=np.float64)
            for j, coef in enumerate(self.cat_coef):
                w = row if coef is None else row * coef
                out[i, j] = np.bincount(self.cat_group, weights=w, minlength=g)
        return out

    def clusters_by_category(self, clusters: sp.csr_matrix) -> sp.csr_matrix:
        """Clusters x cells battle counts -> clusters x categories, shape (K', Q).

        Clusters holding only dropped battles (self-play, dropped ties) are
        removed: they cannot contribute to any statistic.
        """
        c = self.cell_cat.size
        if clusters.shape[1] != c:
            raise ArgumentError(
                f"clusters must have one column per table cell ({c}), got {clusters.shape[1]}"
            )
        kept = np.flatnonzero(self.cell_cat >= 0)
        to_cat = sp.csr_matrix(
            (np.ones(kept.size), (kept, self.cell_cat[kept])), shape=(c, self.cat_n.size)
        )
        zq = (sp.csr_matrix(clusters) @ to_cat).tocsr()
        return zq[np.asarray(zq.sum(axis=1)).ravel() > 0]

    def point_stats(self) -> np.ndarray:
        """Group statistics of the observed data, shape ``(1, n_stats, G)``."""
        return self.stats_from_counts(self.cat_n[None, :])


def make_design(
    table: CountTable,
    *,
    ties: str = DEFAULT_TIES,
    both_bad: str = DEFAULT_BOTH_BAD,
    position: bool = False,
) -> Design:
    """Compile ``table`` into the sufficient-statistics design of one model variant."""
    if ties not in TIE_MODELS:
        raise ArgumentError(f"ties must be one of {TIE_MODELS}, got {ties!r}")
    if both_bad not in BOTH_BAD_RULES:
        raise ArgumentError(f"both_bad must be one of {BOTH_BAD_RULES}, got {both_bad!r}")
    m = table.n_models
    a, b, o, n, w = table.a, table.b, table.outcome, table.n, table.weight
    keep = (a != b) & (n > 0)
    if both_bad == "drop":
        keep &= o != TIE_BOTH_BAD
    cls = np.full(o.shape, CLASS_T, dtype=np.intp)
    cls[o == A_WINS] = CLASS_A
    cls[o == B_WINS] = CLASS_B
    assert np.all((o == A_WINS) | (o == B_WINS) | (o == TIE) | (o == TIE_BOTH_BAD))

    # Orientation: without a position term only the unordered pair matters,
    # so cells shown as (b, a) are flipped onto (a, b) with the classes swapped.
    first, second = a.copy(), b.copy()
    if not position:
        flip = a > b
        first[flip], second[flip] = b[flip], a[flip]
        swapped = cls.copy()
        swapped[flip & (cls == CLASS_A)] = CLASS_B
        swapped[flip & (cls == CLASS_B)] = CLASS_A
        cls = swapped

    kept = np.flatnonzero(keep)
    battles = np.bincount(a[kept], weights=n[kept], minlength=m) + np.bincount(
        b[kept], weights=n[kept], minlength=m
    )
    active = np.flatnonzero(battles > 0)
    local = np.full(m, -1, dtype=np.intp)
    local[active] = np.arange(active.size)

    # groups
    gkey = first[kept] * m + second[kept]
    gkeys, g_of_kept = np.unique(gkey, return_inverse=True)
    g_of_kept = g_of_kept.reshape(-1)
    ga = local[gkeys // m]
    gb = local[gkeys % m]
    n_groups = gkeys.size

    # categories: (group, class, weight)
    rep, cat_of_kept = unique_rows(g_of_kept, cls[kept], w[kept])
    cat_n = np.bincount(cat_of_kept, weights=n[kept], minlength=rep.size)
    cell_cat = np.full(table.n_cells, -1, dtype=np.intp)
    cell_cat[kept] = cat_of_kept

    q = np.arange(rep.size)
    cg, cc, cw = g_of_kept[rep], cls[kept][rep], w[kept][rep]
    if ties == "half":
        n_stats = 2
        # (s, n): s is the first model's credit (tie = half a win)
        credit = np.where(cc == CLASS_A, 1.0, np.where(cc == CLASS_B, 0.0, 0.5)) * cw
        rows = np.concatenate([q, q])
        cols = np.concatenate([cg, n_groups + cg])
        vals = np.concatenate([credit, cw])
    else:
        n_stats = 3
        rows, cols, vals = q, cc * n_groups + cg, cw
    nz = vals != 0
    cat_stats = sp.csr_matrix(
        (vals[nz], (rows[nz], cols[nz])), shape=(rep.size, n_groups * n_stats)
    )

    gi = np.arange(n_groups)
    incidence = sp.csr_matrix(
        (
            np.concatenate([np.ones(n_groups), -np.ones(n_groups)]),
            (np.concatenate([gi, gi]), np.concatenate([ga, gb])),
        ),
        shape=(n_groups, active.size),
    )
    lo, hi = np.minimum(ga, gb), np.maximum(ga, gb)
    pkeys, pair_of_group = np.unique(lo * max(active.size, 1) + hi, return_inverse=True)
    na = max(active.size, 1)
    pair_map = sp.csr_matrix(
        (np.ones(n_groups), (gi, pair_of_group.reshape(-1))), shape=(n_groups, pkeys.size)
    )
    incidence_abs = abs(incidence).tocsr()
    return Design(
        n_models=m,
        active=active,
        ga=ga,
        gb=gb,
        ties=ties,
        position=bool(position),
        n_stats=n_stats,
        cat_n=cat_n,
        cat_stats=cat_stats,
        cell_cat=cell_cat,
        incidence=incidence,
        pair_of_group=pair_of_group.reshape(-1),
        pair_i=pkeys // na,
        pair_j=pkeys % na,
        battles_per_model=battles,
        incidence_abs=incidence_abs,
        pair_map=pair_map,
        incidence_t=incidence.T.tocsr(),
        incidence_abs_t=incidence_abs.T.tocsr(),
        pair_map_t=pair_map.T.tocsr(),
        cat_stats_t=cat_stats.T.tocsr(),
        sums=GroupSums(ga, gb, active.size),
        cat_group=cg,
        cat_coef=_coefficients(cat_stats, n_stats, n_groups),
    )


def _coefficients(
    cat_stats: sp.csr_matrix, n_stats: int, n_groups: int
) -> tuple[np.ndarray | None, ...]:
    """Per-category value of each statistic (a category has at most one entry per statistic)."""
    coo = cat_stats.tocoo()
    coef = np.zeros((n_stats, cat_stats.shape[0]))
    coef[coo.col // max(n_groups, 1), coo.row] = coo.data
    return tuple(None if np.all(c == 1.0) else c for c in coef)
