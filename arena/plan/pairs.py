"""`arena plan` on boards of thousands of models: every pair's weight, a block at a time.

:func:`arena.plan.weights.pair_weights` builds all ``P = M(M-1)/2`` pairs of the
planned models at once (and, for ``rule="tiers"``, an ``R x P`` array of
bootstrap differences): at 10,000 ranked models that is 50M pairs and, with
1000 rounds, 400 GB. Here the pairs are visited in blocks of their usual
order (``numpy.triu_indices``), so memory is O(blocks + M) whatever ``M``:

* the weights are the formulas of :mod:`arena.plan.weights`, element by element, so
  each pair's weight is the same float as there;
* the total that turns weights into probabilities is summed in exactly the
  order of ``numpy.sum`` over all the weights (its pairwise summation, split
  where numpy splits it), so probabilities are the same floats too;
* the listing keeps the ``top`` most probable pairs only (a running cut: a
  block's pairs below the current ``top``-th largest weight cannot be among
  them), and draws pick a row by its total, then a pair in that row.

So where :func:`arena.plan.weights.pair_weights` can run, :func:`plan_pairs` gives its
output, bit for bit. The one exception is ``rule="tiers"`` on boards where
``R x P`` exceeds :data:`DIRECT_SE_MAX` (where ``pair_weights`` would need
``R x P x 8`` bytes): there each pair's bootstrap SE comes from the
covariance of the two models' samples (one matrix product per block) instead
of the standard deviation of their differences -- the same number to ~1e-12
relative, not the same float. The probabilities' total then differs from the
differences' in the last digits; the listing stays exact: every pair carries
a bound on its rounding (``_Board._bound``), the cut keeps every pair whose
upper bound reaches the ``top``-th lower bound, and the kept pairs' weights
are recomputed from the differences (and checked against their bounds).

The time is still O(P) (paper) or O(R P) (tiers, in BLAS): every pair carries
weight in these rules (an unplayed pair's is ``sqrt(p(1-p))`` times a
constant, ``e^(-|d|/2)`` for a difference of ``d`` logits), so no pair can be
left out without changing every probability; on the synthetic 10k board
(ratings N(0, 1) logits) the farthest pairs still weigh ~1% of the closest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, ndtri

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_PLAN_RULE
from arena.core.errors import ArgumentError
from arena.engine.scale import SCALE
from arena.plan.weights import RULES, UNPLAYED, PairPlan

__all__ = ["PlanPairs", "plan_pairs", "draw_streamed", "DIRECT_SE_MAX", "BLOCK"]

#: Pairs per block (paper rule, and tiers from the covariance).
BLOCK = 1 << 20
#: Tiers: bootstrap differences per block when the SE comes from them.
DIRECT_BLOCK = 1 << 23
#: Tiers: above this many samples x pairs (1000 rounds x ~1M pairs: ~8 s in blocks), the SE
#: comes from the covariance.
DIRECT_SE_MAX = 1 << 30
#: numpy's pairwise summation adds blocks of this many elements in one loop.
_PW_BLOCK = 128
#: Listing cut: a weight this close below the ``top``-th is kept (ties in probability).
_EXACT_MARGIN = 1 - 1e-9


@dataclass(frozen=True)
class PlanPairs:
    """The listed pairs of a plan and what they are out of.

    Attributes
    ----------
    plan : PairPlan
        The listed pairs in :func:`numpy.triu_indices` order over the planned
        models (all of them, or the ``top`` most probable).
    n_pairs : int
        Pairs of planned models.
    total : float
        Sum of all pairs' weights (the probabilities' denominator).
    se_from : str
        ``"differences"`` or ``"covariance"`` (tiers), ``""`` (paper).
    """

    plan: PairPlan
    n_pairs: int
    total: float
    se_from: str


#: battles per pair, (M, M): a dense array or a scipy sparse matrix
PairBattles: TypeAlias = "np.ndarray | sp.spmatrix"
#: a block of pairs: (first flat index, a, b, battles, weight, h) -> None
Visit = Callable[[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float | np.ndarray], None]


class _Board:
    """The planned models' ratings, samples and pair counts, by position."""

    def __init__(
        self,
        rating: np.ndarray,
        samples: np.ndarray,
        pair_battles: PairBattles,
        models: np.ndarray | None,
        rule: str,
        level: float,
        direct_se_max: int,
    ) -> None:
        if rule not in RULES:
            raise ArgumentError(f"rule must be one of {RULES}, got {rule!r}")
        models = np.arange(rating.size) if models is None else np.asarray(models)
        if models.size < 2:
            raise ArgumentError("at least two models are needed to plan battles")
        self.models = models
        self.m = m = int(models.size)
        self.n_pairs = m * (m - 1) // 2
        self.rating = np.asarray(rating)[models]
        self.rule = rule
        self.c = float(ndtri(0.5 + level / 2))
        # flat index of each row's first pair (row a holds pairs (a, a+1) .. (a, m-1))
        a = np.arange(m + 1, dtype=np.int64)
        self.offset = a * m - a * (a + 1) // 2
        # played pairs (upper triangle, by position) as sorted flat keys a*m + b
        counts = sp.coo_matrix(sp.csr_matrix(pair_battles)[models][:, models])
        upper = counts.row < counts.col
        keys = counts.row[upper].astype(np.int64) * m + counts.col[upper]
        order = np.argsort(keys)
        self.keys, self.battles = keys[order], counts.data[upper][order].astype(np.float64)
        self.se_from = ""
        self.block = BLOCK
        if rule == "tiers":
            self.samples = np.asarray(samples)[:, models]
            r = self.samples.shape[0]
            if r * self.n_pairs <= direct_se_max:
                self.se_from = "differences"
                self.block = max(_PW_BLOCK, DIRECT_BLOCK // max(r, 1))
            else:
                self.se_from = "covariance"
                xc = self.samples - self.samples.mean(axis=0)
                self.centred = np.ascontiguousarray(xc)
                self.var = np.einsum("ij,ij->j", xc, xc) / (r - 1)
                self.sd = np.sqrt(self.var)
                self.r = r
                self.xmax = float(np.max(np.abs(self.samples))) if self.samples.size else 0.0

    def segments(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows and column ranges of the flat pairs ``lo .. hi-1``."""
        off = self.offset
        first = int(np.searchsorted(off, lo, side="right")) - 1
        last = int(np.searchsorted(off, hi - 1, side="right")) - 1
        rows = np.arange(first, last + 1, dtype=np.int64)
        starts = rows + 1 + np.maximum(lo - off[rows], 0)
        ends = rows + 1 + np.minimum(hi - off[rows], self.m - rows - 1)
        return rows, starts, ends

    def weights(
        self, rows: np.ndarray, starts: np.ndarray, ends: np.ndarray, *, se_from: str | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float | np.ndarray]:
        """Positions ``a, b``, battles and weight of every pair in the segments, in flat
        order, and ``h``: the weight from the differences lies within a factor
        ``exp(+-h)`` of this one (0 unless the SEs come from the covariance)."""
        length = ends - starts
        a = np.repeat(rows, length)
        first = np.cumsum(length) - length
        b = np.arange(a.size, dtype=np.int64) - np.repeat(first - starts, length)
        d = self.rating[a] - self.rating[b]
        p = expit(d / SCALE)
        s2 = p * (1 - p)
        key = a * self.m + b
        at = np.minimum(np.searchsorted(self.keys, key), max(self.keys.size - 1, 0))
        played = self.keys[at] == key if self.keys.size else np.zeros(key.size, bool)
        battles = np.where(played, self.battles[at] if self.keys.size else 0.0, 0.0)
        n = np.maximum(battles, UNPLAYED)
        w = np.sqrt(s2 / n) - np.sqrt(s2 / (n + 1))
        h: float | np.ndarray = 0.0
        if self.rule == "tiers":
            covariance = (se_from or self.se_from) == "covariance"
            if covariance:
                se2 = self._var_covariance(rows, starts, a, b)
                se = np.sqrt(np.maximum(se2, 0.0))
            else:
                se = (self.samples[:, a] - self.samples[:, b]).std(axis=0, ddof=1)
            z = np.abs(d) / np.maximum(se, 1e-9)
            w = w * np.exp(-0.5 * (z - self.c) ** 2)
            if covariance:
                h = self._bound(a, b, d, se2, z)
        return a, b, battles, w, h

    def _var_covariance(
        self, rows: np.ndarray, starts: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> np.ndarray:
        """Variance of each pair's difference from one product of the rows' and columns'
        samples (``rows`` ascending and distinct)."""
        lo = int(starts.min()) if starts.size else 0
        xc = self.centred
        cov = (xc[:, rows].T @ xc[:, lo:]) / (xc.shape[0] - 1)
        var: np.ndarray = self.var[a] + self.var[b] - 2 * cov[np.searchsorted(rows, a), b - lo]
        return var

    def _bound(
        self, a: np.ndarray, b: np.ndarray, d: np.ndarray, se2: np.ndarray, z: np.ndarray
    ) -> np.ndarray:
        """``h`` of :meth:`weights` for covariance SEs.

        Both ways of computing the variance of a difference err by at most about
        ``R u (sd_a + sd_b)^2`` (sums of ``R`` products, ``u`` the unit roundoff;
        the differences of samples of size ``|x|`` add ``u |x| (sd_a + sd_b)``):
        ``delta`` takes eight times that. Within ``se2 +- delta`` the critical
        ratio ``z`` lies in ``[zlo, zhi]``, and the weight's factor
        ``exp(-(z - c)^2 / 2)`` moves by at most ``exp(h)``, ``h`` half the
        largest change of the (convex) ``(z - c)^2`` there: at an end.
        """
        u = np.finfo(float).eps / 2
        spread = self.sd[a] + self.sd[b]
        delta = 8 * u * (self.r * spread**2 + self.xmax * spread)
        with np.errstate(divide="ignore", invalid="ignore"):
            lo2, hi2 = se2 - delta, se2 + delta
            zlo = np.abs(d) / np.maximum(np.sqrt(hi2), 1e-9)
            zhi = np.where(lo2 > 1e-18, np.abs(d) / np.sqrt(np.maximum(lo2, 1e-18)), np.inf)
            f = (z - self.c) ** 2
            h = 0.5 * np.maximum(np.abs((zlo - self.c) ** 2 - f), np.abs((zhi - self.c) ** 2 - f))
        # other steps round the two ways alike but for a few ulps
        bound: np.ndarray = np.where(np.isfinite(h), h + 1e-12, np.inf)
        return bound


def _stream(board: _Board, visit: Visit) -> float:
    """Visit every pair's weight in blocks; their sum, added as ``numpy.sum`` would.

    ``numpy.sum`` of a contiguous float64 array halves it recursively (at a
    multiple of 8) down to blocks of 128; a sub-array's sum follows the same
    recursion. So summing blocks of at most ``board.block`` pairs with
    ``numpy.sum`` and adding them up along numpy's split points gives the sum
    of the whole array, bit for bit.
    """

    def total(lo: int, n: int) -> float:
        if n <= board.block:
            rows, starts, ends = board.segments(lo, lo + n)
            a, b, battles, w, h = board.weights(rows, starts, ends)
            visit(lo, a, b, battles, w, h)
            block: float = np.sum(w)
            return block
        half = n // 2
        half -= half % 8
        return total(lo, half) + total(lo + half, n - half)

    return float(total(0, board.n_pairs))


def plan_pairs(
    rating: np.ndarray,
    samples: np.ndarray,
    pair_battles: PairBattles,
    *,
    models: np.ndarray | None = None,
    rule: str = DEFAULT_PLAN_RULE,
    level: float = DEFAULT_LEVEL,
    top: int | None = None,
    direct_se_max: int = DIRECT_SE_MAX,
) -> PlanPairs:
    """The plan's ``top`` most probable pairs (all with ``top=None``), in blocks.

    Parameters
    ----------
    rating, samples, models, rule, level
        As in :func:`arena.plan.weights.pair_weights`.
    pair_battles : ndarray or scipy.sparse matrix, shape (M, M)
        Battles played per unordered pair (symmetric; sparse at scale).
    top : int, optional
        List only this many pairs: the most probable, ties in probability
        broken by pair order as a stable sort of the full listing would.
    direct_se_max : int
        Tiers: largest ``samples x pairs`` whose SE comes from the differences.

    Returns
    -------
    PlanPairs
        ``plan`` equals ``pair_weights(...)`` (``top=None``), or its ``top``
        pairs of largest probability (``top``), as the same floats -- except
        for tiers beyond ``direct_se_max`` (module docstring).
    """
    board = _Board(rating, samples, pair_battles, models, rule, level, direct_se_max)
    keep = _Keep(top)
    total = _stream(board, keep.visit)
    flat, a, b, battles, w, lower, upper = keep.result()
    if board.se_from == "covariance":
        # the kept pairs' weights from their differences, as pair_weights has them
        w = _weights_from_differences(board, a, b)
        if np.any((w < lower) | (w > upper)):
            raise ArgumentError(
                "tiers: a pair's SE from the covariance of the samples is outside its "
                "rounding bound; plan a smaller board (all pairs from the differences)"
            )
    prob = w / total if total > 0 else np.full(w.size, 1.0 / board.n_pairs)
    if top is not None and flat.size > top:
        chosen = np.sort(np.lexsort((flat, -prob))[:top])
        a, b, battles, prob = (x[chosen] for x in (a, b, battles, prob))
    plan = PairPlan(board.models[a], board.models[b], prob, battles, rule)
    return PlanPairs(plan, board.n_pairs, total, board.se_from)


def _weights_from_differences(board: _Board, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Tiers weights of the pairs ``(a[k], b[k])``, SEs from the samples' differences,
    in chunks of at most ``DIRECT_BLOCK`` differences (never of one pair alone: numpy
    reduces a single column in another order)."""
    step = max(2, DIRECT_BLOCK // max(board.samples.shape[0], 1))
    out = np.empty(a.size)
    lo = 0
    while lo < a.size:
        hi = min(lo + step, a.size)
        start = lo if hi - lo > 1 or lo == 0 else lo - 1
        # one segment per pair, [b, b + 1), keeps their order
        w = board.weights(a[start:hi], b[start:hi], b[start:hi] + 1, se_from="differences")[3]
        out[lo:hi] = w[lo - start :]
        lo = hi
    return out


class _Keep:
    """Collects the listed pairs: all, or those that can still be among the ``top``.

    Each pair's weight is known within ``[lower, upper]`` (one value unless the
    SEs come from the covariance). The ``top``-th largest ``lower`` seen so far
    is a lower bound of the final ``top``-th weight, so a pair whose ``upper``
    is below it (less a few ulps: ties in probability) is never listed.
    """

    def __init__(self, top: int | None):
        self.top = top
        self.parts: list[tuple[np.ndarray, ...]] = []
        self.size = 0
        self.floor = 0.0

    def visit(
        self,
        lo: int,
        a: np.ndarray,
        b: np.ndarray,
        battles: np.ndarray,
        w: np.ndarray,
        h: float | np.ndarray,
    ) -> None:
        lower, upper = (w, w) if np.isscalar(h) and h == 0 else (w * np.exp(-h), w * np.exp(h))
        cols: tuple[np.ndarray, ...] = (
            lo + np.arange(w.size, dtype=np.int64),
            a,
            b,
            battles,
            w,
            lower,
            upper,
        )
        if self.top is not None:
            cols = tuple(x[upper >= self.floor] for x in cols)
        self.parts.append(cols)
        self.size += cols[-1].size
        if self.top is not None and self.size > 4 * self.top + BLOCK:
            self._cut()

    def _cut(self) -> None:
        top = self.top
        assert top is not None  # only a list of the top pairs is cut
        cols = [np.concatenate(x) for x in zip(*self.parts, strict=True)]
        lower, upper = cols[-2], cols[-1]
        if lower.size > top:
            kth = np.partition(lower, lower.size - top)[lower.size - top]
            self.floor = max(self.floor, kth * _EXACT_MARGIN)
            cols = [x[upper >= self.floor] for x in cols]
        self.parts = [tuple(cols)]
        self.size = cols[-1].size

    def result(self) -> tuple[np.ndarray, ...]:
        if self.top is not None:
            self._cut()
        return tuple(np.concatenate(x) for x in zip(*self.parts, strict=True))


def draw_streamed(
    rating: np.ndarray,
    samples: np.ndarray,
    pair_battles: PairBattles,
    n: int,
    *,
    seed: int,
    models: np.ndarray | None = None,
    rule: str = DEFAULT_PLAN_RULE,
    level: float = DEFAULT_LEVEL,
    direct_se_max: int = DIRECT_SE_MAX,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` battles drawn from the plan without holding all pairs.

    Each draw picks a row ``a`` (a model, by the total weight of its pairs
    ``(a, b > a)``), then a pair in that row by weight: the same distribution
    as :func:`arena.plan.weights.draw_pairs` over all pairs, not the same random
    stream. The shown order is a fair coin; the draws come in random order.
    """
    board = _Board(rating, samples, pair_battles, models, rule, level, direct_se_max)
    row_total = np.zeros(board.m)

    def visit(
        lo: int,
        a: np.ndarray,
        b: np.ndarray,
        battles: np.ndarray,
        w: np.ndarray,
        h: float | np.ndarray,
    ) -> None:
        row_total[:] += np.bincount(a, weights=w, minlength=board.m)

    _stream(board, visit)
    rng = np.random.default_rng(seed)
    if row_total.sum() > 0:
        rows = rng.choice(board.m, size=n, p=row_total / row_total.sum())
    else:
        rows = rng.choice(board.m - 1, size=n, p=np.arange(board.m - 1, 0, -1) / board.n_pairs)
    picked, count = np.unique(rows, return_counts=True)
    firsts, seconds = [], []
    start = 0
    while start < picked.size:
        # rows of one batch hold at most a block of pairs (their weights in one call),
        # and rows x the first row's width (the covariance product) at most four
        length = board.m - picked[start:] - 1
        fit = int(np.searchsorted(np.cumsum(length), board.block, "right"))
        stop = start + max(1, min(fit, 4 * board.block // max(int(length[0]), 1)))
        batch = picked[start:stop]
        w = board.weights(batch, batch + 1, np.full(batch.size, board.m))[3]
        bounds = np.r_[0, np.cumsum(board.m - batch - 1)]
        for k, row in enumerate(batch):
            wr = w[bounds[k] : bounds[k + 1]]
            p = wr / wr.sum() if wr.sum() > 0 else None
            cols = rng.choice(wr.size, size=int(count[start + k]), p=p)
            firsts.append(np.full(cols.size, row))
            seconds.append(row + 1 + cols)
        start = stop
    i, j = np.concatenate(firsts), np.concatenate(seconds)
    flip = rng.random(n) < 0.5
    order = rng.permutation(n)
    first = np.where(flip, j, i)[order]
    second = np.where(flip, i, j)[order]
    return board.models[first], board.models[second]
