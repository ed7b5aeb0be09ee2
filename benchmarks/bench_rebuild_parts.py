"""CPU seconds of each part of `arena rebuild`, this checkout beside another one.

Run: python benchmarks/bench_rebuild_parts.py OTHER_CHECKOUT --db URL_OR_SQLITE_FILE
         [--rounds 1000] [--reps 2]

Each repetition runs `arena rebuild --rounds N -q` in a fresh process for the
other checkout, then for this one (alternating, so both see the same load),
each on a fresh copy of the SQLite file, upgraded to that checkout's schema
first (build it with the older checkout; on PostgreSQL: the snapshots the run
wrote are deleted after it).  Inside the process the parts are wrapped with
timers: the count-table read (`read_count_boards`), the point fit and
bootstrap (`rate`; the bootstrap's forked workers are not in the parent's CPU
time, so this part is shown as wall time too), the tiers (`tiers_paired`) and
the snapshot write (`write_snapshot`).  Prints one line per run and the
best-of-reps CPU seconds per part side by side, with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = [
    ("read", "arena.jobs.rebuild", "read_count_boards"),
    ("fit+bootstrap", "arena.engine.board", "rate"),
    ("tiers", "arena.engine.board", "tiers_paired"),
    ("write", "arena.jobs.rebuild", "write_snapshot"),
]

CHILD = r"""
import json, os, sys, time, importlib
parts = json.loads(sys.argv[2])
spent = {}
def timed(name, fn):
    def wrapper(*a, **k):
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            cpu, wall = spent.get(name, (0.0, 0.0))
            spent[name] = (cpu + time.process_time() - c0, wall + time.perf_counter() - w0)
    return wrapper
for name, module, attr in parts:
    mod = importlib.import_module(module)
    setattr(mod, attr, timed(name, getattr(mod, attr)))
from arena.cli import cli
c0, w0 = time.process_time(), time.perf_counter()
# bootstrap rounds by name: the default --ci is the sandwich since issue 41
cli(["--db", sys.argv[1], "rebuild", "-q", "--ci", "bootstrap", "--rounds", sys.argv[3]], prog_name="arena",
    standalone_mode=False)
spent["total"] = (time.process_time() - c0, time.perf_counter() - w0)
print("PARTS " + json.dumps(spent))
"""


def run(checkout: Path, db: str, rounds: int, work: Path) -> dict:
    if "://" not in db:
        copy = work / "rebuild.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{copy}{suffix}").unlink(missing_ok=True)
        shutil.copy(db, copy)
        url = f"sqlite:///{copy}"
    else:
        url = db
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}
    if "://" not in db:
        # the copy at this checkout's schema (build the file with the older checkout:
        # a migration between the two, such as 0012's board keys, then runs here, untimed)
        up = subprocess.run(
            [sys.executable, "-m", "arena", "--db", url, "db", "upgrade"],
            capture_output=True,
            text=True,
            env=env,
            cwd=work,
        )
        if up.returncode != 0:
            raise SystemExit(up.stderr)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, url, json.dumps(PARTS), str(rounds)],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    if "://" in db:  # leave the store as it was for the next run
        from sqlalchemy import create_engine, text

        engine = create_engine(db)
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM snapshots"))
        engine.dispose()
    line = next(x for x in out.stdout.splitlines() if x.startswith("PARTS "))
    return json.loads(line[6:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (its repository root)")
    parser.add_argument("--db", required=True, help="SQLite file (copied per run) or a URL")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    best: dict[str, dict[str, float]] = {"other": {}, "this": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for label, checkout in (("other", args.other.resolve()), ("this", ROOT)):
                parts = run(checkout, args.db, args.rounds, Path(tmp))
                load = os.getloadavg()[0]
                shown = ", ".join(f"{k} {c:.2f}s cpu/{w:.2f}s wall" for k, (c, w) in parts.items())
                print(f"rep {rep + 1} {label}: {shown} (load {load:.1f})", flush=True)
                for k, (cpu, _wall) in parts.items():
                    best[label][k] = min(best[label].get(k, float("inf")), cpu)
    print(f"\nbest CPU seconds over {args.reps} reps (parent process)")
    print(f"{'part':<15}{'other':>9}{'this':>9}{'ratio':>8}")
    for k in [p[0] for p in PARTS] + ["total"]:
        a, b = best["other"].get(k, float("nan")), best["this"].get(k, float("nan"))
        print(f"{k:<15}{a:>9.2f}{b:>9.2f}{a / b if b else float('nan'):>8.1f}x")


if __name__ == "__main__":
    main()
