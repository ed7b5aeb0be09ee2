"""CPU a vote costs ``arena serve``'s application, driven by raw ASGI calls (no sockets).

Without the HTTP server and a client library, the figure is the application's
own cost (auth, body, token, route dispatch, group commit on SQLite), so two
versions of the code can be compared on a busy machine, alternated::

    python benchmarks/bench_vote_asgi.py --root OTHER_CHECKOUT --root . --repeat 3

Each run copies one prepared SQLite database (``arena ingest`` of 600 battles,
a rebuild, a vote key), fetches the pairs, warms up with 200 votes, then sends
``--votes`` votes from 32 concurrent tasks and prints CPU microseconds a vote
and votes a second.  Every run is a fresh process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The measurement, run in a fresh process with the checkout under test first on sys.path.
_RUN = r"""
import asyncio, json, shutil, sys, time
root, db, token, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, root)
from arena.serve.app import create_app
try:
    from arena.serve.config import ServeConfig
except ImportError:  # before the app was split into modules
    from arena.serve.app import ServeConfig
work = db + ".run"
shutil.copy(db, work)
app = create_app(ServeConfig(url=f"sqlite:///{work}", rate=0))
auth = (b"authorization", f"Bearer {token}".encode())


async def call(method, path, body=b""):
    headers = [(b"host", b"x"), auth]
    if method == "POST":
        headers += [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80), "state": {}}
    sent = False

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)

    out = {}

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
        elif message["type"] == "http.response.body":
            out["body"] = out.get("body", b"") + message.get("body", b"")

    await app(scope, receive, send)
    return out


async def main():
    async with app.router.lifespan_context(app):
        tokens = [json.loads((await call("GET", "/v1/pair"))["body"])["battle"]
                  for _ in range(n + 200)]

        async def votes(part):
            for tok in part:
                body = json.dumps({"battle": tok, "winner": "tie"}).encode()
                r = await call("POST", "/v1/votes", body)
                assert r["status"] == 201, r

        await asyncio.gather(*(votes(tokens[i:200:32]) for i in range(32)))
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(votes(tokens[200 + i::32]) for i in range(32)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"{root}: {n} votes, {cpu / n * 1e6:.0f} us CPU a vote, {n / wall:.0f} votes/s")


asyncio.run(main())
"""


def _prepare(folder: Path) -> tuple[Path, str]:
    """A database with a small rated board and a vote key; (its file, the token)."""
    import random

    db = folder / "arena.db"
    url = f"sqlite:///{db}"
    rng = random.Random(3)
    models = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    rows = ["id,model_a,model_b,winner"]
    for k in range(600):
        a, b = rng.sample(models, 2)
        rows.append(f"b-{k},{a},{b},{rng.choice(['model_a', 'model_b', 'tie'])}")
    (folder / "battles.csv").write_text("\n".join(rows) + "\n")

    def arena(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "arena", "--db", url, "-q", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    arena("ingest", str(folder / "battles.csv"))
    arena("rebuild", "--rounds", "50")
    return db, arena("keys", "create", "bench", "--scope", "vote", "--rate", "0")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", action="append", help="checkout to measure (repeatable)")
    p.add_argument("--votes", type=int, default=3000)
    p.add_argument("--repeat", type=int, default=1, help="alternations of the roots")
    args = p.parse_args()
    roots = [str(Path(r).resolve()) for r in (args.root or [ROOT])]
    with tempfile.TemporaryDirectory() as tmp:
        db, token = _prepare(Path(tmp))
        for _ in range(args.repeat):
            for root in roots:
                subprocess.run(
                    [sys.executable, "-c", _RUN, root, str(db), token, str(args.votes)],
                    cwd=tmp,
                    check=True,
                )


if __name__ == "__main__":
    main()
