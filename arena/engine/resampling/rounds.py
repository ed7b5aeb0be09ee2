"""Running bootstrap rounds in chunks: threads or forked processes, one random stream each.

A *job* (the raw engine's :class:`arena.engine.resampling.bootstrap.BootstrapJob`, the style
engine's :class:`arena.engine.style.boot._StyleJob`) knows how to resample and
solve ``n`` rounds from a seed (``job.run(n, seed)``) and how many working
elements one round needs (``job.width()``).  :func:`run_rounds` splits the
rounds into chunks with their own spawned :class:`numpy.random.SeedSequence`,
so the numbers depend only on the seed, never on the number of workers.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

import numpy as np

from arena.engine.resampling.blas import set_blas_threads

__all__ = ["run_rounds", "CHUNK_ELEMS"]

#: Target size (in float64 elements) of the per-chunk working arrays.
CHUNK_ELEMS = 4_000_000
#: Above this much work (rounds x categories) chunks run in forked worker
#: processes, below it in threads.  NumPy releases the GIL in the heavy array
#: work, so threads share the cores with no start-up cost; processes win only
#: once the GIL-held Python between array calls adds up (measured crossover on
#: 2 cores: between 15M, where threads are 15% faster, and 93M, where
#: processes are 30% faster).
PROCESS_MIN_WORK = 40_000_000
#: Rounds are split into at least this many chunks.
MIN_CHUNKS = 4


class RoundsJob(Protocol):
    """What :func:`run_rounds` runs: a chunk's working elements per round, and a chunk."""

    def width(self) -> int: ...

    def run(self, rounds: int, seed: np.random.SeedSequence) -> Any: ...


_JOB: RoundsJob | None = None  # set in the parent just before forking workers


def _run_forked(args: tuple[int, np.random.SeedSequence]) -> Any:
    assert _JOB is not None  # set before the workers were forked
    return _JOB.run(*args)


def _worker_init() -> None:
    """One BLAS thread per worker process: the workers already occupy the cores."""
    set_blas_threads(1)
    _keep_freed_arrays()


#: glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _keep_freed_arrays() -> None:
    """Let a worker's heap reuse the memory of freed chunk arrays (glibc only).

    A chunk's working arrays are tens of MB each; glibc serves such blocks by
    ``mmap`` and unmaps them when freed, so each new array page-faults on every
    page again (~15% of a worker's time was the kernel's on a 1,000-model
    board).  Serving them from the heap and not trimming it reuses the pages.
    A worker lives only for one bootstrap, so holding its peak is free.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return  # no mallopt (not glibc): keep the allocator's defaults
    mallopt(_M_MMAP_THRESHOLD, 256 << 20)
    mallopt(_M_TRIM_THRESHOLD, 1 << 30)


def seed_sequence(
    rng: int | np.random.Generator | np.random.SeedSequence,
) -> np.random.SeedSequence:
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    if isinstance(rng, np.random.SeedSequence):
        return rng
    return np.random.SeedSequence(rng)


def _forked_chunks(
    job: RoundsJob, sizes: list[int], seeds: list[np.random.SeedSequence], workers: int
) -> list[Any] | None:
    """Chunks in forked worker processes, or None if processes are unavailable."""
    global _JOB
    if (
        "fork" not in multiprocessing.get_all_start_methods()
        or multiprocessing.current_process().daemon
    ):
        return None
    _JOB = job
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_worker_init
        ) as pool:
            return list(pool.map(_run_forked, zip(sizes, seeds, strict=True)))
    except (BrokenProcessPool, OSError):
        return None  # could not fork, or a worker died: the caller reruns the same chunks
    finally:
        _JOB = None


def _run_chunks(
    job: RoundsJob,
    sizes: list[int],
    seeds: list[np.random.SeedSequence],
    workers: int,
    *,
    big: bool,
) -> list[Any]:
    """Run all chunks; results are identical whichever way they are executed."""
    if workers > 1 and len(sizes) > 1:
        if big:
            parts = _forked_chunks(job, sizes, seeds, workers)
            if parts is not None:
                return parts
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(job.run, sizes, seeds))
    return [job.run(n, s) for n, s in zip(sizes, seeds, strict=True)]


def run_rounds(
    job: RoundsJob,
    rounds: int,
    rng: int | np.random.Generator | np.random.SeedSequence,
    workers: int | None,
    *,
    chunk_elems: int = CHUNK_ELEMS,
) -> list[Any]:
    """Split ``rounds`` into chunks with their own random streams and run ``job.run`` on each.

    At least ``MIN_CHUNKS`` chunks, so that the workers share even short runs;
    the chunking depends only on the problem (``job.width()``, the working
    elements per round), never on ``workers``: the same seed gives the same
    numbers however many workers run.  Returns the chunks' results in order.
    """
    size = int(max(1, min(chunk_elems // job.width(), -(-rounds // MIN_CHUNKS))))
    starts = list(range(0, rounds, size))
    seeds = seed_sequence(rng).spawn(len(starts))
    sizes = [min(size, rounds - s) for s in starts]
    if workers is None:
        workers = min(2, os.cpu_count() or 1)
    return _run_chunks(job, sizes, seeds, workers, big=rounds * job.width() >= PROCESS_MIN_WORK)
