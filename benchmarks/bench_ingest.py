"""Ingest speed and memory (issue 2).

Run: python benchmarks/bench_ingest.py [--rows 10000000] [--skip-pg]

Prints: seconds for the shared 135,634-row LMArena file into SQLite, and
rows/s plus peak RSS for a synthetic N-row file into SQLite and PostgreSQL
(as the server's superuser and as an ordinary role, which cannot skip the
per-row foreign-key triggers).
Each ingest runs in a fresh `python -m arena` process (start-up included).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _util import SHARED, pg_schema_url, run_arena, synthetic_csv


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--skip-pg", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="arena-bench-"))

    shared = SHARED / "lmarena-140k" / "battles.csv.gz"
    secs, rss, _ = run_arena(["ingest", str(shared), "-q"], db=f"sqlite:///{tmp / 'shared.db'}")
    print(
        f"shared LMArena file (135,634 rows) -> SQLite: {secs:.2f} s end to end, peak RSS {rss:.0f} MiB"
    )

    csv_path = tmp / "synthetic.csv"
    synthetic_csv(csv_path, args.rows)
    size = csv_path.stat().st_size / 2**20
    print(f"synthetic file: {args.rows:,} rows, {size:.0f} MiB")
    secs, rss, _ = run_arena(["ingest", str(csv_path), "-q"], db=f"sqlite:///{tmp / 'big.db'}")
    print(
        f"synthetic -> SQLite: {secs:.1f} s, {args.rows / secs:,.0f} rows/s, peak RSS {rss:.0f} MiB"
    )
    if not args.skip_pg:
        for ordinary, who in ((False, "as superuser"), (True, "as an ordinary role")):
            url, drop = pg_schema_url("ingest", ordinary_role=ordinary)
            try:
                secs, rss, _ = run_arena(["ingest", str(csv_path), "-q"], db=url)
                print(
                    f"synthetic -> PostgreSQL {who}: {secs:.1f} s, {args.rows / secs:,.0f} rows/s, "
                    f"peak RSS {rss:.0f} MiB (max over runs so far)"
                )
            finally:
                drop()
    csv_path.unlink()


if __name__ == "__main__":
    main()
