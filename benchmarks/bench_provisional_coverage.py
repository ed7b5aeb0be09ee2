"""Coverage of the provisional board's analytic intervals on a board like the bundled one (issue 43).

Simulation on the bundled LMArena board's own design: every one of its
135,624 battles (model pair and sides as recorded, self-plays left out) is
replayed ``--reps`` times with outcomes drawn from the half-tie Bradley–Terry
model at the board's fitted strengths: a tie with probability
``4 * 0.3 * p (1 - p)``, otherwise a win with the probability that makes the
expected score ``p = expit(theta_a - theta_b)`` (so the estimator is
consistent and a miss is the interval's).  Each replicate is rated as the
provisional board rates (:func:`arena.engine.rate.rate`, the comparable set,
the small-sample rule) with ``ci="sandwich"`` and ``ci="fisher"``; a model's
coverage is the share of replicates whose 95% interval holds its true rating
(true strengths centred on the models the replicate rated).

Target (issue 43): 93-97% per model.  Prints, per method, the share of models
in that range, the lowest and highest coverage and the models outside it
(with their battles: the small-sample rule widens intervals below 100
battles on purpose, so those over-cover).

Run: ``PYTHONPATH=. python benchmarks/bench_provisional_coverage.py``
(``--reps 50`` for a quick run). With 1,000 replicates a coverage of 95% has a binomial
SE of 0.7 points, so a model well calibrated falls outside 93-97% about 1 time in 200.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import time

import numpy as np

from arena.core.outcomes import A_WINS, B_WINS, TIE
from arena.core.resources import demo_data
from arena.engine.counts import count_table
from arena.engine.rate import rate
from arena.engine.scale import BASE, SCALE

#: Share of decisive-or-tie battles that end in a tie at an even match (0.3 x 4pq).
TIE_RATE = 0.3


def bundled_design() -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(model_a, model_b, outcome code, names) of the bundled board's battles."""
    names: dict[str, int] = {}
    a, b, o = [], [], []
    code = {"model_a": A_WINS, "model_b": B_WINS}
    with gzip.open(demo_data(), "rt", newline="") as f:
        for row in csv.DictReader(f):
            if row["model_a"] == row["model_b"]:
                continue
            a.append(names.setdefault(row["model_a"], len(names)))
            b.append(names.setdefault(row["model_b"], len(names)))
            o.append(code.get(row["winner"], TIE))
    return np.array(a), np.array(b), np.array(o), list(names)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min load average), {os.cpu_count()} cores")
    a, b, o, names = bundled_design()
    m = len(names)
    truth = rate(count_table(a, b, o, n_models=m), ci="fisher", rounds=10)
    theta = (truth.rating - BASE) / SCALE
    p_a = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    tie = 4 * TIE_RATE * p_a * (1 - p_a)
    win = p_a - tie / 2  # expected score p_a: win + tie / 2
    battles = np.bincount(a, minlength=m) + np.bincount(b, minlength=m)
    rng = np.random.default_rng(args.seed)
    methods = ("sandwich", "fisher")
    hits = {k: np.zeros(m) for k in methods}
    rated = {k: np.zeros(m) for k in methods}
    t0 = time.perf_counter()
    for _ in range(args.reps):
        u = rng.random(a.size)
        outcome = np.where(u < win, A_WINS, np.where(u < win + tie, TIE, B_WINS))
        table = count_table(a, b, outcome, n_models=m)
        for method in methods:
            r = rate(table, ci=method, rounds=10, seed=0)
            ok = np.isfinite(r.rating) & np.isfinite(r.ci_low) & np.isfinite(r.ci_high)
            true = BASE + SCALE * (theta - theta[ok].mean())
            rated[method] += ok
            hits[method] += ok & (r.ci_low <= true) & (true <= r.ci_high)
    seconds = time.perf_counter() - t0
    print(f"load after: {os.getloadavg()[0]:.2f}; {args.reps} replicates in {seconds:.0f} s")
    print(f"{m} models, {a.size:,} battles a replicate, 95% intervals, target 93-97% per model")
    for method in methods:
        cov = np.where(rated[method] > 0, hits[method] / np.maximum(rated[method], 1), np.nan)
        inside = (cov >= 0.93) & (cov <= 0.97)
        print(
            f"{method:9s} models in 93-97%: {inside.sum()}/{m}  coverage min {np.nanmin(cov):.3f} "
            f"median {np.nanmedian(cov):.3f} max {np.nanmax(cov):.3f}"
        )
        for i in np.flatnonzero(~inside):
            print(
                f"    {names[i]:45s} {cov[i]:.3f} ({battles[i]:,} battles, "
                f"rated in {int(rated[method][i])}/{args.reps})"
            )


if __name__ == "__main__":
    main()
