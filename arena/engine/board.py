"""One leaderboard's numbers: ratings, records, ranks and tiers of a count table.

:func:`rate_board` is everything the rebuild computes for one board, as pure
numpy: it takes a :class:`~arena.engine.counts.CountTable` (and the cluster
matrix for a cluster bootstrap) and returns a :class:`BoardRating` that the
snapshot writer stores as it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from arena.core.defaults import (
    DEFAULT_CI,
    DEFAULT_LEVEL,
    DEFAULT_MIN_BATTLES,
    DEFAULT_ROUNDS,
    DEFAULT_SEED,
    DEFAULT_TIER_RULE,
    DEFAULT_TIERS,
    DRAWS_CHECK_SHARE,
    DRAWS_MAX,
    TIER_METHODS,
    TIER_RULES,
    TWIN_ENDS,
    TWIN_OVERLAP,
)
from arena.core.outcomes import A_WINS, B_WINS
from arena.engine.counts import CountTable, cluster_matrix, count_table
from arena.engine.fields import filled_by_producer
from arena.engine.inference.intervals import normal_draws
from arena.engine.inference.maxt_bounded import FAST_MIN_WORK
from arena.engine.inference.rank_sets import BoardInference, board_inference
from arena.engine.inference.ranks import rank_lb, rank_ub
from arena.engine.inference.tiers import tiers_leader_overlap, tiers_paired
from arena.engine.messages import check_names
from arena.engine.options import FitOptions
from arena.engine.rate import rate
from arena.engine.ratings import Ratings
from arena.engine.sparse.tiers import tiers_bounded
from arena.engine.style.design import StyleTable, style_table
from arena.engine.style.rate import StyleRatings, cpu_seconds, rate_style

__all__ = [
    "BoardOptions",
    "BoardRating",
    "PairTotals",
    "TIER_METHODS",
    "TIER_RULES",
    "model_record",
    "pair_totals",
    "rank_board",
    "rate_board",
    "rate_style_board",
    "draws_check",
    "enough_draws",
    "stored_samples",
    "with_draws",
]

#: Tier methods (:data:`arena.core.defaults.TIER_METHODS`) and rules, as types.
TierMethod = Literal["simultaneous", "maxt", "holm", "bh", "overlap"]
TierRule = Literal["leader", "cut"]


@dataclass(frozen=True)
class BoardOptions:
    """How one board is rated: the model, its intervals, who is ranked, the tiers.

    Attributes
    ----------
    fit : FitOptions
        The model (see :class:`arena.engine.options.FitOptions`).
    rounds : int or None
        Bootstrap rounds or fixed normal draws, as in :func:`arena.engine.rate.rate`;
        ``None`` (the default): ``DEFAULT_ROUNDS`` to start with, and for
        analytic intervals as many more draws as :func:`enough_draws` finds
        the board needs (up to ``DRAWS_MAX``).
    seed, level, ci, simultaneous
        As in :func:`arena.engine.rate.rate`.
    min_battles : int
        Models with fewer battles are listed but get no rank or tier.
    tiers : {"simultaneous", "maxt", "holm", "bh", "overlap"}
        ``"simultaneous"``: tiers from the board's one inference
        (:func:`arena.engine.inference.rank_sets.board_inference`), consistent with the
        rank sets and the verdicts; the others are kept for comparison.
    tier_rule : {"leader", "cut"}
        For the paired methods other than ``"simultaneous"``.
    """

    fit: FitOptions = field(default_factory=FitOptions)
    #: ``None``: chosen by the data (analytic intervals: :func:`enough_draws`;
    #: the bootstrap: ``DEFAULT_ROUNDS``); a number fixes it.
    rounds: int | None = None
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL
    ci: str = DEFAULT_CI
    simultaneous: bool = False
    min_battles: int = DEFAULT_MIN_BATTLES
    tiers: TierMethod = DEFAULT_TIERS
    tier_rule: TierRule = DEFAULT_TIER_RULE

    def interval_options(self) -> dict[str, Any]:
        """The interval keywords of :func:`~arena.engine.rate.rate` (and of the style fit)."""
        return dict(
            ci=self.ci,
            level=self.level,
            rounds=DEFAULT_ROUNDS if self.rounds is None else self.rounds,
            seed=self.seed,
            simultaneous=self.simultaneous,
        )


@dataclass(frozen=True)
class PairTotals:
    """Head-to-head totals, one entry per unordered pair ``lo < hi`` that met."""

    lo: np.ndarray
    hi: np.ndarray
    lo_wins: np.ndarray
    hi_wins: np.ndarray
    ties: np.ndarray


@dataclass
class BoardRating:
    """Everything stored for one board; per-model arrays in table index order.

    Attributes
    ----------
    table : CountTable
        The board's battles.
    ratings : Ratings
    record : ndarray, shape (M, 4)
        Battles, wins, losses, ties (see :func:`model_record`).
    pairs : PairTotals
    ranked : ndarray of bool, shape (M,)
        At least ``min_battles`` (and one) battles, and in the comparable set
        (:mod:`arena.engine.sets.components`).
    rank, rank_ub, tier, rank_lb : ndarray of int, shape (M,)
        ``-1`` for unranked models (``rank`` is the position by rating among
        the ranked models, never shown as a rank).
    flags : list of tuple of str
        The fit's flags plus ``few_battles`` for unranked models.
    tier_info : dict
        JSON-ready facts about the tiering and the board's inference (method,
        critical value, separated pairs, ...).
    rank_low, rank_high : ndarray of int, shape (M,)
        Simultaneous rank confidence sets (:mod:`arena.engine.inference.rank_sets`), ``-1``
        for unranked models.
    """

    table: CountTable
    ratings: Ratings
    record: np.ndarray
    pairs: PairTotals
    ranked: np.ndarray
    rank: np.ndarray
    rank_ub: np.ndarray
    tier: np.ndarray
    flags: list[tuple[str, ...]]
    tier_info: dict[str, Any]
    #: Models not surely worse (rank_lb), ``-1`` for unranked models.
    rank_lb: np.ndarray = filled_by_producer(repr=True)
    #: Simultaneous rank sets (:mod:`arena.engine.inference.rank_sets`), ``-1`` for unranked models.
    rank_low: np.ndarray = filled_by_producer(repr=True)
    rank_high: np.ndarray = filled_by_producer(repr=True)


def stored_samples(samples: np.ndarray) -> np.ndarray:
    """The samples as a snapshot stores them (float32), back in float64.

    The board's inference runs on these values, so that anyone reading the
    snapshot (``arena compare``, the page) recomputes the very same verdicts.
    """
    return np.asarray(samples, dtype="<f4").astype(np.float64)


def _decisive(table: CountTable) -> tuple[np.ndarray, np.ndarray]:
    a_win = table.outcome == A_WINS
    b_win = table.outcome == B_WINS
    return a_win, b_win


def model_record(table: CountTable) -> np.ndarray:
    """Per model (battles, wins, losses, ties) in battle counts (ties: both kinds)."""
    m = table.n_models
    out = np.zeros((m, 4))
    n = table.n
    a_win, b_win = _decisive(table)
    tie = ~(a_win | b_win)
    for side, win, lose in ((table.a, a_win, b_win), (table.b, b_win, a_win)):
        out[:, 0] += np.bincount(side, weights=n, minlength=m)
        out[:, 1] += np.bincount(side, weights=n * win, minlength=m)
        out[:, 2] += np.bincount(side, weights=n * lose, minlength=m)
        out[:, 3] += np.bincount(side, weights=n * tie, minlength=m)
    return out


def pair_totals(table: CountTable) -> PairTotals:
    """Wins of each side and ties for every unordered pair, in ``(lo, hi)`` order."""
    t = table
    lo, hi = np.minimum(t.a, t.b), np.maximum(t.a, t.b)
    flipped = t.a != lo
    a_win, b_win = _decisive(t)
    lo_wins = np.where(flipped, b_win, a_win) * t.n
    hi_wins = np.where(flipped, a_win, b_win) * t.n
    ties = (~(a_win | b_win)) * t.n
    m = t.n_models
    uniq, inv = np.unique(lo * m + hi, return_inverse=True)
    sums = [np.bincount(inv, weights=w, minlength=uniq.size) for w in (lo_wins, hi_wins, ties)]
    return PairTotals(uniq // m, uniq % m, *sums)


def rate_board(
    table: CountTable,
    options: BoardOptions,
    *,
    clusters: sp.csr_matrix | None = None,
    progress: Callable[[str], None] | None = None,
    names: Sequence[str] | None = None,
    path: str = "auto",
    start: np.ndarray | None = None,
    check_draws: bool = True,
) -> BoardRating:
    """Ratings with intervals, records, ranks and tiers of one board.

    Parameters
    ----------
    table : CountTable
    options : BoardOptions
    clusters : scipy.sparse matrix (K, C), optional
        Clusters x cells counts for a cluster bootstrap.
    progress : callable, optional
        Called with a short message as each phase (fit, bootstrap, tiers) begins.
    names : sequence of str, optional
        Model names by table index, for warnings and errors (default: indices).
    path : {"auto", "dense", "sparse"}
        The engine path (see :func:`arena.engine.rate.rate`); on the sparse
        path paired tiers use :func:`arena.engine.sparse.tiers.tiers_bounded`.
    start : ndarray, shape (M,), optional
        Log-strengths to warm-start the point fit from (see :func:`arena.engine.rate.rate`).
    check_draws : bool
        Redo an analytic board's inference on a second set of draws
        (:func:`draws_check`) and choose the draws by it. A provisional refit
        takes its full snapshot's draws, checked there, and skips it: on the
        bundled overall board the check is a third of a refit's time.

    Returns
    -------
    BoardRating

    Raises
    ------
    ValueError
        From the fit, e.g. ``prior=0`` when the MLE does not exist.
    """
    opts = options
    ratings = rate(
        table,
        opts.fit,
        **opts.interval_options(),
        clusters=clusters,
        progress=progress,
        names=names,
        path=path,
        start=start,
    )
    board = rank_board(table, ratings, opts, progress=progress, check_draws=check_draws)
    return enough_draws(table, board, opts, progress)


def rate_style_board(
    model_a: ArrayLike,
    model_b: ArrayLike,
    outcome: ArrayLike,
    side_a: ArrayLike,
    side_b: ArrayLike,
    options: BoardOptions,
    *,
    n_models: int,
    features: Sequence[str],
    weight: ArrayLike | None = None,
    cluster_ids: ArrayLike | None = None,
    style_reg: float | None = None,
    names: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[BoardRating, StyleTable]:
    """The style-controlled board of per-battle arrays (see :mod:`arena.engine.style.rate`).

    Model indices in ``0 .. n_models - 1``; ``side_a``/``side_b`` (B, F) the
    per-side feature values named by ``features``; ``cluster_ids`` (B,) for a
    cluster bootstrap.  Ranks and tiers follow the same rules as
    :func:`rate_board`; ``BoardRating.ratings`` is a
    :class:`~arena.engine.style.rate.StyleRatings` with the coefficients.
    ``names`` (model names by index) name models in the warnings; ``progress``
    is told each phase's time (rows, point fit, intervals).
    """
    opts = options
    f = opts.fit
    t0, c0 = time.perf_counter(), cpu_seconds()
    table = count_table(model_a, model_b, outcome, n_models=n_models, weight=weight)
    style = style_table(
        model_a,
        model_b,
        outcome,
        side_a,
        side_b,
        n_models=n_models,
        features=features,
        weight=weight,
        both_bad=f.both_bad,
    )
    if progress is not None:
        progress(
            f"rows: {style.n_rows:,} from {style.n_battles:,.0f} battles "
            f"(equal pair, outcome, weight and features collapsed) in {time.perf_counter() - t0:.2f} s "
            f"({cpu_seconds() - c0:.2f} s CPU)"
        )
    clusters = None
    if cluster_ids is not None:
        kept = style.battle_row >= 0
        clusters = cluster_matrix(
            np.asarray(cluster_ids)[kept], style.battle_row[kept], n_cells=style.n_rows
        )
    ratings = rate_style(
        style, f, **opts.interval_options(), clusters=clusters, style_reg=style_reg,
        progress=progress,
    )  # fmt: skip
    if names is not None:
        ratings = replace(ratings, warnings=ratings.named_warnings(check_names(names, n_models)))
    return enough_draws(table, rank_board(table, ratings, opts), opts, progress), style


def rank_board(
    table: CountTable,
    ratings: Ratings,
    options: BoardOptions,
    *,
    progress: Callable[[str], None] | None = None,
    check_draws: bool = True,
) -> BoardRating:
    """Records, ranks and tiers of a board from its ratings (raw or style-controlled).

    ``progress``, if given, is told when the tiers are computed; ``check_draws``
    (analytic intervals) records :func:`draws_check` in ``tier_info``.
    """
    opts = options
    record = model_record(table)
    m = table.n_models
    enough = record[:, 0] >= max(opts.min_battles, 1)
    # only models on the comparable set's scale with enough battles are ranked
    if ratings.comparable is not None:
        ranked = enough & ratings.comparable
    else:
        ranked = enough & np.array(["disconnected" not in f for f in ratings.flags], dtype=bool)
    flags = [
        tuple(dict.fromkeys((*f, *(("few_battles",) if not enough[i] else ()))))
        for i, f in enumerate(ratings.flags)
    ]
    rank = np.full(m, -1)
    ub = np.full(m, -1)
    lb = np.full(m, -1)
    tier = np.full(m, -1)
    idx = np.flatnonzero(ranked)
    low = np.full(m, -1)
    high = np.full(m, -1)
    info: dict[str, Any] = {"method": opts.tiers}
    if idx.size and progress is not None:
        progress(f"ranks and tiers: {opts.tiers}, {idx.size} ranked models")
    if idx.size:
        r, lo, hi = ratings.rating[idx], ratings.ci_low[idx], ratings.ci_high[idx]
        order = np.lexsort((idx, -r))
        rank[idx[order]] = np.arange(1, idx.size + 1)
        ub[idx] = rank_ub(lo, hi)
        lb[idx] = rank_lb(lo, hi)
        sparse = ratings.diagnostics.get("engine_path") == "sparse"
        inference = board_inference(
            r,
            stored_samples(ratings.samples[:, idx]),
            level=opts.level,
            method="bonferroni" if sparse else "auto",
        )
        low[idx], high[idx] = inference.rank_low, inference.rank_high
        info.update(inference.to_dict())
        if check_draws and ratings.cov is not None and not sparse:
            info["draws_check"] = draws_check(
                r, ratings.cov[np.ix_(idx, idx)], inference, ratings.samples.shape[0], opts.level
            )
        if sparse:
            info.update(bound="bonferroni")
        if opts.tiers == "simultaneous":
            tier[idx] = inference.tiers
            # the snapshot says which near-twin rule drew its tiers (issue 41)
            info.update(rule="top-shown-better", twins={"ends": TWIN_ENDS, "overlap": TWIN_OVERLAP})
        else:
            info.update(_other_tiers(r, lo, hi, ratings, idx, opts, tier, sparse))
    return BoardRating(
        table,
        ratings,
        record,
        pair_totals(table),
        ranked,
        rank,
        ub,
        tier,
        flags,
        info,
        lb,
        low,
        high,
    )


def draws_check(
    rating: np.ndarray,
    cov: np.ndarray,
    inference: BoardInference,
    rounds: int,
    level: float,
) -> dict[str, Any]:
    """The board's inference redone on a second, independent set of fixed draws.

    Analytic intervals draw no random numbers, so nothing published depends on
    the seed; what is left is the quadrature error of counting the step-down's
    tail probabilities over ``rounds`` fixed draws. Redoing the inference on
    another fixed set of as many draws (stream 2 of
    :func:`~arena.engine.inference.intervals.fixed_normal_draws`) measures it:
    how many rank sets and which tier partition would change. The snapshot
    records it; ``passed`` is False when more than 5% of the sets or the tier
    partition would change, and the page then says so.
    """
    other = board_inference(
        rating, stored_samples(normal_draws(rating, cov, rounds, stream=2)), level=level
    )
    moved = (other.rank_low != inference.rank_low) | (other.rank_high != inference.rank_high)
    by = np.maximum(
        np.abs(other.rank_low - inference.rank_low), np.abs(other.rank_high - inference.rank_high)
    )
    tiers_equal = bool(np.array_equal(other.tiers, inference.tiers))
    ranked = int(rating.size)
    return {
        "draws": int(rounds),
        "ranked": ranked,
        "sets_moved": int(moved.sum()),
        "max_ranks": int(by.max()) if ranked else 0,
        "tiers_equal": tiers_equal,
        "passed": bool(tiers_equal and moved.sum() <= (1 - DRAWS_CHECK_SHARE) * ranked),
    }


def with_draws(ratings: Ratings, rounds: int) -> Ratings:
    """Analytic ratings with ``rounds`` fixed draws instead of their own.

    The same draws :func:`~arena.engine.rate.rate` (or the style fit) makes
    with ``rounds``: :func:`~arena.engine.inference.intervals.normal_draws` of
    the comparable set's ratings and covariance (NaN columns outside it), and
    of a style board's coefficients (stream 1). Per-model and chi-square
    intervals do not depend on the draws; max-|t| ones do, so
    :func:`enough_draws` does not redraw those.
    """
    if ratings.cov is None:
        raise ValueError("only analytic intervals (sandwich, fisher) have fixed draws to redraw")
    m = ratings.rating.size
    keep = np.flatnonzero(np.isfinite(np.diag(ratings.cov)))
    samples = np.full((rounds, m), np.nan)
    samples[:, keep] = normal_draws(ratings.rating[keep], ratings.cov[np.ix_(keep, keep)], rounds)
    diag = {**ratings.diagnostics, "rounds": int(rounds)}
    out = replace(ratings, samples=samples, diagnostics=diag)
    if isinstance(out, StyleRatings) and out.coef_cov is not None:
        out = replace(out, coef_samples=normal_draws(out.coef, out.coef_cov, rounds, stream=1))
    return out


def enough_draws(
    table: CountTable,
    board: BoardRating,
    options: BoardOptions,
    progress: Callable[[str], None] | None = None,
) -> BoardRating:
    """The board with as many fixed draws as its inference needs (rounds chosen by the data).

    With ``options.rounds`` unset and analytic intervals, the draws double
    from ``DEFAULT_ROUNDS`` while :func:`draws_check` fails (a second fixed
    set of as many draws would move more than 5% of the rank sets or the tier
    partition), up to ``DRAWS_MAX`` draws and at most ``FAST_MIN_WORK`` draws
    x ranked pairs (beyond that the board's inference is the single-step
    one, and the draws stay as they are). The check of the draws kept is the
    snapshot's, with ``chosen`` (draws chosen by the data) and ``tried``.
    A given ``rounds``, the bootstrap and max-|t| intervals keep their draws.
    """
    check = board.tier_info.get("draws_check")
    if check is None or options.rounds is not None or options.simultaneous:
        return board
    tried = [int(check["draws"])]
    pairs = check["ranked"] * (check["ranked"] - 1) // 2
    while not check["passed"]:
        more = 2 * tried[-1]
        if more > DRAWS_MAX or more * pairs > FAST_MIN_WORK:
            break
        if progress is not None:
            progress(
                f"draws: a second set of {tried[-1]:,} moved {check['sets_moved']} rank sets; "
                f"{more:,} draws"
            )
        board = rank_board(table, with_draws(board.ratings, more), options)
        check = board.tier_info["draws_check"]
        tried.append(more)
    check.update(chosen=True, tried=tried)
    return board


def _other_tiers(
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    ratings: Ratings,
    idx: np.ndarray,
    opts: BoardOptions,
    tier: np.ndarray,
    sparse: bool,
) -> dict[str, Any]:
    """Tiers by a method other than the board's inference (``--tiers maxt|holm|bh|overlap``)."""
    if opts.tiers == "overlap" or idx.size == 1:
        tier[idx] = tiers_leader_overlap(r, lo, hi)
        return {}
    if sparse:
        # all M (M - 1) / 2 pairs are out of reach: Bonferroni over them, pairs on demand
        res = tiers_bounded(
            r, ratings.samples[:, idx], level=opts.level, correction=opts.tiers, rule=opts.tier_rule
        )
        tier[idx] = res.tiers
        return dict(
            critical_t=float(res.critical_t),
            n_comparisons=int(res.n_comparisons),
            rule=res.rule,
            pvalues=res.pvalues,
            bound="bonferroni",
        )
    assert opts.tiers != "simultaneous"  # rate_board answers that method itself
    res = tiers_paired(
        r,
        ratings.samples[:, idx],
        level=opts.level,
        correction=opts.tiers,
        rule=opts.tier_rule,
        # Percentile p-values bottom out at 2/(rounds+1), too coarse
        # for Holm/BH over M(M-1)/2 pairs; max-t ignores this.
        pvalues="normal",
    )
    tier[idx] = res.tiers
    return dict(
        critical_t=None if np.isnan(res.critical_t) else float(res.critical_t),
        n_comparisons=int(res.n_comparisons),
        rule=res.rule,
        pvalues=res.pvalues,
    )
