"""Rating-engine benchmarks: speed, memory, and a side-by-side with LMArena's method.

Run from the repository root::

    python benchmarks/bench_engine.py            # all sections
    python benchmarks/bench_engine.py --quick    # smaller sizes, for a smoke run
    python benchmarks/bench_engine.py --only scale,real,side,coverage

Sections
--------
scale     1000 bootstrap rounds on synthetic LMArena-scale data (250 models,
          all pairs played, 3M battles, 10% ties); wall and CPU time, peak RSS.
real      1000 rounds on the shared LMArena 140k votes (../shared).
side      100 models / 1M battles / 100 rounds: this engine end to end vs a
          serial re-implementation of LMArena's method (per-round L-BFGS-B);
          speed ratio and interval agreement.
coverage  simulated arenas with known strengths: 95% interval coverage.

Timings are wall-clock on whatever else the machine is doing; CPU seconds
(this process and its workers) are printed too.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from lmarena_reference import bootstrap_reference, collapse, point_reference  # noqa: E402

from arena.core.outcomes import A_WINS, B_WINS, TIE  # noqa: E402
from arena.engine.counts import count_table, from_cells  # noqa: E402
from arena.engine.fitting.fit import fit  # noqa: E402
from arena.engine.resampling.blas import set_blas_threads  # noqa: E402
from arena.engine.resampling.bootstrap import bootstrap  # noqa: E402
from arena.engine.scale import BASE, SCALE  # noqa: E402

SHARED = ROOT / ".." / "shared"


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def peak_rss_mb() -> tuple[float, float]:
    """Peak resident set size (MB) of this process and of its largest finished worker."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, kids


class Timer:
    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), cpu_seconds()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall
        self.cpu = cpu_seconds() - self.cpu


def synthetic(m: int, n_battles: int, tie_rate: float, seed: int):
    """All pairs played in both display orders; returns (table, theta)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 0.8, m)
    i, j = np.triu_indices(m, 1)
    pairs = np.concatenate([np.stack([i, j], 1), np.stack([j, i], 1)])
    per_pair = rng.multinomial(n_battles, np.full(len(pairs), 1 / len(pairs)))
    p = 1 / (1 + np.exp(-(theta[pairs[:, 0]] - theta[pairs[:, 1]])))
    probs = np.stack([(1 - tie_rate) * p, (1 - tie_rate) * (1 - p), np.full_like(p, tie_rate)], 1)
    # multinomial split of each pair's battles, vectorised as sequential binomials
    wins = rng.binomial(per_pair, probs[:, 0])
    losses = rng.binomial(per_pair - wins, probs[:, 1] / (probs[:, 1] + probs[:, 2]))
    ties = per_pair - wins - losses
    a = np.repeat(pairs[:, 0], 3)
    b = np.repeat(pairs[:, 1], 3)
    o = np.tile([A_WINS, B_WINS, TIE], len(pairs))
    n = np.stack([wins, losses, ties], 1).ravel().astype(float)
    return from_cells(a, b, o, n, n_models=m), theta


def section_scale(quick: bool) -> None:
    m, n, rounds = (100, 300_000, 200) if quick else (250, 3_000_000, 1000)
    print(f"\n== scale: {m} models, all pairs, {n:,} battles, 10% ties, {rounds} rounds ==")
    table, _ = synthetic(m, n, 0.1, seed=1)
    print(f"cells in table: {table.n_cells:,}")
    with Timer() as tf:
        point = fit(table)
    print(
        f"point fit: {tf.wall:.2f} s wall, grad norm {point.grad_norm:.2e}, converged {point.converged}"
    )
    with Timer() as tb:
        bs = bootstrap(table, rounds=rounds, seed=0, point=point)
    print(
        f"bootstrap {rounds} rounds: {tb.wall:.2f} s wall ({tb.cpu:.2f} s CPU incl. workers); "
        f"failed rounds {bs.failed_rounds.size}, prior rounds {bs.prior_rounds.size}"
    )
    print(f"end to end (fit + bootstrap): {tf.wall + tb.wall:.2f} s")
    own, kids = peak_rss_mb()
    print(
        f"peak RSS: main process {own:.0f} MB, largest worker {kids:.0f} MB "
        f"(working set scales with chunk rounds x categories, bounded by CHUNK_ELEMS, "
        f"plus rounds x models for the samples; not with battles)"
    )


def load_lmarena():
    # Imported here: the test helpers load pytest and SQLAlchemy, which would
    # inflate the peak RSS that the scale section reports.
    from tests.engine.conftest import read_lmarena

    return read_lmarena(SHARED / "data" / "lmarena-140k" / "battles.csv.gz")


def section_real(quick: bool) -> None:
    if not SHARED.is_dir():
        print("\n== real: SKIPPED, ../shared missing ==")
        return
    names, a, b, o = load_lmarena()
    rounds = 1000
    print(f"\n== real: LMArena 140k ({a.size:,} votes, {len(names)} models), {rounds} rounds ==")
    with Timer() as ta:
        table = count_table(a, b, o, n_models=len(names))
    with Timer() as tf:
        point = fit(table)
    with Timer() as tb:
        bs = bootstrap(table, rounds=rounds, seed=0, point=point)
    print(
        f"aggregate {ta.wall:.2f} s, point fit {tf.wall:.3f} s, bootstrap {tb.wall:.2f} s wall "
        f"({tb.cpu:.2f} s CPU); failed {bs.failed_rounds.size}, prior rounds {bs.prior_rounds.size}"
    )


def battles_from_table(table, seed: int):
    """Expand a count table into shuffled per-battle arrays (what both methods start from)."""
    reps = table.n.astype(np.int64)
    order = np.random.default_rng(seed).permutation(int(reps.sum()))
    return tuple(np.repeat(col, reps)[order] for col in (table.a, table.b, table.outcome))


def section_side(quick: bool, repeats: int = 5) -> None:
    m, n, rounds = (40, 200_000, 30) if quick else (100, 1_000_000, 100)
    print(
        f"\n== side by side: {m} models, {n:,} battles, {rounds} rounds, from per-battle arrays =="
    )
    table, _ = synthetic(m, n, 0.1, seed=2)
    a, b, o = battles_from_table(table, seed=3)
    y2 = np.where(o == A_WINS, 2, np.where(o == B_WINS, 0, 1))
    # the reference is serial (issue 3): one BLAS thread, so that no spinning
    # BLAS threads of it linger on the second core while the engine runs
    set_blas_threads(1)
    runs = []
    # alternate the two methods so that both see the same machine state
    for _ in range(repeats):
        with Timer() as tc:
            collapse(a, b, y2)
        with Timer() as tr:
            ref = bootstrap_reference(a, b, y2, m, rounds, seed=0)
        with Timer() as ta:
            counted = count_table(a, b, o, n_models=m)
        with Timer() as tf:
            point = fit(counted)
        with Timer() as tb:
            bs = bootstrap(counted, rounds=rounds, seed=0, point=point)
        te = ta.wall + tf.wall + tb.wall
        runs.append(
            (tr.wall, tc.wall, te, ta.wall, tf.wall, tb.wall, tr.cpu, ta.cpu + tf.cpu + tb.cpu)
        )
        print(
            f"  run: LMArena {tr.wall:.3f} s (collapse {tc.wall:.3f} s), engine {te:.3f} s "
            f"(aggregate {ta.wall:.3f}, fit {tf.wall:.3f}, bootstrap {tb.wall:.3f}) -> {tr.wall / te:.1f}x"
        )
    ref_w, col_w, eng_w, agg_w, fit_w, boot_w, ref_cpu, eng_cpu = np.median(np.array(runs), axis=0)
    print(f"median of {repeats} alternating runs:")
    print(
        f"LMArena method, serial: {ref_w:.3f} s wall, {ref_cpu:.2f} s CPU (collapse by np.unique {col_w:.3f} s, "
        f"resample + {rounds} L-BFGS-B fits {ref_w - col_w:.3f} s)"
    )
    print(
        f"this engine:            {eng_w:.3f} s wall, {eng_cpu:.2f} s CPU (aggregate {agg_w:.3f} s, "
        f"point fit {fit_w:.3f} s, bootstrap {boot_w:.3f} s)"
    )
    print(
        f"-> end to end {ref_w / eng_w:.1f}x faster (wall), {ref_cpu / eng_cpu:.1f}x less CPU; "
        f"after aggregation (resample + fits only) {(ref_w - col_w) / (fit_w + boot_w):.1f}x"
    )
    lo_r, hi_r = np.percentile(ref, [2.5, 97.5], axis=0)
    lo_e, hi_e = bs.interval(0.95)
    width_r, width_e = hi_r - lo_r, hi_e - lo_e
    se = bs.se
    # Monte Carlo noise of a 2.5% quantile from `rounds` draws, in SE units
    mc = np.sqrt(0.025 * 0.975 / rounds) / 0.0584 * se
    dev = np.maximum(np.abs(lo_e - lo_r), np.abs(hi_e - hi_r))
    print(
        f"interval width: median {np.median(width_e):.2f} (engine) vs {np.median(width_r):.2f} (LMArena), "
        f"mean ratio {np.mean(width_e / width_r):.3f}"
    )
    print(
        f"endpoint differences: median {np.median(dev):.2f} Elo, {np.mean(dev <= 3 * np.sqrt(2) * mc):.0%} "
        f"within 3 Monte Carlo SDs (independent streams)"
    )
    ra, rb, ry, counts = collapse(a, b, y2)
    ref_point = point_reference(ra, rb, ry, counts, m)
    exact = point_reference(ra, rb, ry, counts, m, gtol=1e-13, maxiter=10_000)
    print(
        f"point ratings: max |engine - exact scipy fit| {np.abs(point.rating - exact).max():.5f} Elo; "
        f"LMArena's own stopping rule leaves {np.abs(ref_point - exact).max():.4f} Elo"
    )


def section_coverage(quick: bool) -> None:
    arenas, m, battles, rounds = (100, 8, 1500, 200) if quick else (400, 10, 2500, 400)
    print(f"\n== coverage: {arenas} arenas x {m} models, {battles} battles, {rounds} rounds ==")
    rng = np.random.default_rng(12345)
    hits = sim_hits = total = 0
    with Timer() as t:
        for _ in range(arenas):
            theta = rng.normal(0, 0.6, m)
            truth = BASE + SCALE * (theta - theta.mean())
            a = rng.integers(0, m, battles)
            b = (a + rng.integers(1, m, battles)) % m
            o = np.where(
                rng.random(battles) < 1 / (1 + np.exp(-(theta[a] - theta[b]))), A_WINS, B_WINS
            )
            bs = bootstrap(count_table(a, b, o, n_models=m), rounds=rounds, seed=rng, workers=1)
            lo, hi = bs.interval(0.95)
            hits += int(((lo <= truth) & (truth <= hi)).sum())
            slo, shi = bs.interval(0.95, simultaneous=True)
            sim_hits += int(np.all((slo <= truth) & (truth <= shi)))
            total += m
    print(
        f"per-model 95% coverage: {hits / total:.3f} (target 0.93-0.97); "
        f"simultaneous 95% (all models at once): {sim_hits / arenas:.3f}; {t.wall:.1f} s"
    )


SECTIONS = {
    "scale": section_scale,
    "real": section_real,
    "side": section_side,
    "coverage": section_coverage,
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    args = parser.parse_args()
    for name in args.only.split(","):
        SECTIONS[name.strip()](args.quick)


if __name__ == "__main__":
    main()
