"""`arena plan` on a 10,000-model board (issue 17): CPU seconds and peak RSS per command.

Run: python benchmarks/bench_plan_scale.py [--db sqlite:///10k.db] [--rounds 1000]
     [--before /path/to/other/checkout/.venv/bin/python] [--cap-gb 12]

Without ``--db`` the 10k board of ``benchmarks/bench_scale.py`` is made
(10,000 models, 200,000 battles, seeded) in a fresh SQLite file and rebuilt
twice: once as ``arena rebuild`` does by default (``--min-battles 50``: ~700
of the 10,000 models are ranked, the others have ~40 battles) and once with
``--min-battles 1`` (all 10,000 ranked: 50M pairs). With ``--db`` the
database is used as it is (its latest two snapshots, in that order).

Then each ``arena plan`` command below runs in a fresh process, and the
script prints its CPU time (user + system), wall time and peak RSS, with this
checkout's interpreter and, with ``--before``, another checkout's beside it
(the same command right after; a run over ``--cap-gb`` of address space is
stopped and reported as such, so the old quadratic path cannot take the
machine's memory).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _util import ROOT, synthetic_csv
from sqlalchemy import text

from arena.db.session import open_engine

COMMANDS = [
    ("paper, all pairs", ["plan", "--format", "csv"]),
    ("tiers, all pairs", ["plan", "--rule", "tiers", "--format", "csv"]),
    ("paper, top 1000", ["plan", "--top", "1000", "--format", "csv"]),
    ("tiers, top 1000", ["plan", "--rule", "tiers", "--top", "1000", "--format", "csv"]),
    ("paper, draw 1000", ["plan", "--n", "1000", "--seed", "1", "--format", "csv"]),
    ("tiers, draw 1000", ["plan", "--rule", "tiers", "--n", "1000", "--format", "csv"]),
]

_WRAP = """
import json, resource, subprocess, sys, time
cap = int(sys.argv[1])
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
t0 = time.perf_counter()
p = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   preexec_fn=limit, text=True)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "wall": time.perf_counter() - t0,
                  "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024,
                  "err": p.stderr.strip().splitlines()[-1:] }))
"""


def run(python: str, db: str, args: list[str], cap_gb: float) -> str:
    cap = str(int(cap_gb * 2**30))
    cmd = [sys.executable, "-c", _WRAP, cap, python, "-m", "arena", "--db", db, *args]
    # outside any checkout: `python -m arena` would import the package in the working directory
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    res = json.loads(out.stdout)
    what = "ok" if res["rc"] == 0 else f"FAILED (exit {res['rc']}: {' '.join(res['err'])[:100]})"
    return f"{res['cpu']:7.1f} s CPU {res['wall']:7.1f} s wall {res['rss_mb']:7.0f} MiB peak RSS  {what}"


def make_board(tmp: Path, rounds: int) -> str:
    csv = tmp / "10k.csv"
    synthetic_csv(csv, 200_000, models=10_000, seed=0)
    db = f"sqlite:///{tmp / '10k.db'}"
    base = [sys.executable, "-m", "arena", "--db", db]
    subprocess.run([*base, "ingest", str(csv), "-q"], check=True)
    # bootstrap rounds by name: the default --ci is the sandwich since issue 41
    rebuild = [
        "rebuild",
        "--ci",
        "bootstrap",
        "--rounds",
        str(rounds),
        "--max-models",
        "100000",
        "-q",
    ]
    subprocess.run([*base, *rebuild], check=True)
    subprocess.run([*base, *rebuild, "--min-battles", "1"], check=True)
    return db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=None)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--before", default=None, help="interpreter of the checkout to compare")
    ap.add_argument("--cap-gb", type=float, default=12.0)
    ap.add_argument("--only", default=None, help="comma-separated command numbers (1-6)")
    args = ap.parse_args()
    os.chdir(ROOT)
    db = args.db or make_board(Path(tempfile.mkdtemp(prefix="arena-plan-")), args.rounds)
    engine = open_engine(db)
    with engine.connect() as conn:
        snaps = conn.execute(
            text("SELECT id FROM snapshots WHERE board = 'overall' ORDER BY id DESC LIMIT 2")
        ).all()
        ranked = {
            sid: conn.execute(
                text("SELECT count(*) FROM snapshot_rows WHERE snapshot_id = :s AND ranked"),
                {"s": sid},
            ).scalar_one()
            for (sid,) in snaps
        }
    engine.dispose()
    picked = None if args.only is None else {int(k) for k in args.only.split(",")}
    for (sid,) in reversed(snaps):
        print(f"snapshot {sid}: {ranked[sid]:,} ranked models, load {os.getloadavg()[0]:.1f}")
        for k, (label, cmd) in enumerate(COMMANDS, start=1):
            if picked is not None and k not in picked:
                continue
            full = [*cmd, "--snapshot", str(sid)]
            print(f"  {k}. {label:17s} now    {run(sys.executable, db, full, args.cap_gb)}")
            if args.before:
                if "--top" in cmd:
                    continue  # no --top before
                print(f"     {'':17s} before {run(args.before, db, full, args.cap_gb)}")
            sys.stdout.flush()
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
