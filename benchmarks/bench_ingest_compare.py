"""Ingest speed of two checkouts side by side (a change must not slow ingest down).

Run: python benchmarks/bench_ingest_compare.py BEFORE_DIR AFTER_DIR [--rows 2000000] [--reps 3]
[--pg] [--incremental]

BEFORE_DIR and AFTER_DIR are checkouts of the project (e.g. ``git worktree add
/tmp/before COMMIT``).  Every ingest runs ``python -m arena`` in a fresh
process with ``PYTHONPATH`` set to one checkout, into a new SQLite file; the
two alternate (order reversed every repetition) so that load on a shared
machine falls on both.  Prints each time with the load average, then best and
median per workload and the after/before ratio of the best times.  Beside the
wall time it records the CPU time (user + system) of each ingest process, which
load from other processes on a shared machine disturbs far less.  With ``--pg``
the ingests go into a fresh PostgreSQL schema each (the tests' server, as its
superuser) and the CPU time is that of the ingest process plus its server
backends (read from /proc while it runs: the server must be on this machine).
With ``--incremental`` no file takes the bulk path (as when it goes into a store
holding more than twice its rows): every chunk is written with its indexes.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _util import SHARED, pg_schema_url, synthetic_csv


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _backend_cpu(tag: str, stop: threading.Event, seen: dict[int, float]) -> None:
    """Poll the CPU seconds of the server backends whose application_name is ``tag``."""
    from sqlalchemy import create_engine, text

    from tests.helpers.postgres import DEFAULT_PG

    tick = os.sysconf("SC_CLK_TCK")
    engine = create_engine(os.environ.get("ARENA_TEST_POSTGRES_URL", DEFAULT_PG))
    with engine.connect() as conn:
        while not stop.is_set():
            pids = conn.execute(
                text("SELECT pid FROM pg_stat_activity WHERE application_name = :t"), {"t": tag}
            ).scalars()
            conn.rollback()
            for pid in pids:
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                seen[pid] = (int(fields[11]) + int(fields[12])) / tick
            stop.wait(0.02)
    engine.dispose()


#: ``python -m arena`` with bulk loads off (``--incremental``)
_NO_BULK = (
    "import runpy, arena.ingest.bulk as b; b.BULK_MIN_ROWS = 10**18; "
    "runpy.run_module('arena', run_name='__main__')"
)


def ingest(
    tree: Path, path: Path, tmp: Path, pg: bool = False, incremental: bool = False
) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ingest in a fresh process (``pg``: plus the
    CPU of its PostgreSQL backends)."""
    db = tmp / "bench.db"
    url, drop = f"sqlite:///{db}", None
    seen: dict[int, float] = {}
    if pg:
        tag = f"arena-bench-{os.getpid()}"
        url, drop = pg_schema_url("compare")
        url += f"&application_name={tag}"
        stop = threading.Event()
        poller = threading.Thread(target=_backend_cpu, args=(tag, stop, seen))
        poller.start()
    env = dict(os.environ, PYTHONPATH=str(tree))
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, *(("-c", _NO_BULK) if incremental else ("-m", "arena"))]
        + ["--db", url, "ingest", str(path), "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    seconds = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    if pg:
        stop.set()
        poller.join()
        cpu += sum(seen.values())
        drop()
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
    ap.add_argument("--pg", action="store_true", help="ingest into PostgreSQL (CPU: + server)")
    ap.add_argument("--incremental", action="store_true", help="no bulk loads")
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
                seconds, cpu = ingest(trees[which], path, tmp, args.pg, args.incremental)
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
