"""Publishing speed and page size: 300 models, 20 snapshots of history.

Synthetic snapshots are written straight into a temporary SQLite database
(see tests/publish_fixtures.py), then the site is published and timed.
Targets (issues 5 and 13): publish under 2 s, main page under 500 KB. The main
page's bytes are split into its charts, the table's interval bars and the rest,
and the chart builders are timed on their own (the charts were the likely cost).

    python benchmarks/bench_publish.py [--models 300] [--history 20] [--pair-density 0.3]

``--pair-density 1`` makes every pair of models meet (as the top models of a real
arena do): the observed and battle-count heatmaps are then full, the worst case
for the page size.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
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
    ap.add_argument("--pair-density", type=float, default=0.3)
    ap.add_argument(
        "--top", type=int, default=None, help="models in the heatmaps (default: publish's)"
    )
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
            pair_density=args.pair_density,
        )
        print(
            f"fixture: {args.models} models x {args.history} snapshots + 1 category "
            f"written in {time.perf_counter() - t0:.1f} s"
        )
        top = args.top or inspect.signature(publish_site).parameters["top"].default
        print(f"heatmaps of the top {top}")
        times, cpu = [], []
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            report = publish_site(engine, Path(tmp) / "site", top=top)
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
        load = os.getloadavg()[0]
        if load > (os.cpu_count() or 1):
            print(
                f"  (the machine is loaded: load {load:.1f} on {os.cpu_count()} CPUs; wall "
                "times are inflated, the CPU time is what the code spends)"
            )
        print(f"main page: {index_kb:.0f} KB (target < 500 KB)")
        _page_parts((Path(tmp) / "site" / "index.html").read_text(encoding="utf-8"))
        _chart_times(engine, top)
        engine.dispose()
        ok = best < 2.0 and report.index_bytes < 500 * 1024
    print("OK" if ok else "OVER TARGET")
    return 0 if ok else 1


def _page_parts(html: str) -> None:
    """Bytes of the main page by part: each chart, the table's bars, the rest."""
    total = len(html.encode("utf-8"))
    parts = []
    for m in re.finditer(r'<svg class="(chart [a-z]+|bar)".*?</svg>', html, flags=re.S):
        parts.append((m.group(1), len(m.group(0).encode("utf-8"))))
    bars = sum(n for k, n in parts if k == "bar")
    charts = [(k, n) for k, n in parts if k != "bar"]
    shown = ", ".join(f"{k.split()[1]} {n / 1024:.0f}" for k, n in charts)
    rest = total - bars - sum(n for _, n in charts)
    print(
        f"  main page parts (KB): charts: {shown}; table bars {bars / 1024:.0f} "
        f"({sum(k == 'bar' for k, _ in parts)} bars); everything else {rest / 1024:.0f}"
    )


def _chart_times(engine, top: int) -> None:
    """Time the chart builders alone on the published main board."""
    from arena.boards.keys import OVERALL
    from arena.boards.snapshots import list_snapshots, load_board, load_pairs, rating_history
    from arena.publish.heatmaps import board_heatmaps
    from arena.publish.svg import HistoryPoint, history_chart

    with engine.connect() as conn:
        info = list_snapshots(conn, board="overall")[-1]
        board = load_board(conn, info.id)
        pairs = load_pairs(conn, info.id)
        history = rating_history(conn, OVERALL)
    t = time.perf_counter()
    heat = board_heatmaps(board, pairs, top=top)
    t_heat = time.perf_counter() - t
    t = time.perf_counter()
    for hist in history.values():
        points = [HistoryPoint(f"{at:%Y-%m-%d}", r, lo, hi) for _, at, r, lo, hi in hist]
        if points:
            history_chart(points, title="t", desc="d")
    t_hist = time.perf_counter() - t
    print(
        f"  charts alone: 3 heatmaps (top {top}) {t_heat * 1e3:.0f} ms "
        f"({sum(len(h.svg) for h in heat) / 1024:.0f} KB); {len(history)} history charts "
        f"{t_hist * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    raise SystemExit(main())
