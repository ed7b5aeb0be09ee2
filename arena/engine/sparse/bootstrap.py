"""The bootstrap for many models: :func:`sparse_bootstrap`, O(rounds x cells) work.

Same resamples as :func:`arena.engine.resampling.bootstrap.bootstrap`: the rounds are
split into the dense path's draw chunks (same sizes, same random streams
spawned from the seed, same exact multinomial sampler, same normal draws for
models without battles), so a seed gives the same resampled counts on both
paths.  Each round is then solved to the dense path's tolerance
(``GTOL_REL_BOOT``) by batched Newton with preconditioned conjugate gradients
(:func:`arena.engine.sparse.newton.sparse_newton`), warm-started at the point
fit; nothing of size models x models is formed.  Consecutive draw chunks are
solved together in batches of about ``BATCH_ELEMS`` working elements per
array, on up to two threads (NumPy releases the GIL in the array work).

Rounds without an MLE (a model that drew no win, no loss ...) are fitted with
the weak prior, and rounds that fail to converge are listed, exactly as on the
dense path.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy import special

from arena.core.defaults import DEFAULT_ROUNDS, DEFAULT_SEED
from arena.engine.counts import CountTable
from arena.engine.fitting.design import Design
from arena.engine.fitting.fit import DEFAULT_PRIOR, Fit, to_models
from arena.engine.fitting.graph import existence
from arena.engine.fitting.newton import GTOL_REL_BOOT
from arena.engine.options import FitOptions, fit_options
from arena.engine.resampling.blas import one_blas_thread
from arena.engine.resampling.bootstrap import Bootstrap, BootstrapJob, collect
from arena.engine.resampling.rounds import CHUNK_ELEMS, MIN_CHUNKS, seed_sequence
from arena.engine.resampling.sampling import multinomial_rows
from arena.engine.scale import BASE, SCALE
from arena.engine.sparse.fit import sparse_fit
from arena.engine.sparse.newton import column_stats, sparse_newton
from arena.engine.validate import check_rounds

__all__ = ["sparse_bootstrap", "BATCH_ELEMS"]

#: Target working elements per (rounds x groups) array of one solved batch.
BATCH_ELEMS = 6_000_000


class _SparseJob(BootstrapJob):
    """The dense job's resampling set-up (samplers, clusters, credit maps, draw
    chunk width) with a sparse solve; shared read-only by the threads."""

    def __init__(
        self, point: Fit, clusters: sp.csr_matrix | None, rounds: int, newton_iters: int
    ) -> None:
        super().__init__(point, clusters, 0, newton_iters, rounds)
        self.credit_t, self.debit_t = self.maps_t[2], self.maps_t[3]

    def solve_width(self) -> int:
        d = self.design
        clusters = 0 if self.zq is None else self.n_draw
        return max(d.cat_n.size, d.n_groups * d.n_stats, clusters, d.n_params, 1)

    def draw(
        self, rounds: int, seed: np.random.SeedSequence
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """One draw chunk: category counts (Q, rounds) and the no-battle models' normals."""
        rng = np.random.Generator(np.random.PCG64(seed))
        draws = multinomial_rows(
            rng, self.n_draw, self.p, rounds, table=self.table, categorical=self.categorical
        )
        counts_t = draws.T if self.zq is None else np.asarray(self.zq.T @ draws.T)
        noise = None
        if self.none_idx.size:
            scale = 1.0 / np.sqrt(max(self.lam0, DEFAULT_PRIOR))
            noise = rng.normal(0.0, scale, size=(rounds, self.none_idx.size))
        return counts_t, noise

    # a batch of chunks, not the dense job's (rounds, seed): only sparse_bootstrap
    # drives this job, and the collector reads the same four arrays
    def run(  # type: ignore[override]
        self, chunks: list[tuple[int, np.random.SeedSequence]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Draw and solve a batch of consecutive chunks ``[(rounds, seed), ...]``."""
        d, point = self.design, self.point
        parts = [self.draw(n, s) for n, s in chunks]
        counts_t = np.concatenate([c for c, _ in parts], axis=1)
        rounds = counts_t.shape[1]
        stats = column_stats(d, counts_t)
        tot = stats[:, 1] if d.ties == "half" else stats.sum(axis=1)
        scale = np.asarray(d.incidence_abs_t @ tot).max(axis=0) if d.n_active else 1.0
        gtol = GTOL_REL_BOOT * np.maximum(scale, 1.0) * np.ones(rounds)
        use_prior = np.zeros(rounds, dtype=bool)
        credit = debit = None
        if self.lam0 == 0.0 and d.n_active:
            credit = self.credit_t @ counts_t
            debit = self.debit_t @ counts_t
            use_prior = ~((credit > 0).all(axis=0) & (debit > 0).all(axis=0))
            if d.ties == "davidson":
                wt = stats[:, 2].sum(axis=0)
                use_prior |= ~((wt > 0) & (wt < stats.sum(axis=(0, 1))))
        del counts_t
        lam = np.where(use_prior, DEFAULT_PRIOR, self.lam0)
        x0 = np.repeat(point.x[:, None], rounds, axis=1)
        if use_prior.any():
            assert credit is not None and debit is not None  # lam0 == 0: computed above
            far_start(d, x0, tot, credit <= 0, debit <= 0, use_prior)
        solve = dict(gtol=gtol, max_iter=self.newton_iters)
        x, converged, _, gnorm = sparse_newton(d, stats, x0, lam=lam, **solve)
        if self.lam0 == 0.0:
            # a round that would not converge may have no MLE: refit it with the prior
            late = np.array(
                [r for r in np.flatnonzero(~converged & ~use_prior) if not _exists(d, stats, r)],
                dtype=np.intp,
            )
            if late.size:
                use_prior[late] = True
                xp, cp, _, gp = sparse_newton(
                    d,
                    stats[..., late],
                    x0[:, late],
                    lam=DEFAULT_PRIOR,
                    **solve | {"gtol": gtol[late]},
                )
                x[:, late], converged[late], gnorm[late] = xp, cp, gp
        theta = to_models(d, x[: d.n_active].T, point.anchor)
        if self.none_idx.size:
            theta[:, self.none_idx] += np.concatenate([n for _, n in parts])
        ratings = BASE + SCALE * theta
        if point.anchor is not None:
            ratings += point.anchor[1] - BASE
        return ratings, converged, use_prior, gnorm


def far_start(
    design: Design,
    x0: np.ndarray,
    tot: np.ndarray,
    no_credit: np.ndarray,
    no_debit: np.ndarray,
    use_prior: np.ndarray,
) -> None:
    """Start models that never won (never lost) in a prior round near their optimum.

    Such a model's rating runs off until the prior stops it, and Newton from
    the point fit crawls there about one logit per step.  With the others held
    and ``P(win) ~ e^(t - x_j)`` far out, the prior's balance ``C e^t = -lam t``
    (``C = sum_j n_j e^(-x_j)``) gives ``t = -W(C / lam)`` (Lambert W); only the
    starting point changes, the solution is still that round's own maximiser.
    """
    d = design
    for mask, sign in ((no_credit, -1.0), (no_debit, 1.0)):
        mask = mask & use_prior
        if not mask.any():
            continue
        other_a = np.exp(sign * x0[d.gb])  # opponents of each group's first member
        other_b = np.exp(sign * x0[d.ga])
        inc, inc_abs = d.incidence_t, d.incidence_abs_t
        c = 0.5 * ((inc_abs + inc) @ (tot * other_a) + (inc_abs - inc) @ (tot * other_b))
        t = sign * special.lambertw(c[mask] / DEFAULT_PRIOR).real
        x0[: d.n_active][mask] = t


def _exists(design: Design, stats: np.ndarray, r: int | np.integer[Any]) -> bool:
    return bool(existence(design, np.ascontiguousarray(stats[:, :, r].T)).exists)


def _batches(
    job: _SparseJob, rounds: int, rng: int | np.random.Generator | np.random.SeedSequence
) -> list[list[tuple[int, np.random.SeedSequence]]]:
    """The dense path's draw chunks, grouped into consecutive solve batches."""
    size = int(max(1, min(CHUNK_ELEMS // job.width(), -(-rounds // MIN_CHUNKS))))
    starts = list(range(0, rounds, size))
    seeds = seed_sequence(rng).spawn(len(starts))
    chunks = [(min(size, rounds - s), seed) for s, seed in zip(starts, seeds, strict=True)]
    per_batch = max(1, BATCH_ELEMS // job.solve_width())
    # at least MIN_CHUNKS batches, so that two workers share short runs
    per_batch = min(per_batch, max(1, -(-rounds // MIN_CHUNKS)))
    batches: list[list[tuple[int, np.random.SeedSequence]]] = []
    cur: list[tuple[int, np.random.SeedSequence]] = []
    n = 0
    for c in chunks:
        cur.append(c)
        n += c[0]
        if n >= per_batch:
            batches.append(cur)
            cur, n = [], 0
    if cur:
        batches.append(cur)
    return batches


@one_blas_thread
def sparse_bootstrap(
    table: CountTable,
    options: FitOptions | None = None,
    /,
    *,
    rounds: int = DEFAULT_ROUNDS,
    seed: int | np.random.Generator | np.random.SeedSequence = DEFAULT_SEED,
    clusters: sp.csr_matrix | None = None,
    point: Fit | None = None,
    workers: int | None = None,
    newton_iters: int = 60,
    **overrides: Any,
) -> Bootstrap:
    """Bootstrap like :func:`arena.engine.resampling.bootstrap.bootstrap`, for many models.

    Same parameters and result (``seed`` an int, Generator or SeedSequence);
    the same seed draws the same resamples as the dense bootstrap.
    """
    rounds = check_rounds(rounds)
    if point is None:
        point = sparse_fit(table, fit_options(options, **overrides))
    job = _SparseJob(point, clusters, rounds, newton_iters)
    batches = _batches(job, rounds, seed)
    if workers is None:
        workers = min(2, os.cpu_count() or 1)
    if workers > 1 and len(batches) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(job.run, batches))
    else:
        parts = [job.run(b) for b in batches]
    return collect(parts, [point.rating], point)[0]
