"""Paired bootstrap statistics over all pairs of a board, and step-down max-t.

The tier rules (:mod:`arena.engine.inference.tiers`) judge every pair of board
positions by the bootstrap distribution of the rating difference
``samples[:, a] - samples[:, b]``, which keeps the correlation of the two
estimates that the two marginal intervals throw away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special

__all__ = [
    "PValues",
    "PairStats",
    "exact_pairs",
    "maxt_stepdown",
    "pair_stats",
    "raw_pvalues",
    "suffix_counts",
]

PValues = Literal["percentile", "normal"]

# Largest temporary (rounds x pairs) block of differences, in elements.  The
# paired statistics are computed one board row at a time and, for very many
# rounds, in column chunks, so memory stays O(rounds * M + M^2) and never
# O(rounds * M^2).
_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class PairStats:
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


def pair_stats(rating_b: np.ndarray, samples_b: np.ndarray, pvalues: PValues) -> PairStats:
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
    return PairStats(p_raw=p_raw, t_obs=t_obs, centre=centre_all, sd=sd_all, max_t=max_t)


def maxt_stepdown(
    samples_b: np.ndarray, iu: tuple[np.ndarray, np.ndarray], st: PairStats
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
    if f - k0:
        counts[k0:] = suffix_counts(samples_b, a_idx, b_idx, centre, safe_sd, pos, t_rest)
    p = np.maximum.accumulate((1.0 + counts) / (rounds + 1.0))
    out = np.empty(f)
    out[desc] = np.minimum(p, 1.0)
    return out


def suffix_counts(
    samples_b: np.ndarray,
    a_idx: np.ndarray,
    b_idx: np.ndarray,
    centre: np.ndarray,
    safe_sd: np.ndarray,
    pos: np.ndarray,
    t: np.ndarray,
) -> np.ndarray:
    """Per step ``k`` (pairs in t-descending order), the rounds whose largest studentised
    deviation over steps ``k ..`` of these pairs reaches ``t[k]``.

    ``safe_sd`` is the bootstrap SD where ``pos`` (positive), else 1; such pairs
    deviate by 0.
    """
    rounds = samples_b.shape[0]
    n = t.size
    counts = np.zeros(n, dtype=np.int64)
    # Pairs x rounds layout: gathering whole rows of the transposed samples
    # and accumulating along axis 0 both run over contiguous memory.
    by_model = np.ascontiguousarray(samples_b.T)
    centre, safe_sd, t = centre[:, None], safe_sd[:, None], t[:, None]
    # Rounds are processed in chunks so the pairs x rounds block stays bounded.
    step = max(1, _CHUNK_ELEMENTS // max(n, 1))
    for r0 in range(0, rounds, step):
        block = by_model[:, r0 : r0 + step]
        dev = block[a_idx] - block[b_idx]
        dev -= centre
        np.abs(dev, out=dev)
        dev /= safe_sd
        dev[~pos] = 0.0
        # suffix[k] = max deviation over steps k..F, per round
        suffix = np.maximum.accumulate(dev[::-1], axis=0)[::-1]
        counts += np.count_nonzero(suffix >= t, axis=1)
    return counts


def exact_pairs(
    rating_b: np.ndarray, samples_b: np.ndarray, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre, SD and t of the pairs ``(a[i], b[i])`` (board positions, ``a < b``),
    bit for bit those of :func:`pair_stats` on the same ``samples_b``.

    The sums over rounds are NumPy's, whose order follows the memory layout: a
    block whose rounds are contiguous (``samples_b`` column-major, as
    ``samples[:, order]`` always is) is summed pairwise column by column; a
    row-major ``(rounds, w)`` block is summed round by round when ``w >= 2`` but a
    single column pairwise.  So the differences are laid out here as
    :func:`pair_stats` lays them out, and in the row-major case a pair it met alone
    in its chunk is computed alone here too.
    """
    rounds, m = samples_b.shape
    n = a.size
    centre, sd = np.empty(n), np.empty(n)
    by_rounds = samples_b.strides[0] < samples_b.strides[1]
    width = max(1, _CHUNK_ELEMENTS // rounds)
    c0 = a + 1 + (b - a - 1) // width * width
    alone = np.zeros(n, dtype=bool) if by_rounds else np.minimum(m, c0 + width) - c0 == 1
    together = np.flatnonzero(~alone)
    step = max(2, _CHUNK_ELEMENTS // rounds)
    by_model = samples_b.T
    for i0 in range(0, together.size, step):
        sel = together[i0 : i0 + step]
        cols = np.r_[sel, sel] if sel.size == 1 else sel
        if by_rounds:
            # rows of the transpose are contiguous: gather them, and read the
            # (pairs, rounds) block transposed, i.e. column-major as pair_stats saw it
            d = by_model[a[cols]]
            d -= by_model[b[cols]]
            d = d.T
        else:
            d = np.empty((rounds, cols.size))
            np.subtract(samples_b[:, a[cols]], samples_b[:, b[cols]], out=d)
        mean = d.mean(axis=0, keepdims=True)
        centre[sel] = mean[0, : sel.size]
        # np.std computes this same mean first; given it, it skips that pass
        sd[sel] = d.std(axis=0, ddof=1, mean=mean)[: sel.size]
    for i in np.flatnonzero(alone):
        d = samples_b[:, a[i] : a[i] + 1] - samples_b[:, b[i] : b[i] + 1]
        centre[i] = d.mean(axis=0)[0]
        sd[i] = d.std(axis=0, ddof=1)[0]
    est = rating_b[a] - rating_b[b]
    pos = sd > 0.0
    t = np.where(pos, est / np.where(pos, sd, 1.0), np.where(est > 0.0, np.inf, 0.0))
    return centre, sd, t


def raw_pvalues(
    rating_b: np.ndarray, samples_b: np.ndarray, a: np.ndarray, b: np.ndarray, pvalues: PValues
) -> np.ndarray:
    """The raw p-values of :func:`pair_stats` for the pairs ``(a[i], b[i])`` alone."""
    rounds = samples_b.shape[0]
    if pvalues == "percentile":
        n_le = np.count_nonzero(samples_b[:, a] - samples_b[:, b] <= 0.0, axis=0)
        p = 2.0 * (1.0 + n_le) / (rounds + 1.0)
    else:
        p = 2.0 * special.ndtr(-exact_pairs(rating_b, samples_b, a, b)[2])
    capped: np.ndarray = np.minimum(p, 1.0)
    return capped
