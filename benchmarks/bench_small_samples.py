"""Coverage of rating intervals for a new model with few battles (issue 11).

Simulation: an established board of ``--models`` models (true strengths
spread evenly over +-1.5 logits, ``--per-pair`` battles per pair) and one new
model whose true strength is drawn from N(0, 1) logits, entering with n
battles against opponents drawn uniformly from the board.  Outcomes follow
the half-tie Bradley–Terry model exactly: a tie with probability
``4 * 0.3 * p (1 - p)``, otherwise a win with the probability that makes the
expected score equal ``p = expit(theta_new - theta_opp)``, so the estimator
is consistent and any miss is the interval's fault.

For each n the script prints, over ``--reps`` replications, the share of
95% intervals that contain the new model's true rating (and the median
width) for

* ``bootstrap``: the percentile bootstrap of the joint fit (the engine
  before issue 11: weak prior when the new model never won or never lost);
* ``fisher``: ``rating +- 1.96 se`` from the observed information of the
  same fit;
* ``sandwich``: the same with the sandwich (Huber–White) SE;
* ``rule``: the engine's default since issue 11 (``rate()``): comparable set
  only, small-sample rule (hull of bootstrap, Fisher and score intervals
  below 100 battles); a new model outside the comparable set (it never lost
  or never won) gets its one-sided score interval on the set's scale.

``narrower`` is the share of replications in which the rule's interval is
narrower than Fisher's (goal: 0 at n < 10).  The true rating is the new
model's strength minus the mean strength of the models the fit centres on.

Run: ``PYTHONPATH=. python benchmarks/bench_small_samples.py`` (``--quick``
for a smoke run).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.special import expit, ndtri

from arena.core.outcomes import A_WINS, B_WINS, TIE
from arena.engine.counts import count_table
from arena.engine.fitting.analytic import sandwich_cov
from arena.engine.fitting.smallsample import widen_small_samples
from arena.engine.rate import rate
from arena.engine.scale import BASE, SCALE

NS = (2, 5, 10, 20, 50, 100, 500)
TIE_PEAK = 0.3


def outcomes(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    """Half-tie BT outcomes with expected score ``p`` for the first model."""
    p_tie = 4.0 * TIE_PEAK * p * (1.0 - p)
    q = (p - p_tie / 2.0) / (1.0 - p_tie)
    u, v = rng.random(p.size), rng.random(p.size)
    return np.where(u < p_tie, TIE, np.where(v < q, A_WINS, B_WINS))


def one_board(rng, theta_est: np.ndarray, per_pair: int, n_new: int):
    m = theta_est.size
    ii, jj = np.triu_indices(m, 1)
    a = np.repeat(ii, per_pair)
    b = np.repeat(jj, per_pair)
    theta_new = rng.normal(0.0, 1.0)
    opp = rng.integers(0, m, n_new)
    theta = np.append(theta_est, theta_new)
    a = np.concatenate([a, np.full(n_new, m)])
    b = np.concatenate([b, opp])
    o = outcomes(rng, expit(theta[a] - theta[b]))
    return count_table(a, b, o, n_models=m + 1), theta


def run(args) -> None:
    rng = np.random.default_rng(args.seed)
    theta_est = np.linspace(-1.5, 1.5, args.models)
    z = float(ndtri(0.5 + args.level / 2))
    k = args.models  # index of the new model
    print(
        f"{args.models} established models, {args.per_pair} battles per pair; new model "
        f"~ N(0, 1) logits; {args.reps} replications per n, {args.rounds} bootstrap rounds, "
        f"level {args.level}, seed {args.seed}"
    )
    print(
        f"{'n':>4} | {'bootstrap':>15} | {'fisher':>15} | {'sandwich':>15} | "
        f"{'rule':>15} | {'narrower':>8} | {'outside':>7}"
    )
    print("     |  cover   width  |  cover   width  |  cover   width  |  cover   width  |")
    t0 = time.perf_counter()
    for n in args.ns:
        hit = {key: 0 for key in ("bootstrap", "fisher", "sandwich", "rule")}
        width = {key: [] for key in hit}
        narrower = outside = 0
        for _ in range(args.reps):
            table, theta = one_board(rng, theta_est, args.per_pair, n)
            seed = int(rng.integers(2**31))
            joint = rate(
                table,
                rounds=args.rounds,
                seed=seed,
                comparable="joint",
                small_sample=False,
                workers=1,
            )
            point = joint.fit
            truth = BASE + SCALE * (theta[k] - theta.mean())
            r, fse = joint.rating[k], point.se[k]
            sse = float(np.sqrt(max(sandwich_cov(point)[k, k], 0.0)))
            bounds = {
                "bootstrap": (joint.ci_low[k], joint.ci_high[k]),
                "fisher": (r - z * fse, r + z * fse),
                "sandwich": (r - z * sse, r + z * sse),
            }
            rule_truth = truth
            if point.mle_exists:
                lo, hi, _ = widen_small_samples(
                    point, joint.ci_low, joint.ci_high, joint.se, level=args.level
                )
                bounds["rule"] = (lo[k], hi[k])
            else:
                rule = rate(table, rounds=args.rounds, seed=seed, workers=1)
                bounds["rule"] = (rule.ci_low[k], rule.ci_high[k])
                if not rule.comparable[k]:
                    outside += 1
                    # one-sided interval on the comparable set's scale (the board without it)
                    rule_truth = BASE + SCALE * (theta[k] - theta[:k].mean())
            for key, (lo, hi) in bounds.items():
                t = rule_truth if key == "rule" else truth
                hit[key] += bool(lo <= t <= hi)
                width[key].append(hi - lo)
            if bounds["rule"][1] - bounds["rule"][0] < bounds["fisher"][1] - bounds["fisher"][0]:
                narrower += 1
        cells = " | ".join(
            f"{hit[key] / args.reps:6.3f} {np.median(width[key]):7.0f}"
            for key in ("bootstrap", "fisher", "sandwich", "rule")
        )
        print(f"{n:>4} | {cells} | {narrower / args.reps:8.3f} | {outside / args.reps:7.3f}")
    print(f"({time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--per-pair", type=int, default=150)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--ns", type=int, nargs="+", default=list(NS))
    ap.add_argument("--quick", action="store_true", help="40 replications, 200 rounds")
    args = ap.parse_args()
    if args.quick:
        args.reps, args.rounds = 40, 200
    run(args)


if __name__ == "__main__":
    main()
