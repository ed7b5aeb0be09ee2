"""What one worker process holds, on ``app.state.serve``: the database, caches, the writer.

Nothing here outlives the process but the database: caches (keys, plans,
leaderboards, resolved names) are refreshed from it, rate-limit buckets are
per worker.  Database work runs off the event loop through
:meth:`ServeState.database`, which reconnects once after the server dropped
the pool's connections and turns what is still a database failure into 503.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from fastapi import FastAPI
from sqlalchemy.exc import DBAPIError
from starlette.concurrency import run_in_threadpool

from arena.api import open_arena
from arena.serve.auth import Authenticator
from arena.serve.boards import BoardNames
from arena.serve.config import ServeConfig
from arena.serve.errors import RETRY_AFTER_BUSY, ApiError, database_failure
from arena.serve.keys import KeyInfo, authenticate
from arena.serve.ledger import ServedCounter
from arena.serve.metrics import Metrics
from arena.serve.pairs import PairPicker, PairRule
from arena.serve.provisional import Hub, ProvisionalEvent, RefitLoop, new_events
from arena.serve.tokens import TokenSigner, load_secret
from arena.serve.writer import BatchJob, GroupWriter, QueueFull, VoteJob

__all__ = ["ServeState", "lifespan", "with_reconnect"]

T = TypeVar("T")


def with_reconnect(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)``, once more if the first try met a connection the server dropped.

    SQLAlchemy invalidates the whole pool on a disconnect, so the second try
    opens fresh connections.  Only for work that stores nothing (reads): a
    write that lost its connection may have committed.
    """
    try:
        return work(*args)
    except DBAPIError as exc:
        if not exc.connection_invalidated:
            raise
    return work(*args)


class ServeState:
    """The worker's engine, signer, picker, writer, authenticator and caches."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        #: the front door: leaderboards and models come from the same calls as the CLI
        self.arena = open_arena(config.url, wait=config.wait)
        self.engine = self.arena.engine()
        self.signer = TokenSigner(with_reconnect(load_secret, self.engine), ttl=config.battle_ttl)
        self.metrics = Metrics()
        self.names = BoardNames(self.engine)
        #: pairs served, for the sampling ledger (added to the table every few seconds)
        self.served = ServedCounter(self.engine)
        self.picker = PairPicker(
            self.engine,
            rule=PairRule(
                new_share=config.new_share,
                uniform_share=config.uniform_share,
                min_battles=config.min_battles,
            ),
            seed=(
                [config.seed, os.getpid()]
                if config.per_worker_seed and config.seed is not None
                else config.seed
            ),
            served=self.served,
        )
        self.writer = GroupWriter(
            self.engine, max_queue=config.max_queue, on_commit=self.metrics.committed
        )
        self.auth = Authenticator(
            self._lookup_key,
            rate=config.rate,
            anonymous_rate=config.anonymous_rate,
            cache_size=config.key_cache_size,
        )
        #: leaderboard documents by (category, source, style, provisional): (built at, body, etag)
        self.boards: dict[tuple[str | None, str | None, bool, bool], tuple[float, bytes, str]] = {}
        #: sampling-ledger documents by source: (built at, document)
        self.ledgers: dict[str | None, tuple[float, dict[str, Any]]] = {}
        #: provisional-board events of this worker (the watcher starts with the loop)
        self.hub = Hub(
            self.engine, max_subscribers=config.max_subscribers, heartbeat=config.heartbeat
        )
        #: the refitter thread: refits while this worker holds the arena's lock
        self.refit = (
            RefitLoop(
                self.arena,
                self.engine,
                every=config.refit_every,
                method=config.provisional_method,
                on_refit=self.metrics.refits.observe,
            )
            if config.refit_every > 0
            else None
        )

    async def provisional_events(self, after: int) -> list[ProvisionalEvent]:
        """Provisional boards stored with ids above ``after``, as their events."""
        return await self.database(new_events, self.engine, after)

    def start(self) -> None:
        """Start the watcher (on the running loop) and the refitter thread."""
        self.hub.start(self.provisional_events)
        self.hub.close_on_signals()
        self.served.start()
        if self.refit is not None:
            self.refit.start()

    def _find_key(self, token: str) -> KeyInfo | None:
        with self.engine.connect() as conn:
            return authenticate(conn, token)

    async def _lookup_key(self, token: str) -> KeyInfo | None:
        return await self.database(self._find_key, token)

    async def database(self, work: Callable[..., T], *args: Any) -> T:
        """Run read-only ``work(*args)`` in the thread pool; 503 if the database fails."""
        try:
            return await run_in_threadpool(with_reconnect, work, *args)
        except DBAPIError as exc:
            failure = database_failure(exc)
            if failure is None:
                raise
            raise failure from None

    async def store(self, job: VoteJob | BatchJob) -> Any:
        """Queue ``job`` for the writer and wait for its commit; 503 when it cannot be."""
        try:
            future = self.writer.submit(job)
        except QueueFull as exc:
            raise ApiError(503, str(exc), headers={"Retry-After": RETRY_AFTER_BUSY}) from None
        self.metrics.queue.set(self.writer.depth())
        try:
            return await asyncio.wrap_future(future)
        except DBAPIError as exc:
            failure = database_failure(exc)
            if failure is None:
                raise
            raise failure from None

    def close(self) -> None:
        """Store what is queued, stop refitting, then release the database
        (the event streams were ended on the loop: :meth:`Hub.close`)."""
        if self.refit is not None:
            self.refit.stop()
        self.writer.close()
        try:
            self.served.close()
        except DBAPIError:  # the database is gone: the last seconds of counts are lost
            pass
        self.arena.close()


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Build the worker's state at start-up; at shutdown (uvicorn has drained the
    requests in flight) store what is still queued."""
    config: ServeConfig = app.state.config
    app.state.serve = await run_in_threadpool(ServeState, config)
    app.state.serve.start()
    try:
        yield
    finally:
        app.state.serve.hub.close()
        await run_in_threadpool(app.state.serve.close)
