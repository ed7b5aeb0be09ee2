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

from sqlalchemy import Connection, Engine

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


class HeldLock:
    """A lock of this arena taken without waiting and held until released or the
    process ends: which one process does a job every process could do (``arena
    serve``'s provisional refits).

    PostgreSQL: a session advisory lock on a connection of its own (the server
    drops it when that connection goes, a kill -9 included); SQLite:
    ``flock(2)`` on ``DATABASE.NAME.lock`` (the kernel drops it with the
    process); an in-memory database belongs to one process, which always holds it.
    Not thread-safe: one owner thread per process.
    """

    def __init__(self, engine: Engine, name: str) -> None:
        self.engine = engine
        self.name = name
        self._conn: Connection | None = None
        self._fd: int | None = None
        self.held = False

    def try_take(self) -> bool:
        """Take the lock if nobody holds it; True if this process holds it now."""
        if self.held:
            return True
        if self.engine.dialect.name == "postgresql":
            conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            key = advisory_key(conn, self.name)
            got = bool(
                conn.exec_driver_sql("SELECT pg_try_advisory_lock(%(key)s)", {"key": key}).scalar()
            )
            if got:
                self._conn = conn
            else:
                conn.close()
            self.held = got
            return got
        path = lock_file_path(self.engine, self.name)
        if path is None:
            self.held = True
            return True
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd, self.held = fd, True
        return True

    def still_held(self) -> bool:
        """Whether the lock is still ours: on PostgreSQL, its connection still answers
        (a server restart or a dropped connection loses the lock; then it is released)."""
        if not self.held:
            return False
        if self._conn is not None:
            try:
                self._conn.exec_driver_sql("SELECT 1")
            except Exception:  # any failure of the connection: the lock went with it
                self.release()
                return False
        return True

    def release(self) -> None:
        """Give the lock up (nothing if not held)."""
        conn, fd = self._conn, self._fd
        self._conn, self._fd, self.held = None, None, False
        if conn is not None:
            try:
                conn.close()  # the session ends: its advisory locks go with it
            except Exception:  # a broken connection holds nothing any more
                pass
        if fd is not None:
            os.close(fd)


__all__ = ["HeldLock", "LockHeld", "database_lock", "lock_file_path"]
