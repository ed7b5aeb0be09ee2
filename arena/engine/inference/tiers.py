"""Tiers from ratings, intervals and bootstrap samples.

Everything here is a pure function of numpy arrays indexed by model
(``0 .. M-1``); nothing imports sqlalchemy, click or jinja2.  The inputs are
what the rating engine produces for ``M`` models:

``rating``
    point ratings, shape ``(M,)``;
``low``, ``high``
    interval bounds, shape ``(M,)``;
``samples``
    bootstrap ratings, shape ``(rounds, M)``.  The bootstrap distribution of
    the paired difference ``R_i - R_j`` is ``samples[:, i] - samples[:, j]``:
    it keeps the correlation between the two estimates, which the two marginal
    intervals throw away.

The *board* is the list of models sorted by ``rating`` descending (ties broken
by model index, so the order is deterministic).  Tiers are always a partition
of the board into consecutive blocks numbered ``1, 2, ...`` from the top.

Ranks live in :mod:`arena.engine.inference.ranks`, the head-to-head verdict in
:mod:`arena.engine.inference.compare`, the paired statistics in :mod:`arena.engine.inference.pairs`.
The precise rules and what each one guarantees are in ``docs/tiers.md``; the
short version is in each function's docstring.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_TIER_RULE, TIER_RULES
from arena.core.errors import ArgumentError
from arena.engine.inference.maxt_bounded import maxt_bounded
from arena.engine.inference.multiple import benjamini_hochberg, holm
from arena.engine.inference.pairs import PairStats, PValues, maxt_stepdown, pair_stats, raw_pvalues
from arena.engine.validate import check_level, interval_arrays, rating_vector, sample_matrix

__all__ = [
    "TierResult",
    "tiers_leader_overlap",
    "tiers_paired",
]

Correction = Literal["maxt", "holm", "bh", "none"]
Rule = Literal["leader", "cut"]


def tiers_leader_overlap(rating: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Tiers from interval overlap with each tier's leader.

    Walk down the board (rating descending).  The top model leads tier 1.  A
    model joins the current tier while its interval overlaps the interval of
    the tier's *leader*, i.e. ``high[k] >= low[leader]``; otherwise it starts
    a new tier and becomes its leader.

    Parameters
    ----------
    rating : array_like, shape (M,)
        Point ratings (they fix the board order).
    low, high : array_like, shape (M,)
        Interval bounds, ``low <= high``.

    Returns
    -------
    numpy.ndarray of int, shape (M,)
        Tier of each model (indexed by model, not by board position); tiers
        are ``1, 2, ...`` down the board, non-decreasing and without gaps.

    Notes
    -----
    Anchoring on the leader avoids *chaining*: with pairwise overlap as the
    rule, A overlaps B and B overlaps C would put A and C in one tier even when
    A's interval lies clearly above C's.  Here C is compared with A (the
    leader) and starts a new tier.  The price is that B and C can land in
    different tiers although their intervals overlap: a tier boundary says
    "clearly below the leader of the tier above", not "clearly below every
    model above".  Overlap of two marginal intervals is only a screen for a
    difference (it ignores the correlation of the two estimates); see
    :func:`tiers_paired` for the paired verdict.
    """
    r = rating_vector(rating, "rating")
    lo, hi = interval_arrays(low, high)
    if r.shape != lo.shape:
        raise ArgumentError(f"rating and intervals differ in shape: {r.shape} vs {lo.shape}")
    order = np.argsort(-r, kind="stable")
    tiers = np.empty(r.size, dtype=np.int64)
    tier = 1
    leader = order[0]
    for k in order:
        if hi[k] < lo[leader]:
            tier += 1
            leader = k
        tiers[k] = tier
    return tiers


@dataclass(frozen=True)
class TierResult:
    """Tiers from paired bootstrap differences, with the verdicts used.

    All per-model arrays are indexed by model (not by board position).

    Attributes
    ----------
    tiers : numpy.ndarray of int, shape (M,)
        Tier of each model, ``1, 2, ...`` down the board.
    order : numpy.ndarray of int, shape (M,)
        The board: model indices sorted by rating, best first.
    starts_tier : numpy.ndarray of bool, shape (M,)
        True where the model is significantly below the tier above and so
        starts a new tier (False for the top model).
    upper, lower : numpy.ndarray of int, shape (M,)
        The pair whose verdict decided whether the model starts a tier
        (``-1`` for the top model).  Rule ``"leader"``: ``upper`` is the
        current tier leader and ``lower`` the model itself.  Rule ``"cut"``:
        the weakest-separated pair across the cut just above the model.
    p_value : numpy.ndarray of float, shape (M,)
        Unadjusted two-sided p-value of that pair (NaN for the top model).
    p_adjusted : numpy.ndarray of float, shape (M,)
        Its p-value adjusted for the family of all ``M (M - 1) / 2`` pairs;
        the model starts a tier iff ``p_adjusted <= 1 - level``.
    critical_t : float
        ``correction="maxt"``: the ``level`` quantile of the bootstrap max-|t|
        over all pairs, the single-step critical value (pairs with ``t``
        above it are separated; step-down can separate more); NaN otherwise.
    n_comparisons : int
        Size of the family the correction is over, ``M (M - 1) / 2``.
    level : float
    correction : str
    rule : str
    pvalues : str
    """

    tiers: np.ndarray
    order: np.ndarray
    starts_tier: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    p_value: np.ndarray
    p_adjusted: np.ndarray
    critical_t: float
    n_comparisons: int
    level: float
    correction: str
    rule: str
    pvalues: str


def _adjusted(
    st: PairStats, s_board: np.ndarray, correction: str, pvalues: str, alpha: float
) -> np.ndarray:
    """Adjusted p-values of all pairs (M x M, upper triangle) from the full statistics."""
    m = st.p_raw.shape[0]
    rounds = s_board.shape[0]
    n_pairs = m * (m - 1) // 2
    iu = np.triu_indices(m, k=1)
    if correction == "maxt":
        adj = maxt_stepdown(s_board, iu, st)
    elif correction == "holm":
        raw = st.p_raw[iu]
        # Percentile p-values cannot go below 2 / (B + 1); if even that fails
        # Holm's first step, the result is one tier whatever the data say.
        floor = 2.0 / (rounds + 1.0)
        if pvalues == "percentile" and floor * n_pairs > alpha:
            warnings.warn(
                f"holm over {n_pairs} pairs with {rounds} rounds cannot separate anything: "
                f"the smallest possible percentile p-value {floor:.3g} exceeds "
                f"alpha / {n_pairs}; use more rounds, pvalues='normal' or correction='maxt'",
                stacklevel=3,
            )
        adj = holm(raw)
    elif correction == "bh":
        adj = benjamini_hochberg(st.p_raw[iu])
    else:
        adj = st.p_raw[iu].copy()
    p_adj = np.full((m, m), np.nan)
    p_adj[iu] = adj
    return p_adj


def tiers_paired(
    rating: np.ndarray,
    samples: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    correction: Correction = "maxt",
    rule: Rule = DEFAULT_TIER_RULE,
    pvalues: PValues = "percentile",
) -> TierResult:
    """Tiers from the bootstrap distribution of paired rating differences.

    A model starts a new tier only when the paired bootstrap says it is
    significantly below the tier above, after correcting for multiple
    comparisons.

    **Family and verdicts.**  For every pair of board positions ``a < b``
    (model ``a`` rated at least as high), with ``d* = samples[:, a] -
    samples[:, b]`` over ``B`` rounds and point difference ``d = rating[a] -
    rating[b] >= 0``:

    * ``t = d / sd(d*)`` (studentised by the bootstrap standard error);
    * raw two-sided p-value in the board direction:
      ``pvalues="percentile"``: ``min(1, 2 (1 + #{d* <= 0}) / (B + 1))``;
      ``pvalues="normal"``: ``2 Phi(-t)``.

    The correction is over the fixed family of **all** ``F = M (M - 1) / 2``
    pairs (fixed before any walk, so the data-dependent choice of which pairs
    a walk looks at cannot break it):

    * ``"maxt"``: step-down max-t (Romano-Wolf).  Per round the studentised
      deviations ``|d*_r - mean(d*)| / sd(d*)``; pairs sorted by ``t``
      descending; the pair in step ``k`` gets ``p = (1 + #{r : max over
      steps >= k of the deviation >= t}) / (B + 1)``, made non-decreasing
      along the steps.  Its first step is the single-step max-t, i.e.
      simultaneous bootstrap intervals for all differences
      (``critical_t``).  FWER control that uses the dependence between
      pairs, and pairs already found different stop inflating the critical
      value of the rest.
    * ``"holm"``: Holm step-down on the raw p-values.  FWER control under any
      dependence.  With percentile p-values the smallest raw p is
      ``2 / (B + 1)``, so nothing can be separated unless ``B + 1 >= 2 F /
      alpha`` (a warning says so); use ``pvalues="normal"`` or ``"maxt"``
      for large boards.
    * ``"bh"``: Benjamini-Hochberg step-up.  FDR control (under positive
      dependence), **not** FWER: expect some false separations.
    * ``"none"``: each pair at level ``alpha``; no multiplicity control.

    A pair is *separated* iff its adjusted p-value is ``<= alpha = 1 - level``.

    **Rules.**  Walk down the board.  The default is ``"leader"``, as in
    ``arena rebuild``: its statement ("each tier's first model is
    significantly below the leader of the tier above") is what the page says.
    ``"cut"`` is stricter: it is the only rule here whose every boundary is
    supported by the data, and it draws far fewer boundaries on a continuum of
    close models (see ``docs/tiers.md``, "Choosing a method").

    * ``rule="leader"``: the top model leads tier 1; model ``k`` starts a new
      tier (and leads it) iff it is separated from the current tier's leader.
      Mirrors :func:`tiers_leader_overlap` with the paired verdict in place of
      interval overlap; no chaining.
    * ``rule="cut"``: a tier boundary is drawn between board positions ``p``
      and ``p + 1`` iff *every* model above it is separated from *every*
      model below it.  Chaining is the price: a run of neighbours that the data
      cannot tell apart stays one tier however far apart its ends are.

    **Guarantees** (``alpha = 1 - level``; "holds" means up to the bootstrap
    approximation of the sampling distribution, i.e. asymptotically):

    * On the event that no pair is separated in the wrong direction (or when
      truly equal), which has probability ``>= 1 - alpha`` for ``"maxt"`` and
      ``"holm"``:

      - ``rule="cut"``: every model in a higher tier is truly better than
        every model in a lower tier.  Hence P(some truly equal pair is split,
        or some truly better model is placed in a lower tier) ``<= alpha``.
      - ``rule="leader"``: each tier's leader is truly better than the next
        tier's leader, and every model that starts a tier is truly worse than
        the leader above.  Models that merely *joined* a tier carry no
        guarantee: a truly equal pair can be split (one joins the tier above
        because it is not separable from that leader, the other is), and a
        truly better model can sit in a lower tier.  These rates are measured
        in simulation (``docs/tiers.md``), not bounded.

    * ``"bh"`` and ``"none"`` give no family-wise statement.

    Parameters
    ----------
    rating : array_like, shape (M,)
        Point ratings; they fix the board order and the point differences.
    samples : array_like, shape (rounds, M)
        Bootstrap ratings, one row per round (``rounds >= 2``).
    level : float, default DEFAULT_LEVEL (0.95)
        Confidence level; ``alpha = 1 - level``.
    correction : {"maxt", "holm", "bh", "none"}, default "maxt"
        Multiple-comparison correction over all pairs.
    rule : {"leader", "cut"}, default "leader"
        How the pair verdicts become tiers (see above).
    pvalues : {"percentile", "normal"}, default "percentile"
        Raw p-values for ``"holm"``, ``"bh"`` and ``"none"``.  Ignored by
        ``"maxt"``.

    Returns
    -------
    TierResult

    Notes
    -----
    Time O(rounds * M^2) (every pair once; twice for ``"maxt"``), memory
    O(rounds * M + M^2): the differences are formed one board row (or one
    chunk of rounds) at a time, never as a rounds x M x M array.  Deterministic: no randomness, ties in rating keep
    index order.
    """
    alpha = 1.0 - check_level(level)
    if correction not in ("maxt", "holm", "bh", "none"):
        raise ArgumentError(f"unknown correction {correction!r}")
    if rule not in TIER_RULES:
        raise ArgumentError(f"unknown rule {rule!r}")
    if pvalues not in ("percentile", "normal"):
        raise ArgumentError(f"unknown pvalues {pvalues!r}")
    r = rating_vector(rating, "rating")
    m = r.size
    s = sample_matrix(samples, m)
    order = np.argsort(-r, kind="stable")
    n_pairs = m * (m - 1) // 2

    tiers = np.ones(m, dtype=np.int64)
    starts = np.zeros(m, dtype=bool)
    upper = np.full(m, -1, dtype=np.int64)
    lower = np.full(m, -1, dtype=np.int64)
    p_value = np.full(m, np.nan)
    p_adjusted = np.full(m, np.nan)
    critical_t = np.nan
    # One model: one tier, nothing to compare.
    if m > 1:
        s_board = s[:, order]
        r_board = r[order]
        st = None
        fast = maxt_bounded(r_board, s_board) if correction == "maxt" else None
        if fast is not None:
            # exactly what pair_stats + maxt_stepdown give, from the pairs that matter
            p_adj, max_t = fast
            critical_t = float(np.quantile(max_t, level))
        else:
            st = pair_stats(r_board, s_board, pvalues)
            p_adj = _adjusted(st, s_board, correction, pvalues, alpha)
            if correction == "maxt":
                critical_t = float(np.quantile(st.max_t, level))
        # the pair (board positions) that decides each board position k >= 1
        deciding = np.zeros((m, 2), dtype=np.int64)
        if rule == "leader":
            leader = 0
            for k in range(1, m):
                deciding[k] = leader, k
                if p_adj[leader, k] <= alpha:
                    leader = k
        else:
            for k in range(1, m):
                # Cut between board positions k-1 and k: the verdict is that of the
                # weakest-separated pair across it (largest adjusted p-value).
                block = p_adj[:k, k:]
                a, b = np.unravel_index(np.argmax(block), block.shape)
                deciding[k] = a, b + k
        pa, pb = deciding[1:, 0], deciding[1:, 1]
        adj = p_adj[pa, pb]
        raw = st.p_raw[pa, pb] if st is not None else raw_pvalues(r_board, s_board, pa, pb, pvalues)
        at = order[1:]
        upper[at], lower[at] = order[pa], order[pb]
        p_value[at], p_adjusted[at] = raw, adj
        starts[at] = adj <= alpha
        tiers[order] = 1 + np.cumsum(np.r_[False, adj <= alpha])

    return TierResult(
        tiers,
        order,
        starts,
        upper,
        lower,
        p_value,
        p_adjusted,
        critical_t,
        n_pairs,
        float(level),
        correction,
        rule,
        pvalues,
    )
