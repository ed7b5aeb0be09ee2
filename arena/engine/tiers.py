"""Ranks and tiers from ratings, intervals and bootstrap samples.

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

The precise rules and what each one guarantees are in ``docs/tiers.md``; the
short version is in each function's docstring.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special

__all__ = [
    "Comparison",
    "RankInterval",
    "TierResult",
    "board_order",
    "compare_pair",
    "rank_interval",
    "rank_lb",
    "rank_ub",
    "unranked_reason",
    "tiers_leader_overlap",
    "tiers_paired",
]

Correction = Literal["maxt", "holm", "bh", "none"]
Rule = Literal["leader", "cut"]
PValues = Literal["percentile", "normal"]

# Largest temporary (rounds x pairs) block of differences, in elements.  The
# paired statistics are computed one board row at a time and, for very many
# rounds, in column chunks, so memory stays O(rounds * M + M^2) and never
# O(rounds * M^2).
_CHUNK_ELEMENTS = 4_000_000

# Elo scale of the Bradley-Terry model: P(i beats j) = 1 / (1 + 10^(-(Ri-Rj)/400)).
_ELO_SCALE = 400.0


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------


def _vector(x: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def _interval(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo = _vector(low, "low")
    hi = _vector(high, "high")
    if lo.shape != hi.shape:
        raise ValueError(f"low and high differ in shape: {lo.shape} vs {hi.shape}")
    if np.any(lo > hi):
        raise ValueError("every interval must have low <= high")
    return lo, hi


def _samples(samples: np.ndarray, m: int) -> np.ndarray:
    arr = np.asarray(samples, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != m:
        raise ValueError(f"samples must have shape (rounds, {m}), got {arr.shape}")
    if arr.shape[0] < 2:
        raise ValueError("samples needs at least 2 bootstrap rounds")
    if not np.all(np.isfinite(arr)):
        raise ValueError("samples must be finite")
    return arr


def _alpha(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return 1.0 - float(level)


def board_order(rating: np.ndarray) -> np.ndarray:
    """Model indices sorted by rating, best first.

    Parameters
    ----------
    rating : array_like, shape (M,)
        Point ratings.

    Returns
    -------
    numpy.ndarray of int, shape (M,)
        ``order[0]`` is the top model.  Equal ratings keep index order (stable
        sort), so the board is deterministic.
    """
    r = _vector(rating, "rating")
    return np.argsort(-r, kind="stable")


# --------------------------------------------------------------------------
# rank (UB)
# --------------------------------------------------------------------------


def rank_ub(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Rank upper bound as LMArena shows it.

    ``rank_ub[i] = 1 + #{j : low[j] > high[i]}``: one plus the number of models
    whose interval lies entirely above model ``i``'s interval.  It is the best
    rank the intervals cannot rule out, so several models can share it.

    Parameters
    ----------
    low, high : array_like, shape (M,)
        Interval bounds, ``low <= high``.

    Returns
    -------
    numpy.ndarray of int, shape (M,)
        Ranks in ``1 .. M``.

    Notes
    -----
    O(M log M): sort the lower bounds once and count, for every ``high[i]``,
    how many lower bounds exceed it.  A model never counts itself because its
    own ``low <= high``.  The comparison is strict, so touching intervals
    (``low[j] == high[i]``) do not separate.
    """
    lo, hi = _interval(low, high)
    sorted_low = np.sort(lo)
    # searchsorted(side="right") = number of lower bounds <= high[i].
    above = lo.size - np.searchsorted(sorted_low, hi, side="right")
    return (1 + above).astype(np.int64)


def rank_lb(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Worst rank the intervals allow: the number of models not surely worse.

    ``rank_lb[i] = #{j : high[j] >= low[i]}`` (the model itself included):
    every model whose interval is not entirely below model ``i``'s could sit
    above it.  With :func:`rank_ub` it brackets the rank the data support,
    ``rank_ub <= rank_lb``; the board shows both as a rank interval.

    Parameters
    ----------
    low, high : array_like, shape (M,)
        Interval bounds, ``low <= high``.

    Returns
    -------
    numpy.ndarray of int, shape (M,)
        Ranks in ``1 .. M``.

    Notes
    -----
    O(M log M), the mirror image of :func:`rank_ub`.  Touching intervals
    (``high[j] == low[i]``) do not separate.
    """
    lo, hi = _interval(low, high)
    sorted_high = np.sort(hi)
    # searchsorted(side="left") = number of upper bounds < low[i] (surely worse)
    below = np.searchsorted(sorted_high, lo, side="left")
    return (lo.size - below).astype(np.int64)


#: Why a model has no rank, in words (``{name}`` and ``{battles}``, ``{min_battles}``).
UNRANKED_WORDS = {
    "no_battles": "{name} has no battles",
    "disconnected": (
        "{name} never met the comparable set of models, directly or through others: "
        "its rating is on no common scale"
    ),
    "no_mle": (
        "{name}'s wins and losses against the comparable set do not pin a finite rating "
        "(it never lost, never won, or met the set only through such models)"
    ),
    "few_battles": "{name} has only {battles:g} battles (fewer than {min_battles})",
}


def unranked_reason(
    name: str, flags: tuple[str, ...], battles: float, *, min_battles: int
) -> str | None:
    """Why a model gets no rank, tier or verdict, in words; ``None`` if it is ranked.

    Parameters
    ----------
    name : str
        Model name (used in the sentence).
    flags : tuple of str
        The engine's flags (``disconnected``, ``no_mle``, ``no_battles``, ...).
    battles : float
    min_battles : int
        Battles a model needs to be ranked (at least 1).

    Returns
    -------
    str or None
        The first reason that applies, in the order no battles,
        disconnected, no MLE, few battles.
    """
    for flag in ("no_battles", "disconnected", "no_mle"):
        if flag in flags:
            return UNRANKED_WORDS[flag].format(name=name)
    if battles < max(min_battles, 1):
        return UNRANKED_WORDS["few_battles"].format(
            name=name, battles=battles, min_battles=max(min_battles, 1)
        )
    return None


# --------------------------------------------------------------------------
# tiers by interval overlap with the tier leader
# --------------------------------------------------------------------------


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
    r = _vector(rating, "rating")
    lo, hi = _interval(low, high)
    if r.shape != lo.shape:
        raise ValueError(f"rating and intervals differ in shape: {r.shape} vs {lo.shape}")
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


# --------------------------------------------------------------------------
# paired bootstrap statistics over all pairs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _PairStats:
    """Statistics of all board-ordered pairs (a above b), as M x M arrays.

    Only the strict upper triangle (board position a < b) is filled; the rest
    is NaN.  ``max_t`` holds, per bootstrap round, the largest studentised
    |difference| over the whole family.
    """

    p_raw: np.ndarray
    t_obs: np.ndarray
    centre: np.ndarray
    sd: np.ndarray
    max_t: np.ndarray


def _pair_stats(rating_b: np.ndarray, samples_b: np.ndarray, pvalues: PValues) -> _PairStats:
    """Paired bootstrap statistics for every pair of board positions.

    ``rating_b`` and ``samples_b`` are already in board order, so the point
    difference ``rating_b[a] - rating_b[b]`` is >= 0 for ``a < b``: every test
    is of "the model higher on the board is better".
    """
    rounds, m = samples_b.shape
    p_raw = np.full((m, m), np.nan)
    t_obs = np.full((m, m), np.nan)
    centre_all = np.full((m, m), np.nan)
    sd_all = np.full((m, m), np.nan)
    max_t = np.zeros(rounds)
    width = max(1, _CHUNK_ELEMENTS // rounds)
    for a in range(m - 1):
        for c0 in range(a + 1, m, width):
            c1 = min(m, c0 + width)
            d = samples_b[:, a : a + 1] - samples_b[:, c0:c1]  # rounds x w
            est = rating_b[a] - rating_b[c0:c1]
            centre = d.mean(axis=0)
            sd = d.std(axis=0, ddof=1)
            pos = sd > 0.0
            safe_sd = np.where(pos, sd, 1.0)
            # A difference with zero bootstrap spread is "certain": infinite t
            # if the point difference is positive, 0 if it is zero.
            t = np.where(pos, est / safe_sd, np.where(est > 0.0, np.inf, 0.0))
            t_obs[a, c0:c1] = t
            centre_all[a, c0:c1] = centre
            sd_all[a, c0:c1] = sd
            # Studentised bootstrap deviations for the max-t null distribution;
            # columns without spread contribute 0 (no NaN from 0/0).
            dev = np.abs(d - centre) / safe_sd
            dev[:, ~pos] = 0.0
            np.maximum(max_t, dev.max(axis=1), out=max_t)
            if pvalues == "percentile":
                # Two-sided percentile p-value in the board direction, with the
                # +1 correction so it is never 0: 2 (1 + #{d* <= 0}) / (B + 1).
                n_le = np.count_nonzero(d <= 0.0, axis=0)
                p = 2.0 * (1.0 + n_le) / (rounds + 1.0)
            else:
                # Wald test with the bootstrap standard error; smooth tails, no
                # resolution floor, but leans on normality of the difference.
                p = 2.0 * special.ndtr(-t)
            p_raw[a, c0:c1] = np.minimum(p, 1.0)
    return _PairStats(p_raw=p_raw, t_obs=t_obs, centre=centre_all, sd=sd_all, max_t=max_t)


def _maxt_stepdown(
    samples_b: np.ndarray, iu: tuple[np.ndarray, np.ndarray], st: _PairStats
) -> np.ndarray:
    """Step-down max-t adjusted p-values (Romano-Wolf) for the pairs ``iu``.

    Pairs are sorted by observed t, largest first.  The pair in step ``k`` is
    judged against the bootstrap distribution of the max studentised
    deviation over the pairs not yet rejected (steps ``k..F``), so pairs that
    are obviously different stop inflating the critical value of the rest.
    Step 1 is the single-step max-t.  Adjusted p-values are made monotone
    along the steps, as step-down requires.
    """
    rounds = samples_b.shape[0]
    t = st.t_obs[iu]
    f = t.size
    desc = np.argsort(-t, kind="stable")
    a_idx, b_idx = iu[0][desc], iu[1][desc]
    centre = st.centre[iu][desc]
    sd = st.sd[iu][desc]
    pos = sd > 0.0
    safe_sd = np.where(pos, sd, 1.0)
    t_sorted = t[desc]
    counts = np.zeros(f, dtype=np.int64)
    # Screening: a step whose t exceeds every round's max over *all* pairs
    # has count 0 whatever the steps after it hold, and it only enters the
    # maxima of earlier steps, which are skipped too.  These steps form a
    # prefix of the sorted order (typically most pairs of a long board), so
    # only the rest needs the rounds x pairs pass.
    k0 = int(np.count_nonzero(t_sorted > st.max_t.max()))
    rest = slice(k0, f)
    a_idx, b_idx = a_idx[rest], b_idx[rest]
    centre, safe_sd, pos, t_rest = centre[rest], safe_sd[rest], pos[rest], t_sorted[rest]
    n_rest = f - k0
    if n_rest:
        # Pairs x rounds layout: gathering whole rows of the transposed samples
        # and accumulating along axis 0 both run over contiguous memory.
        by_model = np.ascontiguousarray(samples_b.T)
        centre, safe_sd, t_rest = centre[:, None], safe_sd[:, None], t_rest[:, None]
        # Rounds are processed in chunks so the pairs x rounds block stays bounded.
        step = max(1, _CHUNK_ELEMENTS // n_rest)
        for r0 in range(0, rounds, step):
            block = by_model[:, r0 : r0 + step]
            dev = block[a_idx] - block[b_idx]
            dev -= centre
            np.abs(dev, out=dev)
            dev /= safe_sd
            dev[~pos] = 0.0
            # suffix[k] = max deviation over steps k..F, per round
            suffix = np.maximum.accumulate(dev[::-1], axis=0)[::-1]
            counts[k0:] += np.count_nonzero(suffix >= t_rest, axis=1)
    p = np.maximum.accumulate((1.0 + counts) / (rounds + 1.0))
    out = np.empty(f)
    out[desc] = np.minimum(p, 1.0)
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (FWER), for a 1-D array."""
    f = p.size
    idx = np.argsort(p, kind="stable")
    scaled = (f - np.arange(f)) * p[idx]
    adj = np.minimum(np.maximum.accumulate(scaled), 1.0)
    out = np.empty_like(p)
    out[idx] = adj
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (FDR), for a 1-D array."""
    f = p.size
    idx = np.argsort(p, kind="stable")
    scaled = p[idx] * f / np.arange(1, f + 1)
    adj = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    out = np.empty_like(p)
    out[idx] = adj
    return out


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


def tiers_paired(
    rating: np.ndarray,
    samples: np.ndarray,
    *,
    level: float = 0.95,
    correction: Correction = "maxt",
    rule: Rule = "cut",
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

    **Rules.**  Walk down the board.  The default is ``"cut"`` because it is
    the only rule here whose tier boundaries are all supported by the data;
    ``"leader"`` separates more but can split models the data cannot order.

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
    level : float, default 0.95
        Confidence level; ``alpha = 1 - level``.
    correction : {"maxt", "holm", "bh", "none"}, default "maxt"
        Multiple-comparison correction over all pairs.
    rule : {"leader", "cut"}, default "cut"
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
    alpha = _alpha(level)
    if correction not in ("maxt", "holm", "bh", "none"):
        raise ValueError(f"unknown correction {correction!r}")
    if rule not in ("leader", "cut"):
        raise ValueError(f"unknown rule {rule!r}")
    if pvalues not in ("percentile", "normal"):
        raise ValueError(f"unknown pvalues {pvalues!r}")
    r = _vector(rating, "rating")
    m = r.size
    s = _samples(samples, m)
    rounds = s.shape[0]
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
        st = _pair_stats(r[order], s_board, pvalues)
        iu = np.triu_indices(m, k=1)
        if correction == "maxt":
            adj = _maxt_stepdown(s_board, iu, st)
            critical_t = float(np.quantile(st.max_t, level))
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
                    stacklevel=2,
                )
            adj = _holm(raw)
        elif correction == "bh":
            adj = _bh(st.p_raw[iu])
        else:
            adj = st.p_raw[iu].copy()
        p_adj = np.full((m, m), np.nan)
        p_adj[iu] = adj

        tier = 1

        def verdict(k: int, a: int, b: int) -> bool:
            """Record the pair (board positions a < b) that decides position k; True
            when it starts a new tier."""
            nonlocal tier
            pa = p_adj[a, b]
            upper[order[k]], lower[order[k]] = order[a], order[b]
            p_value[order[k]], p_adjusted[order[k]] = st.p_raw[a, b], pa
            if pa <= alpha:
                tier += 1
                starts[order[k]] = True
            tiers[order[k]] = tier
            return pa <= alpha

        if rule == "leader":
            leader = 0
            for k in range(1, m):
                if verdict(k, leader, k):
                    leader = k
        else:
            for k in range(1, m):
                # Cut between board positions k-1 and k: the verdict is that of the
                # weakest-separated pair across it (largest adjusted p-value).
                block = p_adj[:k, k:]
                a, b = np.unravel_index(np.argmax(block), block.shape)
                verdict(k, int(a), int(b) + k)

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


# --------------------------------------------------------------------------
# head-to-head
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Head-to-head verdict between models ``i`` and ``j``.

    Attributes
    ----------
    i, j : int
        Model indices.
    diff : float
        Point rating difference ``rating[i] - rating[j]`` (Elo scale).
    low, high : float
        Paired bootstrap percentile interval of ``R_i - R_j`` at ``level``.
    p_better : float
        Fraction of bootstrap rounds with ``R_i > R_j`` (ties count half).
    win_prob : float
        Bradley-Terry predicted probability that ``i`` beats ``j``:
        ``1 / (1 + 10 ** (-diff / 400))`` (ties not modelled).
    significant : bool
        True iff the interval excludes 0 (not corrected for multiplicity: one
        pair, chosen by the user) and both models are ranked.
    level : float
    reason : str or None
        Why there is no verdict (a model unranked), in words; ``None`` when
        the verdict stands on the interval.
    """

    i: int
    j: int
    diff: float
    low: float
    high: float
    p_better: float
    win_prob: float
    significant: bool
    level: float
    reason: str | None = None

    @property
    def verdict(self) -> str:
        """``"i"`` / ``"j"`` (that model is better), ``"none"`` (cannot tell) or ``"unranked"``."""
        if self.reason is not None:
            return "unranked"
        if self.low > 0:
            return "i"
        if self.high < 0:
            return "j"
        return "none"


def compare_pair(
    samples: np.ndarray,
    i: int,
    j: int,
    *,
    rating: np.ndarray,
    level: float = 0.95,
    unranked: dict[int, str] | None = None,
) -> Comparison:
    """Head-to-head comparison of two models from the paired bootstrap.

    Parameters
    ----------
    samples : array_like, shape (rounds, M)
        Bootstrap ratings.
    i, j : int
        The two (distinct) model indices; the verdict is about ``i`` vs ``j``.
    rating : array_like, shape (M,)
        Point ratings.
    level : float, default 0.95
        Level of the percentile interval.
    unranked : dict of int to str, optional
        Models that have no rank (few battles, disconnected, no MLE) and the
        reason in words (:func:`unranked_reason`).  A pair with such a model
        gets no verdict: ``significant`` is False, ``reason`` says why, and
        the interval and ``p_better`` are NaN (a collapsed bootstrap or a
        rating on another scale would claim a certainty the data lack).

    Returns
    -------
    Comparison

    Notes
    -----
    The interval is the ``(alpha/2, 1 - alpha/2)`` percentile interval of
    ``samples[:, i] - samples[:, j]``; it keeps the correlation of the two
    estimates, which comparing two marginal intervals loses.  The win
    probability uses ``expit(diff * ln(10) / 400)``, which equals the Elo
    formula and does not overflow for extreme differences.
    """
    alpha = _alpha(level)
    r = np.asarray(rating, dtype=np.float64)
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"rating must be a non-empty vector, got shape {r.shape}")
    m = r.size
    for name, idx in (("i", i), ("j", j)):
        if not (isinstance(idx, int | np.integer) and 0 <= idx < m):
            raise ValueError(f"{name} must be a model index in [0, {m}), got {idx!r}")
    if i == j:
        raise ValueError("i and j must be different models")
    reasons = [unranked[k] for k in (i, j) if unranked and k in unranked]
    if not reasons:
        # only ranked pairs need (and must have) finite ratings and samples
        r = _vector(r, "rating")
        s = _samples(samples, m)
    else:
        nan = float("nan")
        diff = float(r[i] - r[j])
        return Comparison(
            i=int(i),
            j=int(j),
            diff=diff,
            low=nan,
            high=nan,
            p_better=nan,
            win_prob=float(special.expit(diff * np.log(10.0) / _ELO_SCALE))
            if np.isfinite(diff)
            else nan,
            significant=False,
            level=float(level),
            reason="; ".join(reasons),
        )
    d = s[:, i] - s[:, j]
    diff = float(r[i] - r[j])
    low, high = np.quantile(d, [alpha / 2.0, 1.0 - alpha / 2.0])
    p_better = (np.count_nonzero(d > 0.0) + 0.5 * np.count_nonzero(d == 0.0)) / d.size
    win_prob = float(special.expit(diff * np.log(10.0) / _ELO_SCALE))
    return Comparison(
        i=int(i),
        j=int(j),
        diff=diff,
        low=float(low),
        high=float(high),
        p_better=float(p_better),
        win_prob=win_prob,
        significant=bool(low > 0.0 or high < 0.0),
        level=float(level),
    )


# --------------------------------------------------------------------------
# rank intervals
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RankInterval:
    """Per-model bootstrap rank interval (1 = best).

    Attributes
    ----------
    low, high : numpy.ndarray of int, shape (M,)
        Best and worst plausible rank at ``level`` (marginal, per model; not
        simultaneous over models).
    level : float
    """

    low: np.ndarray
    high: np.ndarray
    level: float


def rank_interval(samples: np.ndarray, *, level: float = 0.95) -> RankInterval:
    """Marginal rank interval of each model from the bootstrap.

    In every round the models are ranked by their bootstrap rating (1 = best,
    ties share the best rank); the interval is the ``(alpha/2, 1 - alpha/2)``
    quantile of each model's ranks, rounded outwards to whole ranks.

    Parameters
    ----------
    samples : array_like, shape (rounds, M)
        Bootstrap ratings.
    level : float, default 0.95
        Per-model level.

    Returns
    -------
    RankInterval

    Notes
    -----
    O(rounds * M log M) time and O(rounds * M) memory.  The intervals are
    per model: with many models some true ranks will fall outside their
    intervals; they are a readable summary, not a simultaneous statement.
    """
    alpha = _alpha(level)
    s = np.asarray(samples, dtype=np.float64)
    if s.ndim != 2 or s.shape[1] < 1:
        raise ValueError(f"samples must have shape (rounds, M), got {s.shape}")
    s = _samples(s, s.shape[1])
    from scipy.stats import rankdata  # only here: scipy.stats costs ~0.5 s to import

    ranks = rankdata(-s, method="min", axis=1)
    low = np.quantile(ranks, alpha / 2.0, axis=0, method="lower")
    high = np.quantile(ranks, 1.0 - alpha / 2.0, axis=0, method="higher")
    return RankInterval(
        low=np.asarray(low, dtype=np.int64),
        high=np.asarray(high, dtype=np.int64),
        level=float(level),
    )
