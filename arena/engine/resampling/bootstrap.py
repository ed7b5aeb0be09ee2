"""Vectorised bootstrap of Bradley–Terry ratings.

All rounds are fitted together: a chunk of rounds is one ``(rounds, params)``
array, resampled in one draw and solved by batched fixed-Hessian iterations
(warm-started at the point fit, see :func:`arena.engine.fitting.newton.chord`) with a
batched damped Newton fallback for rounds that contract slowly.  Chunks bound
the memory (about ``CHUNK_ELEMS`` doubles per working array) and run on a
small thread pool; each chunk has its own random stream spawned from the seed,
so results do not depend on the number of threads.

Resampling
----------
* battles (default): one exact ``Multinomial(N, p)`` draw over categories per
  round, equivalent in law to resampling the N battles with replacement;
* clusters: ``K`` clusters resampled with replacement (one multinomial over
  clusters per round), mapped to category counts through the sparse
  clusters x categories matrix, so the cost stays in cells, not battles.

Rounds without an MLE
---------------------
If the point fit is the MLE, a round whose resample has no MLE (a model that
drew no battles, never lost, ...; detected by a per-round credit/debit check,
and by a beats-graph check for rounds that fail to converge) is fitted with
the weak prior of :mod:`arena.engine.fitting.fit` instead, so it contributes a finite
value; these rounds are listed in ``prior_rounds``.  Rounds that still fail
to converge are listed in ``failed_rounds`` and left out of the intervals.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy import special

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.core.errors import ArgumentError
from arena.engine.counts import CountTable
from arena.engine.fitting.design import Design
from arena.engine.fitting.fit import DEFAULT_PRIOR, Fit, fit, to_models
from arena.engine.fitting.graph import CreditWitness, category_credit_maps, credit_debit, existence
from arena.engine.fitting.likelihood import category_maps, gradient_scale, logistic
from arena.engine.fitting.newton import GTOL_REL_BOOT, chord, newton
from arena.engine.options import FitOptions, fit_options
from arena.engine.resampling.blas import one_blas_thread
from arena.engine.resampling.rounds import CHUNK_ELEMS, run_rounds
from arena.engine.resampling.sampling import (
    CategoricalTable,
    PoissonTable,
    multinomial_rows,
    poisson_mean,
)
from arena.engine.scale import BASE, SCALE
from arena.engine.validate import check_level, check_rounds

if TYPE_CHECKING:  # the style model shares these helpers; imported for annotations only
    from arena.engine.style.fit import StyleFit
    from arena.engine.style.model import StyleDesign

__all__ = ["Bootstrap", "bootstrap", "CHUNK_ELEMS", "run_rounds"]

#: Build tabulated Poisson samplers when the draws outnumber the table entries
#: by this factor (a table entry costs about what one draw saves).
TABLE_PAYOFF = 2


@dataclass(frozen=True)
class Bootstrap:
    """Bootstrap distribution of the ratings.

    Attributes
    ----------
    samples : ndarray, shape (rounds, M)
        Ratings of every round (same centring/anchor as ``point``).
    point : ndarray, shape (M,)
        Ratings of the point fit.
    converged : ndarray of bool, shape (rounds,)
    failed_rounds : ndarray of int
        Rounds that did not converge; excluded from intervals.
    prior_rounds : ndarray of int
        Rounds fitted with the weak prior because their resample had no MLE.
    grad_norm : ndarray, shape (rounds,)
    fit : Fit or StyleFit
        The point fit.
    """

    samples: np.ndarray
    point: np.ndarray
    converged: np.ndarray
    failed_rounds: np.ndarray
    prior_rounds: np.ndarray
    grad_norm: np.ndarray
    #: the point fit (a :class:`~arena.engine.style.fit.StyleFit` for the style model)
    fit: Fit | StyleFit

    @property
    def good(self) -> np.ndarray:
        """Samples of the converged rounds."""
        good: np.ndarray = self.samples[self.converged]
        return good

    @property
    def se(self) -> np.ndarray:
        """Bootstrap standard errors (converged rounds)."""
        good = self.good
        return good.std(axis=0, ddof=1) if good.shape[0] > 1 else np.zeros(self.point.shape)

    def interval(
        self, level: float = DEFAULT_LEVEL, *, simultaneous: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Confidence intervals for all ratings.

        Parameters
        ----------
        level : float
            Coverage, e.g. 0.95.
        simultaneous : bool
            ``False``: percentile intervals (each covers at ``level``).
            ``True``: max-|t| intervals ``point +/- c * se`` where ``c`` is the
            ``level`` quantile over rounds of ``max_i |R_i* - R_i| / se_i``, so
            all M intervals hold together at ``level``.
        """
        check_level(level)
        good = self.good
        if good.shape[0] == 0:
            raise ArgumentError("no converged bootstrap rounds")
        if not simultaneous:
            alpha = 1.0 - level
            low, high = np.quantile(good, [alpha / 2, 1 - alpha / 2], axis=0)
            return low, high
        se = self.se
        c = max_t_critical(good - self.point, se, level)
        return self.point - c * se, self.point + c * se

    def diff(self, i: int, j: int) -> np.ndarray:
        """Bootstrap distribution of ``R_i - R_j``, shape (rounds,)."""
        d: np.ndarray = self.samples[:, i] - self.samples[:, j]
        return d


def collect(
    parts: Sequence[tuple[np.ndarray, ...]], estimates: list[np.ndarray], point: Fit | StyleFit
) -> list[Bootstrap]:
    """One :class:`Bootstrap` per estimate from the chunks' results, in order.

    Each chunk returns ``(values_0, ..., values_k, converged, use_prior,
    grad_norm)`` with one ``values`` array of rounds per estimate (the
    ratings, and for the style fit its coefficients); the rounds' status is
    shared by all of them.
    """
    k = len(estimates)
    converged = np.concatenate([p[k] for p in parts])
    prior_rounds = np.flatnonzero(np.concatenate([p[k + 1] for p in parts]))
    gnorm = np.concatenate([p[k + 2] for p in parts])
    failed = np.flatnonzero(~converged)
    return [
        Bootstrap(
            np.concatenate([p[i] for p in parts]),
            est,
            converged,
            failed,
            prior_rounds,
            gnorm,
            point,
        )
        for i, est in enumerate(estimates)
    ]


def max_t_critical(dev: np.ndarray, se: np.ndarray, level: float) -> float:
    """``level`` quantile of ``max_i |dev_ri| / se_i`` (models with ``se == 0`` ignored)."""
    live = se > 0
    if not live.any():
        return float(special.ndtri(0.5 + level / 2))
    t = np.abs(dev[:, live]) / se[live]
    return float(np.quantile(t.max(axis=1), level))


class BootstrapJob:
    """Everything a chunk needs; one instance shared read-only by the threads."""

    def __init__(
        self,
        point: Fit,
        clusters: sp.csr_matrix | None,
        chord_iters: int,
        newton_iters: int,
        rounds: int,
    ) -> None:
        self.point = point
        self.design = d = point.design
        self.chord_iters = chord_iters
        self.newton_iters = newton_iters
        self.zq = None if clusters is None else d.clusters_by_category(clusters)
        if self.zq is None:
            n_total = d.cat_n.sum()
            self.n_draw = int(round(n_total))
            self.p = d.cat_n / n_total if n_total > 0 else d.cat_n
        else:
            self.n_draw = self.zq.shape[0]
            self.p = np.full(self.n_draw, 1.0 / max(self.n_draw, 1))
        self.table, self.categorical = samplers(self.n_draw, self.p, rounds)
        self.none_idx = np.flatnonzero(d.battles_per_model == 0)
        self.lam0 = point.prior_used
        self.prior_grad = np.zeros(d.n_params)
        self.prior_grad[: d.n_active] = -self.lam0 * point.x[: d.n_active]
        self.prior_diag = np.zeros(d.n_params)
        self.prior_diag[: d.n_active] = self.lam0
        # half ties: a round's start (gradient, curvature, credit/debit at the
        # point fit) from its group statistics, see _half_start; otherwise from
        # its category counts through the linear maps of category_maps
        self.p0 = self.c0 = None
        if d.ties == "half" and d.n_active and d.n_groups:
            lin = point.x[d.ga] - point.x[d.gb]
            if d.position:
                lin = lin + point.x[d.n_active]
            self.p0 = logistic(lin)
            self.c0 = self.p0 * (1.0 - self.p0)
            point_stats = d.point_stats()
            self.diag0 = self._half_start(point_stats)[2][0] + self.prior_diag
            # only the MLE check needs credit and debit; witnesses answer it
            # for almost every round without the full sums
            self.witness = CreditWitness(d, point_stats[0]) if self.lam0 == 0.0 else None
        else:
            self.diag0 = d.cat_n @ self.maps_t[1].T + self.prior_diag

    @functools.cached_property
    def maps_t(self) -> list[sp.csr_matrix]:
        """Gradient, Hessian diagonal, credit and debit maps (P, Q) at the point fit:
        each is linear in a round's category counts, one sparse product each."""
        d = self.design
        grad_map, curv_map = category_maps(d, self.point.x)
        credit_map, debit_map = category_credit_maps(d)
        return [m.T.tocsr() for m in (grad_map, curv_map, credit_map, debit_map)]

    def width(self) -> int:
        d = self.design
        clusters = 0 if self.zq is None else self.n_draw
        return max(d.cat_n.size, d.n_groups * d.n_stats, clusters, d.n_params**2 // 4, 1)

    def _half_start(self, stats: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gradient scale, gradient and Hessian diagonal at the point fit of
        each round, from its group statistics (half ties).

        Each is a per-model sum of a per-group term (:class:`~arena.engine.fitting.groupsum.GroupSums`):
        the same numbers as the category maps up to round-off in the sums.
        """
        d = self.design
        r, ma = stats.shape[0], d.n_active
        s, n = stats[:, 0], stats[:, 1]
        g0 = np.zeros((r, d.n_params))
        diag = np.zeros((r, d.n_params))
        # one (R, G) term at a time: a stacked (k, R, G) block would be a fresh
        # mapping per chunk (page faults on every byte), these reuse the heap
        assert self.c0 is not None and self.p0 is not None  # set for half ties
        term = np.multiply(n, self.c0)
        diag[:, :ma] = d.sums.total(term)
        if d.position:
            diag[:, ma] = term.sum(axis=1)
        np.multiply(n, self.p0, out=term)
        np.subtract(s, term, out=term)
        g0[:, :ma] = d.sums.signed(term)
        if d.position:
            g0[:, ma] = term.sum(axis=1)
        # battle weight per model (its credit + debit, as gradient_scale sums it)
        scale = np.maximum(d.sums.total(n).max(axis=1), 1.0)
        return scale, g0, diag

    def _mle_possible(self, stats: np.ndarray) -> np.ndarray:
        """:func:`mle_possible` per round (half ties), the full sums only where witnesses fail."""
        ok = np.ones(stats.shape[0], dtype=bool)
        assert self.witness is not None  # set whenever this check is used (no prior)
        rest = self.witness.undecided(stats)
        if rest.size:
            sub = stats[rest]
            ok[rest] = mle_possible(self.design, sub, *credit_debit(self.design, sub))
        return ok

    def run(
        self, rounds: int, seed: np.random.SeedSequence
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        d, point = self.design, self.point
        rng = np.random.Generator(np.random.PCG64(seed))
        draws = multinomial_rows(
            rng, self.n_draw, self.p, rounds, table=self.table, categorical=self.categorical
        )
        counts = draws if self.zq is None else np.asarray((self.zq.T @ draws.T).T)
        stats = d.stats_from_counts(counts)
        if self.p0 is not None:
            scale, g0, diag = self._half_start(stats)
        else:
            scale = gradient_scale(d, stats)
            counts_t = np.ascontiguousarray(counts.T)
            g0, diag, credit, debit = (np.asarray(m @ counts_t).T for m in self.maps_t)
        gtol = GTOL_REL_BOOT * scale
        g0 = g0 + self.prior_grad
        diag = diag + self.prior_diag
        x = np.tile(point.x, (rounds, 1))
        converged = np.zeros(rounds, dtype=bool)
        gnorm = np.full(rounds, np.inf)
        use_prior = np.zeros(rounds, dtype=bool)
        if self.lam0 == 0.0 and d.n_active:
            if self.p0 is not None:
                use_prior = ~self._mle_possible(stats)
            else:
                use_prior = ~mle_possible(d, stats, credit, debit)
        std = np.flatnonzero(~use_prior)
        if std.size:
            lam = self.lam0
            every = std.size == rounds
            xs, cs, _, gs = chord(
                d,
                stats if every else stats[std],
                x[std],
                point.kinv,
                lam=lam,
                gtol=gtol[std],
                max_iter=self.chord_iters,
                diag0=self.diag0,
                g0=g0 if every else g0[std],
                diag=diag if every else diag[std],
            )
            slow = np.flatnonzero(~cs)
            if slow.size:
                xn, cn, _, gn = newton(
                    d,
                    stats[std[slow]],
                    xs[slow],
                    lam=lam,
                    gtol=gtol[std[slow]],
                    max_iter=self.newton_iters,
                )
                xs[slow], cs[slow], gs[slow] = xn, cn, gn
            x[std], converged[std], gnorm[std] = xs, cs, gs
            if self.lam0 == 0.0:
                for r in std[~cs]:
                    if not existence(d, stats[r]).exists:
                        use_prior[r] = True
        pri = np.flatnonzero(use_prior)
        if pri.size:
            xp, cp, _, gp = newton(
                d,
                stats[pri],
                np.tile(point.x, (pri.size, 1)),
                lam=DEFAULT_PRIOR,
                gtol=gtol[pri],
                max_iter=self.newton_iters,
            )
            x[pri], converged[pri], gnorm[pri] = xp, cp, gp
        theta = to_models(d, x[:, : d.n_active], point.anchor)
        if self.none_idx.size:
            # no data at all: the prior is all we know about these models
            theta[:, self.none_idx] += rng.normal(
                0.0, 1.0 / np.sqrt(max(self.lam0, DEFAULT_PRIOR)), size=(rounds, self.none_idx.size)
            )
        ratings = BASE + SCALE * theta
        if point.anchor is not None:
            ratings += point.anchor[1] - BASE
        return ratings, converged, use_prior, gnorm


def samplers(
    n_draw: int, p: np.ndarray, rounds: int
) -> tuple[PoissonTable | None, CategoricalTable | None]:
    """Samplers for ``rounds`` draws of ``Multinomial(n_draw, p)`` (see :func:`multinomial_rows`).

    The Poisson tables pay off once many rounds share them; they are built
    before any fork, so worker processes share them copy-on-write.
    """
    if n_draw < 2000 or p.size <= 1:
        return None, None
    mean = poisson_mean(n_draw, p)
    # a table entry costs a few passes to build, a tabled draw saves ~25 ns
    table = None
    if rounds * p.size >= TABLE_PAYOFF * PoissonTable.build_cost(mean):
        table = PoissonTable(mean)
    return table, CategoricalTable(p)


def mle_possible(
    d: Design | StyleDesign, stats: np.ndarray | None, credit: np.ndarray, debit: np.ndarray
) -> np.ndarray:
    """Cheap necessary condition for the MLE per round: every model won and lost (ties count)."""
    ok = np.asarray((credit > 0).all(axis=1) & (debit > 0).all(axis=1))
    if d.ties == "davidson":
        assert stats is not None  # needed (and passed) for Davidson ties only
        wt = stats[:, 2].sum(axis=1)
        ok &= (wt > 0) & (wt < stats.sum(axis=(1, 2)))
    return ok


@one_blas_thread
def bootstrap(
    table: CountTable,
    options: FitOptions | None = None,
    /,
    *,
    rounds: int = DEFAULT_ROUNDS,
    seed: int | np.random.Generator | np.random.SeedSequence = DEFAULT_SEED,
    clusters: sp.csr_matrix | None = None,
    point: Fit | None = None,
    workers: int | None = None,
    chord_iters: int = 12,
    newton_iters: int = 60,
    **overrides: Any,
) -> Bootstrap:
    """Bootstrap the Bradley–Terry fit; all rounds solved as batched arrays.

    Parameters
    ----------
    table : CountTable
    options : FitOptions, optional
        The model, as in :func:`arena.engine.fitting.fit.fit`.
    rounds : int
        Number of bootstrap rounds.
    seed : int, numpy.random.Generator or SeedSequence
        The randomness (one knob); the same seed (or generator state) gives
        identical samples. Fixed by default (:data:`arena.core.defaults.DEFAULT_SEED`).
    clusters : scipy.sparse matrix, shape (K, C), optional
        Clusters x cells battle counts (see :func:`arena.engine.counts.cluster_matrix`);
        resample whole clusters instead of battles.
    point : Fit, optional
        A point fit of the same table and options, to skip refitting it.
    workers : int, optional
        Parallel workers (default: up to 2 = the cores of the target machines).
        Large problems use forked processes, small ones threads; chunks carry
        their own random streams, so results do not depend on ``workers``.
    chord_iters, newton_iters : int
        Iteration caps of the two solver stages.
    **overrides
        Fields of :class:`FitOptions` given directly (``ties="davidson"``).

    Returns
    -------
    Bootstrap
    """
    rounds = check_rounds(rounds)
    opts = fit_options(options, **overrides)
    if point is None:
        point = fit(table, opts)
    job = BootstrapJob(point, clusters, chord_iters, newton_iters, rounds)
    parts = run_rounds(job, rounds, seed, workers)
    return collect(parts, [point.rating], point)[0]
