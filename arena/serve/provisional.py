"""The provisional board while serving: one refitter per arena, and events for every worker.

Refits (:class:`RefitLoop`, a thread of every worker): every ``refit_every``
seconds each worker tries the arena's ``provisional`` lock
(:class:`arena.db.lock.HeldLock`: a PostgreSQL advisory lock on a connection
of its own, or ``flock`` beside an SQLite file) without waiting; the one
worker that holds it refits the overall board when votes were stored since
its last board, then the other boards the arena has (categories, sources) in
turns within the same time (:meth:`arena.Arena.refit_provisional`).  A kill -9 of that
process drops its lock with its connection or file, and the next worker to
look takes it over; nothing is lost, since the provisional board is made from
the stored battles alone.  The refit holds no lock of the write path: it
reads in one transaction and writes its board in one short one.

Events (:class:`Hub`, one per worker, on the event loop): a watcher looks
for newer provisional boards (of any board) every :data:`POLL_SECONDS` and hands a small
message to every subscriber of ``GET /v1/leaderboard/events`` (at most
``max_subscribers`` per worker, 503 beyond; a heartbeat comment on an idle
stream; every stream ends when the server shuts down).  The same watcher
tells the leaderboard route when its cached provisional document is old.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, select

from arena.boards.keys import OVERALL, BoardKey
from arena.db.lock import HeldLock
from arena.db.models import ProvisionalSnapshot, Snapshot
from arena.serve.errors import RETRY_AFTER_BUSY, ApiError

if TYPE_CHECKING:
    from arena.api import Arena

__all__ = ["POLL_SECONDS", "Hub", "ProvisionalEvent", "RefitLoop", "boards_to_refit", "new_events"]

log = logging.getLogger("arena.serve")

#: Seconds between two looks of a worker for a newer provisional board.
POLL_SECONDS = 0.25
#: Messages a slow subscriber may have waiting before the oldest is dropped.
QUEUE_SIZE = 16


@dataclass(frozen=True)
class ProvisionalEvent:
    """The message of one new provisional board (``data`` of a ``provisional`` event)."""

    id: int
    board: str
    since_snapshot: int
    watermark: int
    battles_since: int
    computed_at: str
    method: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def new_events(engine: Engine, after: int) -> list[ProvisionalEvent]:
    """Provisional boards stored with ids above ``after`` (any board), oldest first.

    Only the latest board of each board is kept, so a board replaced before it
    was seen is no news: its successor is.
    """
    from arena.core.formats import iso_utc

    p = ProvisionalSnapshot
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                p.id,
                p.board,
                p.since_snapshot,
                p.watermark,
                p.battles_since,
                p.computed_at,
                p.method,
            )
            .where(p.id > after)
            .order_by(p.id)
        ).all()
    return [
        ProvisionalEvent(
            id=row.id,
            board=row.board,
            since_snapshot=row.since_snapshot,
            watermark=row.watermark,
            battles_since=row.battles_since,
            computed_at=iso_utc(row.computed_at),
            method=row.method,
        )
        for row in rows
    ]


def boards_to_refit(engine: Engine) -> list[BoardKey]:
    """The boards that may have a provisional board: every raw board of a main
    comparable set that has a full snapshot, the overall board first."""
    with engine.connect() as conn:
        texts = conn.execute(select(Snapshot.board).distinct()).scalars().all()
    keys = {BoardKey.parse(t) for t in texts}
    raw = [k for k in keys if not k.style_controlled and k.component == 1]
    return sorted(raw, key=lambda k: (k != OVERALL, str(k)))


class RefitLoop:
    """A worker's thread that refits the provisional board whenever it holds the arena's lock."""

    def __init__(
        self,
        arena: Arena,
        engine: Engine,
        *,
        every: float,
        method: str,
        on_refit: Callable[[float], None] | None = None,
    ) -> None:
        self.arena = arena
        self.every = every
        self.method = method
        self.on_refit = on_refit
        self.engine = engine
        self.lock = HeldLock(engine, "provisional")
        #: per board: the look count of its last turn (the least recent goes first)
        self._turn: dict[str, int] = {}
        self._looks = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-refit", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def holding(self) -> bool:
        """Whether this worker is the arena's refitter now."""
        return self.lock.held

    def look(self) -> None:
        """One look: take the lock if free; if it is ours, refit every board that got votes.

        The overall board is refitted at every look; the other boards (categories,
        sources) while the look has lasted less than ``every`` seconds, those
        refitted longest ago first, so many boards share the refitter in turns.
        """
        if not self.lock.try_take() or not self.lock.still_held():
            return
        started = time.monotonic()
        boards = boards_to_refit(self.engine)
        boards.sort(key=lambda k: (k != OVERALL, self._turn.get(str(k), 0)))
        for key in boards:
            if key != OVERALL and time.monotonic() - started > self.every:
                break
            done = self.arena.refit_provisional(
                category=key.category, source=key.source, provisional_method=self.method
            )
            self._looks += 1
            self._turn[str(key)] = self._looks
            if done.provisional_id is not None and self.on_refit is not None:
                self.on_refit(done.refit.seconds)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.look()
            except Exception:  # the database away, say: look again next time
                log.warning("provisional refit failed; retrying", exc_info=True)
        self.lock.release()

    def stop(self) -> None:
        """Stop after the refit under way (if any) and give the lock up."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)
        else:
            self.lock.release()


class Hub:
    """One worker's subscribers of provisional-board events and the latest board seen."""

    def __init__(self, engine: Engine, *, max_subscribers: int, heartbeat: float) -> None:
        self.engine = engine
        self.max_subscribers = max_subscribers
        self.heartbeat = heartbeat
        self.latest: ProvisionalEvent | None = None
        #: ``time.monotonic()`` when the watcher last saw a new provisional board
        self.seen_at = 0.0
        self._subscribers: set[asyncio.Queue[ProvisionalEvent | None]] = set()
        self._closed = False
        self._task: asyncio.Task[None] | None = None

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def start(self, look: Callable[[int], Any]) -> None:
        """Watch for new provisional boards on the running loop (``look(after)``: those
        stored with ids above ``after``, as :func:`new_events`)."""
        self._task = asyncio.get_running_loop().create_task(self._watch(look))

    async def _watch(self, look: Callable[[int], Any]) -> None:
        primed = False  # boards stored before this worker started are no news
        after = 0
        while not self._closed:
            try:
                events = await look(after)
            except Exception:  # the database away: the next look tries again
                events = []
            if events:
                after = events[-1].id
                self.latest, self.seen_at = events[-1], time.monotonic()
                if primed:
                    for event in events:
                        self.publish(event)
            primed = True
            await asyncio.sleep(POLL_SECONDS)

    def publish(self, event: ProvisionalEvent | None) -> None:
        """Hand ``event`` to every subscriber (None: the stream ends)."""
        for queue in self._subscribers:
            if queue.full():  # a slow reader misses old news, never the end
                queue.get_nowait()
            queue.put_nowait(event)

    def subscribe(self) -> asyncio.Queue[ProvisionalEvent | None]:
        """A queue of the coming events; 503 beyond ``max_subscribers`` or while closing."""
        if self._closed:
            raise ApiError(503, "the server is shutting down")
        if len(self._subscribers) >= self.max_subscribers:
            raise ApiError(
                503,
                f"{self.max_subscribers} event streams are open on this worker already; "
                "try again later",
                headers={"Retry-After": RETRY_AFTER_BUSY},
            )
        queue: asyncio.Queue[ProvisionalEvent | None] = asyncio.Queue(QUEUE_SIZE)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[ProvisionalEvent | None]) -> None:
        self._subscribers.discard(queue)

    async def stream(self, queue: asyncio.Queue[ProvisionalEvent | None]) -> AsyncIterator[str]:
        """The text of one event stream: events, heartbeats, and its end on shutdown."""
        try:
            yield f"retry: {int(1000 * max(POLL_SECONDS, 1.0))}\n: connected\n\n"
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), timeout=self.heartbeat)
                except TimeoutError:
                    yield ": heartbeat\n\n"
                    continue
                if event is None:
                    yield 'event: close\ndata: {"reason": "shutdown"}\n\n'
                    return
                data = json.dumps(event.to_dict(), separators=(",", ":"))
                yield f"id: {event.id}\nevent: provisional\ndata: {data}\n\n"
        finally:
            self.unsubscribe(queue)

    def close(self) -> None:
        """End every stream (shutdown) and stop watching."""
        if self._closed:
            return
        self._closed = True
        self.publish(None)
        if self._task is not None:
            self._task.cancel()

    def close_on_signals(self) -> None:
        """End every stream as soon as the process is told to stop (SIGTERM, SIGINT).

        uvicorn drains open connections before the application's shutdown runs,
        and an event stream never ends by itself: without this, a shutdown
        waited for the graceful timeout with every stream open.
        """
        loop = asyncio.get_running_loop()
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread
        for signum in (signal.SIGTERM, signal.SIGINT):
            before = signal.getsignal(signum)
            if not callable(before):
                continue

            def handler(sig: int, frame: Any, before: Any = before) -> None:
                loop.call_soon_threadsafe(self.close)
                before(sig, frame)

            signal.signal(signum, handler)
