"""Uniform sampling vs `arena plan` (benchmark, not a test): battles to a precision target.

Truth: the Bradley–Terry ratings of the shared LMArena 140k votes (53 models).
Both strategies start from the same warm-up (``--warmup`` battles per pair),
then collect battles in batches of ``--batch``; `plan` recomputes its
sampling probabilities (``arena.plan.weights.pair_weights``) before every batch from
the current fit. Battles are decisive, drawn from the true win probabilities.
Reported per strategy and seed:

* battles until the median 95% interval width (Fisher) is <= ``--width`` Elo
  (the paper's rule, eq. 9);
* battles until every adjacent pair whose true gap is >= ``--gap`` Elo is
  separated (difference interval excludes 0) -- a stable tier structure
  (the tier-boundary rule).

The paper (Chiang et al. 2024, fig. 7) reports 6,800 (uniform) vs 4,400
(active) samples for its precision target: a ratio of 1.55.

    python benchmarks/bench_plan.py            # full
    python benchmarks/bench_plan.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.engine.counts import from_cells  # noqa: E402
from arena.engine.fitting.fit import fit
from arena.engine.scale import SCALE  # noqa: E402
from arena.plan.weights import pair_weights  # noqa: E402
from benchmarks._util import SHARED  # noqa: E402


def lmarena_truth() -> np.ndarray:
    import csv
    import gzip

    names: dict[str, int] = {}
    a, b, o = [], [], []
    with gzip.open(SHARED / "lmarena-140k" / "battles.csv.gz", "rt") as fh:
        for row in csv.DictReader(fh):
            if row["model_a"] == row["model_b"]:
                continue
            i = names.setdefault(row["model_a"], len(names))
            j = names.setdefault(row["model_b"], len(names))
            w = row["winner"]
            a.append(i)
            b.append(j)
            o.append(0 if w == "model_a" else 1 if w == "model_b" else 2)
    t = from_cells(np.array(a), np.array(b), np.array(o), np.ones(len(a)), n_models=len(names))
    return fit(t).rating


def run(truth, strategy, *, seed, warmup, batch, max_battles, width, gap):
    m = truth.size
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(m, k=1)
    p_true = expit((truth[iu] - truth[ju]) / SCALE)
    n = np.full(iu.size, float(warmup))
    wins = rng.binomial(warmup, p_true).astype(float)
    order = np.argsort(-truth)
    adj = [(order[k], order[k + 1]) for k in range(m - 1)]
    need = [(i, j) for i, j in adj if truth[i] - truth[j] >= gap]
    reached = {"width": None, "tiers": None}
    while True:
        total = int(n.sum())
        cells_a = np.r_[iu, iu]
        cells_b = np.r_[ju, ju]
        out = np.r_[np.zeros(iu.size, int), np.ones(iu.size, int)]
        t = from_cells(cells_a, cells_b, out, np.r_[wins, n - wins], n_models=m)
        f = fit(t)
        se = f.se
        if reached["width"] is None and np.median(2 * 1.959964 * se) <= width:
            reached["width"] = total
        if reached["tiers"] is None:
            ok = True
            for i, j in need:
                v = f.cov[i, i] + f.cov[j, j] - 2 * f.cov[i, j]
                if (f.rating[i] - f.rating[j]) <= 1.959964 * np.sqrt(v):
                    ok = False
                    break
            if ok:
                reached["tiers"] = total
        if all(v is not None for v in reached.values()) or total >= max_battles:
            return reached
        if strategy == "uniform":
            prob = np.full(iu.size, 1.0 / iu.size)
        else:
            rule = "paper" if reached["width"] is None else "tiers"
            # normal draws from the Fisher covariance stand in for bootstrap samples
            samples = rng.multivariate_normal(f.rating, f.cov, size=200, method="eigh")
            counts = np.zeros((m, m))
            counts[iu, ju] = n
            counts[ju, iu] = n
            plan = pair_weights(f.rating, samples, counts, rule=rule)
            prob = np.zeros(iu.size)
            key = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(iu, ju, strict=True))}
            for i, j, p in zip(plan.i, plan.j, plan.probability, strict=True):
                prob[key[(int(min(i, j)), int(max(i, j)))]] += p
        add = rng.multinomial(batch, prob)
        wins += rng.binomial(add, p_true)
        n += add


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--width", type=float, default=10.0)
    ap.add_argument("--gap", type=float, default=20.0)
    ap.add_argument("--batch", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.width, args.batch = 1, 40.0, 5000
    print(
        f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}"
    )
    truth = lmarena_truth()
    print(
        f"{truth.size} models; target median width {args.width} Elo; adjacent gaps >= {args.gap} Elo separated"
    )
    rows = []
    for seed in range(args.seeds):
        for strategy in ("uniform", "plan"):
            t0 = time.perf_counter()
            r = run(
                truth,
                strategy,
                seed=seed,
                warmup=args.warmup,
                batch=args.batch,
                max_battles=20_000_000,
                width=args.width,
                gap=args.gap,
            )
            rows.append((seed, strategy, r))
            print(
                f"seed {seed} {strategy:8s} width target at {r['width']} battles, tier target at {r['tiers']} battles ({time.perf_counter() - t0:.1f}s)"
            )
    for key in ("width", "tiers"):
        u = [r[key] for _, s, r in rows if s == "uniform"]
        p = [r[key] for _, s, r in rows if s == "plan"]
        ratio = np.median(np.array(u, float) / np.array(p, float))
        print(
            f"{key}: uniform median {np.median(u):.0f}, plan median {np.median(p):.0f}, ratio uniform/plan {ratio:.2f} (paper: 6800/4400 = 1.55; batch {args.batch} bounds the resolution)"
        )
    print(
        f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}"
    )


if __name__ == "__main__":
    main()
