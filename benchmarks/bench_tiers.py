"""Simulated error rates and power of the tier rules in ``arena.engine.inference.tiers``.

Run::

    PYTHONPATH=. python benchmarks/bench_tiers.py [--boards 2000] [--rounds 1000] [--seed 20261130]

Each simulated board has known true ratings ``theta``.  The rating engine is
replaced by a *normal parametric bootstrap*: the point estimate is
``theta + e`` and every bootstrap round is ``estimate + e*`` where ``e`` and
``e*`` are independent draws of ``e = se_i * z_i + common * w`` (independent
per-model noise with heterogeneous standard errors ``se_i`` plus one shared
shift ``w`` per draw, which cancels in every difference).  The shared shift is
what makes the paired difference sharper than two marginal intervals; real
Bradley-Terry bootstraps have such correlation (the ratings are only defined up
to a common anchor).  Marginal intervals are the percentile intervals of the
bootstrap columns.

For every method it prints, over all boards:

``P(eq split)``
    fraction of boards where some truly equal pair lands in different tiers;
``eq split/pair``
    fraction of truly equal pairs split;
``P(inversion)``
    fraction of boards where some truly better model is in a lower tier (larger
    tier number) than a truly worse one;
``inv/pair``
    fraction of truly ordered pairs so inverted;
``P(any error)``
    boards with either of the above (the family-wise error of the tiering);
``power``
    fraction of truly different pairs with a difference of at least
    ``GAP_SE`` standard errors of the difference that are correctly put in
    different tiers;
``tiers``
    mean number of tiers.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena.engine.inference.tiers import tiers_leader_overlap, tiers_paired

LEVEL = 0.95
# Pairs whose true difference is at least this many standard errors of the
# difference count towards power.
GAP_SE = 3.0


@dataclass(frozen=True)
class Design:
    """A simulated board: true ratings and the noise of the estimates."""

    name: str
    theta: np.ndarray
    se: np.ndarray
    common: float


def simulate(
    design: Design, rounds: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One noisy point estimate and its normal parametric bootstrap samples."""
    m = design.theta.size

    def noise(n: int) -> np.ndarray:
        return design.se * rng.standard_normal((n, m)) + design.common * rng.standard_normal((n, 1))

    estimate = design.theta + noise(1)[0]
    samples = estimate + noise(rounds)
    return estimate, samples


def board_errors(theta: np.ndarray, tiers: np.ndarray, se_diff: np.ndarray) -> dict[str, float]:
    """Error and power counts of one tiering against the true ratings."""
    diff = theta[:, None] - theta[None, :]
    tier_gap = tiers[:, None] - tiers[None, :]
    iu = np.triu_indices(theta.size, k=1)
    eq = diff[iu] == 0.0
    split = tier_gap[iu] != 0
    # Orient every truly ordered pair as (better, worse).
    better_first = np.where(diff[iu] > 0.0, 1, -1)
    ordered = ~eq
    inverted = ordered & (better_first * tier_gap[iu] > 0)
    strong = ordered & (np.abs(diff[iu]) >= GAP_SE * se_diff[iu])
    separated = strong & (better_first * tier_gap[iu] < 0)
    return {
        "eq_pairs": float(eq.sum()),
        "eq_split": float((eq & split).sum()),
        "ord_pairs": float(ordered.sum()),
        "inv": float(inverted.sum()),
        "strong": float(strong.sum()),
        "sep": float(separated.sum()),
        "tiers": float(tiers.max()),
    }


def overlap_method(rating: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """Leader-overlap tiers on the marginal percentile intervals."""
    alpha = 1.0 - LEVEL
    low, high = np.quantile(samples, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return tiers_leader_overlap(rating, low, high)


def paired_method(rule: str, correction: str, pvalues: str = "percentile") -> Callable:
    def run(rating: np.ndarray, samples: np.ndarray) -> np.ndarray:
        return tiers_paired(
            rating, samples, level=LEVEL, correction=correction, rule=rule, pvalues=pvalues
        ).tiers

    return run


METHODS: dict[str, Callable] = {
    "overlap-leader": overlap_method,
    "paired-leader-maxt": paired_method("leader", "maxt"),
    "paired-leader-holm": paired_method("leader", "holm", "normal"),
    "paired-leader-bh": paired_method("leader", "bh"),
    "paired-leader-none": paired_method("leader", "none"),
    "paired-cut-maxt": paired_method("cut", "maxt"),
    "paired-cut-holm": paired_method("cut", "holm", "normal"),
    "paired-cut-bh": paired_method("cut", "bh"),
}


def designs() -> list[Design]:
    """Boards of 12 models with standard errors of 5-10 Elo points."""
    rng = np.random.default_rng(12345)
    m = 12
    se = rng.uniform(5.0, 10.0, m)
    common = 10.0
    out = [Design("global null (12 equal)", np.zeros(m), se, common)]
    # Six pairs of equal models, pairs 40 Elo apart (about 3-5 SE of a difference).
    out.append(Design("6 equal pairs, 40 apart", -40.0 * (np.arange(m) // 2), se, common))
    # Leader trap: A clearly above, then equal pairs at a borderline distance.
    trap = np.array(
        [0.0, -25.0, -25.0, -25.0, -60.0, -60.0, -60.0, -95.0, -95.0, -95.0, -130.0, -130.0]
    )
    out.append(Design("equal triples 35 apart", trap, se, common))
    # A continuum: 10 Elo steps, nothing equal, adjacent pairs not separable.
    out.append(Design("continuum, 10 apart", -10.0 * np.arange(m), se, common))
    return out


def run_design(design: Design, boards: int, rounds: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    se_diff = np.sqrt(design.se[:, None] ** 2 + design.se[None, :] ** 2)
    totals = {name: {} for name in METHODS}
    anys = {name: np.zeros(3) for name in METHODS}
    for _ in range(boards):
        rating, samples = simulate(design, rounds, rng)
        for name, method in METHODS.items():
            e = board_errors(design.theta, method(rating, samples), se_diff)
            for key, value in e.items():
                totals[name][key] = totals[name].get(key, 0.0) + value
            anys[name] += [e["eq_split"] > 0, e["inv"] > 0, e["eq_split"] + e["inv"] > 0]
    print(f"\n## {design.name}  (M={design.theta.size}, {boards} boards, {rounds} rounds)")
    print(
        f"{'method':22s} {'P(eq split)':>11s} {'eq split/pair':>13s} {'P(inversion)':>12s}"
        f" {'inv/pair':>9s} {'P(any error)':>12s} {'power':>6s} {'tiers':>6s}"
    )

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.4f}" if b > 0 else "   -  "

    for name in METHODS:
        t = totals[name]
        a = anys[name] / boards
        print(
            f"{name:22s} {a[0]:11.4f} {ratio(t['eq_split'], t['eq_pairs']):>13s} {a[1]:12.4f}"
            f" {ratio(t['inv'], t['ord_pairs']):>9s} {a[2]:12.4f}"
            f" {ratio(t['sep'], t['strong']):>6s} {t['tiers'] / boards:6.2f}"
        )


def time_large_board(rounds: int, seed: int) -> None:
    """Wall time (best of 3) of each rule on a 250-model board (the issue's scale)."""
    rng = np.random.default_rng(seed)
    m = 250
    theta = np.sort(rng.normal(0.0, 100.0, m))[::-1]
    design = Design("large", theta, rng.uniform(5.0, 10.0, m), 10.0)
    rating, samples = simulate(design, rounds, rng)
    print(f"\n## timing, M={m}, {rounds} rounds")
    for name in ("paired-leader-maxt", "paired-cut-maxt", "overlap-leader"):
        best = np.inf
        for _ in range(3):  # best of 3: the first call pays for page faults
            start = time.perf_counter()
            tiers = METHODS[name](rating, samples)
            best = min(best, time.perf_counter() - start)
        print(f"{name:22s} {best:6.3f} s  tiers={tiers.max()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boards", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"level={LEVEL}, power counts pairs >= {GAP_SE} SE of the difference apart")
    for k, design in enumerate(designs()):
        run_design(design, args.boards, args.rounds, args.seed + k)
    time_large_board(args.rounds, args.seed)
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
