"""Splitting a board into its comparable sets (issue 17): one pass vs one cut per set.

Run: python benchmarks/bench_split_sets.py [--sets 2000] [--size 5] [--battles 100]
     [--no-old]

A synthetic board of ``--sets`` groups that never met (``--size`` models and
``--battles`` battles each; the first group is twice as large, so it is the
main board), battles tagged with one of 50 judges (a cluster matrix) and all
carrying style metadata, is split the way ``arena rebuild --components
separate`` does (``arena.boards.split.split_board``). Printed: CPU seconds
and peak RSS growth of the split in this process, for today's code and, beside
it in the same run, for the previous one (one scan of every model, cell,
cluster column and style battle per set), and whether the two give identical
boards. The rating of the boards that follows is not timed here.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.boards.split import ComponentBoard, StyleBoard, split_board  # noqa: E402
from arena.engine.counts import clustered_table  # noqa: E402
from arena.engine.options import FitOptions  # noqa: E402
from arena.engine.sets.components import components, subtable  # noqa: E402
from arena.store.read import BoardData  # noqa: E402
from arena.store.style import StyleBattles  # noqa: E402


def board(n_sets: int, size: int, battles: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = np.full(n_sets, size)
    sizes[0] = 2 * size
    per = np.full(n_sets, battles)
    per[0] = 4 * battles
    start = np.concatenate([[0], np.cumsum(sizes)])
    group = np.repeat(np.arange(n_sets), per)
    a = start[group] + rng.integers(0, sizes[group])
    b = start[group] + (a - start[group] + rng.integers(1, sizes[group])) % sizes[group]
    o = rng.choice(3, a.size, p=[0.45, 0.45, 0.1])
    label = rng.permutation(int(start[-1]))  # sets interleave in index order
    a, b = label[a], label[b]
    judge = rng.integers(0, 50, a.size)
    table, clusters = clustered_table(a, b, o, judge, n_models=int(start[-1]))
    ids = np.arange(table.n_models, dtype=np.int64) + 1
    n = a.size
    style = StyleBattles(
        battle_id=np.arange(n, dtype=np.int64),
        model_a=ids[a],
        model_b=ids[b],
        outcome=o.astype(np.int8),
        weight=np.ones(n),
        cluster=None,
        features=("x", "y"),
        features_a=rng.random((n, 2)),
        features_b=rng.random((n, 2)),
        n_missing=0,
    )
    return BoardData(None, ids, table, clusters), StyleBoard(style, ids)


def split_one_by_one(data, fit, style):
    """The previous split_board: a cut of every array per set."""
    comps = components(data.table, ties=fit.ties, both_bad=fit.both_bad, position=fit.position)
    alone = comps.sizes[comps.strong[comps.strong >= 0]] == 1
    lonely = np.flatnonzero(comps.strong >= 0)[alone]
    sets = []
    for k in range(1, comps.n_components):
        if comps.sizes[k] < 2:
            continue
        members = np.flatnonzero(comps.strong == k)
        group = comps.weak[members[0]]
        sets.append(np.union1d(members, lonely[comps.weak[lonely] == group]))
    out = []
    for number, models in enumerate(sets, start=2):
        sub, cells = subtable(data.table, models)
        clusters = None if data.clusters is None else sp.csr_matrix(data.clusters)[:, cells]
        part = replace(
            data, model_ids=data.model_ids[models], table=sub, clusters=clusters, n_excluded=0
        )
        sb = style.battles
        keep = np.isin(sb.model_a, part.model_ids) & np.isin(sb.model_b, part.model_ids)
        cut = replace(
            sb,
            **{f: getattr(sb, f)[keep] for f in ("battle_id", "model_a", "model_b", "outcome")},
        )
        out.append(ComponentBoard(number, int(comps.weak[models[0]]), part, StyleBoard(cut, None)))
    return out


def timed(fn, *args):
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    w0 = time.perf_counter()
    res = fn(*args)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    return res, cpu, wall, grew


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=2000)
    ap.add_argument("--size", type=int, default=5)
    ap.add_argument("--battles", type=int, default=100)
    ap.add_argument("--no-old", action="store_true", help="skip the previous implementation")
    args = ap.parse_args()
    data, style = board(args.sets, args.size, args.battles)
    print(
        f"{args.sets:,} sets, {data.table.n_models:,} models, {data.table.n_cells:,} cells, "
        f"{int(data.table.n.sum()):,} battles; load average {os.getloadavg()[0]:.2f}"
    )
    fit = FitOptions()
    new, cpu, wall, grew = timed(split_board, data, fit, style)
    print(f"  split_board (one pass): {cpu:.2f} s CPU, {wall:.2f} s wall, peak RSS +{grew:.0f} MiB")
    if args.no_old:
        return
    old, cpu_old, wall_old, grew_old = timed(split_one_by_one, data, fit, style)
    print(
        f"  previous (one cut per set): {cpu_old:.2f} s CPU, {wall_old:.2f} s wall, "
        f"peak RSS +{grew_old:.0f} MiB; CPU ratio {cpu_old / max(cpu, 1e-9):.0f}x"
    )
    same = len(old) == len(new) and all(
        np.array_equal(x.data.table.a, y.data.table.a)
        and np.array_equal(x.data.table.n, y.data.table.n)
        and (x.data.clusters != y.data.clusters).nnz == 0
        and np.array_equal(x.style.battles.battle_id, y.style.battles.battle_id)
        for x, y in zip(old, new, strict=True)
    )
    print(f"  identical boards: {same}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
