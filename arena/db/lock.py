"""An arena-wide lock for jobs that must never interleave (``arena nightly``).

PostgreSQL: a session advisory lock held on a connection of its own for the
whole job (the server drops it when that connection goes, so a killed job
never leaves it behind); its key is this arena's (database and schema,
:mod:`arena.db.advisory`), so arenas in other schemas never wait for it. SQLite: ``flock(2)`` on a lock file beside the
database file (``arena.db`` -> ``arena.db.nightly.lock``); the kernel drops it
when the process ends. Both are polled until ``wait`` seconds have passed, so
the wait is bounded the same way as every other lock wait (``--wait``).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine

from arena.core.errors import ArenaError
from arena.db.advisory import advisory_key
from arena.db.session import announce_wait

#: Seconds between two attempts to take a held lock.
POLL_SECONDS = 0.2


class LockHeld(ArenaError):
    """Another job held the lock for longer than the caller would wait."""


def lock_file_path(engine: Engine, name: str = "nightly") -> Path | None:
    """The lock file of an SQLite database file, or None (in-memory database, PostgreSQL)."""
    if engine.dialect.name != "sqlite":
        return None
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    # the real file: one database reached by two paths (a symbolic link) has one lock
    return Path(os.path.realpath(database) + f".{name}.lock")


def _poll(engine: Engine, try_once: Callable[[], bool], wait: float, what: str) -> None:
    deadline = time.monotonic() + max(0.0, wait)
    with announce_wait(engine, what):
        while not try_once():
            if time.monotonic() >= deadline:
                raise LockHeld(f"another {what} holds the lock of this database (waited {wait:g}s)")
            time.sleep(POLL_SECONDS)


@contextmanager
def database_lock(engine: Engine, *, wait: float, what: str = "arena nightly") -> Iterator[None]:
    """Hold this arena's nightly lock for the block (``what`` names the job in messages).

    Raises
    ------
    LockHeld
        Another holder kept it for more than ``wait`` seconds.
    """
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            key = advisory_key(conn, "nightly")

            def try_pg() -> bool:
                return bool(
                    conn.exec_driver_sql(
                        "SELECT pg_try_advisory_lock(%(key)s)", {"key": key}
                    ).scalar()
                )

            _poll(engine, try_pg, wait, what)
            try:
                yield
            finally:
                conn.exec_driver_sql("SELECT pg_advisory_unlock(%(key)s)", {"key": key})
        return
    path = lock_file_path(engine)
    if path is None:  # an in-memory database belongs to this process alone
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:

        def try_file() -> bool:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        _poll(engine, try_file, wait, what)
        yield
    finally:
        os.close(fd)  # closing drops the flock


__all__ = ["LockHeld", "database_lock", "lock_file_path"]
