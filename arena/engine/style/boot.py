"""Bootstrap of the style-controlled fit: :func:`bootstrap_style`.

The bootstrap resamples battles (one exact multinomial over rows per round,
as the raw engine resamples categories) or clusters; all rounds of a chunk
are one ``(rounds, P)`` array solved by the raw engine's fixed-Hessian
iterations warm-started at the point fit, with batched damped Newton for the
rounds that contract slowly (:mod:`arena.engine.fitting.newton`); chunks run as in
:mod:`arena.engine.resampling.rounds`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from arena.core.defaults import DEFAULT_ROUNDS, DEFAULT_SEED
from arena.core.errors import ArgumentError
from arena.engine.fitting.fit import DEFAULT_PRIOR, to_models
from arena.engine.fitting.graph import category_credit_maps, existence
from arena.engine.fitting.likelihood import rmul
from arena.engine.fitting.newton import GTOL_REL_BOOT, chord, newton
from arena.engine.options import FitOptions
from arena.engine.resampling.blas import one_blas_thread
from arena.engine.resampling.bootstrap import Bootstrap, collect, mle_possible
from arena.engine.resampling.rounds import run_rounds
from arena.engine.resampling.sampling import RowResampler, resampled_counts
from arena.engine.scale import SCALE
from arena.engine.style.design import StyleTable
from arena.engine.style.fit import StyleFit, fit_style
from arena.engine.style.model import StyleDesign
from arena.engine.validate import check_rounds

__all__ = [
    "EXACT",
    "ONE_STEP",
    "STYLE_BOOTSTRAPS",
    "STYLE_EXACT_MAX_ROWS",
    "StyleBootstrap",
    "bootstrap_method",
    "bootstrap_style",
    "clusters_by_row",
]

#: Bootstrap methods: every round solved to the bootstrap tolerance, or the
#: first Newton step from the full-data fit alone (see :func:`bootstrap_style`).
EXACT, ONE_STEP = "exact", "one-step"
STYLE_BOOTSTRAPS = ("auto", EXACT, ONE_STEP)
#: ``"auto"`` solves every round exactly on tables of fewer rows than this, and
#: takes the one-step approximation above.  Measured on the 2-core VM
#: (docs/engine.md, "Style control at scale"): an exact round costs 0.14-0.27 us
#: of CPU per row, so 1000 exact rounds of 1M rows take 70-135 s of wall on 2
#: idle cores (the 120 s budget of 5M battles), of 500k rows half that; a
#: one-step round costs ~0.03 us a row, and its error at 1M rows is at most
#: 0.07 bootstrap SDs per round (0.25 Elo), 0.24 Elo on the interval ends.
#: ko-arena-hard (71k rows, where the one-step is off by up to 0.6 SD) and
#: category boards below this size stay exact.
STYLE_EXACT_MAX_ROWS = 500_000


def bootstrap_method(method: str, n_rows: int) -> str:
    """The method ``"auto"`` means for a table of ``n_rows`` rows (others unchanged)."""
    if method not in STYLE_BOOTSTRAPS:
        raise ArgumentError(
            f"style bootstrap must be one of {', '.join(STYLE_BOOTSTRAPS)}, got {method!r}"
        )
    if method == "auto":
        return EXACT if n_rows < STYLE_EXACT_MAX_ROWS else ONE_STEP
    return method


#: Wins and losses (battles) every model must have for a round's MLE check to be skipped.
SAFE_BATTLES = 100

#: Elements per working array of a bootstrap chunk: small enough that a
#: chunk's arrays stay in cache between the passes of one evaluation.
STYLE_CHUNK_ELEMS = 1_000_000


def clusters_by_row(design: StyleDesign, clusters: sp.csr_matrix) -> sp.csr_matrix:
    if clusters.shape[1] != design.cat_n.size:
        raise ArgumentError(
            f"clusters must have one column per style row ({design.cat_n.size}), "
            f"got {clusters.shape[1]}"
        )
    zq = sp.csr_matrix(clusters)
    return zq[np.asarray(zq.sum(axis=1)).ravel() > 0]


def _inverse(h: np.ndarray) -> np.ndarray:
    """Inverses of a ``(R, P, P)`` stack (least-squares inverses if one is singular)."""
    inv: np.ndarray
    try:
        inv = np.linalg.inv(h)
    except np.linalg.LinAlgError:
        inv = np.linalg.pinv(h, hermitian=True)
    return inv


#: a chunk's (ratings, coefficients, converged, use_prior, grad_norm), rounds first
_Chunk = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class _StyleJob:
    """Everything a chunk of bootstrap rounds needs (read-only, shared by workers)."""

    def __init__(
        self,
        point: StyleFit,
        zq: sp.csr_matrix | None,
        rounds: int,
        chord_iters: int,
        newton_iters: int,
        method: str,
    ) -> None:
        self.point = point
        self.method = method
        self.design = d = point.design
        self.zq = zq
        self.chord_iters, self.newton_iters = chord_iters, newton_iters
        # resampling units: battles (their rows) or clusters
        if zq is None:
            per_row = d.cat_n.astype(np.intp)
            self.n_units = d.cat_n.size
            one_each = bool(np.all(per_row == 1))
            self.unit_of = None if one_each else np.repeat(np.arange(self.n_units), per_row)
        else:
            self.unit_of = None
            self.n_units = zq.shape[0]
        # the one-step rounds' draws dominate their cost: 16-bit inversion when it applies
        self.sampler = (
            RowResampler(d.cat_n)
            if method == ONE_STEP and zq is None and RowResampler.applicable(d.cat_n)
            else None
        )
        # per-round MLE check on the raw graph: row counts -> credit/debit per model
        credit, debit = category_credit_maps(d.raw)
        self.mle_point = point.prior_used == 0.0 and not point.style_reg
        # Whether a resample can lose the MLE: only if some model might draw no
        # win or no loss.  With at least SAFE_BATTLES of each in the data, the
        # chance of that in a round is below exp(-SAFE_BATTLES) ~ 1e-44, so the
        # per-round check (two sparse products over the rows) is skipped, and
        # its row-level maps (~100 bytes a row) are not built.
        self.check_mle = bool(self.mle_point and d.n_active)
        if self.check_mle and d.ties == "half":
            won, lost = credit.T @ d.raw.cat_n, debit.T @ d.raw.cat_n
            self.check_mle = bool(min(won.min(), lost.min()) < SAFE_BATTLES)
        if self.check_mle:
            n = d.cat_n.size
            row_cat = sp.csr_matrix(
                (np.ones(n), (np.arange(n), d.cell_cat)), shape=(n, d.raw.cat_n.size)
            )
            self.credit_t = (row_cat @ credit).T.tocsr()
            self.debit_t = (row_cat @ debit).T.tocsr()
        self.lam_prior = point.lam.copy()
        self.lam_prior[: d.n_active] = np.maximum(self.lam_prior[: d.n_active], DEFAULT_PRIOR)
        self.none_idx = np.flatnonzero(d.battles_per_model == 0)
        self.terms = d.point_terms(point.x)
        self.diag0 = d.diagonal_from_terms(
            [None if t is None else d.cat_n * t for t in self.terms], point.lam
        )[0]
        if method == ONE_STEP:
            self._linear_maps()

    def width(self) -> int:
        d = self.design
        clusters = 0 if self.zq is None else self.n_units
        return max(d.cat_n.size, clusters, d.n_params**2, 1)

    def run(self, rounds: int, seed: np.random.SeedSequence) -> _Chunk:
        d, point = self.design, self.point
        rng = np.random.Generator(np.random.PCG64(seed))
        if self.sampler is not None:
            counts = self.sampler.sample(rng, rounds)
        else:
            draws = resampled_counts(rng, self.unit_of, self.n_units, rounds)
            counts = draws if self.zq is None else np.ascontiguousarray((self.zq.T @ draws.T).T)
        if self.method == ONE_STEP:
            return self._one_step(counts, rng)
        stats = d.stats_from_counts(counts)
        gtol = GTOL_REL_BOOT * d.gradient_scale(stats)
        x = np.tile(point.x, (rounds, 1))
        converged = np.zeros(rounds, dtype=bool)
        gnorm = np.full(rounds, np.inf)
        use_prior = np.zeros(rounds, dtype=bool)
        if self.check_mle:
            credit, debit = rmul(self.credit_t, counts), rmul(self.debit_t, counts)
            use_prior = ~mle_possible(d, stats, credit, debit)
        std = np.flatnonzero(~use_prior)
        if std.size:
            every = std.size == rounds
            st = stats if every else stats[std]
            # First step: the point fit's inverse information rescaled to the
            # round's curvature (as the raw engine's chord), from the round's
            # gradient and Hessian diagonal at the point fit, which are linear
            # in its counts (no logistic pass).  Resampled rows move these fits
            # further than the raw engine's cells (models with ~1000 battles,
            # weights up to 3), so the fixed matrix would then contract at only
            # 0.1-0.3 per step: the next iterations use each round's own
            # Hessian at that first step, and contract like the remaining
            # (now small) distance.
            x1 = self._first_step(counts if every else counts[std], x[std])
            _, g1, h1 = d.evaluate(x1, st, point.lam, order=-2)
            assert h1 is not None  # order=-2: gradient and Hessian
            xs, cs, _, gs = chord(
                d,
                st,
                x1,
                _inverse(h1),
                lam=point.lam,
                gtol=gtol[std],
                max_iter=self.chord_iters,
                g0=g1,
            )
            slow = np.flatnonzero(~cs)
            if slow.size:
                xn, cn, _, gn = newton(
                    d, st[slow], xs[slow], lam=point.lam, gtol=gtol[std[slow]],
                    max_iter=self.newton_iters,
                )  # fmt: skip
                xs[slow], cs[slow], gs[slow] = xn, cn, gn
            x[std], converged[std], gnorm[std] = xs, cs, gs
            if self.mle_point:
                for r in std[~cs]:
                    if not existence(d.raw, d.raw_stats(stats[r : r + 1])[0]).exists:
                        use_prior[r] = True
        pri = np.flatnonzero(use_prior)
        if pri.size:
            xp, cp, _, gp = newton(
                d, stats[pri], np.tile(point.x, (pri.size, 1)), lam=self.lam_prior,
                gtol=gtol[pri], max_iter=self.newton_iters,
            )  # fmt: skip
            x[pri], converged[pri], gnorm[pri] = xp, cp, gp
        return self._finish(x, rng, converged, use_prior, gnorm)

    def _first_step(self, counts: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The first Newton step of rounds ``counts`` (R, N) from the point fit ``x`` (R, P)."""
        d, point = self.design, self.point
        terms = [None if t is None else counts * t for t in self.terms]
        g0 = d.assemble(terms, x, point.lam, hessian=False)[0]
        dr = d.diagonal_from_terms(terms, point.lam)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_s = np.sqrt(np.where(dr > 0, self.diag0 / dr, 1.0))
        step: np.ndarray = x + ((g0 * inv_s) @ point.kinv) * inv_s
        return step

    def _linear_maps(self) -> None:
        """Counts -> gradient and Hessian diagonal at the point fit, as two products.

        A round's gradient and Hessian diagonal at the point fit are linear in
        its counts ``c`` (:meth:`StyleDesign.point_terms`): the model entries
        are per-pair sums of ``c * ld`` and ``c * hdd`` (one sparse product
        with ``2 N`` entries), the coefficient entries ``c @ (ld * z)`` and
        ``c @ (hdd * z^2)`` (one dense product with ``N x 2F``), so a round
        needs no ``(R, N)`` temporaries.
        """
        d = self.design
        ld, hdd, lphi, hpp, _ = self.terms
        assert ld is not None and hdd is not None  # set for every tie model
        n, g = d.cat_n.size, d.raw.n_groups
        # rows are sorted by pair: pair g's entries are one contiguous range of
        # rows, so the matrix is built directly in CSR form (no COO index arrays)
        idx = np.int32 if 2 * n < np.iinfo(np.int32).max else np.int64
        starts = d.starts.astype(idx)
        self.pair_sums_t = sp.csr_matrix(
            (
                np.concatenate([ld, hdd]),
                np.tile(np.arange(n, dtype=idx), 2),
                np.concatenate([starts, starts + n, [2 * n]]).astype(idx),
            ),
            shape=(2 * g, n),
        )
        f = d.n_features
        extra = 2 if d.ties == "davidson" else 0
        # column-major, filled column by column (no (N, 2F) temporaries): the
        # (1, N) @ (N, 2F) product streams each column once (2.3x faster than
        # row-major at 1M rows)
        dense = np.empty((n, 2 * f + extra), order="F")
        for k in range(f):
            np.multiply(ld, d.z[:, k], out=dense[:, k])
            np.multiply(hdd, d.z2[:, k], out=dense[:, f + k])
        if extra:
            dense[:, 2 * f], dense[:, 2 * f + 1] = lphi, hpp
        self.dense_terms = dense

    def _linear_first_step(self, counts: np.ndarray, x: np.ndarray) -> np.ndarray:
        """:meth:`_first_step` from :meth:`_linear_maps` (same step, other summation order)."""
        d, point = self.design, self.point
        ma, f, g = d.n_active, d.n_features, d.raw.n_groups
        pair = rmul(self.pair_sums_t, counts)
        dense = counts @ self.dense_terms
        gr = np.empty_like(x)
        dr = np.empty_like(x)
        gr[:, :ma] = rmul(d.raw.incidence_t, pair[:, :g])
        dr[:, :ma] = rmul(d.raw.incidence_abs_t, pair[:, g:])
        gr[:, ma : ma + f] = dense[:, :f]
        dr[:, ma : ma + f] = dense[:, f : 2 * f]
        if d.ties == "davidson":
            gr[:, -1], dr[:, -1] = dense[:, 2 * f], dense[:, 2 * f + 1]
        gr -= x * point.lam
        dr += point.lam
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_s = np.sqrt(np.where(dr > 0, self.diag0 / dr, 1.0))
        step: np.ndarray = x + ((gr * inv_s) @ point.kinv) * inv_s
        return step

    def _one_step(self, counts: np.ndarray, rng: np.random.Generator) -> _Chunk:
        """Rounds approximated by the first step alone (no logistic pass over the rows).

        Resamples where the MLE cannot exist (possible only on small boards)
        are solved exactly with the prior, as in :meth:`run`.
        """
        d, point = self.design, self.point
        rounds = counts.shape[0]
        use_prior = np.zeros(rounds, dtype=bool)
        if self.check_mle:
            credit, debit = rmul(self.credit_t, counts), rmul(self.debit_t, counts)
            stats = d.stats_from_counts(counts) if d.ties == "davidson" else None
            use_prior = ~mle_possible(d, stats, credit, debit)
        x = np.tile(point.x, (rounds, 1))
        std = np.flatnonzero(~use_prior)
        if std.size:
            x[std] = self._linear_first_step(counts[std] if std.size < rounds else counts, x[std])
        converged = np.ones(rounds, dtype=bool)
        gnorm = np.full(rounds, np.nan)  # not evaluated: no pass over the rows after the step
        pri = np.flatnonzero(use_prior)
        if pri.size:
            stats = d.stats_from_counts(counts[pri])
            gtol = GTOL_REL_BOOT * d.gradient_scale(stats)
            xp, cp, _, gp = newton(
                d, stats, np.tile(point.x, (pri.size, 1)), lam=self.lam_prior, gtol=gtol,
                max_iter=self.newton_iters,
            )  # fmt: skip
            x[pri], converged[pri], gnorm[pri] = xp, cp, gp
        return self._finish(x, rng, converged, use_prior, gnorm)

    def _finish(
        self,
        x: np.ndarray,
        rng: np.random.Generator,
        converged: np.ndarray,
        use_prior: np.ndarray,
        gnorm: np.ndarray,
    ) -> _Chunk:
        d, point = self.design, self.point
        rounds = x.shape[0]
        theta = to_models(d, x[:, : d.n_active], point.anchor)
        if self.none_idx.size:
            # no data at all: the prior is all we know about these models
            sd = 1.0 / np.sqrt(max(point.prior_used, DEFAULT_PRIOR))
            theta[:, self.none_idx] += rng.normal(0.0, sd, size=(rounds, self.none_idx.size))
        ratings = point.rating[None, :] + SCALE * (theta - point.theta[None, :])
        coef = x[:, d.n_active : d.n_active + d.n_features]
        return ratings, coef, converged, use_prior, gnorm


@dataclass(frozen=True)
class StyleBootstrap:
    """Bootstrap of a style fit: ratings and coefficients of the same rounds."""

    ratings: Bootstrap
    coef: Bootstrap
    #: ``"exact"`` or ``"one-step"`` (what ``"auto"`` chose)
    method: str = EXACT


@one_blas_thread
def bootstrap_style(
    table: StyleTable,
    options: FitOptions | None = None,
    /,
    *,
    rounds: int = DEFAULT_ROUNDS,
    seed: int | np.random.Generator | np.random.SeedSequence = DEFAULT_SEED,
    clusters: sp.csr_matrix | None = None,
    point: StyleFit | None = None,
    workers: int | None = None,
    chord_iters: int = 12,
    newton_iters: int = 60,
    style_reg: float | None = None,
    method: str = "auto",
    **overrides: Any,
) -> StyleBootstrap:
    """Bootstrap the style-controlled fit; all rounds of a chunk solved together.

    Parameters
    ----------
    table : StyleTable
    rounds : int
    seed : int, Generator or SeedSequence
        Same seed, same samples (whatever ``workers``).
    clusters : scipy.sparse matrix, shape (K, N), optional
        Clusters x rows battle counts (build with
        :func:`arena.engine.counts.cluster_matrix` from ``table.battle_row``):
        resample whole clusters.
    point : StyleFit, optional
        The point fit of the same table and options.
    workers : int, optional
    chord_iters, newton_iters : int
    options, style_reg, **overrides
        The model, as for :func:`~arena.engine.style.fit.fit_style`, when
        ``point`` is not given.
    method : {"auto", "exact", "one-step"}
        ``"exact"`` solves every round to the bootstrap tolerance.
        ``"one-step"`` stops each round after its first step: the point
        fit's inverse information, rescaled by the round's Hessian diagonal,
        applied to the round's gradient at the point fit; both are linear in
        the round's counts, so a round costs the draws and a few products
        with the rows and no logistic pass (its error is second order in the
        resample's deviation, measured in docs/engine.md).  ``"auto"``:
        exact below :data:`STYLE_EXACT_MAX_ROWS` rows, one-step above.

    Returns
    -------
    StyleBootstrap
    """
    rounds = check_rounds(rounds)
    if point is None:
        point = fit_style(table, options, style_reg=style_reg, **overrides)
    method = bootstrap_method(method, point.design.cat_n.size)
    zq = None if clusters is None else clusters_by_row(point.design, clusters)
    job = _StyleJob(point, zq, rounds, chord_iters, newton_iters, method)
    parts = run_rounds(job, rounds, seed, workers, chunk_elems=STYLE_CHUNK_ELEMS)
    ratings, coef = collect(parts, [point.rating, point.coef], point)
    return StyleBootstrap(ratings=ratings, coef=coef, method=method)
