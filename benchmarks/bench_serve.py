"""arena serve under load, on this machine, 127.0.0.1 only, bounded in count and time.

Starts ``arena serve`` on a fresh database (SQLite, and PostgreSQL with
``--postgres``), then drives it with a small asyncio HTTP/1.1 client (keep-alive
connections, no third-party client, so the load generator costs little CPU):

1. ``GET /v1/pair`` from C concurrent clients (the tokens are kept for 2.);
2. ``POST /v1/votes``, one vote a request, from C concurrent clients: acknowledged
   votes per second and latency percentiles (a vote is acknowledged after its
   group commit);
3. ``POST /v1/battles`` in batches of B records from 4 clients: battles per second.

Server and load generator share the machine's cores, so the figures are a lower
bound for a server with the machine to itself.  Run::

    python benchmarks/bench_serve.py                 # SQLite
    python benchmarks/bench_serve.py --postgres      # PostgreSQL too
    python benchmarks/bench_serve.py --votes 20000 --clients 32 --batch 500
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
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
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port, self.token = host, port, token
        self.reader = self.writer = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Authorization: Bearer {self.token}\r\n"
        )
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write((head + "\r\n").encode() + (body or b""))
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        data = await self.reader.readexactly(length) if length else b""
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


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


def start(url: str, workers: int) -> tuple[subprocess.Popen, int]:
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
        ],  # fmt: skip
        env={**os.environ, "PYTHONPATH": str(ROOT)},
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
    queue = list(reversed(tickets))
    deadline = time.perf_counter() + limit_s

    async def one(c: Conn) -> None:
        while queue and time.perf_counter() < deadline:
            ticket = queue.pop()
            body = json.dumps({"battle": ticket, "winner": "model_a"}).encode()
            t = time.perf_counter()
            status, _ = await c.request("POST", "/v1/votes", body)
            latencies.append(time.perf_counter() - t)
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


def bench(engine: str, url: str, args, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        keys = prepare(url, Path(tmp))
        proc, port = start(url, workers)
        try:
            tickets, pair_rps = asyncio.run(run_pairs(port, keys["vote"], args.votes, args.clients))
            acked, elapsed, lat, codes = asyncio.run(
                run_votes(port, keys["vote"], tickets, args.clients, args.seconds)
            )
            stored, b_elapsed, b_lat = asyncio.run(
                run_batches(port, keys["ingest"], args.batches, args.batch)
            )
        finally:
            proc.terminate()
            proc.wait(60)
    return {
        "engine": engine,
        "workers": workers,
        "pair_rps": pair_rps,
        "votes": acked,
        "vote_rps": acked / elapsed,
        "p50_ms": pct(lat, 0.50),
        "p99_ms": pct(lat, 0.99),
        "codes": codes,
        "battles_per_s": stored / b_elapsed,
        "batch_p99_ms": pct(b_lat, 0.99),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--votes", type=int, default=20_000, help="votes to send (bounded)")
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--seconds", type=float, default=60.0, help="time bound of the vote phase")
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--postgres", action="store_true", help="also PostgreSQL (1 and 2 workers)")
    args = p.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min load average), {os.cpu_count()} cores")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows.append(bench("sqlite", f"sqlite:///{tmp}/bench.db", args, 1))
    if args.postgres:
        from sqlalchemy import create_engine, text

        for workers in (1, 2):
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


if __name__ == "__main__":
    main()
