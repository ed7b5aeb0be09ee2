"""Style-control benchmarks: speed, memory, agreement with FastChat's method, coverage.

Run from the repository root::

    python benchmarks/bench_style.py                 # all sections
    python benchmarks/bench_style.py --quick         # smaller sizes, a smoke run
    python benchmarks/bench_style.py --only real,side,scale,coverage

Sections
--------
real      1000 bootstrap rounds of the style-controlled fit on the shared
          ko-arena-hard battles, end to end from per-battle arrays (features,
          rows, point fit, bootstrap); the JSON parsing is timed separately.
side      the same data, one run: FastChat's method (``fastchat_style_reference``:
          index bootstrap, one L-BFGS-B per round, serial) for a few rounds,
          extrapolated per round, next to this engine's 1000 rounds with the
          same objective (``style_reg=0.5``); per-round wall and CPU ratios,
          agreement of the point fits and of the bootstrap SDs.
scale     synthetic 1M battles x 250 models with features: point fit and
          bootstrap rounds, wall/CPU time, peak RSS.
coverage  simulated boards with known ratings and coefficients: coverage of
          95% intervals (bootstrap and sandwich); with gamma = 0 the
          style-controlled ratings against the raw ones.

Timings are wall-clock on whatever else the machine is doing; the load
average is printed with every section.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_engine import Timer, peak_rss_mb  # noqa: E402
from fastchat_style_reference import (  # noqa: E402
    bootstrap_reference,
    point_reference,
    style_features,
)

from arena.core.outcomes import A_WINS, B_WINS  # noqa: E402
from arena.engine.counts import count_table  # noqa: E402
from arena.engine.fitting.fit import fit  # noqa: E402
from arena.engine.resampling.blas import set_blas_threads  # noqa: E402
from arena.engine.scale import SCALE  # noqa: E402
from arena.engine.style.design import style_table  # noqa: E402
from arena.engine.style.rate import bootstrap_style, fit_style, rate_style  # noqa: E402
from tests.engine.style_data import KO_ARENA_HARD, load_ko_arena_hard, simulate_style  # noqa: E402


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def ko_data():
    t0 = time.perf_counter()
    d = load_ko_arena_hard(KO_ARENA_HARD / "battles.jsonl.gz")
    print(
        f"  parsed {d.a.size} battles with style metadata ({d.n_without_metadata} without), "
        f"{len(d.models)} models, in {time.perf_counter() - t0:.2f} s (JSON parsing, not timed below)"
    )
    return d


def section_real(d, quick: bool) -> None:
    rounds = 200 if quick else 1000
    print(f"\n[real] ko-arena-hard, {rounds} rounds, MLE, percentile intervals   ({load()})")
    with Timer() as t:
        tab = style_table(
            d.a, d.b, d.outcome, d.side_a, d.side_b, n_models=len(d.models), weight=d.weight
        )
        r = rate_style(tab, rounds=rounds, seed=1)
    print(
        f"  end to end {t.wall:.2f} s wall, {t.cpu:.2f} s CPU; {tab.n_rows} rows; "
        f"failed rounds {r.diagnostics['n_failed_rounds']}, prior rounds "
        f"{r.diagnostics['n_prior_rounds']}"
    )
    for c in r.coefficients():
        print(
            f"  {c['feature']:8s} {c['estimate']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}] logits/SD"
        )
    raw = fit(count_table(d.a, d.b, d.outcome, n_models=len(d.models), weight=d.weight))
    moved = np.abs(r.rating - raw.rating)
    print(
        f"  style vs raw ratings: median |change| {np.median(moved):.1f} Elo, max {moved.max():.1f}"
    )
    own, kids = peak_rss_mb()
    print(f"  peak RSS so far {own:.0f} MB ({load()})")


def section_side(d, quick: bool, ref_rounds: int) -> None:
    rounds = 200 if quick else 1000
    keep = d.a != d.b
    a, b, o, w = d.a[keep], d.b[keep], d.outcome[keep], d.weight[keep]
    fa, fb = d.side_a[keep], d.side_b[keep]
    y = np.where(o == A_WINS, 1.0, np.where(o == B_WINS, 0.0, 0.5))
    m = len(d.models)
    print(
        f"\n[side] ko-arena-hard, style_reg=0.5 (FastChat's objective), one run   ({load()})\n"
        f"  reference: FastChat's method for {ref_rounds} rounds (serial, one BLAS thread), "
        f"extrapolated per round; engine: {rounds} rounds, 2 worker threads"
    )
    set_blas_threads(1)
    ref = {}
    for grad in ("add.at", "bincount"):
        with Timer() as tr:
            ref_r, ref_c = bootstrap_reference(
                a, b, fa, fb, y, w, m, ref_rounds, seed=0, gradient=grad
            )
        ref[grad] = (tr.wall / ref_rounds, tr.cpu / ref_rounds)
    with Timer() as te:
        tab = style_table(a, b, o, fa, fb, n_models=m, weight=w)
        point = fit_style(tab, style_reg=0.5)
        boot = bootstrap_style(tab, rounds=rounds, seed=1, point=point)
    per_eng, cpu_eng = te.wall / rounds, te.cpu / rounds
    print(
        f"  engine {per_eng * 1e3:.2f} ms/round wall ({cpu_eng * 1e3:.2f} ms CPU), "
        f"{te.wall:.2f} s for {rounds} rounds end to end"
    )
    for grad, label in (
        ("add.at", "FastChat as published (np.add.at gradient)"),
        ("bincount", "reference with a faster np.bincount gradient"),
    ):
        per_ref, cpu_ref = ref[grad]
        print(
            f"  {label}: {per_ref * 1e3:.0f} ms/round wall ({cpu_ref * 1e3:.0f} ms CPU)"
            f" -> per-round ratio {per_ref / per_eng:.1f}x wall, {cpu_ref / cpu_eng:.1f}x CPU"
        )
    print(f"  ({load()})")
    # agreement: point fits of the same objective
    rr, rc = point_reference(a, b, style_features(fa, fb), y, w, m)
    print(
        f"  point fits: max |rating diff| {np.abs((rr - rr.mean()) - (point.rating - 1000)).max():.3f}"
        f" Elo (FastChat's L-BFGS stops at gtol=1e-6), max |coef diff| "
        f"{np.abs(rc - point.coef).max():.2e}"
    )
    # a tight fit of FastChat's objective by the reference code itself
    rr2, rc2 = point_reference(
        a, b, style_features(fa, fb), y, w, m, gtol=1e-10, ftol=0.0, maxiter=5000
    )
    print(
        f"  reference run to gtol=1e-10: max |rating diff| "
        f"{np.abs((rr2 - rr2.mean()) - (point.rating - 1000)).max():.2e} Elo, "
        f"max |coef diff| {np.abs(rc2 - point.coef).max():.2e}"
    )
    if ref_rounds >= 5:
        ratio = ref_r.std(axis=0, ddof=1) / boot.ratings.se
        print(
            f"  bootstrap SDs, reference / engine: median {np.median(ratio):.2f} "
            f"(from only {ref_rounds} reference rounds: expect +/- {1 / np.sqrt(2 * ref_rounds):.0%})"
        )


def synthetic_style(m: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    return simulate_style(rng, n_models=m, n_battles=n, gamma=[0.5, 0.1, -0.1, 0.05])


def section_scale(quick: bool, rounds: int) -> None:
    m, n = (250, 100_000) if quick else (250, 1_000_000)
    print(f"\n[scale] synthetic {n} battles x {m} models, 4 features   ({load()})")
    sim = synthetic_style(m, n, seed=5)
    with Timer() as t1:
        tab = style_table(sim.a, sim.b, sim.outcome, sim.side_a, sim.side_b, n_models=m)
        point = fit_style(tab)
    with Timer() as t2:
        boot = bootstrap_style(tab, rounds=rounds, seed=1, point=point)
    own, kids = peak_rss_mb()
    print(
        f"  rows {tab.n_rows}; table + point fit {t1.wall:.2f} s; {rounds} rounds "
        f"{t2.wall:.2f} s wall ({t2.cpu:.2f} s CPU) = {t2.wall / rounds * 1e3:.1f} ms/round; "
        f"failed {boot.ratings.failed_rounds.size}"
    )
    print(f"  peak RSS {own:.0f} MB (this process; target < 2048)   ({load()})")


def section_coverage(quick: bool) -> None:
    arenas = 60 if quick else 400
    rounds = 200 if quick else 400
    m, n = 8, 3000
    gamma = np.array([0.6, 0.2, -0.2, 0.0])
    print(
        f"\n[coverage] {arenas} simulated boards x {m} models, {n} battles, gamma={gamma.tolist()}"
        f", 95% intervals ({rounds} bootstrap rounds)   ({load()})"
    )
    rng = np.random.default_rng(2025)
    hits = {k: [0, 0] for k in ("bootstrap", "sandwich")}
    chits = {k: [0, 0] for k in hits}
    t0 = time.perf_counter()
    for _ in range(arenas):
        sim = simulate_style(rng, n_models=m, n_battles=n, gamma=gamma)
        tab = style_table(sim.a, sim.b, sim.outcome, sim.side_a, sim.side_b, n_models=m)
        true_r = 1000 + SCALE * sim.theta
        for ci in hits:
            r = rate_style(tab, ci=ci, rounds=rounds, seed=int(rng.integers(1 << 30)), workers=1)
            hits[ci][0] += int(((r.ci_low <= true_r) & (true_r <= r.ci_high)).sum())
            hits[ci][1] += m
            chits[ci][0] += int(((r.coef_low <= gamma) & (gamma <= r.coef_high)).sum())
            chits[ci][1] += gamma.size
    for ci in hits:
        cr, cc = hits[ci][0] / hits[ci][1], chits[ci][0] / chits[ci][1]
        print(
            f"  {ci:9s} ratings {cr:.3f} (n={hits[ci][1]}, SE {np.sqrt(cr * (1 - cr) / hits[ci][1]):.3f})"
            f"; coefficients {cc:.3f} (n={chits[ci][1]}, SE {np.sqrt(cc * (1 - cc) / chits[ci][1]):.3f})"
            "   target 0.93-0.97"
        )
    # gamma = 0: style-controlled vs raw ratings
    z = []
    for _ in range(arenas // 4):
        sim = simulate_style(rng, n_models=m, n_battles=n, gamma=np.zeros(4))
        tab = style_table(sim.a, sim.b, sim.outcome, sim.side_a, sim.side_b, n_models=m)
        st = fit_style(tab)
        raw = fit(count_table(sim.a, sim.b, sim.outcome, n_models=m))
        diff = st.rating - raw.rating
        # Hausman: under gamma = 0 the raw fit is efficient, var(diff) = var(style) - var(raw)
        z.append((diff / raw.se, diff / np.sqrt(np.maximum(st.se**2 - raw.se**2, 1e-300))))
    rel = np.concatenate([p[0] for p in z])
    haus = np.concatenate([p[1] for p in z])
    print(
        f"  gamma = 0, {rel.size} ratings: |style - raw| / raw SE: RMS {np.sqrt(np.mean(rel**2)):.2f}, "
        f"max {np.abs(rel).max():.2f}; standardised by its own SD (Hausman): RMS "
        f"{np.sqrt(np.mean(haus**2)):.2f} (1 expected), share beyond 1.96: "
        f"{np.mean(np.abs(haus) > 1.96):.3f} (0.05 expected)"
    )
    print(f"  {time.perf_counter() - t0:.0f} s   ({load()})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="real,side,scale,coverage")
    ap.add_argument("--ref-rounds", type=int, default=10, help="FastChat reference rounds")
    ap.add_argument("--scale-rounds", type=int, default=100)
    args = ap.parse_args()
    only = set(args.only.split(","))
    print(f"bench_style ({load()}, {os.cpu_count()} CPUs)")
    d = ko_data() if only & {"real", "side"} else None
    if "real" in only:
        section_real(d, args.quick)
    if "side" in only:
        section_side(d, args.quick, 3 if args.quick else args.ref_rounds)
    if "scale" in only:
        section_scale(args.quick, 20 if args.quick else args.scale_rounds)
    if "coverage" in only:
        section_coverage(args.quick)


if __name__ == "__main__":
    main()
