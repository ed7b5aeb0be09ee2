"""Existence of the Bradley–Terry MLE and per-model diagnostics.

The MLE exists (finite and unique up to the common shift) exactly when the
*beats* graph is strongly connected: an edge ``i -> j`` whenever ``i`` earned
credit against ``j`` (a win, or a tie, which counts in both directions).  We
check it per weakly connected component, so the warnings can say which models
are the problem: a component that is not strongly connected has models whose
rating would run off to +/- infinity; several components have no common scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from arena.engine.fields import filled_by_producer
from arena.engine.fitting.design import Design
from arena.engine.fitting.likelihood import category_stats

__all__ = ["Existence", "existence", "credit_debit", "CreditWitness", "FEW_BATTLES"]

#: Models with fewer battles than this are flagged ``few_battles``.
FEW_BATTLES = 10


@dataclass(frozen=True)
class Existence:
    """Where the MLE exists, in active-model indices."""

    exists: bool
    component: np.ndarray  # (Ma,) weak component label
    n_components: int
    main_component: int  # label of the largest component
    strong_ok: np.ndarray  # (n_components,) component strongly connected
    strong: np.ndarray = filled_by_producer(repr=True)  # (Ma,) strongly connected component label


def _group_credit(design: Design, stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Credit of the first / second member of each group, shape (R, G)."""
    if design.ties == "half":
        s, n = stats[..., 0, :], stats[..., 1, :]
        second = n - s
        # s and n are sums over the same categories; treat round-off as zero
        second = np.where(second > 1e-9 * n, second, 0.0)
        return s, second
    return stats[..., 0, :] + stats[..., 2, :], stats[..., 1, :] + stats[..., 2, :]


def credit_debit(design: Design, stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-model credit (wins + ties) and debit (losses + ties), shape (R, Ma) each."""
    first, second = _group_credit(design, stats)
    sums = design.sums
    # a model's credit: what it earned as the first member plus as the second
    # (a sum of exact zeros stays zero, so "never won" is never round-off)
    credit = sums.first(first)
    credit += sums.second(second)
    debit = sums.first(second)
    debit += sums.second(first)
    return credit, debit


class CreditWitness:
    """Which rounds certainly give every model credit and debit, from a few groups.

    The per-round MLE check asks whether every model won (or tied) and lost
    (or tied) at least once; :func:`credit_debit` answers it with four sums
    over all ``(R, G)`` group terms.  Every term is non-negative, so one
    positive term already settles a model: each model gets up to
    ``WITNESSES`` *witness* groups for its credit and as many for its debit
    -- the groups where it earned the most of it in the point data, so the
    likeliest to keep some in a resample -- and a round in which every model
    keeps some credit and debit in its witnesses has its answer from these
    few gathered groups.  Only the rounds where some model's witnesses all
    drew nothing need the full sums (:meth:`undecided`).  The thresholds are
    those of :func:`credit_debit` (its :func:`_group_credit`), so the answer
    is the same.

    Parameters
    ----------
    design : Design
    stats : ndarray, shape (n_stats, G)
        Group statistics of the point data.
    """

    #: Witness groups per model and side: on a board with ~2 battles a pair a
    #: model's best group holds a few battles, which a resample leaves empty
    #: with probability ~e^-3; eight leave all empty with ~e^-20.
    WITNESSES = 8

    def __init__(self, design: Design, stats: np.ndarray):
        self.design = design
        ma, g = design.n_active, design.n_groups
        first, second = (v[0] for v in _group_credit(design, stats[None]))
        member = np.concatenate([design.ga, design.gb]).astype(np.intp)
        group = np.tile(np.arange(g, dtype=np.intp), 2)
        as_second = np.repeat([False, True], g)
        self.sides = []
        self.complete = ma > 0
        # side 0: credit (a group's first credit belongs to its first member,
        # its second credit to its second member); side 1: debit (the other one)
        for mine in (np.concatenate([first, second]), np.concatenate([second, first])):
            order = np.lexsort((-mine, member))
            m_sorted = member[order]
            run_start = np.flatnonzero(np.r_[True, m_sorted[1:] != m_sorted[:-1]])
            rank = np.arange(order.size) - np.repeat(
                run_start, np.diff(np.r_[run_start, order.size])
            )
            keep = order[(rank < self.WITNESSES) & (mine[order] > 0)]
            holders = np.unique(member[keep])
            self.complete &= holders.size == ma
            starts = np.flatnonzero(np.r_[True, member[keep][1:] != member[keep][:-1]])
            self.sides.append((group[keep], as_second[keep], starts))

    def undecided(self, stats: np.ndarray) -> np.ndarray:
        """Rounds (indices into ``stats``, shape (R, n_stats, G)) the witnesses cannot settle."""
        r = stats.shape[0]
        if not self.complete:
            return np.arange(r)
        ok = np.ones(r, dtype=bool)
        for side, (group, as_second, starts) in enumerate(self.sides):
            first, second = _group_credit(self.design, stats[:, :, group])
            if side == 0:
                held = np.where(as_second, second, first) > 0
            else:
                held = np.where(as_second, first, second) > 0
            # every model (one run of witnesses each) keeps at least one
            ok &= np.logical_or.reduceat(held, starts, axis=1).all(axis=1)
        return np.flatnonzero(~ok)


def category_credit_maps(design: Design) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Maps (Q, Ma) from category counts to per-model credit and debit indicators.

    ``counts @ credit_map > 0`` iff the model won or tied at least once (and
    likewise for debit), the cheap per-round necessary condition for the MLE.
    """
    group, stats = category_stats(design)
    first, second = _group_credit(design, stats)
    first, second = first > 0, second > 0
    ga, gb = design.ga[group], design.gb[group]
    q, ma = design.cat_n.size, design.n_active
    qi = np.arange(q)

    def build(
        rows_a: np.ndarray, cols_a: np.ndarray, rows_b: np.ndarray, cols_b: np.ndarray
    ) -> sp.csr_matrix:
        rows = np.concatenate([rows_a, rows_b])
        cols = np.concatenate([cols_a, cols_b])
        return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(q, ma))

    credit = build(qi[first], ga[first], qi[second], gb[second])
    debit = build(qi[second], ga[second], qi[first], gb[first])
    return credit, debit


def existence(design: Design, stats: np.ndarray) -> Existence:
    """Check MLE existence for one data set; ``stats`` has shape (n_stats, G)."""
    ma = design.n_active
    if ma == 0:
        return Existence(
            False, np.zeros(0, np.intp), 0, -1, np.zeros(0, bool), np.zeros(0, np.intp)
        )
    first, second = _group_credit(design, stats[None])
    first, second = first[0] > 0, second[0] > 0
    rows = np.concatenate([design.ga[first], design.gb[second]])
    cols = np.concatenate([design.gb[first], design.ga[second]])
    beats = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(ma, ma))
    n_weak, weak = connected_components(beats, directed=True, connection="weak")
    _, strong = connected_components(beats, directed=True, connection="strong")
    # a weak component is strongly connected iff all its nodes share one strong label
    # (one pass over the distinct (weak, strong) labels: a loop over weak
    # components would cost components x models on a board split into many pieces)
    n_strong = int(strong.max()) + 1
    distinct = np.unique(weak.astype(np.int64) * n_strong + strong) // n_strong
    strong_ok = np.bincount(distinct, minlength=n_weak) == 1
    sizes = np.bincount(weak, minlength=n_weak)
    exists = n_weak == 1 and bool(strong_ok[0])
    return Existence(exists, weak, n_weak, int(np.argmax(sizes)), strong_ok, strong)


def model_flags(design: Design, stats: np.ndarray, ex: Existence) -> list[tuple[str, ...]]:
    """Flags per model (all ``n_models``): data problems a reader should see."""
    m = design.n_models
    flags: list[list[str]] = [[] for _ in range(m)]
    battles = design.battles_per_model
    for k in range(m):
        if battles[k] == 0:
            flags[k].append("no_battles")
        elif battles[k] < FEW_BATTLES:
            flags[k].append("few_battles")
    if design.n_active:
        credit, debit = credit_debit(design, stats[None])
        for i, k in enumerate(design.active):
            if credit[0, i] <= 0:
                flags[k].append("never_won")
            if debit[0, i] <= 0:
                flags[k].append("never_lost")
            if ex.n_components > 1 and ex.component[i] != ex.main_component:
                flags[k].append("disconnected")
            if not ex.strong_ok[ex.component[i]] and credit[0, i] > 0 and debit[0, i] > 0:
                flags[k].append("no_mle")
    return [tuple(f) for f in flags]
