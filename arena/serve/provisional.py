"""The provisional board while serving: one refitter per arena, and events for every worker.

Refits (:class:`RefitLoop`, a thread of every worker): every ``refit_every``
seconds each worker tries the arena's ``provisional`` lock
(:class:`arena.db.lock.HeldLock`: a PostgreSQL advisory lock on a connection
of its own, or ``flock`` beside an SQLite file) without waiting; the one
worker that holds it refits the overall board when votes were stored since
its last board (:meth:`arena.Arena.refit_provisional`).  A kill -9 of that
process drops its lock with its connection or file, and the next worker to
look takes it over; nothing is lost, since the provisional board is made from
the stored battles alone.  The refit holds no lock of the write path: it
reads in one transaction and writes its board in one short one.

Events (:class:`Hub`, one per worker, on the event loop): a watcher looks
for a newer provisional board every :data:`POLL_SECONDS` and hands a small
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

from arena.boards.keys import OVERALL
from arena.db.lock import HeldLock
from arena.db.models import ProvisionalSnapshot
from arena.serve.errors import RETRY_AFTER_BUSY, ApiError

if TYPE_CHECKING:
    from arena.api import Arena

__all__ = ["POLL_SECONDS", "Hub", "ProvisionalEvent", "RefitLoop", "latest_event"]

log = logging.getLogger("arena.serve")

#: Seconds between two looks of a worker for a newer provisional board.
POLL_SECONDS = 0.25
#: Messages a slow subscriber may have waiting before the oldest is dropped.
QUEUE_SIZE = 16


@dataclass(frozen=True)
class ProvisionalEvent:
    """The message of one new provisional board (``data`` of an ``provisional`` event)."""

    id: int
    board: str
    since_snapshot: int
    watermark: int
    battles_since: int
    computed_at: str
    method: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def latest_event(engine: Engine) -> ProvisionalEvent | None:
    """The overall board's stored provisional board, as its event (None: none yet)."""
    from arena.core.formats import iso_utc

    p = ProvisionalSnapshot
    with engine.connect() as conn:
        row = conn.execute(
            select(
                p.id,
                p.board,
                p.since_snapshot,
                p.watermark,
                p.battles_since,
                p.computed_at,
                p.method,
            )
            .where(p.board == str(OVERALL))
            .order_by(p.id.desc())
            .limit(1)
        ).first()
    if row is None:
        return None
    return ProvisionalEvent(
        id=row.id,
        board=row.board,
        since_snapshot=row.since_snapshot,
        watermark=row.watermark,
        battles_since=row.battles_since,
        computed_at=iso_utc(row.computed_at),
        method=row.method,
    )


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
        self.lock = HeldLock(engine, "provisional")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-refit", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def holding(self) -> bool:
        """Whether this worker is the arena's refitter now."""
        return self.lock.held

    def look(self) -> None:
        """One look: take the lock if free; refit if it is ours and votes came."""
        if not self.lock.try_take() or not self.lock.still_held():
            return
        done = self.arena.refit_provisional(provisional_method=self.method)
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

    def start(self, look: Callable[[], Any]) -> None:
        """Watch for new provisional boards on the running loop (``look`` reads the latest)."""
        self._task = asyncio.get_running_loop().create_task(self._watch(look))

    async def _watch(self, look: Callable[[], Any]) -> None:
        primed = False  # the board stored before this worker started is no news
        while not self._closed:
            try:
                event = await look()
            except Exception:  # the database away: the next look tries again
                event = self.latest
            if event is not None and (self.latest is None or event.id != self.latest.id):
                self.latest, self.seen_at = event, time.monotonic()
                if primed:
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
