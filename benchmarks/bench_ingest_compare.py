"""Ingest speed of two checkouts side by side (a change must not slow ingest down).

Run: python benchmarks/bench_ingest_compare.py BEFORE_DIR AFTER_DIR [--rows 2000000] [--reps 3]

BEFORE_DIR and AFTER_DIR are checkouts of the project (e.g. ``git worktree add
/tmp/before COMMIT``).  Every ingest runs ``python -m arena`` in a fresh
process with ``PYTHONPATH`` set to one checkout, into a new SQLite file; the
two alternate (order reversed every repetition) so that load on a shared
machine falls on both.  Prints each time with the load average, then best and
median per workload and the after/before ratio of the best times.  Beside the
wall time it records the CPU time (user + system) of each ingest process, which
load from other processes on a shared machine disturbs far less.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import SHARED, synthetic_csv


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ingest(tree: Path, path: Path, tmp: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ingest in a fresh process."""
    db = tmp / "bench.db"
    env = dict(os.environ, PYTHONPATH=str(tree))
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "arena", "--db", f"sqlite:///{db}", "ingest", str(path), "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    seconds = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if out.returncode != 0:
        raise SystemExit(f"ingest of {path} with {tree} failed:\n{out.stderr}")
    return seconds, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="arena-bench-compare-"))
    synthetic = tmp / "synthetic.csv"
    synthetic_csv(synthetic, args.rows)
    workloads = {
        f"synthetic {args.rows:,} rows": synthetic,
        "shared LMArena 135,634 rows": SHARED / "lmarena-140k" / "battles.csv.gz",
        "ko-arena-hard JSON lines": SHARED / "ko-arena-hard" / "battles.jsonl.gz",
    }
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    times: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    for rep in range(args.reps):
        order = ("before", "after") if rep % 2 == 0 else ("after", "before")
        for name, path in workloads.items():
            for which in order:
                seconds, cpu = ingest(trees[which], path, tmp)
                times.setdefault((name, which), []).append(seconds)
                cpus.setdefault((name, which), []).append(cpu)
                load = os.getloadavg()[0]
                print(
                    f"rep {rep} {which:6} {name}: {seconds:.2f} s, CPU {cpu:.2f} s "
                    f"(load {load:.2f})",
                    flush=True,
                )
    for name in workloads:
        b, a = times[name, "before"], times[name, "after"]
        print(
            f"{name}: before best {min(b):.2f} s median {statistics.median(b):.2f} s; "
            f"after best {min(a):.2f} s median {statistics.median(a):.2f} s; "
            f"after/before {min(a) / min(b):.3f}"
        )
        b, a = cpus[name, "before"], cpus[name, "after"]
        print(
            f"{name}: CPU before best {min(b):.2f} s median {statistics.median(b):.2f} s; "
            f"after best {min(a):.2f} s median {statistics.median(a):.2f} s; "
            f"after/before best {min(a) / min(b):.3f}, median "
            f"{statistics.median(a) / statistics.median(b):.3f}"
        )
    synthetic.unlink()


if __name__ == "__main__":
    main()
