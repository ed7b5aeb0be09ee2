"""Exact multinomial resampling, fast.

Resampling ``N`` battles with replacement and counting them per category is a
``Multinomial(N, p)`` draw.  NumPy's ``Generator.multinomial`` draws one
binomial per category in sequence (~160 ns each); for LMArena-scale tables
(~10^5 categories x 1000 rounds) that alone takes 15 s.  We use the classical
Poisson construction instead, which is exact, not an approximation:

1. draw ``X_q ~ Poisson(lam * p_q)`` independently with ``lam = N - 2 sqrt(N)``;
   given their sum ``S``, ``X`` is ``Multinomial(S, p)`` whatever ``lam`` is;
2. if ``S > N`` (probability ~2%) redraw that round -- conditioning on ``S``
   does not change the conditional law of ``X`` given ``S``;
3. add ``N - S`` (~2 sqrt(N)) further categorical draws from ``p``: the sum of
   independent ``Multinomial(S, p)`` and ``Multinomial(N - S, p)`` is
   ``Multinomial(N, p)``.

The Poisson means are the same in every round, so :class:`PoissonTable`
samples them by inversion of tabulated CDFs with a guide table (Chen's
cut-point method): one uniform, a guide lookup and on average about one
comparison per variate, and the tables of a category stay in cache while all
rounds of a chunk are drawn.  Tables cover each mean +/- 9 SD (+20 above),
where the omitted tail mass is below 1e-16, i.e. below the resolution of a
double-precision uniform.  Small problems use ``Generator.multinomial``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, pdtr

__all__ = ["PoissonTable", "CategoricalTable", "multinomial_rows", "poisson_mean"]

#: Below this many trials the plain sequential multinomial is as fast.
_POISSON_MIN_N = 2000
_GROWTH = 1.25  # table widths are bucketed geometrically (<= 25% padding)


class PoissonTable:
    """Exact sampler of independent ``Poisson(mean_q)`` vectors for fixed means.

    Parameters
    ----------
    mean : ndarray, shape (Q,)
        Non-negative Poisson means.
    """

    def __init__(self, mean: np.ndarray):
        mean = np.asarray(mean, dtype=np.float64)
        self.q = mean.size
        pos = np.flatnonzero(mean > 0)
        lam = mean[pos]
        sd = np.sqrt(lam)
        k0 = np.maximum(np.floor(lam - 9.0 * sd - 5.0), 0.0).astype(np.int64)
        width = (np.ceil(lam + 9.0 * sd + 20.0).astype(np.int64) - k0 + 1) if pos.size else np.zeros(0, np.int64)
        edges = [8]
        while pos.size and edges[-1] < width.max():
            edges.append(int(np.ceil(edges[-1] * _GROWTH)))
        bucket = np.searchsorted(edges, width)
        self.buckets = []
        for bi in np.unique(bucket):
            sel = np.flatnonzero(bucket == bi)
            self.buckets.append(self._build(pos[sel], lam[sel], k0[sel], edges[bi]))

    @staticmethod
    def _build(idx, lam, k0, w):
        qb = idx.size
        steps = np.arange(1, w)
        # pmf by the recurrence p(k) = p(k-1) * lam / k from the left edge k0
        ratio = lam[:, None] / (k0[:, None] + steps[None, :])
        log_p0 = k0 * np.log(lam) - lam - gammaln(k0 + 1.0)
        pmf = np.empty((qb, w))
        pmf[:, 0] = np.exp(log_p0)
        pmf[:, 1:] = pmf[:, :1] * np.cumprod(ratio, axis=1)
        below = np.where(k0 > 0, pdtr(np.maximum(k0 - 1, 0), lam), 0.0)
        cdf = np.minimum(below[:, None] + np.cumsum(pmf, axis=1), 1.0)
        cdf[:, -1] = 1.0  # the omitted tail (< 1e-16) goes to the last entry
        # guide[q, j] = #{i : cdf[q, i] < j / w} computed conservatively (never
        # above the true start), so the upward search below stays exact
        cut = np.minimum(np.floor(cdf * (w * (1.0 + 1e-12))).astype(np.int64), w)
        hist = np.bincount((np.arange(qb)[:, None] * (w + 1) + cut).ravel(), minlength=qb * (w + 1))
        cum = np.cumsum(hist.reshape(qb, w + 1), axis=1)
        # one spare guide entry per row absorbs u * w rounding up to w
        guide = np.zeros((qb, w + 1), dtype=np.int64)
        guide[:, 1:w] = cum[:, : w - 1]
        guide[:, w] = guide[:, w - 1]
        base = np.arange(qb, dtype=np.int64) * w
        guide += base[:, None]
        return idx, (k0 - base)[:, None], w, cdf.ravel(), guide.ravel(), (np.arange(qb, dtype=np.int64) * (w + 1))[:, None]

    def sample(self, rng: np.random.Generator, rounds: int) -> np.ndarray:
        """Draw ``rounds`` vectors; returns float64 array of shape (rounds, Q) (integer values)."""
        out = np.zeros((self.q, rounds))
        for idx, shift, w, cdf, guide, gbase in self.buckets:
            u = rng.random((idx.size, rounds))
            cell = (u * w).astype(np.int64)
            cell += gbase
            pos = guide[cell].ravel()
            uf = u.ravel()
            # inversion: smallest i with cdf[i] > u, searching up from the guide
            act = np.flatnonzero(cdf[pos] <= uf)
            while act.size:
                pos[act] += 1
                act = act[cdf[pos[act]] <= uf[act]]
            pos = pos.reshape(idx.size, rounds)
            pos += shift  # flat table position -> Poisson count
            out[idx] = pos
        return out.T


class CategoricalTable:
    """Guide-table sampler of one categorical distribution (the remainder draws)."""

    def __init__(self, p: np.ndarray):
        cdf = np.cumsum(np.asarray(p, dtype=np.float64))
        cdf /= cdf[-1]
        cdf[-1] = 1.0
        self.q = cdf.size
        self.cdf = cdf
        # conservative guide (never beyond the answer), as in PoissonTable
        cut = np.minimum(np.floor(cdf * (self.q * (1.0 + 1e-12))).astype(np.int64), self.q)
        cum = np.cumsum(np.bincount(cut, minlength=self.q + 1))
        self.guide = np.zeros(self.q + 1, dtype=np.int64)
        self.guide[1 : self.q] = cum[: self.q - 1]
        self.guide[self.q] = self.guide[self.q - 1]

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        u = rng.random(size)
        pos = self.guide[(u * self.q).astype(np.int64)]
        act = np.flatnonzero(self.cdf[pos] <= u)
        while act.size:
            pos[act] += 1
            act = act[self.cdf[pos[act]] <= u[act]]
        return pos


def multinomial_rows(
    rng: np.random.Generator,
    n: int,
    p: np.ndarray,
    rounds: int,
    *,
    method: str = "auto",
    table: PoissonTable | None = None,
    categorical: CategoricalTable | None = None,
) -> np.ndarray:
    """Draw ``rounds`` independent ``Multinomial(n, p)`` vectors, shape (rounds, Q), float64.

    The Poisson path returns a transposed view of a C-ordered (Q, rounds) array.

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int
        Number of trials (battles or clusters) per round.
    p : ndarray, shape (Q,)
        Category probabilities (non-negative, summing to 1).
    rounds : int
    method : {"auto", "poisson", "multinomial"}
        ``"multinomial"`` is NumPy's sequential sampler (same law, slower).
    table : PoissonTable, optional
        Pre-built table for the means ``poisson_mean(n, p)`` (reuse across
        calls); without one, NumPy's Poisson sampler is used.
    categorical : CategoricalTable, optional
        Pre-built sampler of ``p`` for the remainder draws.
    """
    n = int(n)
    p = np.asarray(p, dtype=np.float64)
    q = p.size
    if method == "auto":
        method = "poisson" if n >= _POISSON_MIN_N and q > 1 else "multinomial"
    if method == "multinomial" or q <= 1 or n == 0:
        return rng.multinomial(n, p, size=rounds).astype(np.float64)
    if method != "poisson":
        raise ValueError(f"unknown sampling method {method!r}")
    # work in (Q, rounds) layout: the caller's sparse products consume counts.T
    if table is None:
        # few rounds: building tables would cost more than it saves
        mean = poisson_mean(n, p)[:, None]

        def draw(k: int) -> np.ndarray:
            return rng.poisson(mean, size=(q, k)).astype(np.float64)
    else:

        def draw(k: int) -> np.ndarray:
            return table.sample(rng, k).T
    xt = draw(rounds)
    s = xt.sum(axis=0)  # exact: integer-valued doubles far below 2**53
    bad = np.flatnonzero(s > n)
    while bad.size:
        xt[:, bad] = draw(bad.size)
        s[bad] = xt[:, bad].sum(axis=0)
        bad = bad[s[bad] > n]
    rem = (n - s).astype(np.int64)
    cat = (categorical or CategoricalTable(p)).sample(rng, int(rem.sum()))
    row = np.repeat(np.arange(rounds), rem)
    xt += np.bincount(cat * rounds + row, minlength=q * rounds).reshape(q, rounds)
    return xt.T


def poisson_mean(n: int, p: np.ndarray) -> np.ndarray:
    """Poisson means of step 1 of the construction: ``(n - 2 sqrt(n)) * p``."""
    return max(n - 2.0 * np.sqrt(n), 0.0) * np.asarray(p, dtype=np.float64)
