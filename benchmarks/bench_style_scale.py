"""Style control at LMArena's scale (issue 30): ingest and `arena rebuild` of millions of battles.

Run from the repository root::

    python benchmarks/bench_style_scale.py                       # 1M, 5M, 10M; SQLite + PostgreSQL
    python benchmarks/bench_style_scale.py --sizes 1000000 --engines sqlite --rounds 100
    python benchmarks/bench_style_scale.py --sizes 200000 --quick   # smoke run

Synthetic battles among ``--models`` models (200) with LMArena's style metadata:
per answer a token count (log-normal around its model's typical length, so
lengths are realistic whole numbers, not bins), headers h1..h6, ordered and
unordered list items and bold spans (Poisson, proportional to the length and
to the model's habits), and outcomes from the contextual Bradley-Terry model
with LMArena-like coefficients (length 0.25 logits per SD, markdown
0.01-0.03), 20% ties and 10% "both bad".

Per size and database:

* ``ingest``: ``arena ingest`` of the JSON lines (nested ``conv_metadata``, as
  LMArena exports it) up to ``--ingest-max`` battles; above it the store is
  bulk-loaded (``--load``: COPY / executemany straight into ``battles`` and
  ``battle_style``, then ``arena db recount``), since the ingest rate is
  measured at the smaller sizes.  At the first size, also flat metadata
  (JSON lines and CSV).
* ``sandwich``: ``arena rebuild --ci sandwich``; ``bootstrap``: ``arena
  rebuild --rounds N``.  Each in a fresh process on a pseudo-terminal, so its
  progress lines give the phases: reading the covariates, collapsing rows,
  the point fit, the intervals.

Prints a table (battles x engine x phase: seconds, peak MB) with the CPU
seconds of each command and the load average beside it.  Peak MB is the
command's own peak RSS; ``worker`` the largest forked bootstrap worker's
(which shares most pages with its parent: the sum is an upper bound).

``--end-to-end`` (issue 42): the whole path a user runs, at ``--e2e-battles``
(5M) style-carrying battles: the JSON lines (nested ``conv_metadata``, as
LMArena exports it) generated once and kept under ``--work`` (default
/tmp/arena-bench-style-e2e; written column by column from numpy arrays, no
dict per battle; ``--e2e-format csv``: LMArena's flat CSV with
``conv_metadata.*`` sub-count columns), then per engine ``arena ingest``, ``arena rebuild
--style-control on --ci bootstrap --rounds N`` and
``arena rebuild --style-control on --ci sandwich``, each a fresh process.
Prints battles x engine x phase (seconds, CPU seconds, peak MB) and the load
average.  Targets on the 2-core machine: ingest <= 60 s, rebuild with 1,000
rounds <= 150 s, peak < 4 GB::

    python benchmarks/bench_style_scale.py --end-to-end                # 5M, SQLite then PostgreSQL
    python benchmarks/bench_style_scale.py --end-to-end --engines sqlite --e2e-battles 1000000

``--side`` (at the first size): FastChat's method (``fastchat_style_reference``,
one L-BFGS-B per round on an index resample) for ``--ref-rounds`` rounds on the
same battles, next to the engine's exact and one-step rounds, per round.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _util import pg_schema_url, synthetic_batch_and_models  # noqa: E402

from arena.db.session import open_engine  # noqa: E402

WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
OUTCOMES = ("a_wins", "b_wins", "tie", "tie_both_bad")
GAMMA = np.array([0.25, 0.03, 0.02, 0.01])  # logits per SD: length, headers, lists, bold
BLOCK = 250_000

# run a CLI command in this interpreter and report its peak RSS (own, largest child)
_WRAPPER = """
import os, resource, runpy, sys
sys.argv = ["arena", *sys.argv[2:]]
code = 0
try:
    runpy.run_module("arena", run_name="__main__")
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
finally:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.environ["BENCH_RSS"], "w") as fh:
        fh.write(f"{own.ru_maxrss} {kids.ru_maxrss} {own.ru_utime + own.ru_stime} "
                 f"{kids.ru_utime + kids.ru_stime}")
sys.exit(code)
"""


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


# ---------------------------------------------------------------- synthetic data
def fresh_db(eng: str, work: Path, name: str) -> tuple[str, callable]:
    """An empty database on ``eng`` ("sqlite": a file in ``work``; else a PostgreSQL
    schema) and the call that drops it."""
    if eng == "sqlite":
        path = work / f"{name}.db"
        path.unlink(missing_ok=True)
        return f"sqlite:///{path}", path.unlink
    return pg_schema_url(f"bench_{name}")


def battles(n: int, m: int, seed: int):
    """Per-battle arrays: a, b, winner code, and per side (tokens, h1..h3, ordered/unordered, **/__)."""
    rng = np.random.default_rng(seed)
    theta = np.random.default_rng(0).normal(0, 0.6, m)
    habits = np.random.default_rng(1)
    log_len = 6.0 + 0.3 * theta + habits.normal(0, 0.4, m)  # longer answers from stronger models
    rates = np.exp(
        habits.normal([-0.5, 0.5, 0.0], 0.8, (m, 3))
    )  # headers, lists, bold per 500 tokens
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m

    def side(k):
        tokens = np.maximum(1, np.rint(np.exp(log_len[k] + rng.normal(0, 0.7, n)))).astype(np.int64)
        s = tokens / 500.0
        heads = rng.poisson((rates[k, 0] * s)[:, None] * [0.2, 0.5, 0.3])
        lists = rng.poisson((rates[k, 1] * s)[:, None] * [0.4, 0.6])
        bold = rng.poisson((rates[k, 2] * s)[:, None] * [0.9, 0.1])
        return np.column_stack([tokens, heads, lists, bold])

    sa, sb = side(a), side(b)
    totals = [slice(0, 1), slice(1, 4), slice(4, 6), slice(6, 8)]
    fa = np.column_stack([sa[:, t].sum(axis=1) for t in totals]).astype(float)
    fb = np.column_stack([sb[:, t].sum(axis=1) for t in totals]).astype(float)
    x = (fa - fb) / (fa + fb + 1.0)
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b] + z @ GAMMA)))
    t = rng.random(n)
    win = np.where(t < 0.2, 2, np.where(t < 0.3, 3, np.where(rng.random(n) < p, 0, 1)))
    return a, b, win, sa, sb


def write_file(path: Path, n: int, m: int, seed: int, shape: str) -> float:
    """JSON lines (``nested`` or ``flat`` metadata) or CSV (``csv``, flat); returns seconds."""
    t0 = time.perf_counter()
    names = [f"model-{i:03d}" for i in range(m)]
    with open(path, "w") as fh:
        if shape == "csv":
            fh.write(
                "id,model_a,model_b,winner,sum_assistant_a_tokens,header_count_a,list_count_a,"
                "bold_count_a,sum_assistant_b_tokens,header_count_b,list_count_b,bold_count_b\n"
            )
        for lo in range(0, n, BLOCK):
            k = min(BLOCK, n - lo)
            a, b, win, sa, sb = battles(k, m, seed + lo)
            out = []
            for i, (x, y, w, p, q) in enumerate(
                zip(a.tolist(), b.tolist(), win.tolist(), sa.tolist(), sb.tolist(), strict=True)
            ):
                head = f"b{lo + i}"
                if shape == "nested":
                    meta = ",".join(
                        f'"sum_assistant_{s}_tokens":{v[0]},"header_count_{s}":{{"h1":{v[1]},'
                        f'"h2":{v[2]},"h3":{v[3]},"h4":0,"h5":0,"h6":0}},"list_count_{s}":'
                        f'{{"ordered":{v[4]},"unordered":{v[5]}}},"bold_count_{s}":'
                        f'{{"**":{v[6]},"__":{v[7]}}}'
                        for s, v in (("a", p), ("b", q))
                    )
                    out.append(
                        f'{{"id":"{head}","model_a":"{names[x]}","model_b":"{names[y]}",'
                        f'"winner":"{WINNERS[w]}","conv_metadata":{{{meta}}}}}\n'
                    )
                elif shape == "flat":
                    meta = ",".join(
                        f'"sum_assistant_{s}_tokens":{v[0]},"header_count_{s}":{v[1] + v[2] + v[3]},'
                        f'"list_count_{s}":{v[4] + v[5]},"bold_count_{s}":{v[6] + v[7]}'
                        for s, v in (("a", p), ("b", q))
                    )
                    out.append(
                        f'{{"id":"{head}","model_a":"{names[x]}","model_b":"{names[y]}",'
                        f'"winner":"{WINNERS[w]}",{meta}}}\n'
                    )
                else:
                    out.append(
                        f"{head},{names[x]},{names[y]},{WINNERS[w]},{p[0]},{p[1] + p[2] + p[3]},"
                        f"{p[4] + p[5]},{p[6] + p[7]},{q[0]},{q[1] + q[2] + q[3]},{q[4] + q[5]},"
                        f"{q[6] + q[7]}\n"
                    )
            fh.write("".join(out))
    return time.perf_counter() - t0


def bulk_load(url: str, n: int, m: int, seed: int) -> float:
    """The same battles straight into ``battles`` + ``battle_style`` (no ingest); seconds."""
    engine = open_engine(url)
    t0 = time.perf_counter()
    with engine.begin() as conn:
        synthetic_batch_and_models(conn, m)
        pg = conn.dialect.name == "postgresql"
        cursor = conn.connection.cursor()
        if pg:
            cursor.execute("SET LOCAL session_replication_role = replica")
        for lo in range(0, n, BLOCK):
            k = min(BLOCK, n - lo)
            a, b, win, sa, sb = battles(k, m, seed + lo)
            ids = np.arange(lo + 1, lo + k + 1)
            fa = np.column_stack([sa[:, 0], sa[:, 1:4].sum(1), sa[:, 4:6].sum(1), sa[:, 6:].sum(1)])
            fb = np.column_stack([sb[:, 0], sb[:, 1:4].sum(1), sb[:, 4:6].sum(1), sb[:, 6:].sum(1)])
            style = np.column_stack([ids, np.stack([fa, fb], axis=2).reshape(k, 8)]).tolist()
            outcome = [OUTCOMES[w] for w in win.tolist()]
            rows = list(zip(ids.tolist(), (a + 1).tolist(), (b + 1).tolist(), outcome, strict=True))
            if pg:
                with cursor.copy(
                    "COPY battles (id, model_a_id, model_b_id, outcome, batch_id) FROM STDIN"
                ) as cp:
                    cp.write("".join(f"{i}\t{x}\t{y}\t{o}\t1\n" for i, x, y, o in rows))
                with cursor.copy(
                    "COPY battle_style (battle_id, tokens_a, tokens_b, headers_a, headers_b, "
                    "lists_a, lists_b, bold_a, bold_b) FROM STDIN"
                ) as cp:
                    cp.write("".join("\t".join(map(str, r)) + "\n" for r in style))
            else:
                cursor.executemany(
                    "INSERT INTO battles (id, model_a_id, model_b_id, outcome, batch_id) "
                    "VALUES (?, ?, ?, ?, 1)",
                    rows,
                )
                cursor.executemany(
                    "INSERT INTO battle_style (battle_id, tokens_a, tokens_b, headers_a, "
                    "headers_b, lists_a, lists_b, bold_a, bold_b) VALUES (?,?,?,?,?,?,?,?,?)",
                    style,
                )
    engine.dispose()
    run(["db", "recount"], db=url)
    return time.perf_counter() - t0


# ---------------------------------------------------------------- running commands
def run(args: list[str], *, db: str) -> dict:
    """``arena --db DB ARGS`` in a fresh process with stderr on a pseudo-terminal.

    Returns seconds, CPU seconds (the command and its workers), peak RSS (MB)
    of the command and of its largest worker, and the progress lines.
    """
    master, slave = pty.openpty()
    with tempfile.NamedTemporaryFile("r", suffix=".rss", delete=False) as tmp:
        rss_path = tmp.name
    env = {**os.environ, "BENCH_RSS": rss_path, "PYTHONPATH": str(ROOT)}
    lines: list[str] = []

    def reader():
        buf = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
        lines.extend(buf.decode(errors="replace").replace("\r", "").splitlines())

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, "--", "--db", db, *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
        env=env,
    )
    seconds = time.perf_counter() - t0
    os.close(slave)
    t.join(timeout=10)
    os.close(master)
    if proc.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)} failed:\n" + "\n".join(lines[-20:]))
    own, kids, cpu_own, cpu_kids = Path(rss_path).read_text().split()
    os.unlink(rss_path)
    return {
        "seconds": seconds,
        "cpu": float(cpu_own) + float(cpu_kids),
        "peak_mb": int(own) / 1024,
        "worker_mb": int(kids) / 1024,
        "lines": lines + proc.stdout.splitlines(),
        "load": os.getloadavg()[0],
    }


_TOOK = r"in ([\d.]+) s(?: \(([\d.]+) s CPU\))?"
PHASES = {
    "read": re.compile(r"style: read ([\d,]+) battles .* " + _TOOK),
    "rows": re.compile(r"rows: ([\d,]+) from .* " + _TOOK),
    "fit": re.compile(r"()point fit " + _TOOK),
    "intervals": re.compile(r"(?:bootstrap, \d+ rounds \((\S+)\)|sandwich intervals),? " + _TOOK),
}


def phases(lines: list[str]) -> dict:
    """Seconds (and CPU seconds, as ``NAME_cpu``) of each style phase in a rebuild's progress."""
    out = {}
    for line in lines:
        if "|style" not in line and "style: read" not in line:
            continue
        for name, pat in PHASES.items():
            mm = pat.search(line)
            if mm:
                first, wall, cpu = mm.groups()
                out[name] = float(wall)
                if cpu is not None:
                    out[f"{name}_cpu"] = float(cpu)
                if name == "intervals" and first:
                    out["method"] = first
                if name in ("read", "rows"):
                    out[f"n_{name}"] = int(first.replace(",", ""))
    return out


def detail(ph: dict) -> str:
    """``read 12.3 (4.5 CPU), rows ...`` from :func:`phases`."""
    parts = []
    for k in ("read", "rows", "fit", "intervals"):
        if k in ph:
            cpu = f" ({ph[k + '_cpu']:.1f} CPU)" if k + "_cpu" in ph else ""
            parts.append(f"{k} {ph[k]:.1f}{cpu}")
    method = f", {ph['method']}" if "method" in ph else ""
    return ", ".join(parts) + f" (rows {ph.get('n_rows', 0):,}{method})"


# ---------------------------------------------------------------- FastChat side by side
def side_by_side(n: int, m: int, seed: int, ref_rounds: int, engine_rounds: int) -> dict:
    """Per-round CPU and wall: FastChat's method against this engine's exact and one-step rounds."""
    from fastchat_style_reference import bootstrap_reference

    from arena.core.outcomes import A_WINS, B_WINS
    from arena.engine.resampling.blas import set_blas_threads
    from arena.engine.style.boot import _StyleJob
    from arena.engine.style.design import style_table
    from arena.engine.style.fit import fit_style

    a_parts, b_parts, o_parts, fa_parts, fb_parts = [], [], [], [], []
    for lo in range(0, n, BLOCK):
        a, b, win, sa, sb = battles(min(BLOCK, n - lo), m, seed + lo)
        a_parts.append(a)
        b_parts.append(b)
        o_parts.append(np.where(win == 3, 2, win))  # both bad: a tie, as the rebuild's default
        for parts, s in ((fa_parts, sa), (fb_parts, sb)):
            parts.append(
                np.column_stack([s[:, 0], s[:, 1:4].sum(1), s[:, 4:6].sum(1), s[:, 6:].sum(1)])
            )
    a, b, o = np.concatenate(a_parts), np.concatenate(b_parts), np.concatenate(o_parts)
    fa, fb = np.concatenate(fa_parts).astype(float), np.concatenate(fb_parts).astype(float)
    y = np.where(o == A_WINS, 1.0, np.where(o == B_WINS, 0.0, 0.5))
    set_blas_threads(1)
    out = {}
    c0, w0 = time.process_time(), time.perf_counter()
    bootstrap_reference(a, b, fa, fb, y, np.ones(n), m, ref_rounds, seed=0)
    out["fastchat"] = (
        (time.process_time() - c0) / ref_rounds,
        (time.perf_counter() - w0) / ref_rounds,
    )
    tab = style_table(a, b, o, fa, fb, n_models=m)
    point = fit_style(tab)
    for method in ("exact", "one-step"):
        job = _StyleJob(point, None, engine_rounds, 12, 60, method)
        c0, w0 = time.process_time(), time.perf_counter()
        for r in range(
            engine_rounds
        ):  # one round per chunk, as the bootstrap runs them at this size
            job.run(1, np.random.SeedSequence(r))
        out[method] = (
            (time.process_time() - c0) / engine_rounds,
            (time.perf_counter() - w0) / engine_rounds,
        )
    out["rows"] = tab.n_rows
    return out


# ---------------------------------------------------------------- end to end
#: one JSON line, LMArena's nested conv_metadata (h4..h6 are always 0 here)
_E2E_LINE = (
    '{{"id":"e{}","model_a":"{}","model_b":"{}","winner":"{}","conv_metadata":{{'
    '"sum_assistant_a_tokens":{},"header_count_a":{{"h1":{},"h2":{},"h3":{},"h4":0,"h5":0,'
    '"h6":0}},"list_count_a":{{"ordered":{},"unordered":{}}},"bold_count_a":{{"**":{},'
    '"__":{}}},"sum_assistant_b_tokens":{},"header_count_b":{{"h1":{},"h2":{},"h3":{},'
    '"h4":0,"h5":0,"h6":0}},"list_count_b":{{"ordered":{},"unordered":{}}},'
    '"bold_count_b":{{"**":{},"__":{}}}}}}}\n'
)


#: the same as LMArena's flat CSV: ``conv_metadata.*`` sub-count columns
_E2E_CSV_HEADER = ",".join(
    ["id", "model_a", "model_b", "winner"]
    + [
        f"conv_metadata.{key}"
        for side in "ab"
        for key in (
            f"sum_assistant_{side}_tokens",
            *(f"header_count_{side}.h{i}" for i in (1, 2, 3)),
            f"list_count_{side}.ordered",
            f"list_count_{side}.unordered",
            f"bold_count_{side}.**",
            f"bold_count_{side}.__",
        )
    ]
)
_E2E_CSV_LINE = "e{}," + ",".join(["{}"] * 19) + "\n"


def write_e2e(path: Path, n: int, m: int, seed: int) -> float:
    """The battles of :func:`battles` as JSON lines, column by column: each column a
    list of numbers from numpy, one ``str.format`` per line over them (no dict per
    battle); written under a temporary name, so a cached file is always whole."""
    t0 = time.perf_counter()
    names = np.array([f"model-{i:03d}" for i in range(m)])
    part = path.with_suffix(".part")
    csv = path.suffix == ".csv"
    line = _E2E_CSV_LINE if csv else _E2E_LINE
    with open(part, "w") as fh:
        if csv:
            fh.write(_E2E_CSV_HEADER + "\n")
        for lo in range(0, n, BLOCK):
            k = min(BLOCK, n - lo)
            a, b, win, sa, sb = battles(k, m, seed + lo)
            columns = [
                range(lo, lo + k),
                names[a].tolist(),
                names[b].tolist(),
                np.array(WINNERS)[win].tolist(),
                *(sa[:, j].tolist() for j in range(8)),
                *(sb[:, j].tolist() for j in range(8)),
            ]
            fh.write("".join(map(line.format, *columns)))
    part.rename(path)
    return time.perf_counter() - t0


def end_to_end(args: argparse.Namespace) -> None:
    n = args.e2e_battles
    work = args.work or Path("/tmp/arena-bench-style-e2e")
    work.mkdir(parents=True, exist_ok=True)
    data = work / f"e2e_{n}_{args.models}.{args.e2e_format}"
    print(f"bench_style_scale --end-to-end: {os.cpu_count()} CPUs, {load()}", flush=True)
    if not data.exists():
        secs = write_e2e(data, n, args.models, 7)
        print(f"  wrote {data} in {secs:.0f} s", flush=True)
    print(f"  data: {data} ({data.stat().st_size / 2**20:,.0f} MiB, cached)", flush=True)
    table = [
        "| battles | engine | phase | seconds | CPU s | peak MB | worker MB | load | detail |",
        "|---:|---|---|---:|---:|---:|---:|---:|---|",
    ]
    results = []
    for eng in args.engines.split(","):
        url, drop = fresh_db(eng, work, f"e2e_{n}")
        try:
            r = run(["ingest", str(data), "-q"], db=url)
            shape = "CSV, flat" if args.e2e_format == "csv" else "JSONL, nested"
            table.append(fmt_row(n, eng, f"ingest ({shape})", r, f"{n / r['seconds']:,.0f} rows/s"))
            print(table[-1], flush=True)
            results.append({"engine": eng, "phase": "ingest", **r, "lines": None})
            for label, extra in (
                ()
                if args.e2e_ingest_only
                else (
                    (
                        f"rebuild --style-control (bootstrap {args.rounds})",
                        # named: the default --ci is the sandwich since issue 41
                        ["--ci", "bootstrap", "--rounds", str(args.rounds)],
                    ),
                    ("rebuild --style-control --ci sandwich", ["--ci", "sandwich"]),
                )
            ):
                r = run(["rebuild", "--style-control", "on", *extra], db=url)
                ph = phases(r["lines"])
                table.append(fmt_row(n, eng, label, r, detail(ph)))
                print(table[-1], flush=True)
                results.append({"engine": eng, "phase": label, **r, "phases": ph})
        finally:
            drop()
    print("\n" + "\n".join(table))
    print(f"\n({load()}; peak MB: the command's own RSS; worker: its largest bootstrap worker)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))


# ---------------------------------------------------------------- main
def fmt_row(size, eng, phase, r, extra="") -> str:
    return (
        f"| {size:>10,} | {eng:10} | {phase:26} | {r['seconds']:8.1f} | {r['cpu']:8.1f} | "
        f"{r['peak_mb']:7.0f} | {r['worker_mb']:7.0f} | {r['load']:5.1f} | {extra}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000000,5000000,10000000")
    ap.add_argument("--engines", default="sqlite,postgresql")
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--ingest-max", type=int, default=1_000_000, help="larger sizes bulk-load")
    ap.add_argument("--side", action="store_true", help="FastChat side by side at the first size")
    ap.add_argument("--ref-rounds", type=int, default=1)
    ap.add_argument("--work", type=Path, default=None, help="directory for data files (kept)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    ap.add_argument("--quick", action="store_true", help="10 rounds, no flat-metadata ingest")
    ap.add_argument(
        "--flat-engines",
        default="sqlite",
        help="engines that also ingest flat metadata (first size)",
    )
    ap.add_argument("--end-to-end", action="store_true", help="generate, ingest, rebuild")
    ap.add_argument("--e2e-battles", type=int, default=5_000_000)
    ap.add_argument(
        "--e2e-format", choices=("jsonl", "csv"), default="jsonl", help="nested JSONL or flat CSV"
    )
    ap.add_argument("--e2e-ingest-only", action="store_true", help="no rebuilds")
    args = ap.parse_args()
    if args.end_to_end:
        end_to_end(args)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    engines = args.engines.split(",")
    rounds = 10 if args.quick else args.rounds
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_style_scale_"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"bench_style_scale: {os.cpu_count()} CPUs, {load()}, data in {work}", flush=True)
    results = []
    header = (
        "| battles | engine | phase | seconds | CPU s | peak MB | worker MB | load | detail |\n"
        "|---:|---|---|---:|---:|---:|---:|---:|---|"
    )
    table = [header]

    def emit(line: str, record: dict) -> None:
        table.append(line)
        results.append(record)
        print(line, flush=True)

    for si, n in enumerate(sizes):
        data = work / f"style_{n}.jsonl"
        if n <= args.ingest_max and not data.exists():
            print(
                f"  writing {data.name}: {write_file(data, n, args.models, 7, 'nested'):.0f} s",
                flush=True,
            )
        for eng in engines:
            url, drop = fresh_db(eng, work, f"style_{n}")
            try:
                if n <= args.ingest_max:
                    r = run(["ingest", str(data), "-q"], db=url)
                    emit(
                        fmt_row(
                            n, eng, "ingest (JSONL, nested)", r, f"{n / r['seconds']:,.0f} rows/s"
                        ),
                        {"battles": n, "engine": eng, "phase": "ingest", **r, "lines": None},
                    )
                    if si == 0 and not args.quick and eng in args.flat_engines.split(","):
                        for shape, suffix in (("flat", "jsonl"), ("csv", "csv")):
                            other = work / f"style_{n}_{shape}.{suffix}"
                            if not other.exists():
                                write_file(other, n, args.models, 7, shape)
                            extra_url, extra_drop = fresh_db(eng, work, f"style_{n}_{shape}")
                            try:
                                r = run(["ingest", str(other), "-q"], db=extra_url)
                            finally:
                                extra_drop()
                            label = f"ingest ({'JSONL' if shape == 'flat' else 'CSV'}, flat)"
                            emit(
                                fmt_row(n, eng, label, r, f"{n / r['seconds']:,.0f} rows/s"),
                                {"battles": n, "engine": eng, "phase": label, **r, "lines": None},
                            )
                else:
                    t = bulk_load(url, n, args.models, 7)
                    print(
                        f"| {n:>10,} | {eng:10} | bulk load + recount (not ingest) | {t:8.1f} |",
                        flush=True,
                    )
                for label, extra in (
                    ("rebuild --ci sandwich", ["--ci", "sandwich"]),
                    # the bootstrap asked for by name: the default --ci is the sandwich (issue 41)
                    (
                        f"rebuild --ci bootstrap --rounds {rounds}",
                        ["--ci", "bootstrap", "--rounds", str(rounds)],
                    ),
                ):
                    r = run(["rebuild", *extra], db=url)
                    ph = phases(r["lines"])
                    emit(
                        fmt_row(n, eng, label, r, detail(ph)),
                        {
                            "battles": n,
                            "engine": eng,
                            "phase": label,
                            **r,
                            "phases": ph,
                            "lines": r["lines"],
                        },
                    )
            finally:
                drop()
        if si == 0 and args.side:
            sb = side_by_side(n, args.models, 7, args.ref_rounds, 3 if args.quick else 5)
            fc = sb["fastchat"]
            line = (
                f"side by side at {n:,} battles ({sb['rows']:,} rows), per round, CPU s (wall s): "
                f"FastChat {fc[0]:.2f} ({fc[1]:.2f}); "
                + "; ".join(
                    f"engine {k} {sb[k][0]:.3f} ({sb[k][1]:.3f}) = {fc[0] / sb[k][0]:.0f}x CPU, "
                    f"{fc[1] / sb[k][1]:.0f}x wall"
                    for k in ("exact", "one-step")
                )
                + f"   ({load()})"
            )
            print(line, flush=True)
            results.append({"side_by_side": sb})
    print("\n" + "\n".join(table))
    print(f"\n({load()}; peak MB: the command's own RSS; worker: its largest bootstrap worker)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
