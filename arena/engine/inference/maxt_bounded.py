"""Step-down max-t over all pairs of a long board, exactly, from the pairs that matter.

:func:`arena.engine.inference.pairs.pair_stats` forms every pair's bootstrap differences:
``rounds x M (M - 1) / 2`` numbers, 500 million at 1,000 models and 1,000 rounds
(five seconds, with :func:`~arena.engine.inference.pairs.maxt_stepdown`).  Step-down
max-t needs much less:

1. ``max_t[r]``, the largest studentised deviation ``|d*_r - mean d*| / sd(d*)``
   over all pairs in round ``r``: a few pairs per round can hold it;
2. the steps whose ``t`` does not exceed ``max(max_t)`` (the others count 0
   rounds), sorted by ``t``, with exact centres and SDs;
3. per such step ``k``, the rounds where some step ``>= k`` deviates by at least
   ``t_k``: only deviations of at least ``LAMBDA`` can matter to a step with
   ``t_k >= LAMBDA``; a step with ``t_k < LAMBDA`` is reached in every round
   that has such a deviation at or after it; only the last steps (after the last
   such deviation of some round) need every pair's deviation.

Which pairs can deviate by much in a round is bounded cheaply.  With ``z`` the
centred samples, ``v`` the variances, and the Gram matrix ``z'z`` giving every
pair's variance to within a stated rounding bound, a pair's deviation is at
most ``(sqrt(q_a + q_b) + eta) / kappa0`` where ``q_a = z_a^2 / v_a`` and
``kappa0`` bounds ``sd_ab / sqrt(v_a + v_b)`` from below (pairs below it, at most
``M``, are computed in full every round).  Sorting each round's ``q`` lists the
few pairs above a threshold.  Every bound carries a slack of ``1e-9``
(relative) beyond the rounding it covers (~1e-13); whatever a bound admits is
then computed exactly, with the same floating-point operations as
:func:`~arena.engine.inference.pairs.pair_stats` (:func:`~arena.engine.inference.pairs.exact_pairs`),
so the adjusted p-values and ``max_t`` are bit for bit those of the full
computation (``tests/test_tiers_bounded_maxt.py`` compares them).

Below :data:`FAST_MIN_WORK` (rounds x pairs), and for samples the bounds cannot
serve (a model without spread, strongly correlated pairs), :func:`maxt_bounded`
returns None and the caller computes every pair.
"""

from __future__ import annotations

import numpy as np

from arena.engine.inference.pairs import exact_pairs, suffix_counts

__all__ = ["FAST_MIN_WORK", "LAMBDA", "bounded_max_t", "maxt_bounded"]

#: rounds x pairs below which every pair is computed (:func:`maxt_bounded` returns None)
FAST_MIN_WORK = 20_000_000
#: deviation from which a round's pairs are listed for the step-down counts
LAMBDA = 3.5
#: relative slack added to every bound (rounding errors are ~1e-13 at 1,000 rounds)
_SLACK = 1e-9
_U = 2.0**-53
#: below this lower bound of sd_ab / sqrt(v_a + v_b) the pair bound is too loose to use
_MIN_KAPPA = 0.25
#: candidate pairs listed at once (memory)
_BATCH_PAIRS = 4_000_000


class _GiveUp(Exception):
    """The bounds would list too many pairs: compute every pair instead."""


def maxt_bounded(
    rating_b: np.ndarray, samples_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Step-down max-t adjusted p-values of all pairs, and ``max_t`` per round.

    Parameters
    ----------
    rating_b : ndarray, shape (M,)
        Point ratings in board order (descending).
    samples_b : ndarray, shape (rounds, M)
        Bootstrap samples, columns in board order.

    Returns
    -------
    (p_adj, max_t) or None
        ``p_adj`` (M, M) holds pair ``(a, b)``, ``a < b``, in its upper triangle
        (NaN elsewhere), exactly as :func:`~arena.engine.inference.pairs.maxt_stepdown`
        gives it; ``max_t`` as in :class:`~arena.engine.inference.pairs.PairStats`.  None
        when the problem is small or the bounds do not apply.
    """
    rounds, m = samples_b.shape
    if rounds < 3 or m < 3 or rounds * (m * (m - 1) // 2) < FAST_MIN_WORK:
        return None
    if not (np.all(np.isfinite(samples_b)) and np.all(np.isfinite(rating_b))):
        return None
    try:
        b = _Bounds(samples_b)
        low = _LowPairs(b, rating_b, samples_b)
        max_t = _max_t(b, low, rating_b, samples_b)
        return _stepdown(b, low, rating_b, samples_b, max_t), max_t
    except _GiveUp:
        return None


def bounded_max_t(
    rating_b: np.ndarray, samples_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``max_t`` per round (exact) and bounds on every pair's SD, without the step-down.

    For the single-step inference of a long board (:mod:`arena.engine.inference.rank_sets`).

    Returns
    -------
    (max_t, sd_lo, sd_hi) or None
        ``sd_lo <= sd(d*_ab) <= sd_hi`` for every pair of board positions (M x M);
        None when the samples are not finite or the bounds do not apply.
    """
    if not (np.all(np.isfinite(samples_b)) and np.all(np.isfinite(rating_b))):
        return None
    try:
        b = _Bounds(samples_b)
        low = _LowPairs(b, rating_b, samples_b)
        return _max_t(b, low, rating_b, samples_b), b.sd_lo, b.sd_hi
    except _GiveUp:
        return None


class _Bounds:
    """Cheap bounds on every pair's SD and on its per-round deviations."""

    def __init__(self, s: np.ndarray) -> None:
        rounds, m = s.shape
        self.rounds, self.m = rounds, m
        self.z = s - s.mean(axis=0)
        g = self.z.T @ self.z
        gd = np.diag(g).copy()
        self.v = gd / (rounds - 1)
        if not self.v.min() > 0.0:
            raise _GiveUp  # a model without spread: its q is undefined
        scale = float(np.abs(s).max())
        # |fl(d_r - centre) - (z_a - z_b)| <= (4 rounds + 16) u scale; 50x beyond that
        self.xi = 256.0 * (rounds + 5) * _U * scale
        gsum = gd[:, None] + gd[None, :]
        var = (gsum - 2.0 * g) / (rounds - 1)
        # Gram rounding (gamma_rounds on sums of |products|) and the centring offsets xi
        e_var = (
            4.0
            * (
                (rounds + 8) * _U * 8.0 * gsum
                + 2.0 * self.xi * np.sqrt(2.0 * rounds * gsum)
                + rounds * self.xi**2
            )
            / (rounds - 1)
        )
        self.sd_lo = np.sqrt(np.maximum(var - e_var, 0.0)) * (1.0 - _SLACK)
        self.sd_hi = np.sqrt(np.maximum(var + e_var, 0.0)) * (1.0 + _SLACK)
        kappa = self.sd_lo / np.sqrt(self.v[:, None] + self.v[None, :])
        iu = np.triu_indices(m, k=1)
        k_low = min(m, iu[0].size - 1)
        # the M pairs of smallest kappa are computed in every round instead
        self.kappa0 = float(np.partition(kappa[iu], k_low)[k_low]) * (1.0 - _SLACK)
        if self.kappa0 < _MIN_KAPPA:
            raise _GiveUp
        self.is_low = kappa < self.kappa0 / (1.0 - _SLACK)
        self.eta = self.xi / np.sqrt(2.0 * self.v.min())
        self.q = self.z**2 / self.v * (1.0 + _SLACK)
        self.q_order = np.argsort(-self.q, axis=1, kind="stable")
        self.q_sorted = np.take_along_axis(self.q, self.q_order, axis=1)

    def theta2(self, theta: np.ndarray) -> np.ndarray:
        """Per round, the ``q_a + q_b`` below which a pair deviates by less than ``theta``."""
        big = theta * self.kappa0 * (1.0 - _SLACK) - self.eta
        if np.any(big <= 0.0):
            raise _GiveUp
        out: np.ndarray = big**2 * (1.0 - _SLACK)
        return out

    def pairs_above(
        self, theta: np.ndarray, rows: np.ndarray, cap: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(round, a, b)`` (``a < b``) of the pairs, not low, whose deviation in
        round ``rows[i]`` may reach ``theta[i]``; _GiveUp past ``cap`` pairs.

        A pair needs ``q_a + q_b >= theta2``; per round, the models of ``q >=
        theta2 / 2`` are paired with every model of ``q >= theta2 - q_a``.  Both
        counts come from one binary search over the descending rows laid end to
        end (``-q`` plus a row offset); the offsets cost some precision, so every
        count errs upwards by a margin (more pairs listed, none missed).
        """
        qs, th2 = self.q_sorted[rows], self.theta2(theta)
        n_rows, m = qs.shape
        span = 4.0 * (float(qs[:, 0].max(initial=0.0)) + float(th2.max()) + 1.0)
        offset = np.arange(n_rows)[:, None] * span
        keys = (offset - qs).ravel()
        margin = 64.0 * _U * n_rows * span

        # per (row, column) of ``bound``: #{q >= bound} in the row
        def count_at_least(bound: np.ndarray) -> np.ndarray:
            query = offset - np.maximum(bound, 0.0) + margin
            found = np.searchsorted(keys, query.ravel(), side="right").reshape(bound.shape)
            counted: np.ndarray = np.clip(found - np.arange(n_rows)[:, None] * m, 0, m)
            return counted

        k_r = count_at_least((th2 * 0.5 * (1.0 - _SLACK))[:, None])[:, 0]
        k_max = int(k_r.max(initial=0))
        head = qs[:, :k_max]
        n_i = count_at_least((th2[:, None] - head) - _SLACK * (th2[:, None] + head))
        i_ = np.arange(k_max)
        length = np.where(i_ < k_r[:, None], np.maximum(n_i - i_ - 1, 0), 0).ravel()
        total = int(length.sum())
        if total > cap:
            raise _GiveUp
        at = np.repeat(np.arange(length.size), length)
        j = np.arange(total) - np.repeat(np.cumsum(length) - length, length)
        row, i = np.divmod(at, max(k_max, 1))
        j += i + 1
        r = rows[row]
        a, b = self.q_order[r, i], self.q_order[r, j]
        a, b = np.minimum(a, b), np.maximum(a, b)
        keep = ~self.is_low[a, b]
        return r[keep], a[keep], b[keep]

    def dev_range(
        self, r: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the deviation of pair ``(a, b)`` in round ``r``."""
        y = np.abs(self.z[r, a] - self.z[r, b])
        lo = np.maximum(y * (1.0 - _SLACK) - self.xi, 0.0) / self.sd_hi[a, b] * (1.0 - _SLACK)
        hi = (y * (1.0 + _SLACK) + self.xi) / self.sd_lo[a, b] * (1.0 + _SLACK)
        return lo, hi


def _exact_dev(
    s: np.ndarray,
    r: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    centre: np.ndarray,
    sd: np.ndarray,
) -> np.ndarray:
    """The deviation of pair (a, b) in round r, with pair_stats' operations."""
    pos = sd > 0.0
    dev = np.abs((s[r, a] - s[r, b]) - centre) / np.where(pos, sd, 1.0)
    dev[~pos] = 0.0
    out: np.ndarray = dev
    return out


class _LowPairs:
    """The pairs of smallest kappa: exact statistics and every round's deviation."""

    def __init__(self, b: _Bounds, rating_b: np.ndarray, s: np.ndarray) -> None:
        self.a, self.b = np.nonzero(np.triu(b.is_low, k=1))
        self.centre, self.sd, self.t = exact_pairs(rating_b, s, self.a, self.b)
        pos = self.sd > 0.0
        dev = np.abs((s[:, self.a] - s[:, self.b]) - self.centre) / np.where(pos, self.sd, 1.0)
        dev[:, ~pos] = 0.0
        self.dev = dev  # (rounds, n_low)


def _max_t(b: _Bounds, low: _LowPairs, rating_b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Exact ``max_t`` per round: bound, list the pairs that may hold it, compute those."""
    rounds, m = b.rounds, b.m
    rows = np.arange(rounds)
    # a first lower bound: the round's most extreme model against every other
    top = b.q_order[:, 0]
    y = np.abs(b.z[rows, top][:, None] - b.z)
    first = np.maximum(y * (1.0 - _SLACK) - b.xi, 0.0) / b.sd_hi[top] * (1.0 - _SLACK)
    first[rows, top] = 0.0
    best = first.max(axis=1)
    if low.a.size:
        best = np.maximum(best, low.dev.max(axis=1))
    r, a, bb = b.pairs_above(best, rows, cap=max(_BATCH_PAIRS, 8 * rounds * m))
    lo, hi = b.dev_range(r, a, bb)
    np.maximum.at(best, r, lo)
    keep = hi >= best[r]
    r, a, bb = r[keep], a[keep], bb[keep]
    key, inverse = np.unique(a * m + bb, return_inverse=True)
    centre, sd, _ = exact_pairs(rating_b, s, key // m, key % m)
    dev = _exact_dev(s, r, a, bb, centre[inverse], sd[inverse])
    max_t = np.zeros(rounds)
    np.maximum.at(max_t, r, dev)
    if low.a.size:
        np.maximum(max_t, low.dev.max(axis=1), out=max_t)
    return max_t


def _stepdown(
    b: _Bounds, low: _LowPairs, rating_b: np.ndarray, s: np.ndarray, max_t: np.ndarray
) -> np.ndarray:
    """Adjusted p-values (M x M, upper triangle) of step-down max-t."""
    rounds, m = b.rounds, b.m
    top = max_t.max()
    iu = np.triu_indices(m, k=1)
    est = rating_b[iu[0]] - rating_b[iu[1]]
    # pairs whose t may be <= max(max_t): the others are screened (0 rounds reach them)
    t_lo = est / b.sd_hi[iu] * (1.0 - _SLACK)
    maybe = np.flatnonzero((t_lo <= top) & ~b.is_low[iu])
    ua, ub = iu[0][maybe], iu[1][maybe]
    uc, usd, ut = exact_pairs(rating_b, s, ua, ub)
    ua, ub = np.concatenate([ua, low.a]), np.concatenate([ub, low.b])
    uc, usd, ut = (np.concatenate(x) for x in ((uc, low.centre), (usd, low.sd), (ut, low.t)))
    # board position pairs in triu order, then stably by t descending: maxt_stepdown's order
    lin = ua * m + ub
    keep = np.flatnonzero(ut <= top)
    keep = keep[np.argsort(lin[keep], kind="stable")]
    keep = keep[np.argsort(-ut[keep], kind="stable")]
    ua, ub, uc, usd, ut = ua[keep], ub[keep], uc[keep], usd[keep], ut[keep]
    n = ut.size
    neg_t = -ut
    step_of = np.full((m, m), -1, dtype=np.int64)
    step_of[ua, ub] = np.arange(n)
    # deviations >= LAMBDA in each round among these steps: (round, step, deviation)
    part_r: list[np.ndarray] = []
    part_s: list[np.ndarray] = []
    part_d: list[np.ndarray] = []
    chunk = max(1, 200_000 // m)
    for r0 in range(0, rounds, chunk):
        rows = np.arange(r0, min(rounds, r0 + chunk))
        r, a, bb = b.pairs_above(np.full(rows.size, LAMBDA), rows, cap=50 * rows.size * m)
        st = step_of[a, bb]
        inside = st >= 0
        r, a, bb, st = r[inside], a[inside], bb[inside], st[inside]
        dev = _exact_dev(s, r, a, bb, uc[st], usd[st])
        high = dev >= LAMBDA
        part_r.append(r[high])
        part_s.append(st[high])
        part_d.append(dev[high])
    if low.a.size:
        st_low = step_of[low.a, low.b]
        rr, cc = np.nonzero((low.dev >= LAMBDA) & (st_low >= 0)[None, :])
        part_r.append(rr)
        part_s.append(st_low[cc])
        part_d.append(low.dev[rr, cc])
    hr, hs, hd = (np.concatenate(x) for x in (part_r, part_s, part_d))
    counts = _counts(rounds, n, neg_t, hr, hs, hd)
    # Steps with t < LAMBDA: in a round with a deviation >= LAMBDA at step P or later,
    # every such step up to P is reached.  After a round's last one (its tail) the
    # deviations are computed in full, for the rounds grouped by tail length (powers
    # of two: at most twice the work of exact per-round tails).
    j_lambda = int(np.searchsorted(neg_t, -LAMBDA, side="right"))
    last = np.full(rounds, -1, dtype=np.int64)
    np.maximum.at(last, hr, hs)
    tail = n - np.maximum(j_lambda, last + 1)
    width = np.where(tail > 0, 2 ** np.ceil(np.log2(np.maximum(tail, 1))), 0)
    start = np.maximum(n - np.minimum(width, n - j_lambda), j_lambda).astype(np.int64)
    # before its start, a round reaches every step with t < LAMBDA
    reach = np.zeros(n + 1, dtype=np.int64)
    np.add.at(reach, start, 1)
    counts[j_lambda:] = np.cumsum(reach[::-1])[::-1][j_lambda + 1 : n + 1]
    for first in np.unique(start[start < n]):
        rows = np.flatnonzero(start == first)
        pos = usd[first:] > 0.0
        counts[first:] += suffix_counts(
            s[rows],
            ua[first:],
            ub[first:],
            uc[first:],
            np.where(pos, usd[first:], 1.0),
            pos,
            ut[first:],
        )
    p = np.maximum.accumulate((1.0 + counts) / (rounds + 1.0))
    p_adj = np.full((m, m), np.nan)
    p_adj[iu] = min((1.0 + 0) / (rounds + 1.0), 1.0)
    p_adj[ua, ub] = np.minimum(p, 1.0)
    return p_adj


def _counts(
    rounds: int, n: int, neg_t: np.ndarray, hr: np.ndarray, hs: np.ndarray, hd: np.ndarray
) -> np.ndarray:
    """Per step with ``t >= LAMBDA``: the rounds whose largest listed deviation at or
    after the step reaches its ``t`` (the listed deviations are all that can)."""
    diff = np.zeros(n + 1, dtype=np.int64)
    order = np.lexsort((hs, hr))
    hr, hs, hd = hr[order], hs[order], hd[order]
    bounds = np.flatnonzero(np.diff(hr)) + 1
    for st, dv in zip(np.split(hs, bounds), np.split(hd, bounds), strict=True):
        if not st.size:
            continue
        # steps (prev, st[k]] see the suffix maximum from k on; t is non-increasing,
        # so those reaching it are the tail of that range from the first t <= it
        sm = np.maximum.accumulate(dv[::-1])[::-1]
        prev = np.concatenate([[-1], st[:-1]])
        lo = np.maximum(np.searchsorted(neg_t, -sm, side="left"), prev + 1)
        ok = lo <= st
        np.add.at(diff, lo[ok], 1)
        np.add.at(diff, st[ok] + 1, -1)
    counts: np.ndarray = np.cumsum(diff[:n])
    return counts
