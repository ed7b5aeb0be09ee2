"""Benchmark of arena.evals: 10,000 bootstrap resamples of a 14,000-item benchmark, 20 models.

Issue 6 asks for all 20 accuracy intervals and all 190 paired-difference
intervals in under 10 s. Run from the repository root::

    python benchmarks/bench_stats.py [--items 14000] [--models 20] [--boot 10000] [--repeat 3]

Prints the best and median wall time of ``bootstrap_models`` (one shared index
matrix, every model and every pair), plus single-call figures for
``bootstrap_ci`` and ``paired_bootstrap`` and a check that the shared run
reproduces ``paired_bootstrap`` for one pair.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from arena.evals import bootstrap_ci, bootstrap_models, paired_bootstrap

#: The issue's time budget.
BUDGET_S = 10.0


def synthetic(n_items: int, n_models: int, seed: int) -> np.ndarray:
    """0/1 results with shared item difficulty (so pairs are correlated, as in real runs)."""
    g = np.random.default_rng(seed)
    difficulty = g.normal(0.0, 1.5, n_items)
    skill = np.linspace(-0.5, 1.5, n_models)
    p = 1.0 / (1.0 + np.exp(-(skill[None, :] - difficulty[:, None])))
    return (g.random((n_items, n_models)) < p).astype(np.int8)


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=14000)
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--boot", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    x = synthetic(args.items, args.models, args.seed)
    pairs = args.models * (args.models - 1) // 2
    print(f"machine: {os.cpu_count()} CPUs, numpy {np.__version__}")
    print(f"data: {args.items} items x {args.models} models ({pairs} pairs), {args.boot} resamples")

    times = timed(
        lambda: bootstrap_models(x, np.random.default_rng(args.seed), rounds=args.boot), args.repeat
    )
    best, median = min(times), statistics.median(times)
    verdict = "OK" if best < BUDGET_S else "OVER BUDGET"
    print(
        f"bootstrap_models (all models + all pairs): best {best:.2f} s, "
        f"median {median:.2f} s over {args.repeat} runs  [{verdict}, budget {BUDGET_S:.0f} s]"
    )

    t_ci = min(timed(lambda: bootstrap_ci(x[:, 0], np.random.default_rng(1), args.boot), 2))
    print(f"bootstrap_ci, one model: {t_ci:.2f} s")
    t_pair = min(
        timed(lambda: paired_bootstrap(x[:, 0], x[:, 1], np.random.default_rng(1), args.boot), 2)
    )
    print(
        f"paired_bootstrap, one pair: {t_pair:.2f} s "
        f"(x {pairs} pairs one by one would be ~{t_pair * pairs:.0f} s)"
    )

    res = bootstrap_models(x[:, :2], np.random.default_rng(5), rounds=1000)
    ref = paired_bootstrap(x[:, 0], x[:, 1], np.random.default_rng(5), 1000)
    same = np.allclose((res.diff[0, 1], res.diff_low[0, 1], res.diff_high[0, 1]), ref)
    print(f"shared run reproduces paired_bootstrap for the same seed: {same}")


if __name__ == "__main__":
    main()
