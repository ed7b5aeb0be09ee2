"""Many competitors (issue 17): `arena rebuild` end to end on boards with thousands of models.

Run: python benchmarks/bench_scale.py [--only 10k,1k] [--rounds 1000] [--seed 0]
     [--postgres]

For each board a synthetic LMArena-shaped CSV (``id,model_a,model_b,winner``,
Bradley-Terry outcomes from N(0, 1) strengths, 10% ties, seeded) is written
and ingested into a fresh SQLite database (or a PostgreSQL schema); then
``arena rebuild --rounds R`` runs in a fresh process and the script prints its
wall time, its CPU time (user + system, the process and its children: the
machine is shared, so CPU seconds are the load-independent figure), its peak
RSS, the load average and which engine path the board took.

Boards (targets from issue 17):

* ``10k``: 10,000 models, 200,000 battles, 1000 rounds: under 60 s, under 2 GB;
* ``1k``: 1,000 models, 1,000,000 battles, 1000 rounds: under 20 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import ROOT, pg_schema_url, synthetic_csv
from sqlalchemy import text

from arena.db.session import open_engine

BOARDS = {"10k": (10_000, 200_000), "1k": (1_000, 1_000_000)}


# Runs one command as its only child and reports that child's own CPU and peak RSS
# (RUSAGE_CHILDREN of this process would be the largest of all earlier children).
_WRAP = """
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "wall": time.perf_counter() - t0,
                  "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}))
"""


def run_timed(args: list[str], *, db: str) -> dict:
    """One ``arena`` command in a fresh process: its wall time, CPU time and peak RSS."""
    cmd = [sys.executable, "-c", _WRAP, sys.executable, "-m", "arena", "--db", db, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout)
    if res["rc"] != 0:
        raise SystemExit(f"arena {' '.join(args)} failed (exit {res['rc']}): {out.stderr}")
    return res


def engine_path(db: str) -> str:
    """The path the latest snapshot's engine took (from its stored diagnostics)."""
    engine = open_engine(db)
    with engine.connect() as conn:
        raw = conn.execute(
            text("SELECT diagnostics_json FROM snapshots ORDER BY id DESC LIMIT 1")
        ).scalar_one()
    engine.dispose()
    return json.loads(raw).get("engine_path", "dense")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="10k,1k")
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--postgres", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="arena-scale-"))
    os.chdir(ROOT)
    for name in args.only.split(","):
        models, battles = BOARDS[name]
        csv = tmp / f"{name}.csv"
        t0 = time.perf_counter()
        synthetic_csv(csv, battles, models=models, seed=args.seed)
        gen = time.perf_counter() - t0
        drop = None
        if args.postgres:
            db, drop = pg_schema_url(f"scale{name}")
        else:
            db = f"sqlite:///{tmp / (name + '.db')}"
        try:
            ing = run_timed(["ingest", str(csv), "-q"], db=db)
            load = os.getloadavg()
            reb = run_timed(
                # bootstrap rounds by name: the default --ci is the sandwich since issue 41
                [
                    "rebuild",
                    "--ci",
                    "bootstrap",
                    "--rounds",
                    str(args.rounds),
                    "--max-models",
                    "100000",
                    "-q",
                ],
                db=db,
            )
            load_after = os.getloadavg()
            print(
                f"{name}: {models:,} models, {battles:,} battles, {args.rounds} rounds "
                f"({'PostgreSQL' if args.postgres else 'SQLite'}, seed {args.seed}):\n"
                f"  csv written in {gen:.1f} s; ingest {ing['wall']:.1f} s wall\n"
                f"  rebuild {reb['wall']:.1f} s wall, {reb['cpu']:.1f} s CPU, "
                f"peak RSS {reb['rss_mb']:.0f} MiB, engine path {engine_path(db)}; "
                f"load average {load[0]:.1f} before, {load_after[0]:.1f} after"
            )
            sys.stdout.flush()
        finally:
            if drop is not None:
                drop()


if __name__ == "__main__":
    main()
