"""Same data + same seed = same bytes: compare the snapshots of two checkouts.

Run: python benchmarks/snapshot_bytes.py OTHER_CHECKOUT [--quick]

Runs the same `arena ingest` + `arena rebuild` sequence (several option sets:
all categories, cluster bootstrap, Davidson ties with a position term,
sandwich and Fisher intervals, Holm/BH/overlap tiers, an anchor, a prior) with
this checkout and with OTHER_CHECKOUT (each imported from its own directory by
this interpreter) on a synthetic file and on the bundled LMArena export, then
compares every snapshot table (timestamps, run ids and timings left out).
Prints IDENTICAL or the first table that differs. For refactorings that must
not change a number.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SYNTHETIC_RUNS = [
    ["--all-categories", "--rounds", "60"],
    ["--cluster", "judge", "--ties", "davidson", "--position", "--rounds", "50", "--tiers", "holm"],
    ["--ci", "sandwich", "--simultaneous", "--tiers", "bh", "--tier-rule", "cut", "--rounds", "40"],
    ["--ci", "fisher", "--tiers", "overlap", "--anchor", "m3=1200", "--both-bad", "drop"],
    ["--category", "math", "--cluster", "judge", "--rounds", "30", "--prior", "0.5"],
]
#: the shared ko-arena-hard battles carry LMArena's style metadata (style boards)
KO_ARENA_HARD = ROOT.parent / "shared" / "data" / "ko-arena-hard" / "battles.jsonl.gz"
STYLE_RUNS = [
    ["--rounds", "40"],
    ["--ci", "sandwich", "--style-reg", "0.5"],
    ["--ties", "davidson", "--position", "--rounds", "20"],
]
LMARENA_RUNS = [
    ["--all-categories", "--rounds", "40"],
    ["--ties", "davidson", "--rounds", "30", "--tiers", "bh"],
]


def synthetic(path: Path) -> None:
    """Votes with ties, both-bad ties, self-play, judges (some missing) and two tags."""
    rng = np.random.default_rng(3)
    rows = []
    for k in range(4000):
        a, b = rng.choice(9, size=2, replace=False)
        if k % 97 == 0:
            b = a
        p = 1 / (1 + np.exp((b - a) * 0.12))
        u = rng.random()
        winner = (
            "tie"
            if u < 0.08
            else "tie (bothbad)"
            if u < 0.12
            else ("model_a" if u < 0.12 + 0.88 * p else "model_b")
        )
        rows.append(
            {
                "id": f"s{k}",
                "model_a": f"m{a}",
                "model_b": f"m{b}",
                "winner": winner,
                "judge": f"j{rng.integers(30)}" if k % 5 else "",
                "math": str(bool(rng.random() < 0.5)),
                "code": str(bool(rng.random() < 0.4)),
            }
        )
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def dump(checkout: Path, work: Path, quick: bool, style: bool = False) -> dict:
    """Every snapshot table after the runs, as JSON-ready rows."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}
    data = work / "syn.csv"
    synthetic(data)
    sets = [("syn", data, SYNTHETIC_RUNS)]
    if not quick:
        sets.append(("lmarena", ROOT / "arena/data/lmarena-140k-battles.csv.gz", LMARENA_RUNS))
    if style:
        sets.append(("style", KO_ARENA_HARD, STYLE_RUNS))
    out = {}
    for name, path, runs in sets:
        db = work / f"{name}.db"
        for args in [["ingest", str(path), "-q"]] + [
            ["rebuild", "-q", "--seed", "11", *r] for r in runs
        ]:
            cmd = [sys.executable, "-m", "arena", "--db", f"sqlite:///{db}", *args]
            subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=work)
        con = sqlite3.connect(db)
        for table in ("snapshots", "snapshot_rows", "snapshot_pairs", "snapshot_samples"):
            cur = con.execute(f"select * from {table} order by 1, 2")
            cols = [c[0] for c in cur.description]
            rows = []
            for row in cur:
                d = dict(zip(cols, row, strict=True))
                d.pop("created_at", None)
                d.pop("run_id", None)
                if "diagnostics_json" in d:
                    diag = json.loads(d["diagnostics_json"])
                    diag.pop("seconds", None)
                    d["diagnostics_json"] = diag
                if "data" in d:
                    d["data"] = hashlib.sha256(d["data"]).hexdigest()
                rows.append(d)
            out[f"{name}.{table}"] = rows
        con.close()
    return out


def _first_difference(a, b, path=""):
    """Where two JSON-like values first differ, as ``path: a != b``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}")
    return f"{path}: {a!r:.200} != {b!r:.200}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (its repository root)")
    parser.add_argument("--quick", action="store_true", help="synthetic data only")
    parser.add_argument(
        "--style", action="store_true", help="also the style boards of ../shared's ko-arena-hard"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        mine = dump(ROOT, Path(a), args.quick, args.style)
        other = dump(args.other.resolve(), Path(b), args.quick, args.style)
    for key in mine:
        if json.dumps(mine[key], sort_keys=True, default=str) != json.dumps(
            other.get(key), sort_keys=True, default=str
        ):
            print(f"DIFFERENT: {key} ({len(mine[key])} vs {len(other.get(key) or [])} rows)")
            for a, b in zip(mine[key], other.get(key) or [], strict=False):
                if a != b:
                    print(f"  first differing row: {_first_difference(a, b)}")
                    break
            raise SystemExit(1)
    print(f"IDENTICAL: {', '.join(f'{k} {len(v)}' for k, v in mine.items())}")


if __name__ == "__main__":
    main()
