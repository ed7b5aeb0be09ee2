"""Publishing speed and page size: 300 models, 20 snapshots of history.

Synthetic snapshots are written straight into a temporary SQLite database
(see tests/publish_fixtures.py), then the site is published and timed.
Targets (issue 5): publish under 2 s, main page under 500 KB.

    python benchmarks/bench_publish.py [--models 300] [--history 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.db.session import open_engine  # noqa: E402
from arena.publish import publish_site  # noqa: E402
from tests.publish_fixtures import build_site_db  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=300)
    ap.add_argument("--history", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine = open_engine(f"sqlite:///{tmp}/bench.db")
        t0 = time.perf_counter()
        # Sparse pairs, as on a real arena: not every pair of 300 models has met.
        build_site_db(
            engine,
            n_models=args.models,
            history=args.history,
            rounds=args.rounds,
            evil=True,
            hidden=("model-012",),
            pair_density=0.3,
        )
        print(
            f"fixture: {args.models} models x {args.history} snapshots + 1 category "
            f"written in {time.perf_counter() - t0:.1f} s"
        )
        times, cpu = [], []
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            report = publish_site(engine, Path(tmp) / "site", top=20)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        best, worst = min(times), max(times)
        index_kb = report.index_bytes / 1024
        print(
            f"publish: best {best:.2f} s, worst {worst:.2f} s over {args.repeat} runs "
            f"(target < 2 s): {len(report.files)} files, {report.model_pages} model pages, "
            f"{report.total_bytes / 1e6:.1f} MB total"
        )
        # Wall time includes writing ~300 files; CPU time is the part we control.
        print(
            f"publish CPU time: best {min(cpu):.2f} s, worst {max(cpu):.2f} s; "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        )
        print(f"main page: {index_kb:.0f} KB (target < 500 KB)")
        engine.dispose()
        ok = best < 2.0 and report.index_bytes < 500 * 1024
    print("OK" if ok else "OVER TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
