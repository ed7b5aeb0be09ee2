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

from arena.core.errors import ArgumentError

__all__ = [
    "PoissonTable",
    "CategoricalTable",
    "multinomial_rows",
    "poisson_mean",
    "resampled_counts",
    "RowResampler",
]

#: Below this many trials the plain sequential multinomial is as fast.
_POISSON_MIN_N = 2000
_GROWTH = 1.25
_LINEAR_STEPS = 3  # upward CDF steps before switching to bisection  # table widths are bucketed geometrically (<= 25% padding)


class PoissonTable:
    """Exact sampler of independent ``Poisson(mean_q)`` vectors for fixed means.

    One inversion table per *distinct* mean: the means of a bootstrap are
    proportional to integer battle counts, so a table with 10^4-10^5 categories
    needs only a few hundred tables (a cluster bootstrap needs one), and
    building them costs far less than the draws they speed up.  All tables
    live in flat arrays, so a draw of every category x round is a handful of
    whole-array passes with no per-table loop.

    The guide of a table has ``GUIDE_FACTOR`` entries per table entry; a guide
    cell that holds no CDF step answers every uniform falling in it directly
    ("pure" cells, stored as non-negative guide values), the others start the
    upward search.  Both tests are conservative by a relative 1e-12, far
    above double round-off, so the answer is always the exact inverse CDF.

    Parameters
    ----------
    mean : ndarray, shape (Q,)
        Non-negative Poisson means.
    """

    GUIDE_FACTOR = 8

    def __init__(self, mean: np.ndarray) -> None:
        mean = np.asarray(mean, dtype=np.float64)
        self.q = mean.size
        lam, table_of = np.unique(mean, return_inverse=True)
        table_of = table_of.reshape(-1)
        self.n_tables = lam.size
        k0, width = _support(lam)
        # a zero mean gets the one-entry table {0: 1.0}
        zero = lam <= 0
        k0[zero], width[zero] = 0, 1
        edges = [1, 8]
        while lam.size and edges[-1] < width.max():
            edges.append(int(np.ceil(edges[-1] * _GROWTH)))
        bucket = np.searchsorted(edges, width)
        cdfs, guides = [], []
        cdf_off = np.zeros(lam.size, dtype=np.int64)
        guide_off = np.zeros(lam.size, dtype=np.int64)
        resolution = np.zeros(lam.size)
        n_cdf = n_guide = 0
        for bi in np.unique(bucket):
            tabs = np.flatnonzero(bucket == bi)
            w = edges[bi]
            g = self.GUIDE_FACTOR * w
            cdf = _cdf_rows(lam[tabs], k0[tabs], w)
            guide = _guide_rows(cdf, g)
            cdf_off[tabs] = n_cdf + np.arange(tabs.size) * w
            guide_off[tabs] = n_guide + np.arange(tabs.size) * (g + 1)
            resolution[tabs] = g
            # a pure cell stores its answer as the Poisson count itself (k0 +
            # index); an impure one the flat CDF position to search from, as ~pos
            off = cdf_off[tabs][:, None]
            guide = np.where(guide >= 0, guide + k0[tabs][:, None], guide - off)
            cdfs.append(cdf.ravel())
            guides.append(guide.ravel())
            n_cdf += cdf.size
            n_guide += guide.size
        #: total table entries: the build cost, to weigh against rounds x categories
        self.entries = n_cdf
        self.cdf = np.concatenate(cdfs) if cdfs else np.ones(1)
        # float64, what the callers consume, so the common (pure) draw is one
        # lookup with no conversion; integers this small are exact in float64
        self.guide = np.concatenate(guides).astype(np.float64) if guides else np.zeros(1)
        # per category: guide resolution, guide offset, flat CDF position -> count
        self.res = resolution[table_of]
        self.goff = guide_off[table_of]
        self.shift = (k0 - cdf_off)[table_of]
        self.last = (cdf_off + np.take(edges, bucket) - 1)[table_of]

    @staticmethod
    def build_cost(mean: np.ndarray) -> int:
        """Table entries that ``PoissonTable(mean)`` would build (its cost, without building)."""
        mean = np.asarray(mean, dtype=np.float64)
        return int(_support(np.unique(mean[mean > 0]))[1].sum())

    def sample(self, rng: np.random.Generator, rounds: int) -> np.ndarray:
        """Draw ``rounds`` vectors; returns a C-ordered float64 array (rounds, Q) of counts.

        Rows are rounds: every pass runs along a whole round with the
        per-category parameters broadcast as a row (a (Q, rounds) layout
        would make each inner loop as short as the chunk's rounds).
        """
        u = rng.random((rounds, self.q))
        cell = (u * self.res).astype(np.intp)
        cell += self.goff
        counts = self.guide[cell]  # float64: counts, or ~position where the cell is impure
        flat = counts.reshape(-1)
        imp = np.flatnonzero(flat < 0)
        if imp.size:
            start = ~flat[imp].astype(np.int64)
            uf = u.reshape(-1)[imp]
            # inversion: smallest i with cdf[i] > u, searching up from the guide:
            # a few linear steps settle almost all, bisection the far tails
            act = np.flatnonzero(self.cdf[start] <= uf)
            for _ in range(_LINEAR_STEPS):
                if not act.size:
                    break
                start[act] += 1
                act = act[self.cdf[start[act]] <= uf[act]]
            if act.size:
                lo = start[act] + 1
                hi = self.last[imp[act] % self.q]  # cdf[last] == 1 > u always
                ua = uf[act]
                while True:
                    open_ = np.flatnonzero(lo < hi)
                    if not open_.size:
                        break
                    mid = (lo[open_] + hi[open_]) // 2
                    up = self.cdf[mid] <= ua[open_]
                    lo[open_[up]] = mid[up] + 1
                    hi[open_[~up]] = mid[~up]
                start[act] = lo
            flat[imp] = start + self.shift[imp % self.q]  # flat position -> count
        return counts


def _cdf_rows(lam: np.ndarray, k0: np.ndarray, w: int) -> np.ndarray:
    """Poisson CDFs over ``k0 .. k0 + w - 1``, one row per mean; the last entry is 1."""
    qb = lam.size
    cdf = np.ones((qb, w))
    live = lam > 0
    if w > 1 and live.any():
        lam, k0 = lam[live], k0[live]
        # pmf by the recurrence p(k) = p(k-1) * lam / k from the left edge k0
        ratio = lam[:, None] / (k0[:, None] + np.arange(1, w)[None, :])
        log_p0 = k0 * np.log(lam) - lam - gammaln(k0 + 1.0)
        pmf = np.empty((lam.size, w))
        pmf[:, 0] = np.exp(log_p0)
        pmf[:, 1:] = pmf[:, :1] * np.cumprod(ratio, axis=1)
        below = np.where(k0 > 0, pdtr(np.maximum(k0 - 1, 0), lam), 0.0)
        cdf[live] = np.minimum(below[:, None] + np.cumsum(pmf, axis=1), 1.0)
    cdf[:, -1] = 1.0  # the omitted tail (< 1e-16) goes to the last entry
    return cdf


def _guide_rows(cdf: np.ndarray, g: int) -> np.ndarray:
    """Guide tables, shape (rows, g + 1): entry j is the first index whose CDF may exceed j / g.

    Computed conservatively (never above the true start); entries whose cell
    ``[j/g, (j+1)/g)`` certainly holds no CDF step are returned as the answer
    itself (>= 0), the others as ``~start`` (< 0).
    """
    qb, w = cdf.shape
    cut = np.minimum(np.floor(cdf * (g * (1.0 + 1e-12))).astype(np.int64), g)
    hist = np.bincount((np.arange(qb)[:, None] * (g + 1) + cut).ravel(), minlength=qb * (g + 1))
    cum = np.cumsum(hist.reshape(qb, g + 1), axis=1)
    start = np.zeros((qb, g + 1), dtype=np.int64)
    start[:, 1:g] = cum[:, : g - 1]
    start[:, g] = start[:, g - 1]  # u * g rounding up to g
    start = np.minimum(start, w - 1)
    upper = (np.arange(g + 1, dtype=np.float64) + 1.0) * (1.0 + 1e-12)
    at = np.take_along_axis(cdf, start, axis=1)
    pure = at * g > upper[None, :]
    pure[:, g] = False
    out: np.ndarray = np.where(pure, start, ~start)
    return out


def _support(lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Left edge and width of the tabulated support of each Poisson mean."""
    sd = np.sqrt(lam)
    k0 = np.maximum(np.floor(lam - 9.0 * sd - 5.0), 0.0).astype(np.int64)
    return k0, np.ceil(lam + 9.0 * sd + 20.0).astype(np.int64) - k0 + 1


class CategoricalTable:
    """Guide-table sampler of one categorical distribution (the remainder draws)."""

    def __init__(self, p: np.ndarray) -> None:
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
    """Draw ``rounds`` independent ``Multinomial(n, p)`` vectors, C-ordered (rounds, Q), float64.

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
        raise ArgumentError(f"unknown sampling method {method!r}")
    if table is None:
        # few rounds: building tables would cost more than it saves
        mean = poisson_mean(n, p)[:, None]

        def draw(k: int) -> np.ndarray:
            return np.ascontiguousarray(rng.poisson(mean, size=(q, k)).astype(np.float64).T)
    else:

        def draw(k: int) -> np.ndarray:
            return table.sample(rng, k)

    x = draw(rounds)
    s = x.sum(axis=1)  # exact: integer-valued doubles far below 2**53
    bad = np.flatnonzero(s > n)
    while bad.size:
        x[bad] = draw(bad.size)
        s[bad] = x[bad].sum(axis=1)
        bad = bad[s[bad] > n]
    rem = (n - s).astype(np.int64)
    cat = (categorical or CategoricalTable(p)).sample(rng, int(rem.sum()))
    row = np.repeat(np.arange(rounds), rem)
    np.add.at(x.reshape(-1), row * q + cat, 1.0)
    return x


def poisson_mean(n: int, p: np.ndarray) -> np.ndarray:
    """Poisson means of step 1 of the construction: ``(n - 2 sqrt(n)) * p``."""
    mean: np.ndarray = max(n - 2.0 * np.sqrt(n), 0.0) * np.asarray(p, dtype=np.float64)
    return mean


def resampled_counts(
    rng: np.random.Generator, unit_of: np.ndarray | None, q: int, rounds: int
) -> np.ndarray:
    """Counts per category of ``rounds`` resamples with replacement of ``n`` units.

    ``unit_of[i]`` is the category of unit ``i`` (a battle's row, or a
    cluster; ``None``: unit ``i`` is category ``i``); each round draws ``n``
    uniform unit indices and counts them per category -- exactly
    ``Multinomial(n, counts / n)``, the law :func:`multinomial_rows` draws.
    When the categories are almost as many as the units (the style model's
    rows, one battle each), this is a few times faster than the
    per-category Poisson draws, and it returns C-ordered ``(rounds, q)``
    float64 directly.  One ``bincount`` per round keeps its counters in cache.
    """
    n = q if unit_of is None else unit_of.size
    out = np.empty((rounds, q))
    for r in range(rounds):
        idx = rng.integers(0, n, size=n)
        out[r] = np.bincount(idx if unit_of is None else unit_of[idx], minlength=q)
    return out


class RowResampler:
    """Exact ``Multinomial(B, n / B)`` draws over rows of few battles each, from 16 random bits.

    The style model's table has about one battle per row (token counts make
    almost every battle's covariates distinct), so a resample of its ``B``
    battles draws ~``B`` counts per round, and the draws dominate a cheap
    (one-step) bootstrap round.  The Poisson construction of
    :func:`multinomial_rows` with all rows' means among a few values (``n_i``
    times ``(B - 2 sqrt(B)) / B``, ``n_i`` small) allows a cheaper inversion:
    16 random bits per row pick one of 65,536 equal cells of ``[0, 1)``; a
    cell inside one step of the Poisson CDF *is* the answer (a 64 KB lookup
    table per distinct mean), and only the rows whose cell straddles a step
    (a few per 65,536; tested conservatively by a relative 1e-12) draw a full
    double uniform inside their cell and search the CDF.  That is the exact
    inverse CDF of a uniform, as :class:`PoissonTable` computes it, at about a
    quarter of the cost.  Rounds whose Poisson total exceeds ``B`` are drawn
    again, and the remaining ``B - S`` battles are drawn uniformly, as in
    :func:`multinomial_rows`.

    Parameters
    ----------
    n_per_row : ndarray, shape (Q,)
        Battles in each row (whole numbers >= 1, at most :attr:`MAX_N`).
    """

    #: Largest battles in a row and distinct battle counts served by lookup tables.
    MAX_N = 32
    MAX_TABLES = 16
    _BITS = 16
    _AMBIGUOUS = 255

    @classmethod
    def applicable(cls, n_per_row: np.ndarray) -> bool:
        n = np.asarray(n_per_row)
        return bool(
            n.size
            and n.min() >= 1
            and n.max() <= cls.MAX_N
            and np.all(n == np.rint(n))
            and np.unique(n).size <= cls.MAX_TABLES
        )

    def __init__(self, n_per_row: np.ndarray) -> None:
        n = np.asarray(n_per_row, dtype=np.float64)
        if not self.applicable(n):
            raise ArgumentError("RowResampler needs 1..32 battles per row and few distinct counts")
        self.q = n.size
        self.total = int(n.sum())
        values, table_of = np.unique(n, return_inverse=True)
        self.table_of = table_of.reshape(-1).astype(np.intp) if values.size > 1 else None
        lam = max(self.total - 2.0 * np.sqrt(self.total), 0.0) / self.total
        cells = 1 << self._BITS
        lo = np.arange(cells) / cells
        hi = (np.arange(cells) + 1.0) / cells
        self.cdfs, luts = [], []
        for mean in values * lam:
            k = np.arange(int(np.ceil(mean + 9.0 * np.sqrt(mean) + 20.0)) + 1)
            cdf = pdtr(k, mean)  # P(X <= k)
            # the answer for u is the number of CDF entries <= u (searchsorted right)
            k_lo = np.searchsorted(cdf, lo * (1.0 - 1e-12), side="right")
            k_hi = np.searchsorted(cdf, hi * (1.0 + 1e-12), side="right")
            luts.append(np.where(k_lo == k_hi, k_lo, self._AMBIGUOUS).astype(np.uint8))
            self.cdfs.append(cdf)
        self.lut = np.concatenate(luts)
        self.cum = np.cumsum(n.astype(np.int64))

    def _poisson(self, rng: np.random.Generator) -> np.ndarray:
        """One round of the Poisson step: counts (Q,) uint8."""
        words = -(-self.q // 4)
        bits = rng.bit_generator.random_raw(words).view(np.uint16)[: self.q]
        if self.table_of is None:
            cell = bits.astype(np.intp)
        else:
            cell = self.table_of << self._BITS
            cell += bits
        counts = self.lut[cell]
        amb = np.flatnonzero(counts == self._AMBIGUOUS)
        if amb.size:
            u = (bits[amb] + rng.random(amb.size)) / float(1 << self._BITS)
            tab = np.zeros(amb.size, dtype=np.intp) if self.table_of is None else self.table_of[amb]
            for t in np.unique(tab):
                sel = tab == t
                cdf = self.cdfs[t]
                counts[amb[sel]] = np.minimum(
                    np.searchsorted(cdf, u[sel], side="right"), cdf.size - 1
                )
        return counts

    def sample(self, rng: np.random.Generator, rounds: int) -> np.ndarray:
        """Draw ``rounds`` count vectors; C-ordered float64 (rounds, Q)."""
        out = np.empty((rounds, self.q))
        for r in range(rounds):
            while True:
                counts = self._poisson(rng)
                s = int(counts.sum(dtype=np.int64))
                if s <= self.total:
                    break
            out[r] = counts
            rem = self.total - s
            if rem:
                battle = rng.integers(0, self.total, size=rem)
                row = battle if self.total == self.q else np.searchsorted(self.cum, battle, "right")
                np.add.at(out[r], row, 1.0)
        return out
