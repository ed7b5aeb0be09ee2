"""`arena serve`'s limits: request heads, battles per request, failing authentication.

Request heads over ``--max-header-bytes`` (or with too many fields) are
answered 431 and the connection closed, so endless headers cannot hold a
worker; a batch whose aggregated rows expand past ``--max-battles`` is refused
before anything is written; unknown tokens are never cached, the key cache is
bounded, and requests without a valid key are rate limited per address before
any database work.
"""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

httpx = pytest.importorskip("httpx", reason="arena[serve] / the test extra installs httpx")
pytest.importorskip("fastapi", reason="arena[serve] installs fastapi")

from sqlalchemy import func, select  # noqa: E402

from arena.serve.auth import Authenticator, KeyCache  # noqa: E402
from arena.serve.errors import ApiError  # noqa: E402
from arena.serve.keys import KeyInfo  # noqa: E402
from tests.helpers.serve import Server, prepare, start, stop  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """SQLite: heads and authentication are refused before any database work."""
    tmp = tmp_path_factory.mktemp("serve")
    url = f"sqlite:///{tmp / 'arena.db'}"
    keys = prepare(url, tmp)
    proc, base = start(url, "--anonymous-rate", "2", "--max-header-bytes", "16384")
    yield Server(url, base, proc, keys)
    stop(proc)


def _port(server: Server) -> int:
    return int(server.base.rsplit(":", 1)[1])


def _send_head(port: int, head_lines: list[bytes], *, seconds: float = 10.0) -> bytes:
    """Send a request head line by line (never ending it unless the lines do); the
    server's answer once it closes the connection, b"" if it never did in time."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as sock:
        deadline = time.monotonic() + seconds
        try:
            for line in head_lines:
                if time.monotonic() > deadline:
                    return b""
                sock.sendall(line)
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            return answer if answer else b""
    return answer


@pytest.mark.slow
def test_an_endless_header_is_answered_431_and_closed(server):
    started = time.monotonic()
    lines = [b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: "] + [b"a" * 8192] * 256  # 2 MiB
    answer = _send_head(_port(server), lines)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert b'"error"' in answer and b"16384" in answer
    assert time.monotonic() - started < 10
    # the server still answers everyone else
    assert httpx.get(server.base + "/healthz", timeout=5).status_code == 200


@pytest.mark.slow
def test_too_many_header_fields_are_answered_431(server):
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-F%d: 1\r\n" % i for i in range(150)
    )
    answer = _send_head(_port(server), [head + b"\r\n"])
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]


@pytest.mark.slow
def test_heads_and_bodies_within_the_limits_are_served(server):
    c = server.client("loader")
    r = c.get("/v1/models", headers={"X-Padding": "p" * 8000})
    assert r.status_code == 403  # a loader may not read: the head itself was accepted
    many = [{"model_a": "alpha", "model_b": "bravo", "winner": "tie"}] * 5000  # ~280 KB body
    assert c.post("/v1/battles", json=many).status_code == 200


@pytest.mark.slow
def test_requests_without_a_valid_key_are_rate_limited_per_address(server):
    voter = server.client("voter")
    assert voter.get("/v1/pair").status_code == 200
    guesses = [
        httpx.get(
            server.base + "/v1/pair", headers={"Authorization": f"Bearer arena_guess{i}"}, timeout=5
        )
        for i in range(8)
    ]
    codes = [r.status_code for r in guesses]
    assert codes[0] == 401 and 429 in codes, codes
    limited = next(r for r in guesses if r.status_code == 429)
    assert int(limited.headers["retry-after"]) >= 1 and "error" in limited.json()
    # a key the server knows is not charged to its address's bucket
    assert voter.get("/v1/pair").status_code == 200


def _battles(url: str) -> int:
    from arena.db.models import Battle
    from arena.db.session import open_engine

    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(Battle)).scalar_one()
    finally:
        engine.dispose()


@pytest.mark.slow
def test_battles_per_request_are_limited_after_expansion(db_url, tmp_path):
    keys = prepare(db_url, tmp_path)
    proc, base = start(db_url)
    try:
        before = _battles(db_url)
        row = {"home.team": "alpha", "away.team": "bravo", "home.wins": 6000, "away.wins": 4000}
        headers = {"Authorization": f"Bearer {keys['loader']}"}
        r = httpx.post(base + "/v1/battles", json=[row] * 11, headers=headers, timeout=60)
        assert r.status_code == 413, r.text[:300]
        assert "100000 battles" in r.json()["error"]["message"]
        assert _battles(db_url) == before
        r = httpx.post(base + "/v1/battles", json=[row] * 2, headers=headers, timeout=60)
        assert r.status_code == 200 and r.json()["inserted"] == 20_000
    finally:
        stop(proc)


# -- the authenticator itself (no server) ------------------------------------------------
def _key(key_id: int, scope: str = "vote") -> KeyInfo:
    from datetime import datetime

    return KeyInfo(key_id, f"k{key_id}", scope, 0.0, datetime(2026, 1, 1), None)


class _Store:
    """The keys a lookup finds, counting lookups (the database work)."""

    def __init__(self, keys: dict[str, KeyInfo]) -> None:
        self.keys = keys
        self.lookups = 0

    async def __call__(self, token: str) -> KeyInfo | None:
        self.lookups += 1
        return self.keys.get(token)


def _auth(store: _Store, **kwargs) -> Authenticator:
    options = {"rate": 0.0, "anonymous_rate": 0.0, "cache_size": 100} | kwargs
    return Authenticator(store, **options)


def _status(auth: Authenticator, token: str | None, address: str = "10.0.0.1") -> int:
    header = f"Bearer {token}" if token is not None else ""
    try:
        asyncio.run(auth.key(header, address, "vote"))
    except ApiError as exc:
        return exc.status
    return 200


def test_unknown_tokens_are_never_cached():
    store = _Store({})
    auth = _auth(store)
    for i in range(50):
        assert _status(auth, f"arena_unknown{i}") == 401
    assert len(auth.keys) == 0 and store.lookups == 50


def test_the_key_cache_is_bounded_least_recently_used_first():
    cache = KeyCache(max_size=2)
    for i in range(3):
        cache.put(f"d{i}", _key(i), now=0.0)
    assert len(cache) == 2 and cache.get("d0", 0.0) == (None, False)
    assert cache.get("d2", 1.0) == (_key(2), True)
    assert cache.get("d2", 5.0) == (_key(2), False)  # kept, but looked up again


def test_failing_authentication_is_limited_before_any_lookup():
    store = _Store({"arena_good": _key(1)})
    auth = _auth(store, anonymous_rate=1.0)  # bursts of 2
    codes = [_status(auth, f"arena_bad{i}") for i in range(5)]
    assert codes == [401, 401, 429, 429, 429]
    assert store.lookups == 2  # the refused ones cost no database work
    assert _status(auth, None) == 429  # no token at all: the same address bucket
    assert _status(auth, "not-a-token", address="10.0.0.2") == 401
    assert store.lookups == 2  # malformed: refused without a lookup
    assert _status(auth, "arena_good", address="10.0.0.3") == 200
    assert _status(auth, "arena_good", address="10.0.0.3") == 200
    assert store.lookups == 3  # cached after the first


def test_a_known_key_is_refreshed_without_charging_its_address():
    store = _Store({"arena_good": _key(1)})
    auth = _auth(store, anonymous_rate=1.0)
    auth.keys.ttl = 0.0  # every request refreshes the key
    assert [_status(auth, "arena_good") for _ in range(6)] == [200] * 6
    assert store.lookups == 6


def test_concurrent_guesses_cannot_all_pass_before_one_is_charged():
    class _SlowStore(_Store):
        async def __call__(self, token: str) -> KeyInfo | None:
            await asyncio.sleep(0.01)
            return await super().__call__(token)

    store = _SlowStore({})
    auth = _auth(store, anonymous_rate=1.0)  # bursts of 2

    async def guess(i: int) -> int:
        try:
            await auth.key(f"Bearer arena_guess{i}", "10.0.0.9", "vote")
        except ApiError as exc:
            return exc.status
        return 200

    async def all_at_once() -> list[int]:
        return list(await asyncio.gather(*(guess(i) for i in range(10))))

    codes = asyncio.run(all_at_once())
    assert sorted(codes) == [401, 401] + [429] * 8 and store.lookups == 2
