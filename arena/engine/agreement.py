"""Does one board agree with another? The Arena-Hard measures, with intervals.

Pure numpy: two boards' ratings, marginal intervals and bootstrap samples of
the models they share in, the measures out. Li et al., "From Crowdsourced Data
to High-Quality Benchmarks: Arena-Hard and BenchBuilder Pipeline" (2024,
sec. 3) define the measures; their metric script (``arena-hard-auto``) is how
the definitions were read here:

- **Separability with confidence**: the share of model pairs whose intervals
  do not overlap (``min(high) - max(low) <= 0``), over the shared models'
  pairs. Beside it, the share the board separates under its own simultaneous
  inference (:func:`arena.engine.inference.rank_sets.board_inference`): the paper's
  marginal intervals do not control the error over all pairs, the board's
  inference does.
- **Agreement with confidence interval**: over the pairs the *reference*
  separates (intervals do not overlap), +1 when the candidate separates them
  the same way, -1 when it separates them the other way, 0 when its intervals
  overlap; the mean (in [-1, 1]). The paper's script reports
  ``(mean + 1) / 2`` (0.5 for an overlap); the counts are returned so either
  can be read.
- **Pair-rank Brier score**: over the same reference-separated pairs, the
  candidate's probability that the reference's winner is ahead (the share of
  its bootstrap rounds in which it is; a tie counts half) against the
  reference's outcome (1): ``mean((1 - p)^2)``. 0 is confident and right,
  0.25 a coin, 1 confident and wrong.
- **Spearman and Kendall (tau-b)** of the two boards' ratings; intervals by
  pairing bootstrap round ``r`` of one board with round ``r`` of the other
  (the boards' bootstraps are independent resamples of their own battles):
  the basic bootstrap interval ``2 r - q`` of the per-round correlations'
  quantiles ``q``, clipped to [-1, 1] (see :func:`_estimate`).

Per-vote agreement where two sources judged the same battle is
:func:`vote_agreement` (the MT-Bench paper's judge-vs-human agreement, with
and without ties, and Cohen's kappa).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from arena.core.defaults import DEFAULT_LEVEL

__all__ = [
    "Estimate",
    "VoteAgreement",
    "agreement_with_confidence",
    "bootstrap_correlations",
    "interval_separated",
    "kendall_rows",
    "pair_brier",
    "share_ahead",
    "spearman_rows",
    "vote_agreement",
]

#: Column chunk for the pairwise Kendall computation (rounds x pairs per block).
_CHUNK = 4_000_000


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its percentile bootstrap interval (None when undefined)."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman correlation of ``x[r]`` with ``y[r]`` for every row ``r`` (mid-ranks for ties)."""
    rx = stats.rankdata(x, axis=1)
    ry = stats.rankdata(y, axis=1)
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean(axis=1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=1) / den, np.nan)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of ``x[r]`` with ``y[r]`` for every row ``r``."""
    n_rows, k = x.shape
    i, j = np.triu_indices(k, 1)
    s = np.zeros(n_rows)
    tx = np.zeros(n_rows)
    ty = np.zeros(n_rows)
    step = max(1, _CHUNK // max(n_rows, 1))
    for start in range(0, i.size, step):
        a, b = i[start : start + step], j[start : start + step]
        dx = np.sign(x[:, a] - x[:, b])
        dy = np.sign(y[:, a] - y[:, b])
        s += (dx * dy).sum(axis=1)
        tx += (dx == 0).sum(axis=1)
        ty += (dy == 0).sum(axis=1)
    n0 = i.size
    den = np.sqrt((n0 - tx) * (n0 - ty))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, s / den, np.nan)


def _estimate(point: float, per_round: np.ndarray, level: float) -> Estimate:
    """Basic (reverse-percentile) bootstrap interval ``2 r - q``, clipped to [-1, 1].

    Each bootstrap replicate adds noise to both boards, which attenuates the
    correlation: the replicates sit below the estimate as the estimate sits
    below the correlation of the true ratings. The basic interval corrects
    that first-order bias; the plain percentile interval does not (simulated
    coverage 0.70 against 0.86 for a nominal 0.95, 20 models, noise SD a tenth
    of the rating range; see docs/audit.md).
    """
    if not np.isfinite(point):
        return Estimate(None, None, None)
    finite = per_round[np.isfinite(per_round)]
    if finite.size == 0:
        return Estimate(float(point), None, None)
    tail = (1.0 - level) / 2.0
    q_low, q_high = np.quantile(finite, [tail, 1.0 - tail])
    low = max(-1.0, 2.0 * point - q_high)
    high = min(1.0, 2.0 * point - q_low)
    return Estimate(float(point), float(low), float(high))


def bootstrap_correlations(
    rating_ref: ArrayLike,
    rating_cand: ArrayLike,
    samples_ref: np.ndarray | Sequence[Sequence[float]],
    samples_cand: np.ndarray | Sequence[Sequence[float]],
    *,
    level: float = DEFAULT_LEVEL,
) -> tuple[Estimate, Estimate]:
    """Spearman and Kendall tau-b of two boards' ratings, with bootstrap intervals.

    Parameters
    ----------
    rating_ref, rating_cand : array_like, shape (K,)
        Ratings of the K shared models on each board (same model order).
    samples_ref, samples_cand : array_like, shape (R1, K), (R2, K)
        Each board's bootstrap ratings of those models; round ``r`` of one is
        paired with round ``r`` of the other, ``min(R1, R2)`` rounds.
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    (Estimate, Estimate)
        Spearman, Kendall; all None with fewer than 3 models.
    """
    x = np.asarray(rating_ref, dtype=np.float64)
    y = np.asarray(rating_cand, dtype=np.float64)
    if x.size < 3:
        none = Estimate(None, None, None)
        return none, none
    rounds = min(len(samples_ref), len(samples_cand))
    sx = np.asarray(samples_ref, dtype=np.float64)[:rounds]
    sy = np.asarray(samples_cand, dtype=np.float64)[:rounds]
    rho = float(spearman_rows(x[None, :], y[None, :])[0])
    tau = float(kendall_rows(x[None, :], y[None, :])[0])
    return (
        _estimate(rho, spearman_rows(sx, sy), level),
        _estimate(tau, kendall_rows(sx, sy), level),
    )


def interval_separated(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``sep[i, j]``: +1 when i's interval lies above j's, -1 below, 0 when they overlap.

    Overlap as in the paper's script: ``min(high) - max(low) > 0``; intervals
    that only touch count as separated. A missing bound (NaN) is unbounded.
    """
    lo = np.where(np.isnan(low), -np.inf, low)
    hi = np.where(np.isnan(high), np.inf, high)
    overlap = np.minimum(hi[:, None], hi[None, :]) - np.maximum(lo[:, None], lo[None, :]) > 0
    above = lo[:, None] >= hi[None, :]
    below = hi[:, None] <= lo[None, :]
    sep = np.where(above, 1, np.where(below, -1, 0))
    sep[overlap] = 0
    np.fill_diagonal(sep, 0)
    return sep.astype(np.int64)


def share_ahead(samples: np.ndarray, i: int, j: int) -> float:
    """Share of bootstrap rounds in which column ``i`` is ahead of ``j`` (ties count half)."""
    d = samples[:, i] - samples[:, j]
    return float((np.count_nonzero(d > 0) + 0.5 * np.count_nonzero(d == 0)) / d.size)


def agreement_with_confidence(ref_sep: np.ndarray, cand_sep: np.ndarray) -> dict[str, Any]:
    """The paper's agreement: +1 / -1 / 0 over the pairs the reference separates.

    ``ref_sep``, ``cand_sep``: :func:`interval_separated` matrices (or any
    +1/-1/0 matrices) over the same models. Returns ``{"estimate", "pairs",
    "agree", "disagree", "not_separated"}``; ``estimate`` is None when the
    reference separates no pair.
    """
    i, j = np.triu_indices(ref_sep.shape[0], 1)
    r = ref_sep[i, j]
    c = cand_sep[i, j]
    keep = r != 0
    agree = int(np.count_nonzero(keep & (c == r)))
    disagree = int(np.count_nonzero(keep & (c == -r)))
    n = int(keep.sum())
    return {
        "estimate": (agree - disagree) / n if n else None,
        "pairs": n,
        "agree": agree,
        "disagree": disagree,
        "not_separated": n - agree - disagree,
    }


def pair_brier(ref_sep: np.ndarray, cand_samples: np.ndarray) -> tuple[float | None, int]:
    """Pair-rank Brier score of the candidate's bootstrap over the reference-separated pairs.

    Returns ``(score, pairs)``; score None when the reference separates no pair.
    """
    i, j = np.triu_indices(ref_sep.shape[0], 1)
    losses = []
    for a, b in zip(i.tolist(), j.tolist(), strict=True):
        if ref_sep[a, b] == 0:
            continue
        win, lose = (a, b) if ref_sep[a, b] > 0 else (b, a)
        p = share_ahead(cand_samples, win, lose)
        losses.append((1.0 - p) ** 2)
    return (float(np.mean(losses)) if losses else None), len(losses)


@dataclass(frozen=True)
class VoteAgreement:
    """Agreement of two sources' votes on the same battles (MT-Bench paper, sec. 4.2).

    Every pair of votes, one from each source, on the same key (question and
    unordered model pair) counts once. ``with_ties``: both votes the same
    (first model wins, second wins or tie); ``without_ties``: the same among
    the vote pairs where neither is a tie; ``kappa``: Cohen's kappa on the
    3 x 3 table (chance agreement from its margins).
    """

    keys: int
    vote_pairs: int
    with_ties: float | None
    without_ties: float | None
    pairs_without_ties: int
    kappa: float | None
    table: tuple[tuple[int, int, int], ...]


def vote_agreement(
    ref_keys: Iterable[Hashable],
    ref_votes: Iterable[int],
    cand_keys: Iterable[Hashable],
    cand_votes: Iterable[int],
) -> VoteAgreement:
    """Per-vote agreement of two sources on shared keys.

    Parameters
    ----------
    ref_keys, cand_keys : sequence of hashable
        A key per vote (e.g. ``(question, first model, second model)`` with the
        models in a fixed order).
    ref_votes, cand_votes : array_like of int
        Per vote ``0`` (the key's first model wins), ``1`` (second wins), ``2`` (tie).
    """
    ref: dict[Hashable, np.ndarray] = {}
    for k, v in zip(ref_keys, ref_votes, strict=True):
        ref.setdefault(k, np.zeros(3, dtype=np.int64))[int(v)] += 1
    table = np.zeros((3, 3), dtype=np.int64)
    cand: dict[Hashable, np.ndarray] = {}
    for k, v in zip(cand_keys, cand_votes, strict=True):
        if k in ref:
            cand.setdefault(k, np.zeros(3, dtype=np.int64))[int(v)] += 1
    for k, counts in cand.items():
        table += np.outer(ref[k], counts)
    total = int(table.sum())
    decided = int(table[:2, :2].sum())
    if total == 0:
        return VoteAgreement(
            0, 0, None, None, 0, None, tuple((a, b, c) for a, b, c in table.tolist())
        )
    po = float(np.trace(table)) / total
    pe = float((table.sum(axis=1) * table.sum(axis=0)).sum()) / total**2
    kappa = (po - pe) / (1.0 - pe) if pe < 1.0 else None
    return VoteAgreement(
        keys=len(cand),
        vote_pairs=total,
        with_ties=po,
        without_ties=float(table[0, 0] + table[1, 1]) / decided if decided else None,
        pairs_without_ties=decided,
        kappa=kappa,
        table=tuple((int(a), int(b), int(c)) for a, b, c in table),
    )
