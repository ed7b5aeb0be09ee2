"""arena serve under load, on this machine, 127.0.0.1 only, bounded in count and time.

Starts ``arena serve`` on a fresh database (SQLite, and PostgreSQL with
``--postgres``), then drives it with a small asyncio HTTP/1.1 client (keep-alive
connections, no third-party client, so the load generator costs little CPU):

1. ``GET /v1/pair`` from C concurrent clients (the tokens are kept for 2.);
2. ``POST /v1/votes``, one vote a request, from C concurrent clients: acknowledged
   votes per second and latency percentiles (a vote is acknowledged after its
   group commit);
3. ``POST /v1/battles`` in batches of B records from 4 clients: battles per second.

With ``--live`` (issue 43) it measures the provisional board instead, on the
bundled 53-model LMArena board (135,634 battles, rebuilt once):

4. votes at a fixed rate (``--rate``, default 1,000/s, open loop: each client
   sends on a schedule, late sends go at once and count) for ``--live-seconds``;
   every ``--marker-every``-th vote is a marker, and a poller reads
   ``GET /v1/leaderboard?provisional=true`` (with ``If-None-Match``) every
   ``--poll`` seconds: a marker's delay is the time from its acknowledgement to
   the first poll whose board's watermark covers its battle id. Run side by side
   on the same database with refits off (``--refit-every 0``) and on, so the
   vote path's p99 with and without the refitter is one run's ratio;
5. the refit's cost (count table read, warm-started fit, sandwich intervals,
   rank sets and tiers from Gaussian draws, write) on synthetic boards of 53,
   300 and 1,000 models, in process: the first (cold) refit and warm ones.

Server and load generator share the machine's cores, so the figures are a lower
bound for a server with the machine to itself.  Run::

    python benchmarks/bench_serve.py                 # SQLite
    python benchmarks/bench_serve.py --postgres      # PostgreSQL too
    python benchmarks/bench_serve.py --votes 20000 --clients 32 --batch 500
    python benchmarks/bench_serve.py --live                      # SQLite, 1,000 votes/s, 30 s
    python benchmarks/bench_serve.py --live --postgres --no-sqlite --workers 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PG = os.environ.get("ARENA_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


class Conn:
    """One keep-alive HTTP/1.1 connection (headers built once, responses parsed by
    one ``readuntil``: the load generator shares the cores with the server, so its
    CPU per request is kept small and is reported beside the server's)."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port, self.token = host, port, token
        self.reader = self.writer = None
        self._heads: dict[tuple[str, str], bytes] = {}

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def _head(self, method: str, path: str, body: bool) -> bytes:
        head = self._heads.get((method, path))
        if head is None:
            head = (
                f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n"
                f"Authorization: Bearer {self.token}\r\n"
                + ("Content-Type: application/json\r\n" if body else "")
            ).encode()
            self._heads[(method, path)] = head
        return head

    async def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        head = self._head(method, path, body is not None)
        if body is not None:
            self.writer.write(b"%sContent-Length: %d\r\n\r\n%s" % (head, len(body), body))
        else:
            self.writer.write(head + b"\r\n")
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw[9:12])
        at = raw.lower().find(b"content-length:")
        length = int(raw[at + 15 : raw.index(b"\r\n", at)]) if at >= 0 else 0
        data = await self.reader.readexactly(length) if length else b""
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its live descendants (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    wanted, total, grew = {pid}, 0.0, True
    while grew:
        grew = False
        for child, (parent, _) in stats.items():
            if parent in wanted and child not in wanted:
                wanted.add(child)
                grew = True
    for p in wanted:
        total += stats.get(p, (0, 0.0))[1]
    return total


def _postgres_cpu() -> float:
    """CPU seconds of every process named ``postgres`` (the database's share of the
    cores; other users of the same PostgreSQL count too, so it is an upper bound)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                head, _, rest = f.read().rpartition(")")
        except OSError:
            continue
        if head.endswith("(postgres"):
            fields = rest.split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


class Meter:
    """Wall time and CPU (server tree, load generator) of one phase."""

    def __init__(self, server_pid: int) -> None:
        self.pid = server_pid

    def __enter__(self) -> Meter:
        self.t0, self.s0, self.c0 = time.perf_counter(), _tree_cpu(self.pid), _own_cpu()
        self.d0 = _postgres_cpu()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self.t0
        self.server = _tree_cpu(self.pid) - self.s0
        self.client = _own_cpu() - self.c0
        self.database = _postgres_cpu() - self.d0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _arena(url: str, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "arena", "--db", url, "-q", *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout


def prepare(url: str, tmp: Path, models: int = 30, battles: int = 20_000) -> dict[str, str]:
    rng = random.Random(1)
    names = [f"model-{k:02d}" for k in range(models)]
    path = tmp / "battles.csv"
    with path.open("w") as f:
        f.write("model_a,model_b,winner\n")
        for _ in range(battles):
            i, j = rng.sample(range(models), 2)
            f.write(f"{names[i]},{names[j]},{rng.choice(['model_a', 'model_b', 'tie'])}\n")
    _arena(url, "ingest", str(path))
    _arena(url, "rebuild", "--rounds", "100")
    return {
        scope: _arena(
            url, "keys", "create", f"bench-{scope}", "--scope", scope, "--rate", "0"
        ).strip()
        for scope in ("vote", "ingest")
    }


#: the checkout whose server is measured (--server-root: an older one, side by side)
SERVER_ROOT = ROOT


def start(url: str, workers: int, *extra: str) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "--db",
            url,
            "-q",
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--seed",
            "1",
            *extra,
        ],  # fmt: skip
        env={**os.environ, "PYTHONPATH": str(SERVER_ROOT)},
        cwd=SERVER_ROOT,  # `python -m` puts the working directory first on sys.path
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                if b" 200 " in s.recv(200):
                    return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("arena serve did not start")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


async def run_pairs(port: int, token: str, n: int, clients: int) -> tuple[list[str], float]:
    tokens: list[str] = []
    conns = [Conn("127.0.0.1", port, token) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in conns))
    per = n // clients

    async def one(c: Conn) -> None:
        for _ in range(per):
            status, body = await c.request("GET", "/v1/pair")
            assert status == 200, body
            tokens.append(json.loads(body)["battle"])

    t0 = time.perf_counter()
    await asyncio.gather(*(one(c) for c in conns))
    elapsed = time.perf_counter() - t0
    for c in conns:
        c.close()
    return tokens, len(tokens) / elapsed


async def run_votes(
    port: int, token: str, tickets: list[str], clients: int, limit_s: float
) -> tuple[int, float, list[float], dict[int, int]]:
    conns = [Conn("127.0.0.1", port, token) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in conns))
    latencies: list[float] = []
    codes: dict[int, int] = {}
    # bodies are made before the clock starts: the phase measures the server
    bodies = [b'{"battle":"%s","winner":"model_a"}' % t.encode() for t in reversed(tickets)]
    deadline = time.perf_counter() + limit_s
    clock = time.perf_counter

    async def one(c: Conn) -> None:
        while bodies and clock() < deadline:
            body = bodies.pop()
            t = clock()
            status, _ = await c.request("POST", "/v1/votes", body)
            latencies.append(clock() - t)
            codes[status] = codes.get(status, 0) + 1

    t0 = time.perf_counter()
    await asyncio.gather(*(one(c) for c in conns))
    elapsed = time.perf_counter() - t0
    for c in conns:
        c.close()
    return codes.get(201, 0), elapsed, latencies, codes


async def run_batches(
    port: int, token: str, batches: int, size: int, clients: int = 4
) -> tuple[int, float, list[float]]:
    rng = random.Random(2)
    conns = [Conn("127.0.0.1", port, token) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in conns))
    bodies = []
    for _ in range(batches):
        records = []
        for _ in range(size):
            i, j = rng.sample(range(30), 2)
            records.append(
                {
                    "id": uuid.uuid4().hex,
                    "model_a": f"model-{i:02d}",
                    "model_b": f"model-{j:02d}",
                    "winner": rng.choice(["model_a", "model_b", "tie"]),
                }  # fmt: skip
            )
        bodies.append(json.dumps(records).encode())
    latencies: list[float] = []
    stored = 0

    async def one(c: Conn) -> None:
        nonlocal stored
        while bodies:
            body = bodies.pop()
            t = time.perf_counter()
            status, data = await c.request("POST", "/v1/battles", body)
            latencies.append(time.perf_counter() - t)
            assert status == 200, data
            stored += json.loads(data)["inserted"]

    t0 = time.perf_counter()
    await asyncio.gather(*(one(c) for c in conns))
    elapsed = time.perf_counter() - t0
    for c in conns:
        c.close()
    return stored, elapsed, latencies


def _run(coro):
    """asyncio.run on uvloop when it is installed (uvicorn[standard] brings it): the
    client's event loop then costs less of the shared CPU."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def bench(engine: str, url: str, args, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        keys = prepare(url, Path(tmp))
        proc, port = start(url, workers)
        try:
            with Meter(proc.pid) as m_pair:
                tickets, pair_rps = _run(run_pairs(port, keys["vote"], args.votes, args.clients))
            with Meter(proc.pid) as m_vote:
                acked, elapsed, lat, codes = _run(
                    run_votes(port, keys["vote"], tickets, args.clients, args.seconds)
                )
            with Meter(proc.pid) as m_batch:
                stored, b_elapsed, b_lat = _run(
                    run_batches(port, keys["ingest"], args.batches, args.batch)
                )
        finally:
            proc.terminate()
            proc.wait(60)
    sent = sum(codes.values())
    return {
        "engine": engine,
        "workers": workers,
        "pair_rps": pair_rps,
        "pair_cpu_us": (1e6 * m_pair.server / len(tickets), 1e6 * m_pair.client / len(tickets)),
        "votes": acked,
        "vote_rps": acked / elapsed,
        "vote_cpu_us": (1e6 * m_vote.server / sent, 1e6 * m_vote.client / sent),
        "p50_ms": pct(lat, 0.50),
        "p99_ms": pct(lat, 0.99),
        "codes": codes,
        "battles_per_s": stored / b_elapsed,
        "battle_cpu_us": (1e6 * m_batch.server / stored, 1e6 * m_batch.client / stored),
        "db_cpu_us": (1e6 * m_vote.database / sent, 1e6 * m_batch.database / stored),
        "batch_p99_ms": pct(b_lat, 0.99),
    }


# ------------------------------------------------------------------ --live (issue 43)


def prepare_live(url: str) -> dict[str, str]:
    """The bundled LMArena board (53 models) ingested and rebuilt; vote and read keys."""
    from arena.core.resources import demo_data

    _arena(url, "ingest", str(demo_data()))
    _arena(url, "rebuild")
    return {
        scope: _arena(
            url, "keys", "create", f"live-{scope}", "--scope", scope, "--rate", "0"
        ).strip()
        for scope in ("vote", "read")
    }


async def _poll_board(
    port: int, token: str, every: float, stop: asyncio.Event, seen: list[tuple[float, int]]
) -> int:
    """Read the provisional board every ``every`` s until ``stop``; (time, watermark) of each
    200 answer goes to ``seen`` (a 304 means the board did not change). Returns the polls."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    etag = b""
    polls = 0
    try:
        while not stop.is_set():
            head = (
                b"GET /v1/leaderboard?provisional=true HTTP/1.1\r\nHost: x\r\n"
                b"Authorization: Bearer " + token.encode() + b"\r\n"
            )
            if etag:
                head += b"If-None-Match: " + etag + b"\r\n"
            writer.write(head + b"\r\n")
            raw = await reader.readuntil(b"\r\n\r\n")
            now = time.perf_counter()
            status = int(raw[9:12])
            low = raw.lower()
            at = low.find(b"content-length:")
            length = int(raw[at + 15 : raw.index(b"\r\n", at)]) if at >= 0 else 0
            body = await reader.readexactly(length) if length else b""
            at = low.find(b"etag:")
            if at >= 0:
                etag = raw[at + 5 : raw.index(b"\r\n", at)].strip()
            if status == 200:
                seen.append((now, int(json.loads(body)["snapshot"]["watermark"])))
            polls += 1
            try:
                await asyncio.wait_for(stop.wait(), timeout=every)
            except TimeoutError:
                pass
    finally:
        writer.close()
    return polls


async def run_live(
    port: int,
    keys: dict[str, str],
    tickets: list[str],
    *,
    rate: float,
    clients: int,
    limit_s: float,
    marker_every: int,
    poll: float,
) -> dict:
    """Votes at ``rate``/s (open loop) with a poller of the provisional board."""
    conns = [Conn("127.0.0.1", port, keys["vote"]) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in conns))
    bodies = [b'{"battle":"%s","winner":"model_a"}' % t.encode() for t in tickets]
    latencies: list[float] = []
    late: list[float] = []
    codes: dict[int, int] = {}
    markers: list[tuple[str, float]] = []  # (external id, acknowledged at)
    seen: list[tuple[float, int]] = []
    stop = asyncio.Event()
    clock = time.perf_counter
    t0 = clock() + 0.2
    n = min(len(bodies), int(rate * limit_s))

    async def one(k: int, c: Conn) -> None:
        for i in range(k, n, clients):  # vote i is due at t0 + i / rate
            due = t0 + i / rate
            wait = due - clock()
            if wait > 0:
                await asyncio.sleep(wait)
            else:
                late.append(-wait)
            t = clock()
            status, data = await c.request("POST", "/v1/votes", bodies[i])
            done = clock()
            latencies.append(done - t)
            codes[status] = codes.get(status, 0) + 1
            if status == 201 and i % marker_every == 0:
                markers.append((json.loads(data)["id"], done))

    poller = asyncio.create_task(_poll_board(port, keys["read"], poll, stop, seen))
    await asyncio.gather(*(one(k, c) for k, c in enumerate(conns)))
    elapsed = clock() - t0
    # markers acknowledged last get up to 30 s to show before they count as never shown
    deadline = clock() + 30
    while clock() < deadline:
        await asyncio.sleep(0.5)
        if markers and seen and seen[-1][0] > markers[-1][1] + 1 and len(seen) > 1:
            break
    stop.set()
    polls = await poller
    for c in conns:
        c.close()
    return {
        "sent": n,
        "elapsed": elapsed,
        "latencies": latencies,
        "late": late,
        "codes": codes,
        "markers": markers,
        "seen": seen,
        "polls": polls,
    }


def _battle_ids(url: str, external: list[str]) -> dict[str, int]:
    from sqlalchemy import create_engine, select

    from arena.db.models import Battle

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(Battle.external_id, Battle.id).where(Battle.external_id.in_(external))
            ).all()
    finally:
        engine.dispose()
    return {e: int(i) for e, i in rows}


def _refit_metrics(port: int, tries: int = 20) -> tuple[int, float]:
    """(refits, seconds spent) of the worker that refitted: each scrape reaches one worker
    (any of them), so several are made and the one with the most refits is taken."""
    best = (0, 0.0)
    for _ in range(tries):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            raw = b""
            while chunk := s.recv(65536):
                raw += chunk
        values = dict(
            line.rsplit(" ", 1)
            for line in raw.decode().splitlines()
            if line.startswith("arena_provisional_refit_seconds_")
        )
        count = int(float(values.get("arena_provisional_refit_seconds_count", 0)))
        if count > best[0]:
            best = (count, float(values["arena_provisional_refit_seconds_sum"]))
    return best


def live_one(engine: str, url: str, keys: dict[str, str], args, workers: int, refit: float) -> dict:
    n = int(args.rate * args.live_seconds)
    proc, port = start(url, workers, "--refit-every", str(refit))
    try:
        tickets, _ = _run(run_pairs(port, keys["vote"], n, args.clients))
        with Meter(proc.pid) as meter:
            out = _run(
                run_live(
                    port,
                    keys,
                    tickets,
                    rate=args.rate,
                    clients=args.clients,
                    limit_s=args.live_seconds,
                    marker_every=args.marker_every,
                    poll=args.poll,
                )
            )
        refits, refit_sum = _refit_metrics(port)
    finally:
        proc.terminate()
        proc.wait(60)
    ids = _battle_ids(url, [e for e, _ in out["markers"]])
    delays, unseen = [], 0
    for ext, acked in out["markers"]:
        bid = ids.get(ext)
        shown = next(
            (t for t, w in out["seen"] if t >= acked and bid is not None and w >= bid), None
        )
        if shown is None:
            unseen += 1
        else:
            delays.append(shown - acked)
    lat = out["latencies"]
    return {
        "engine": engine,
        "workers": workers,
        "refit_every": refit,
        "sent": out["sent"],
        "acked": out["codes"].get(201, 0),
        "votes_per_s": out["codes"].get(201, 0) / out["elapsed"],
        "p50_ms": pct(lat, 0.50),
        "p99_ms": pct(lat, 0.99),
        "late_p99_ms": pct(out["late"], 0.99) if out["late"] else 0.0,
        "markers": len(out["markers"]),
        "unseen": unseen,
        "delay_p50_s": pct(delays, 0.50) / 1000 if delays else float("nan"),
        "delay_p99_s": pct(delays, 0.99) / 1000 if delays else float("nan"),
        "delay_max_s": max(delays) if delays else float("nan"),
        "refits": int(refits),
        "refit_mean_s": refit_sum / refits if refits else float("nan"),
        "codes": out["codes"],
        "server_cpu_s": meter.server,
        "client_cpu_s": meter.client,
    }


def _synthetic(path: Path, m: int, battles: int, seed: int, prefix: str = "") -> None:
    rng = random.Random(m)  # the same strengths for every file of one board
    strength = [rng.gauss(0, 1) for _ in range(m)]
    rng = random.Random(seed)
    with path.open("w") as f:
        f.write("id,model_a,model_b,winner\n")
        for k in range(battles):
            i, j = rng.sample(range(m), 2)
            p = 1 / (1 + math.exp(strength[j] - strength[i]))
            u = rng.random()
            winner = "tie" if u > 0.9 else ("model_a" if u < 0.9 * p else "model_b")
            f.write(f"{prefix}{k},m{i:04d},m{j:04d},{winner}\n")


def refit_costs(sizes: list[int], per_model: int, repeats: int) -> list[dict]:
    """The refit's cost per board size, in process on SQLite: a cold refit (a new
    refitter), then warm ones, each after 1% more battles were ingested."""
    import arena

    rows = []
    for m in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{tmp}/refit.db"
            battles = per_model * m // 2
            _synthetic(Path(tmp) / "battles.csv", m, battles, seed=0, prefix="base-")
            _arena(url, "ingest", str(Path(tmp) / "battles.csv"))
            _arena(url, "rebuild", "--ci", "sandwich")
            with arena.open(url) as db:  # imports and first-call costs, not measured
                db.refit_provisional(force=True)
            cold, warm, iterations = 0.0, [], []
            with arena.open(url) as db:
                for k in range(repeats):
                    if k:
                        more = Path(tmp) / f"more{k}.csv"
                        _synthetic(more, m, max(battles // 100, 1), seed=k, prefix=f"more{k}-")
                        _arena(url, "ingest", str(more))
                    t = time.perf_counter()
                    done = db.refit_provisional(force=True)
                    spent = time.perf_counter() - t
                    assert done.provisional_id is not None, done.reason
                    iterations.append(done.refit.iterations)
                    if k:
                        warm.append(spent)
                    else:
                        cold = spent
        rows.append(
            {
                "models": m,
                "battles": battles,
                "cold_s": cold,
                "warm_s": statistics.median(warm) if warm else float("nan"),
                "iterations": iterations,
            }
        )
    return rows


def main_live(args) -> None:
    print(f"server from {SERVER_ROOT}")
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min load average), {os.cpu_count()} cores")
    rows = []
    targets = []
    if not args.no_sqlite:
        targets.append(("sqlite", None, 1))
    if args.postgres:
        targets += [("postgresql", None, w) for w in args.workers]
    for engine, _, workers in targets:
        with tempfile.TemporaryDirectory() as tmp:
            schema = None
            if engine == "sqlite":
                url = f"sqlite:///{tmp}/live.db"
            else:
                from sqlalchemy import create_engine, text

                schema = f"live_{uuid.uuid4().hex[:10]}"
                admin = create_engine(PG, isolation_level="AUTOCOMMIT")
                with admin.connect() as conn:
                    conn.execute(text(f'CREATE SCHEMA "{schema}"'))
                url = f"{PG}?options=-csearch_path%3D{schema}"
            try:
                keys = prepare_live(url)
                for refit in (0.0, args.refit_every):  # off, then on: one run's ratio
                    rows.append(live_one(engine, url, keys, args, workers, refit))
                    print(f"  {rows[-1]}", flush=True)
            finally:
                if schema is not None:
                    with admin.connect() as conn:
                        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
                    admin.dispose()
    costs = refit_costs(args.sizes, args.per_model, args.repeats) if args.sizes else []
    print(f"load after: {os.getloadavg()[0]:.2f}")
    print()
    print(
        f"target {args.rate:,.0f} votes/s for {args.live_seconds:g} s, {args.clients} clients, "
        f"a marker every {args.marker_every} votes, board polled every {args.poll:g} s "
        "(vis: acknowledged -> in the provisional board; late p99: how far behind its "
        "schedule the load generator sent, i.e. whether the rate was sustained)"
    )
    print(
        f"{'engine':<11}{'workers':>8}{'refit s':>8}{'votes/s':>9}{'p50 ms':>8}{'p99 ms':>8}"
        f"{'markers':>9}{'unseen':>7}{'vis p50 s':>10}{'vis p99 s':>10}{'vis max s':>10}"
        f"{'refits':>7}{'refit s':>9}{'late p99 s':>11}  statuses"
    )
    for r in rows:
        print(
            f"{r['engine']:<11}{r['workers']:>8}{r['refit_every']:>8g}{r['votes_per_s']:>9.0f}"
            f"{r['p50_ms']:>8.1f}{r['p99_ms']:>8.1f}{r['markers']:>9}{r['unseen']:>7}"
            f"{r['delay_p50_s']:>10.2f}{r['delay_p99_s']:>10.2f}{r['delay_max_s']:>10.2f}"
            f"{r['refits']:>7}{r['refit_mean_s']:>9.3f}{r['late_p99_ms'] / 1000:>11.2f}  "
            f"{r['codes']}"
        )
    if costs:
        print()
        print("refit cost (read counts, warm-started fit, sandwich, rank sets/tiers, write):")
        print(
            f"{'models':>7}{'battles':>10}{'cold s':>9}{'warm s':>9}  "
            "Newton iterations (cold, then warm after 1% more battles)"
        )
        for c in costs:
            print(
                f"{c['models']:>7}{c['battles']:>10,}{c['cold_s']:>9.3f}{c['warm_s']:>9.3f}  "
                f"{c['iterations']}"
            )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--votes", type=int, default=20_000, help="votes to send (bounded)")
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--seconds", type=float, default=60.0, help="time bound of the vote phase")
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--postgres", action="store_true", help="also PostgreSQL (1 and 2 workers)")
    p.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only (with --postgres)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="PostgreSQL workers")
    p.add_argument(
        "--server-root",
        type=Path,
        help="serve from this checkout instead (e.g. an older commit, for before/after)",
    )
    live = p.add_argument_group("--live: the provisional board under load (issue 43)")
    live.add_argument("--live", action="store_true", help="measure the provisional board")
    live.add_argument("--rate", type=float, default=1000.0, help="votes per second, open loop")
    live.add_argument("--live-seconds", type=float, default=30.0, help="seconds of votes")
    live.add_argument("--marker-every", type=int, default=50, help="every Nth vote is a marker")
    live.add_argument("--poll", type=float, default=0.1, help="seconds between board reads")
    live.add_argument("--refit-every", type=float, default=2.0, help="the server's --refit-every")
    live.add_argument(
        "--sizes", type=int, nargs="*", default=[53, 300, 1000], help="board sizes of refit costs"
    )
    live.add_argument("--per-model", type=int, default=400, help="battles per model (refit cost)")
    live.add_argument("--repeats", type=int, default=4, help="refits per board size")
    args = p.parse_args()
    global SERVER_ROOT
    if args.server_root is not None:
        SERVER_ROOT = args.server_root.resolve()
    if args.live:
        main_live(args)
        return
    print(f"server from {SERVER_ROOT}")
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min load average), {os.cpu_count()} cores")
    rows = []
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(bench("sqlite", f"sqlite:///{tmp}/bench.db", args, 1))
    if args.postgres:
        from sqlalchemy import create_engine, text

        for workers in args.workers:
            schema = f"bench_{uuid.uuid4().hex[:10]}"
            admin = create_engine(PG, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                conn.execute(text(f'CREATE SCHEMA "{schema}"'))
            try:
                rows.append(
                    bench("postgresql", f"{PG}?options=-csearch_path%3D{schema}", args, workers)
                )
            finally:
                with admin.connect() as conn:
                    conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
                admin.dispose()
    print(f"load after: {os.getloadavg()[0]:.2f}")
    print()
    print(
        f"{'engine':<11}{'workers':>8}{'pairs/s':>10}{'votes':>8}{'votes/s':>10}"
        f"{'p50 ms':>9}{'p99 ms':>9}{'battles/s':>11}{'batch p99':>11}  statuses"
    )
    for r in rows:
        print(
            f"{r['engine']:<11}{r['workers']:>8}{r['pair_rps']:>10.0f}{r['votes']:>8}"
            f"{r['vote_rps']:>10.0f}{r['p50_ms']:>9.1f}{r['p99_ms']:>9.1f}"
            f"{r['battles_per_s']:>11.0f}{r['batch_p99_ms']:>9.0f}ms  {r['codes']}"
        )
    print()
    print(
        "CPU microseconds per request (per battle for batches): server / load generator"
        " [/ PostgreSQL]"
    )
    for r in rows:
        print(
            f"{r['engine']:<11}{r['workers']:>8}  pair {r['pair_cpu_us'][0]:.0f} / "
            f"{r['pair_cpu_us'][1]:.0f}   vote {r['vote_cpu_us'][0]:.0f} / "
            f"{r['vote_cpu_us'][1]:.0f}   battle {r['battle_cpu_us'][0]:.1f} / "
            f"{r['battle_cpu_us'][1]:.1f}"
            + (
                f"   PostgreSQL: vote {r['db_cpu_us'][0]:.0f}, battle {r['db_cpu_us'][1]:.1f}"
                if r["engine"] == "postgresql"
                else ""
            )
        )


if __name__ == "__main__":
    main()
