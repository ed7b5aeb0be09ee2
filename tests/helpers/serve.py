"""A real ``arena serve`` process on loopback for the serve tests, and what they check.

``ARENA_TEST_SERVE_ROOT`` (a checkout) serves from other code than this one,
to show that a test fails on the code before a fix.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import select

from tests.helpers.cli import cli_for

MODELS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
ROOT = Path(__file__).resolve().parents[2]


def battles_csv(path: Path, n: int = 600, *, tags: bool = False) -> Path:
    """A small board: every pair meets, the earlier model usually wins.

    With ``tags``, every third battle carries the tags ``math`` and ``hard.a``,
    ``hard.b`` (boolean tag columns), so boards of categories can be rebuilt.
    """
    rng = random.Random(3)
    lines = ["id,model_a,model_b,winner" + (",math,hard.a,hard.b" if tags else "")]
    for k in range(n):
        i, j = rng.sample(range(len(MODELS)), 2)
        p = 0.5 + 0.08 * (j - i)
        r = rng.random()
        winner = "tie" if r > 0.9 else ("model_a" if r < 0.9 * p else "model_b")
        row = f"seed-{k},{MODELS[i]},{MODELS[j]},{winner}"
        if tags:
            row += ",True,True,True" if k % 3 == 0 else ",False,False,False"
        lines.append(row)
    path.write_text("\n".join(lines) + "\n")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str  # database
    base: str  # http://127.0.0.1:PORT
    proc: subprocess.Popen
    keys: dict[str, str]

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[key]}"} if key else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=30)


def start(url: str, *extra: str, port: int | None = None) -> tuple[subprocess.Popen, str]:
    """``arena serve`` on ``url`` (global options such as ``--wait`` go in ``extra``
    after ``serve``); returns the process and base URL once /healthz answers."""
    port = port or free_port()
    env = dict(os.environ)
    root = os.environ.get("ARENA_TEST_SERVE_ROOT") or str(ROOT)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "--db", url, "-q", "serve", "--port", str(port), *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=root,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode() if proc.stdout else ""
            raise AssertionError(f"arena serve exited {proc.returncode}:\n{out}")
        try:
            if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise AssertionError("arena serve did not answer /healthz within 60 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def prepare(url: str, tmp: Path, *, tags: bool = False) -> dict[str, str]:
    """Ingest the small board, rebuild it, create the tests' keys; returns the tokens."""
    run = cli_for(url)
    run("ingest", str(battles_csv(tmp / "battles.csv", tags=tags)), "-q")
    run("rebuild", "--rounds", "50", "-q")
    keys = {}
    for name, scope, rate in [
        ("voter", "vote", "0"),
        ("reader", "read", "0"),
        ("loader", "ingest", "0"),
        ("boss", "admin", "0"),
        ("slow", "vote", "1"),
        ("gone", "vote", "0"),
    ]:
        keys[name] = run(
            "keys", "create", name, "--scope", scope, "--rate", rate, "-q"
        ).output.strip()
    run("keys", "revoke", "gone")
    return keys


def stored_votes(url: str) -> list[str]:
    """External ids of the stored votes."""
    from arena.db.models import Battle
    from arena.db.session import open_engine

    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            return list(
                conn.execute(
                    select(Battle.external_id).where(Battle.external_id.like("vote:%"))
                ).scalars()
            )
    finally:
        engine.dispose()


def vote_categories(url: str, external_id: str) -> list[str]:
    """The categories the battle stored under ``external_id`` is linked to."""
    from arena.db.models import Battle, BattleCategory, BattleKey, Category
    from arena.db.session import open_engine

    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            return sorted(
                conn.execute(
                    select(Category.name)
                    .join(BattleCategory, BattleCategory.category_id == Category.id)
                    .join(Battle, Battle.id == BattleCategory.battle_id)
                    .join(BattleKey, BattleKey.battle_id == Battle.id)
                    .where(BattleKey.external_id == external_id)
                ).scalars()
            )
    finally:
        engine.dispose()


def counts_current(url: str) -> bool:
    """The count table and battle keys equal what a recount computes (rolled back)."""
    from arena.db.session import open_engine
    from arena.ingest.recount import recount

    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            tx = conn.begin()
            done = recount(conn)
            tx.rollback()
    finally:
        engine.dispose()
    return done.changed == 0 and done.keys_added == 0 and done.keys_dropped == 0


def pair_and_vote(
    c: httpx.Client, winner: str = "model_a", **params
) -> tuple[dict, httpx.Response]:
    """Ask for a pair (with query ``params``) and vote on it."""
    pair = c.get("/v1/pair", params=params)
    assert pair.status_code == 200, pair.text
    body = pair.json()
    return body, c.post("/v1/votes", json={"battle": body["battle"], "winner": winner})
