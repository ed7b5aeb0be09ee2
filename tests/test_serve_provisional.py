"""`arena serve` keeps a provisional board current (issue 43): real servers on loopback.

On SQLite and PostgreSQL: votes posted to a running server are in
``GET /v1/leaderboard?provisional=true`` within the bound; every refit is
announced to two subscribers of ``GET /v1/leaderboard/events``; a third
subscriber beyond ``--max-subscribers`` gets 503; streams end cleanly when the
server stops. On PostgreSQL with two workers, a kill -9 of the refitting
worker loses nothing and another worker takes over.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

httpx = pytest.importorskip("httpx", reason="arena[serve] / the test extra installs httpx")
pytest.importorskip("fastapi", reason="arena[serve] installs fastapi")

from sqlalchemy import select  # noqa: E402

from tests.helpers.cli import cli_for  # noqa: E402
from tests.helpers.postgres import pg_schema  # noqa: E402
from tests.helpers.serve import Server, pair_and_vote, prepare, start, stop  # noqa: E402

pytestmark = pytest.mark.slow  # real server processes

#: Seconds between two looks for new votes in these tests.
REFIT_EVERY = 0.5
#: The bound: a vote is in the provisional board this soon (refit interval,
#: the refit itself, the watcher's look and the request, with room for a busy machine).
BOUND = 10.0


class Subscriber:
    """An event-stream reader on a thread of its own: every line it got."""

    def __init__(self, server: Server) -> None:
        self.lines: list[str] = []
        self.status: int | None = None
        self.ended = threading.Event()
        self.open = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(server,), daemon=True)
        self._thread.start()
        assert self.open.wait(20), "the event stream did not open"

    def _read(self, server: Server) -> None:
        headers = {"Authorization": f"Bearer {server.keys['reader']}"}
        try:
            with httpx.stream(
                "GET", server.base + "/v1/leaderboard/events", headers=headers, timeout=None
            ) as stream:
                self.status = stream.status_code
                for line in stream.iter_lines():
                    self.lines.append(line)
                    if line == ": connected":
                        self.open.set()
        except httpx.HTTPError:
            pass
        finally:
            self.open.set()
            self.ended.set()

    def events(self) -> list[dict]:
        return [json.loads(x[len("data: ") :]) for x in self.lines if x.startswith('data: {"id"')]


def _server(kind: str, tmp_path_factory, *extra: str):
    tmp = tmp_path_factory.mktemp("serve-provisional")
    urls = iter([f"sqlite:///{tmp / 'arena.db'}"]) if kind == "sqlite" else pg_schema()
    url = next(urls)
    keys = prepare(url, tmp, tags=True)
    cli_for(url)("rebuild", "--rounds", "50", "--all-categories", "-q")  # a math board too
    proc, base = start(url, "--refit-every", str(REFIT_EVERY), *extra)
    return Server(url, base, proc, keys), urls


@pytest.fixture(params=["sqlite", "postgresql"])
def server(request, tmp_path_factory):
    srv, urls = _server(request.param, tmp_path_factory, "--max-subscribers", "2", "--seed", "5")
    yield srv
    stop(srv.proc)
    next(urls, None)


def _provisional(server: Server, category: str | None = None, **headers: str) -> httpx.Response:
    params = {"provisional": "true", **({"category": category} if category else {})}
    return server.client("reader").get("/v1/leaderboard", params=params, headers=headers)


def _wait_for(
    server: Server, battles_since: int, category: str | None = None
) -> tuple[dict, float]:
    """The provisional document once it has ``battles_since`` battles since its snapshot."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < BOUND:
        doc = _provisional(server, category).json()
        if doc["provisional"] is not None and doc["provisional"]["battles_since"] >= battles_since:
            return doc, time.monotonic() - t0
        time.sleep(0.05)
    raise AssertionError(f"{battles_since} votes not in the provisional board within {BOUND} s")


def _refits(server: Server) -> int:
    text = server.client(None).get("/metrics").text
    line = next(
        x for x in text.splitlines() if x.startswith("arena_provisional_refit_seconds_count")
    )
    return int(float(line.split()[-1]))


def test_votes_are_in_the_provisional_board_and_every_refit_is_announced(server):
    before = _provisional(server)
    assert before.status_code == 200 and before.json()["provisional"] is None
    full = server.client("reader").get("/v1/leaderboard").json()
    assert "provisional" not in full and full["snapshot"]["kind"] == "full"
    first, second = Subscriber(server), Subscriber(server)
    third = server.client("reader").get("/v1/leaderboard/events")  # beyond --max-subscribers 2
    assert third.status_code == 503 and "event streams" in third.json()["error"]["message"]
    voter = server.client("voter")
    posted = 0
    for _ in range(3):
        for _ in range(7):
            _, vote = pair_and_vote(voter)
            assert vote.status_code == 201, vote.text
            posted += 1
        doc, _ = _wait_for(server, posted)
        assert doc["snapshot"]["kind"] == "provisional"
        assert doc["provisional"]["battles_since"] == posted
        assert doc["snapshot"]["counts"]["battles"] == 600 + posted
        assert doc["provisional"]["since_snapshot"] == full["snapshot"]["id"]
        assert doc["provisional"]["method"] == "sandwich"
    # a vote on a pair of the math board is in the math board's provisional board too
    math_full = server.client("reader").get("/v1/leaderboard", params={"category": "math"}).json()
    for _ in range(4):
        assert pair_and_vote(voter, category="math")[1].status_code == 201
    doc, _ = _wait_for(server, 4, "math")
    assert doc["snapshot"]["board"] == "category:math"
    assert doc["provisional"]["since_snapshot"] == math_full["snapshot"]["id"]
    assert doc["snapshot"]["counts"]["battles"] == math_full["snapshot"]["counts"]["battles"] + 4
    posted += 4
    assert _wait_for(server, posted)[0]["provisional"]["battles_since"] == posted
    # the full board is untouched; the provisional one has an ETag of its own
    assert server.client("reader").get("/v1/leaderboard").json() == full
    r = _provisional(server)
    again = _provisional(server, **{"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and again.headers["etag"] == r.headers["etag"]
    # one event per refit, to both subscribers, the last one the board served
    deadline = time.monotonic() + 5
    while len(first.events()) < _refits(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    refits = _refits(server)
    assert refits >= 3
    assert first.events() == second.events()
    assert len(first.events()) == refits
    ids = [e["id"] for e in first.events()]
    assert ids == sorted(set(ids))
    boards = {e["board"] for e in first.events()}
    assert boards == {"overall", "category:math"}
    last = [e for e in first.events() if e["board"] == "overall"][-1]
    assert last["battles_since"] == posted


def test_event_streams_end_when_the_server_stops(tmp_path_factory):
    srv, urls = _server("sqlite", tmp_path_factory)
    try:
        sub = Subscriber(srv)
        t0 = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        srv.proc.wait(20)
        assert sub.ended.wait(5)
        assert time.monotonic() - t0 < 10  # not the 30 s graceful timeout
        assert "event: close" in sub.lines
    finally:
        stop(srv.proc)
        next(urls, None)


def _refitted_by(url: str) -> int | None:
    from arena.db.models import ProvisionalSnapshot
    from arena.db.session import open_engine

    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            diag = conn.execute(select(ProvisionalSnapshot.diagnostics_json)).scalar()
    finally:
        engine.dispose()
    return None if diag is None else int(json.loads(diag)["pid"])


def test_kill_9_of_the_refitter_loses_nothing_and_another_worker_takes_over(tmp_path_factory):
    srv, urls = _server("postgresql", tmp_path_factory, "--workers", "2")  # needs PostgreSQL
    try:
        voter = srv.client("voter")
        for _ in range(5):
            assert pair_and_vote(voter)[1].status_code == 201
        _wait_for(srv, 5)
        refitter = _refitted_by(srv.url)
        assert refitter is not None
        os.kill(refitter, signal.SIGKILL)
        stored = 0
        deadline = time.monotonic() + 30
        while stored < 5 and time.monotonic() < deadline:
            # the surviving worker stores them (the supervisor restarts the other); a
            # connection to the killed worker fails, so each try opens a new one
            try:
                if pair_and_vote(srv.client("voter"))[1].status_code == 201:
                    stored += 1
            except httpx.HTTPError:
                time.sleep(0.2)
        assert stored == 5
        doc, _ = _wait_for(srv, 10)
        assert doc["provisional"]["battles_since"] == 10
        assert _refitted_by(srv.url) not in (None, refitter)
    finally:
        stop(srv.proc)
        next(urls, None)
