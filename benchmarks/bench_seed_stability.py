"""How much the published ranks and tiers depend on the bootstrap seed (issue 41).

Run::

    PYTHONPATH=. python benchmarks/bench_seed_stability.py [--seeds 1-10] [--rounds 1000]

Rebuilds the bundled LMArena overall board (``arena.demo_data()``, every
battle, default options) at the engine level -- the count table of the bundled
CSV through :func:`arena.engine.board.rate_board`, the entry point the rebuild
calls -- once per seed, and prints:

* the number of tiers per seed;
* how many seeds give the modal tier partition (the most common one);
* per seed, the share of ranked models whose simultaneous rank set equals its
  modal set over the seeds.

The data are the same on every seed, so any difference is Monte-Carlo noise of
the bootstrap: a stable board prints one partition on (nearly) every seed and
a share of 1.0 (issue 41's target: the modal partition on >= 9 of 10 seeds and
>= 95% of models on every seed).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import time
from collections import Counter

import numpy as np

from arena.core.outcomes import A_WINS, B_WINS, TIE, TIE_BOTH_BAD
from arena.core.resources import demo_data
from arena.engine.board import BoardOptions, rate_board
from arena.engine.counts import count_table

_OUTCOMES = {"model_a": A_WINS, "model_b": B_WINS, "tie": TIE, "both_bad": TIE_BOTH_BAD}


def demo_table():
    """The overall board's count table of the bundled CSV and the model names by index."""
    names: dict[str, int] = {}
    a, b, o = [], [], []
    with gzip.open(demo_data(), "rt", newline="") as fh:
        for row in csv.DictReader(fh):
            a.append(names.setdefault(row["model_a"], len(names)))
            b.append(names.setdefault(row["model_b"], len(names)))
            o.append(_OUTCOMES[row["winner"]])
    table = count_table(np.array(a), np.array(b), np.array(o), n_models=len(names))
    return table, list(names)


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-10", help="a range of seeds, e.g. 1-10")
    ap.add_argument("--rounds", type=int, default=None, help="default: the rebuild's default")
    args = ap.parse_args(argv)
    table, names = demo_table()
    opts = BoardOptions() if args.rounds is None else BoardOptions(rounds=args.rounds)
    seeds = _seeds(args.seeds)
    print(
        f"LMArena overall board (bundled, {int(table.n.sum()):,} battles), "
        f"seeds {seeds[0]}-{seeds[-1]}, rounds {opts.rounds}, load {os.getloadavg()[0]:.2f}"
    )
    partitions, sets, tiers_n, used = [], [], [], []
    t0 = time.perf_counter()
    for seed in seeds:
        t = time.perf_counter()
        br = rate_board(table, BoardOptions(**{**opts.__dict__, "seed": seed}))
        idx = np.flatnonzero(br.ranked)
        order = idx[np.lexsort((idx, -br.ratings.rating[idx]))]
        tiers = br.tier[order]
        # the partition as the board's boundaries (positions where a new tier starts)
        partitions.append(tuple(int(p) for p in np.flatnonzero(np.diff(tiers)) + 1))
        sets.append({names[i]: (int(br.rank_low[i]), int(br.rank_high[i])) for i in idx})
        tiers_n.append(int(tiers.max()))
        used.append(br.tier_info.get("rounds", opts.rounds))
        print(
            f"  seed {seed:3d}: {tiers_n[-1]} tiers, boundaries after board positions "
            f"{list(partitions[-1])}, rounds {used[-1]} ({time.perf_counter() - t:.1f} s)"
        )
    modal, n_modal = Counter(partitions).most_common(1)[0]
    models = sorted(set().union(*sets))
    modal_set = {m: Counter(s.get(m) for s in sets).most_common(1)[0][0] for m in models}
    shares = [np.mean([s.get(m) == modal_set[m] for m in models]) for s in sets]
    moved = [m for m in models if any(s.get(m) != modal_set[m] for s in sets)]
    spread = max(
        max(abs(s[m][0] - modal_set[m][0]), abs(s[m][1] - modal_set[m][1]))
        for s in sets
        for m in models
        if m in s
    )
    print(f"tiers per seed: {tiers_n}")
    print(f"seeds giving the modal tier partition {list(modal)}: {n_modal} of {len(seeds)}")
    print(
        "share of models with the modal rank set, per seed: " + " ".join(f"{x:.3f}" for x in shares)
    )
    print(
        f"models whose rank set moves on some seed: {len(moved)} of {len(models)} "
        f"(by up to {spread} ranks); min share {min(shares):.3f}"
    )
    target = n_modal >= 0.9 * len(seeds) and min(shares) >= 0.95
    print(
        f"issue 41 target (modal partition on >= 90% of seeds, >= 95% of sets modal on every seed): "
        f"{'met' if target else 'not met'}; {time.perf_counter() - t0:.0f} s, "
        f"load {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
