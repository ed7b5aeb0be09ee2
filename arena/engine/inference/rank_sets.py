"""One board, one inference: rank confidence sets, separated pairs and tiers.

The board's claims (ranks, tiers, "A is better than B") all come from one
multiple test over the paired bootstrap differences, as in Mogstad, Romano,
Shaikh and Wilhelm, "Inference for Ranks with Applications to Mobility across
Neighbourhoods and Academic Achievement across Countries" (Review of Economic
Studies, 2024; "MRSW" below).  See ``docs/tiers.md`` for the statement of
what each result promises.

**Hypotheses.**  For every ordered pair ``(a, b)`` of the family, the one-sided
hypothesis ``H_ab: theta_a <= theta_b`` with statistic ``T_ab = (r_a - r_b) /
sd(d*_ab)``, ``d*_ab = samples[:, a] - samples[:, b]`` (the paired bootstrap
difference, which keeps the correlation of the two estimates).  Its bootstrap
null deviation in round ``r`` is ``(d*_ab[r] - mean d*_ab) / sd(d*_ab)``; the
reverse hypothesis ``H_ba`` has the negated deviation.

**Step-down** (MRSW Algorithm 3.1 / 3.2, Romano-Wolf): sort the hypotheses by
``T`` descending; hypothesis ``k`` gets ``p_k = (1 + #{r : max_{h >= k}
dev_h[r] >= T_k}) / (B + 1)`` made non-decreasing along the sort; ``H`` is
rejected iff its ``p <= alpha``.  Step 1 alone (the ``level`` quantile of the
maximum over the whole family) is the single-step procedure: simultaneous
two-sided intervals for all differences.  Rejecting ``H_ab`` says "``a`` is
better than ``b``".  With probability ``>= 1 - alpha`` (asymptotically, up to
the bootstrap approximation) no true hypothesis is rejected.

**Rank sets.**  ``low_j = 1 + #{k : k shown better than j}`` and ``high_j = M -
#{k : j shown better than k}``.  The family of all ``M (M - 1)`` ordered pairs
gives *simultaneous* sets (all models' true ranks at once, ``>= 1 - alpha``);
the ``2 (M - 1)`` ordered pairs that involve model ``j`` give its *marginal*
set (:func:`marginal_rank_set`).

**Separation.**  The board's relation "shown better" is the set of rejected
pairs closed under transitivity: on the event that every rejection is true, so
is every pair the closure adds, so the closure keeps the guarantee and makes
ranks and tiers agree exactly (a model whose set is one rank is separated from
every other model).

**Tiers** (:func:`tiers_from_separation`): walk down the board; a tier runs
until the first position from which its top model is shown better than every
model below, then every boundary crossed by two unseparated *near twins*
(:func:`near_twins`: rank sets equal up to one rank at each end, sharing at
least 80% of their ranks) is removed.  Hence "the top model of each tier is
shown better than every model in every lower tier" is true of every tier, and
a one-rank Monte-Carlo move of a rank set's end does not add or remove a tier
(issue 41).

**Paths.**  ``method="stepdown"`` computes every pair's deviations (time
O(rounds M^2)); boards of at least :data:`FAST_MIN_WORK` rounds x pairs use
``"single-step"``, which needs only each round's maximum (exact, from
:mod:`arena.engine.inference.maxt_bounded`) and bounds on each pair's SD: valid, and it
separates no pair that the step-down would not.  ``"bonferroni"`` (the sparse
engine path, thousands of models) separates ``a`` from ``b`` when ``r_a - z
sd_a > r_b + z sd_b`` with ``z = Phi^-1(1 - alpha / (2F))``: since ``sd_ab <=
sd_a + sd_b`` this implies a Bonferroni rejection over all ``F`` pairs; O(M log
M) and never more than the pairs the other methods separate (up to the normal
approximation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from arena.core.defaults import DEFAULT_LEVEL, MC_MARGIN, TWIN_ENDS, TWIN_OVERLAP
from arena.core.errors import ArgumentError
from arena.engine.inference.maxt_bounded import FAST_MIN_WORK, bounded_max_t
from arena.engine.inference.pairs import exact_pairs
from arena.engine.validate import check_level, rating_vector, sample_matrix

__all__ = [
    "INFERENCE_METHODS",
    "BoardInference",
    "board_inference",
    "marginal_rank_set",
    "mc_alpha",
    "near_twins",
    "separated_pairs",
    "tiers_from_separation",
]

#: Largest pairs x rounds block of deviations formed at once (memory stays O(rounds M + M^2)).
_BLOCK_ELEMENTS = 4_000_000
#: How the board's simultaneous test is computed (see the module docstring).
INFERENCE_METHODS = ("auto", "stepdown", "single-step", "bonferroni")


@dataclass(frozen=True)
class BoardInference:
    """The board's simultaneous inference: who is shown better than whom.

    Per-model arrays are indexed by model (not board position).

    Attributes
    ----------
    order : ndarray of int, shape (M,)
        The board: model indices by rating, best first (ties keep index order).
    rank_low, rank_high : ndarray of int, shape (M,)
        Simultaneous rank confidence set ``rank_low .. rank_high`` (1 = best).
    tiers : ndarray of int, shape (M,)
        Tiers from the separation (:func:`tiers_from_separation`).
    method : str
        ``"stepdown"``, ``"single-step"`` or ``"bonferroni"``.
    level : float
    n_pairs : int
        ``M (M - 1) / 2``: the family is every ordered pair of these.
    critical_t : float
        The single-step critical value (step 1; Bonferroni's ``z``); NaN for M = 1.
    n_separated : int
        Pairs the board separates (after the transitive closure).
    """

    order: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    tiers: np.ndarray
    method: str
    level: float
    n_pairs: int
    critical_t: float
    n_separated: int
    #: board-position matrix, ``better[a, b]``: position a shown better than b (dense methods)
    better: np.ndarray | None = None
    #: per model, ``r - z sd`` and ``r + z sd`` (Bonferroni method)
    bound_low: np.ndarray | None = None
    bound_high: np.ndarray | None = None
    #: the Monte-Carlo margin the step-down kept (:func:`mc_alpha`; 0 before issue 41)
    margin: float = 0.0
    #: board position of each model (the inverse of ``order``), set from ``order``
    position: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pos = np.empty(self.order.size, dtype=np.int64)
        pos[self.order] = np.arange(self.order.size)
        object.__setattr__(self, "position", pos)

    def separated(self, i: int, j: int) -> int:
        """``1`` if model ``i`` is shown better than model ``j``, ``-1`` if worse, else ``0``."""
        if i == j:
            return 0
        if self.better is None:
            lo, hi = self.bound_low, self.bound_high
            assert lo is not None and hi is not None  # the Bonferroni method sets both
            return 1 if lo[i] > hi[j] else (-1 if lo[j] > hi[i] else 0)
        a, b = int(self.position[i]), int(self.position[j])
        if self.better[a, b]:
            return 1
        return -1 if self.better[b, a] else 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready facts about the inference (for the snapshot)."""
        return {
            "inference": self.method,
            "level": self.level,
            "n_comparisons": int(self.n_pairs),
            "critical_t": None if not np.isfinite(self.critical_t) else float(self.critical_t),
            "n_separated": int(self.n_separated),
            "margin": float(self.margin),
        }


def _sorted_board(
    rating: np.ndarray, samples: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r = rating_vector(rating, "rating")
    m = r.size
    s = np.array(sample_matrix(samples, m), dtype=np.float64, order="C")
    order = np.argsort(-r, kind="stable")
    return r, s, order, np.ascontiguousarray(s[:, order]), r[order]


def mc_alpha(alpha: float, rounds: int, margin: float) -> float:
    """The level a count over ``rounds`` must reach for a rejection, Monte-Carlo error kept out.

    A hypothesis is rejected when ``(1 + #{rounds at or beyond T}) / (B + 1)``
    is at most ``alpha - margin * sqrt(alpha (1 - alpha) / (B + 1))``: below
    ``alpha`` by ``margin`` binomial standard errors of the count. The rounds
    (fixed draws, or the bootstrap's) estimate the tail probability; with
    fixed draws their error does not average out over boards, so without the
    margin a board's family-wise error was up to 1.3 percentage points above
    ``alpha`` on an unlucky draw set (53 equal models, 1,000 draws; issue 41).
    """
    if margin <= 0.0:
        return alpha
    return max(alpha - margin * float(np.sqrt(alpha * (1.0 - alpha) / (rounds + 1.0))), 0.0)


def _stepdown_rejected(
    rb: np.ndarray,
    sb: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    alpha: float,
    *,
    stepwise: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Rejections of ``H_ab: theta_a <= theta_b`` over the family of both
    directions of the pairs ``(a[i], b[i])`` (board positions, ``rb[a] >= rb[b]``).

    The reverse hypotheses ``H_ba`` have ``T <= 0`` and are never rejected, but they
    stay in every step's maximum (MRSW: only rejected hypotheses leave the family).
    Returns the rejections and, per round, the maximum over the whole family
    (step 1's null distribution).
    """
    rounds = sb.shape[0]
    n = a.size
    if n == 0:
        return np.zeros(0, dtype=bool), np.zeros(rounds)
    centre, sd, t = exact_pairs(rb, sb, a, b)
    pos = sd > 0.0
    safe_sd = np.where(pos, sd, 1.0)
    fwd = np.flatnonzero(t > 0.0)
    fwd = fwd[np.argsort(-t[fwd], kind="stable")]
    t_f = t[fwd]
    counts = np.zeros(fwd.size, dtype=np.int64)
    by_model = np.ascontiguousarray(sb.T)
    step = max(1, _BLOCK_ELEMENTS // max(n, 1))
    tie = t == 0.0  # equal ratings: both directions have T = 0 and sit in the tail
    whole_max = np.empty(rounds)
    for r0 in range(0, rounds, step):
        block = by_model[:, r0 : r0 + step]
        dev = block[a] - block[b]
        dev -= centre[:, None]
        dev /= safe_sd[:, None]
        dev[~pos] = 0.0
        # the tail of the sorted family: every reverse hypothesis (T < 0) and the
        # pairs of equal rating (T = 0, both directions); none can be rejected
        tail = (-dev).max(axis=0)
        if tie.any():
            tail = np.maximum(tail, np.abs(dev[tie]).max(axis=0))
        d_f = dev[fwd]
        whole = np.maximum(tail, d_f.max(axis=0, initial=-np.inf))
        whole_max[r0 : r0 + step] = whole
        if stepwise:
            suffix = np.maximum.accumulate(d_f[::-1], axis=0)[::-1]
            np.maximum(suffix, tail[None, :], out=suffix)
        else:
            # step 1 only: every hypothesis against the maximum over the whole family
            suffix = np.broadcast_to(whole, d_f.shape)
        counts += np.count_nonzero(suffix >= t_f[:, None], axis=1)
    p = np.maximum.accumulate((1.0 + counts) / (rounds + 1.0))
    rejected = np.zeros(n, dtype=bool)
    rejected[fwd] = p <= alpha
    return rejected, whole_max


def _single_step_bounded(
    rb: np.ndarray, sb: np.ndarray, alpha: float
) -> tuple[np.ndarray, float] | None:
    """Single-step rejections of all pairs of a long board: (better matrix, critical) or None."""
    rounds, m = sb.shape
    got = bounded_max_t(rb, sb)
    if got is None:
        return None
    max_t, sd_lo, sd_hi = got
    # reject iff (1 + #{r : max_t[r] >= T}) / (B + 1) <= alpha, i.e. T > the (k+1)-th largest
    k = int(np.floor(alpha * (rounds + 1.0) - 1.0 + 1e-9))
    better = np.zeros((m, m), dtype=bool)
    if k < 0:
        return better, float(np.quantile(max_t, 1.0 - alpha))
    crit = float(np.sort(max_t)[::-1][min(k, rounds - 1)])
    iu = np.triu_indices(m, k=1)
    d = rb[iu[0]] - rb[iu[1]]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_lo = d / sd_hi[iu]
        t_hi = np.where(sd_lo[iu] > 0.0, d / sd_lo[iu], np.inf)
    sure = t_lo > crit * (1.0 + 1e-9)
    unsure = np.flatnonzero(~sure & (t_hi >= crit * (1.0 - 1e-9)) & (d > 0.0))
    _, _, t_exact = exact_pairs(rb, sb, iu[0][unsure], iu[1][unsure])
    sure[unsure] = t_exact > crit
    better[iu[0][sure], iu[1][sure]] = True
    return better, float(np.quantile(max_t, 1.0 - alpha))


def _close(better: np.ndarray) -> np.ndarray:
    """Transitive closure of an upper-triangular relation (board positions)."""
    rel = better.copy()
    while True:
        f = rel.astype(np.float32)
        nxt = rel | ((f @ f) > 0.5)
        if np.array_equal(nxt, rel):
            return rel
        rel = nxt


def _merge_unseparated(tiers: np.ndarray, pairs_a: np.ndarray, pairs_b: np.ndarray) -> np.ndarray:
    """Remove every tier boundary crossed by one of the pairs ``(a, b)`` (board positions)."""
    if pairs_a.size == 0:
        return tiers
    ta, tb = tiers[pairs_a], tiers[pairs_b]
    cross = ta != tb
    n = int(tiers.max())
    # boundary k (between tiers k and k + 1) is removed if some pair has ta <= k < tb
    marks = np.zeros(n + 2, dtype=np.int64)
    np.add.at(marks, ta[cross], 1)
    np.add.at(marks, tb[cross], -1)
    removed = np.cumsum(marks)[1 : n + 1] > 0  # boundaries 1..n
    kept = np.r_[0, np.cumsum(~removed[:-1])] if n > 1 else np.zeros(1, dtype=np.int64)
    merged: np.ndarray = 1 + kept[tiers - 1]
    return merged


def near_twins(
    low_a: ArrayLike,
    high_a: ArrayLike,
    low_b: ArrayLike,
    high_b: ArrayLike,
    *,
    ends: int = TWIN_ENDS,
    overlap: float = TWIN_OVERLAP,
) -> np.ndarray:
    """Whether two rank sets are near twins: equal up to the Monte-Carlo error of their ends.

    True iff both ends differ by at most ``ends`` ranks (default
    :data:`~arena.core.defaults.TWIN_ENDS`) and the sets share at least
    ``overlap`` (default :data:`~arena.core.defaults.TWIN_OVERLAP`) of the
    ranks of their union.  Identical sets are always near twins;
    ``ends=0, overlap=1`` is "identical sets only", the rule before issue 41
    (``benchmarks/bench_seed_stability.py --candidates`` compares such rules).  The
    overlap condition keeps a one-rank shift meaningful where a set is short
    (``1-3`` and ``2-4`` share half their union) and ignores it where a set is
    long (``11-29`` and ``12-29``), where it is below the resolution of 1,000
    bootstrap rounds.  Broadcasts over its arguments.
    """
    la, ha, lb, hb = (np.asarray(x, dtype=np.int64) for x in (low_a, high_a, low_b, high_b))
    shared = np.minimum(ha, hb) - np.maximum(la, lb) + 1
    union = np.maximum(ha, hb) - np.minimum(la, lb) + 1
    close = (np.abs(la - lb) <= ends) & (np.abs(ha - hb) <= ends)
    # integer comparison of shared / union >= overlap (to 1e-3), exact for the 0.8 default
    twins: np.ndarray = close & (shared * 1000 >= np.rint(overlap * 1000) * union)
    return twins


def _tiers_dense(
    better: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    ends: int = TWIN_ENDS,
    overlap: float = TWIN_OVERLAP,
) -> np.ndarray:
    """Tiers by board position from a closed "shown better" matrix and the rank sets."""
    m = better.shape[0]
    # every_below[a, p]: position a is shown better than every position >= p
    every_below = np.logical_and.accumulate(better[:, ::-1], axis=1)[:, ::-1]
    starts = np.zeros(m, dtype=bool)
    top = 0
    while top < m:
        starts[top] = True
        later = np.flatnonzero(every_below[top, top + 1 :])
        top = top + 1 + int(later[0]) if later.size else m
    tiers = np.cumsum(starts)
    # near twins, not only identical sets: with identical sets only, a one-rank
    # Monte-Carlo move of one end added or removed a tier (issue 41)
    twins = near_twins(
        low[:, None], high[:, None], low[None, :], high[None, :], ends=ends, overlap=overlap
    )
    a, b = np.nonzero(np.triu(~better, k=1) & twins)
    return _merge_unseparated(tiers, a, b)


def tiers_from_separation(
    better: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    *,
    twin_ends: int = TWIN_ENDS,
    twin_overlap: float = TWIN_OVERLAP,
) -> np.ndarray:
    """Tiers (by board position) from the board's separation and rank sets.

    Walk down the board: the top model leads tier 1, and its tier runs until
    the first position from which the leader is shown better than *every*
    model below; the model there leads the next tier.  Then any boundary
    crossed by two models that the board does not separate and whose rank
    sets are near twins (:func:`near_twins`; identical sets always are) is
    removed.  What every tier then satisfies: **its top
    model is shown better than every model in the tiers below it** (removing a
    boundary keeps this, because the separation is transitive).  A model whose
    rank set is a single rank is separated from every other model, so it is a
    tier of its own.

    Parameters
    ----------
    better : ndarray of bool, shape (M, M)
        ``better[a, b]``: board position ``a`` shown better than ``b``
        (transitively closed, upper triangular).
    low, high : ndarray of int, shape (M,)
        Rank sets by board position.
    twin_ends, twin_overlap : int, float
        The near-twin rule (:func:`near_twins`); the defaults are the board's.

    Returns
    -------
    ndarray of int, shape (M,)
        Tier by board position: ``1, 2, ...`` without gaps.
    """
    b = np.asarray(better, dtype=bool)
    if b.ndim != 2 or b.shape[0] != b.shape[1]:
        raise ArgumentError(f"better must be a square matrix, got shape {b.shape}")
    if int(twin_ends) != twin_ends or twin_ends < 0 or not 0.0 <= twin_overlap <= 1.0:
        raise ArgumentError(
            f"twin_ends must be a whole number >= 0 and twin_overlap in [0, 1], "
            f"got {twin_ends!r} and {twin_overlap!r}"
        )
    if b.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return _tiers_dense(b, np.asarray(low), np.asarray(high), twin_ends, twin_overlap)


def board_inference(
    rating: np.ndarray,
    samples: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    method: str = "auto",
    margin: float = MC_MARGIN,
) -> BoardInference:
    """Simultaneous rank sets, separated pairs and tiers of one board (MRSW).

    Parameters
    ----------
    rating : array_like, shape (M,)
        Point ratings of the ranked models (they fix the board order).
    samples : array_like, shape (rounds, M)
        Their bootstrap ratings (finite), one row per round.
    level : float, default DEFAULT_LEVEL (0.95)
        Simultaneous level: all true ranks lie in their sets, and every pair
        shown better is truly better, with probability ``>= level``
        (asymptotically, up to the bootstrap approximation).
    method : {"auto", "stepdown", "single-step", "bonferroni"}
        ``"auto"``: step-down below :data:`FAST_MIN_WORK` rounds x pairs,
        single-step above (see the module docstring).
    margin : float, default MC_MARGIN
        Binomial standard errors of the rounds' counts a rejection must clear
        (:func:`mc_alpha`); a stored board is read back with the margin its
        snapshot records (0 for snapshots from before issue 41).

    Returns
    -------
    BoardInference

    Notes
    -----
    Deterministic: the same ratings and samples give the same result bit for
    bit, so a board read back from its snapshot (float32 samples) gives the
    verdicts the rebuild stored when the rebuild ran on those same values.
    """
    alpha = 1.0 - check_level(level)
    if method not in INFERENCE_METHODS:
        raise ArgumentError(f"unknown method {method!r}; one of {', '.join(INFERENCE_METHODS)}")
    r, s, order, sb, rb = _sorted_board(rating, samples)
    m = r.size
    rounds = s.shape[0]
    n_pairs = m * (m - 1) // 2
    if method == "auto":
        method = "stepdown" if rounds * n_pairs < FAST_MIN_WORK else "single-step"
    if m == 1:
        one = np.ones(1, dtype=np.int64)
        return BoardInference(
            order, one, one, one, method, float(level), 0, np.nan, 0, np.zeros((1, 1), bool)
        )
    if method == "bonferroni":
        return _bonferroni(r, s, order, alpha, float(level), n_pairs)
    alpha = mc_alpha(alpha, rounds, margin)
    better = None
    critical = np.nan
    if method == "single-step":
        got = _single_step_bounded(rb, sb, alpha)
        if got is not None:
            better, critical = got
    if better is None:
        iu = np.triu_indices(m, k=1)
        rej, whole = _stepdown_rejected(rb, sb, iu[0], iu[1], alpha, stepwise=method == "stepdown")
        better = np.zeros((m, m), dtype=bool)
        better[iu[0][rej], iu[1][rej]] = True
        critical = float(np.quantile(whole, 1.0 - alpha))
    better = _close(better)
    low = np.empty(m, dtype=np.int64)
    high = np.empty(m, dtype=np.int64)
    low[order] = 1 + better.sum(axis=0)
    high[order] = m - better.sum(axis=1)
    tiers = np.empty(m, dtype=np.int64)
    tiers[order] = _tiers_dense(better, low[order], high[order])
    return BoardInference(
        order,
        low,
        high,
        tiers,
        method,
        float(level),
        n_pairs,
        critical,
        int(better.sum()),
        better,
        margin=float(margin),
    )


def _bonferroni(
    r: np.ndarray,
    s: np.ndarray,
    order: np.ndarray,
    alpha: float,
    level: float,
    n_pairs: int,
) -> BoardInference:
    m = r.size
    z = float(special.ndtri(1.0 - alpha / (2.0 * max(n_pairs, 1))))
    sd = s.std(axis=0, ddof=1)
    lo, hi = r - z * sd, r + z * sd
    sorted_lo, sorted_hi = np.sort(lo), np.sort(hi)
    above = m - np.searchsorted(sorted_lo, hi, side="right")  # #{k: lo_k > hi_j}
    below = np.searchsorted(sorted_hi, lo, side="left")  # #{k: hi_k < lo_j}
    low = (1 + above).astype(np.int64)
    high = (m - below).astype(np.int64)
    lo_b, hi_b = lo[order], hi[order]
    low_b, high_b = low[order], high[order]
    # the leader at position top is shown better than every position >= p iff
    # lo_b[top] > max(hi_b[p:]); the suffix maxima are non-increasing
    suffix_hi = np.maximum.accumulate(hi_b[::-1])[::-1]
    starts = np.zeros(m, dtype=bool)
    top = 0
    while top < m:
        starts[top] = True
        # first p > top with suffix_hi[p] < lo_b[top] (suffix_hi is non-increasing)
        p = top + 1 + int(np.searchsorted(-suffix_hi[top + 1 :], -lo_b[top], side="right"))
        top = p
    tiers_b = np.cumsum(starts)
    # unseparated near twins (:func:`near_twins`): their lows differ by at most
    # TWIN_ENDS, so each group of equal lows is compared with itself and the next
    # TWIN_ENDS groups only (never all M^2 pairs)
    by_low = np.argsort(low_b, kind="stable")
    sorted_low = low_b[by_low]
    pa, pb = [], []
    for first in np.flatnonzero(np.r_[True, np.diff(sorted_low) > 0]):
        lo_rank = sorted_low[first]
        end = np.searchsorted(sorted_low, lo_rank, side="right")
        g = by_low[first:end]
        h = by_low[first : np.searchsorted(sorted_low, lo_rank + TWIN_ENDS, side="right")]
        x, y = np.minimum(g[:, None], h[None, :]), np.maximum(g[:, None], h[None, :])
        keep = (x < y) & near_twins(low_b[x], high_b[x], low_b[y], high_b[y])
        keep &= lo_b[x] <= hi_b[y]  # not separated (x is above y on the board)
        pa.append(x[keep])
        pb.append(y[keep])
    if pa:
        tiers_b = _merge_unseparated(tiers_b, np.concatenate(pa), np.concatenate(pb))
    tiers = np.empty(m, dtype=np.int64)
    tiers[order] = tiers_b
    return BoardInference(
        order, low, high, tiers, "bonferroni", level, n_pairs, z, int(above.sum()), None, lo, hi
    )


def separated_pairs(
    rating: np.ndarray,
    samples: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    method: str = "auto",
    margin: float = MC_MARGIN,
) -> np.ndarray:
    """The pairs the board's simultaneous inference separates.

    Returns
    -------
    ndarray of int, shape (K, 2)
        Rows ``(better, worse)`` of model indices, in board order of the better
        model, then of the worse.  Same arguments as :func:`board_inference`.
    """
    inf = board_inference(rating, samples, level=level, method=method, margin=margin)
    if inf.better is not None:
        a, b = np.nonzero(inf.better)
        return np.column_stack([inf.order[a], inf.order[b]]).astype(np.int64)
    o = inf.order
    assert inf.bound_low is not None and inf.bound_high is not None  # Bonferroni method
    lo, hi = inf.bound_low[o], inf.bound_high[o]
    # sorted by position: for each better position a, the positions b with hi_b < lo_a
    out = [(o[a], o[b]) for a in range(o.size) for b in np.flatnonzero(hi < lo[a])]
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def marginal_rank_set(
    rating: np.ndarray,
    samples: np.ndarray,
    j: int,
    *,
    level: float = DEFAULT_LEVEL,
    margin: float = MC_MARGIN,
) -> tuple[int, int]:
    """Marginal rank confidence set of model ``j`` alone (MRSW, step-down).

    The family is the ``2 (M - 1)`` one-sided hypotheses comparing ``j`` with
    every other model; its true rank lies in the set with probability
    ``>= level`` (for this one model, not jointly with the others).

    Returns
    -------
    (low, high) : tuple of int
        Best and worst rank (1 = best).
    """
    r, s, order, sb, rb = _sorted_board(rating, samples)
    alpha = mc_alpha(1.0 - check_level(level), s.shape[0], margin)
    m = r.size
    if not 0 <= j < m:
        raise ArgumentError(f"model index {j} outside 0..{m - 1}")
    if m == 1:
        return 1, 1
    pos = np.empty(m, dtype=np.int64)
    pos[order] = np.arange(m)
    pj = int(pos[j])
    others = np.r_[0:pj, pj + 1 : m]
    a = np.minimum(others, pj)
    b = np.maximum(others, pj)
    rej, _ = _stepdown_rejected(rb, sb, a, b, alpha)
    shown_above = int(np.count_nonzero(rej & (b == pj)))
    shown_below = int(np.count_nonzero(rej & (a == pj)))
    return 1 + shown_above, m - shown_below
