"""How much the published ranks and tiers depend on the bootstrap seed (issue 41).

Run::

    PYTHONPATH=. python benchmarks/bench_seed_stability.py [--seeds 1-10] [--rounds 1000]
        [--boards all]       # the overall board and the 10 categories of the bundled CSV
        [--candidates]       # also: every candidate near-twin rule on the same samples
        [--draws]            # instead: the draws each board chooses, and its check (issue 41)
        [--draw-sets 1-10]   # instead: the inference on ten fixed draw sets (quadrature error)
        [--night 0.0005]     # instead: the overall board without a random share of its battles

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

``--boards all`` does the same for each category of the CSV (a battle is on
a category's board when its column says ``True``); ``--candidates`` re-draws
the tiers of every board and seed with each rule of :data:`CANDIDATES` (the
same separation and rank sets, only the near-twin merge differs) and prints,
per rule, the seeds giving each board's modal partition and its tier count:
the table "Tiers that do not follow the seed" of ``docs/tiers.md``.
"""

from __future__ import annotations

import argparse
import csv
import functools
import gzip
import os
import time
from collections import Counter
from dataclasses import replace

import numpy as np

from arena.core.outcomes import A_WINS, B_WINS, TIE, TIE_BOTH_BAD
from arena.core.resources import demo_data
from arena.engine.board import BoardOptions, rate_board, stored_samples
from arena.engine.counts import count_table
from arena.engine.inference.rank_sets import board_inference, tiers_from_separation

_OUTCOMES = {"model_a": A_WINS, "model_b": B_WINS, "tie": TIE, "both_bad": TIE_BOTH_BAD}
#: Near-twin rules compared by ``--candidates``: name -> (ends, overlap) of
#: :func:`arena.engine.inference.rank_sets.near_twins`.
CANDIDATES = {
    "identical sets (before issue 41)": (0, 1.0),
    "ends within 1 rank": (1, 0.0),
    "ends within 2 ranks": (2, 0.0),
    "share >= 95% of the union": (10**6, 0.95),
    "share >= 80% of the union": (10**6, 0.8),
    "ends within 1, share >= 90%": (1, 0.9),
    "ends within 1, share >= 80% (default)": (1, 0.8),
}


def demo_tables(boards: str = "overall"):
    """Count tables of the bundled CSV by board name, and the model names by index.

    ``boards="overall"``: every battle; ``"all"``: also one board per category
    column (the battles whose column is ``True``).
    """
    names: dict[str, int] = {}
    a, b, o = [], [], []
    flags: dict[str, list[bool]] = {}
    with gzip.open(demo_data(), "rt", newline="") as fh:
        reader = csv.DictReader(fh)
        cats = [c for c in (reader.fieldnames or [])[4:] if not c.endswith(".score")]
        flags = {c: [] for c in cats} if boards == "all" else {}
        for row in reader:
            a.append(names.setdefault(row["model_a"], len(names)))
            b.append(names.setdefault(row["model_b"], len(names)))
            o.append(_OUTCOMES[row["winner"]])
            for c, v in flags.items():
                v.append(row[c] == "True")
    aa, bb, oo = np.array(a), np.array(b), np.array(o)
    keep = {"overall": np.ones(aa.size, dtype=bool)} | {c: np.array(v) for c, v in flags.items()}
    tables = {
        name: count_table(aa[k], bb[k], oo[k], n_models=len(names)) for name, k in keep.items()
    }
    return tables, list(names)


def demo_table():
    """The overall board's count table of the bundled CSV and the model names by index."""
    tables, names = demo_tables()
    return tables["overall"], names


def _boundaries(tiers) -> tuple[int, ...]:
    """A partition of the board as the positions where a new tier starts."""
    return tuple(int(p) for p in np.flatnonzero(np.diff(tiers)) + 1)


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def board_report(name, table, names, seeds, opts, *, keep_inference=False, verbose=True):
    """Rebuild one board per seed and print its stability; the per-seed inferences if asked."""
    print(
        f"LMArena {name} board (bundled, {int(table.n.sum()):,} battles), "
        f"seeds {seeds[0]}-{seeds[-1]}, rounds {opts.rounds}, load {os.getloadavg()[0]:.2f}"
    )
    partitions, sets, tiers_n, inferences = [], [], [], []
    t0 = time.perf_counter()
    for seed in seeds:
        t = time.perf_counter()
        br = rate_board(table, replace(opts, seed=seed))
        idx = np.flatnonzero(br.ranked)
        order = idx[np.lexsort((idx, -br.ratings.rating[idx]))]
        tiers = br.tier[order]
        partitions.append(_boundaries(tiers))
        sets.append({names[i]: (int(br.rank_low[i]), int(br.rank_high[i])) for i in idx})
        tiers_n.append(int(tiers.max()))
        if keep_inference:
            # the rebuild's own inference (rank_board runs it on the stored float32 samples)
            inf = board_inference(
                br.ratings.rating[idx], stored_samples(br.ratings.samples[:, idx]), level=opts.level
            )
            o = inf.order
            inferences.append((inf.better, inf.rank_low[o], inf.rank_high[o]))
        if verbose:
            print(
                f"  seed {seed:3d}: {tiers_n[-1]} tiers, boundaries after board positions "
                f"{list(partitions[-1])} ({time.perf_counter() - t:.1f} s)"
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
    return inferences


def compare_candidates(inferences: dict) -> None:
    """Per near-twin rule: seeds giving each board's modal partition, and its tier count."""
    boards = list(inferences)
    print("\nnear-twin rules on the same samples (modal seeds / modal tiers, per board):")
    print("  boards: " + ", ".join(boards))
    for rule, (ends, overlap) in CANDIDATES.items():
        modal_n, modal_tiers = [], []
        for name in boards:
            parts = [
                _boundaries(tiers_from_separation(b, lo, hi, twin_ends=ends, twin_overlap=overlap))
                for b, lo, hi in inferences[name]
            ]
            part, n = Counter(parts).most_common(1)[0]
            modal_n.append(n)
            modal_tiers.append(len(part) + 1)
        total = sum(len(inferences[n]) for n in boards)
        print(f"  {rule:40s} {sum(modal_n):4d} / {total}  seeds {modal_n}  tiers {modal_tiers}")


def _width(br, idx) -> float:
    return float((br.rank_high[idx] - br.rank_low[idx] + 1).mean())


def draws_report(tables, names) -> None:
    """Per board: the draws the rebuild chose, its check, and what 1,000 draws without the
    Monte-Carlo margin would have published (the rule before)."""
    import arena.engine.board as engine_board
    from arena.engine.inference.rank_sets import board_inference as inference

    print(f"draws chosen by the data (default options), load {os.getloadavg()[0]:.2f}")
    for name, table in tables.items():
        engine_board.board_inference = functools.partial(inference, margin=0.0)
        try:
            t = time.perf_counter()
            old = rate_board(table, replace(BoardOptions(), rounds=1000))
            t_old = time.perf_counter() - t
        finally:
            engine_board.board_inference = inference
        t = time.perf_counter()
        new = rate_board(table, BoardOptions())
        t_new = time.perf_counter() - t
        idx = np.flatnonzero(new.ranked)
        same = np.mean(
            (old.rank_low[idx] == new.rank_low[idx]) & (old.rank_high[idx] == new.rank_high[idx])
        )
        c = new.tier_info["draws_check"]
        print(
            f"  {name:28s} draws {c['tried']}, second set moves {c['sets_moved']} of "
            f"{c['ranked']} (passed {c['passed']}); tiers {old.tier[idx].max()} -> "
            f"{new.tier[idx].max()}; mean set width {_width(old, idx):.2f} -> {_width(new, idx):.2f}; "
            f"sets unchanged {same:.0%}; {t_old:.2f} s -> {t_new:.2f} s"
        )


def draw_sets_report(tables, names, keys: list[int], rounds: int | None) -> None:
    """The inference on different fixed draw sets (the quadrature error ``draws_check`` estimates)."""
    import arena.engine.inference.intervals as intervals

    default_key = intervals.FIXED_DRAWS_KEY
    opts = BoardOptions() if rounds is None else replace(BoardOptions(), rounds=rounds)
    print(f"fixed draw sets {keys[0]}-{keys[-1]}, rounds {opts.rounds or 'chosen'}")
    try:
        for name, table in tables.items():
            sets, parts = [], []
            for key in keys:
                intervals.FIXED_DRAWS_KEY = key
                intervals.fixed_normal_draws.cache_clear()
                br = rate_board(table, opts)
                idx = np.flatnonzero(br.ranked)
                order = idx[np.lexsort((idx, -br.ratings.rating[idx]))]
                parts.append(_boundaries(br.tier[order]))
                sets.append({names[i]: (int(br.rank_low[i]), int(br.rank_high[i])) for i in idx})
            models = sorted(set().union(*sets))
            modal = {m: Counter(s.get(m) for s in sets).most_common(1)[0][0] for m in models}
            shares = [np.mean([s.get(m) == modal[m] for m in models]) for s in sets]
            print(
                f"  {name:28s} modal partition on {Counter(parts).most_common(1)[0][1]} of "
                f"{len(keys)} draw sets; share of models with the modal set: min "
                f"{min(shares):.3f}, mean {np.mean(shares):.3f}"
            )
    finally:
        intervals.FIXED_DRAWS_KEY = default_key
        intervals.fixed_normal_draws.cache_clear()


def night_report(frac: float, nights: int = 10) -> None:
    """The overall board on all battles vs without a random ``frac`` of them (a night's change)."""
    names: dict[str, int] = {}
    a, b, o = [], [], []
    with gzip.open(demo_data(), "rt", newline="") as fh:
        for row in csv.DictReader(fh):
            a.append(names.setdefault(row["model_a"], len(names)))
            b.append(names.setdefault(row["model_b"], len(names)))
            o.append(_OUTCOMES[row["winner"]])
    aa, bb, oo = np.array(a), np.array(b), np.array(o)
    rng = np.random.default_rng(7)
    masks = [rng.random(aa.size) >= frac for _ in range(nights)]

    def sets(keep, opts):
        br = rate_board(count_table(aa[keep], bb[keep], oo[keep], n_models=len(names)), opts)
        idx = np.flatnonzero(br.ranked)
        return {int(i): (int(br.rank_low[i]), int(br.rank_high[i])) for i in idx}

    for label, opts in (
        ("default (fixed draws)", BoardOptions()),
        ("bootstrap, seed fixed", replace(BoardOptions(), ci="bootstrap")),
    ):
        full = sets(np.ones(aa.size, dtype=bool), opts)
        shares = []
        for keep in masks:
            s = sets(keep, opts)
            shares.append(np.mean([s.get(i) == full[i] for i in full]))
        print(
            f"  {label:24s} without {frac:.2%} of the battles ({nights} nights): sets unchanged "
            f"min {min(shares):.3f} mean {np.mean(shares):.3f}"
        )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-10", help="a range of seeds, e.g. 1-10")
    ap.add_argument("--rounds", type=int, default=None, help="default: the rebuild's default")
    ap.add_argument("--boards", choices=("overall", "all"), default="overall")
    ap.add_argument("--ci", default=None, help="interval method; default: the rebuild's default")
    ap.add_argument("--candidates", action="store_true", help="compare the near-twin rules")
    ap.add_argument("--draws", action="store_true", help="the draws each board chooses")
    ap.add_argument("--draw-sets", default=None, help="e.g. 1-10: the inference per fixed draw set")
    ap.add_argument(
        "--night", type=float, default=None, help="share of battles left out, e.g. 0.0005"
    )
    args = ap.parse_args(argv)
    if args.night is not None:
        night_report(args.night)
        return
    tables, names = demo_tables(args.boards)
    if args.draws:
        draws_report(tables, names)
        return
    if args.draw_sets:
        draw_sets_report(tables, names, _seeds(args.draw_sets), args.rounds)
        return
    opts = BoardOptions()
    if args.rounds is not None:
        opts = replace(opts, rounds=args.rounds)
    if args.ci is not None:
        opts = replace(opts, ci=args.ci)
    seeds = _seeds(args.seeds)
    inferences = {}
    for name, table in tables.items():
        inferences[name] = board_report(
            name,
            table,
            names,
            seeds,
            opts,
            keep_inference=args.candidates,
            verbose=args.boards == "overall",
        )
    if args.candidates:
        compare_candidates(inferences)


if __name__ == "__main__":
    main()
