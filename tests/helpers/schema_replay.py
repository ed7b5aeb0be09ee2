"""New test databases get arena's schema by replaying recorded SQL, not by migrating.

Hundreds of tests each start from an empty database, and migrating one through
every Alembic revision costs ~0.4 s (loading the revision scripts, SQLite's
batch table copies); the same statements replayed cost a few milliseconds. So,
per test process and engine, the first new database is migrated for real while
every statement Alembic sends is recorded; later new databases replay that
record. The result is the same schema by construction (the same statements on
the same empty database), and the migrations themselves stay tested: the first
database of each process, every upgrade between revisions
(``tests/test_db.py``), and every database created by a real ``arena``
process. Schema drift cannot hide here either: ``upgrade`` to anything but head,
or of a database that is not empty, always runs Alembic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Engine, event, inspect

#: dialect name -> the statements (SQL, parameters) that migrated an empty database to head
_RECORDED: dict[str, list[tuple[str, Any]]] = {}


def _empty(conn: Connection) -> bool:
    return not inspect(conn).get_table_names()


def _record(real: Callable[..., None], engine: Engine, url: str) -> None:
    sent: list[tuple[str, Any]] = []

    def listen(_conn, _cursor, statement, parameters, _context, _many) -> None:
        sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", listen)
    try:
        real(engine, url, "head")
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    # reads (reflection, the advisory lock) decide nothing on an empty database, and the
    # replay takes the write lock (SQLite's BEGIN IMMEDIATE) itself
    _RECORDED[engine.dialect.name] = [
        (sql, params)
        for sql, params in sent
        if not sql.lstrip().upper().startswith(("SELECT", "BEGIN"))
    ]


def install() -> Callable[[], None]:
    """Route :func:`arena.db.session.upgrade` of empty databases to head through the
    record; returns the function that restores the real one."""
    from arena.db import session

    real = session.upgrade

    def upgrade(engine: Engine, url: str, revision: str = "head") -> None:
        if revision == "head" and engine.dialect.name in _RECORDED:
            # the same locks as the real upgrade: concurrent first runs take turns
            with session.migration_transaction(engine) as conn:
                if _empty(conn):
                    for sql, params in _RECORDED[engine.dialect.name]:
                        conn.exec_driver_sql(sql, params)
                    return None
            return real(engine, url, revision)
        with engine.connect() as conn:
            empty = _empty(conn)
        if revision == "head" and empty:
            return _record(real, engine, url)
        return real(engine, url, revision)

    session.upgrade = upgrade

    def restore() -> None:
        session.upgrade = real

    return restore
