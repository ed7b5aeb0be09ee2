"""Open the database: engine creation, schema-revision checks, migrations.

A brand-new database is migrated to the newest revision automatically when
the caller may create one (ingest, demo); read-only commands refuse an empty or
foreign database instead of creating the schema in it. A database at an older
revision is refused with a message that says to run ``arena db upgrade``
(migrating silently could surprise a production PostgreSQL operator); one
written by a newer arena is refused with a message that says so.

Migrations take a lock first (PostgreSQL: a transaction advisory lock of this
database and schema, :mod:`arena.db.advisory`; SQLite:
the write lock, ``BEGIN IMMEDIATE``, with the DDL in that transaction), so two
first runs on one new database take turns instead of racing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from arena.core import resources
from arena.core.errors import ArenaError
from arena.db.advisory import advisory_key
from arena.db.tables import metadata

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import ExceptionContext

#: The newest migration; ``tests/test_db.py`` checks it against ``migrations/``.
#: Kept as a constant so that opening a database does not import Alembic
#: (~0.25 s of start-up for every command); Alembic loads only to migrate.
HEAD_REVISION = "0018"


#: Seconds a command waits for another command's lock (``--wait``): SQLite's busy
#: timeout, PostgreSQL's lock_timeout.
DEFAULT_WAIT = 300.0
#: After this many seconds of waiting for a lock, :data:`wait_notice` is told.
NOTICE_AFTER = 1.0

#: Execution option of an engine (and its connections) holding the callable told
#: when a command has been waiting for a lock for a while (the CLI prints it on
#: stderr); absent or None: nobody is told. Set by :func:`create_db_engine`.
WAIT_NOTICE_OPTION = "arena_wait_notice"

Notice = Callable[[str], None]


def wait_notice_of(bind: Engine | Connection) -> Notice | None:
    """The lock-wait notice the engine of ``bind`` was opened with, or None."""
    return bind.get_execution_options().get(WAIT_NOTICE_OPTION)


class DatabaseError(ArenaError):
    """A database problem the user can act on (bad URL, old schema, unreachable server)."""


_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")


def mask_passwords(message: str) -> str:
    """``scheme://user:secret@host`` -> ``scheme://user:***@host`` anywhere in ``message``."""
    return _PASSWORD.sub(r"\1***@", message)


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config(str(resources.alembic_ini()))
    cfg.set_main_option("script_location", str(resources.migrations_dir()))
    cfg.attributes["url"] = url
    return cfg


def head_revision() -> str:
    """The head revision as Alembic reads it from the migration scripts."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    head = script.get_current_head()
    assert head is not None
    return head


#: SQLite page cache per connection (KiB). Modest by default so that a rebuild's
#: scan of a large index stays within its memory budget; ingest raises it for
#: its own connection while it maintains the indexes (see arena.ingest.writer).
SQLITE_CACHE_KIB = 65_536
SQLITE_INGEST_CACHE_KIB = 262_144


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets a rebuild read while an ingest writes; foreign keys are off by
    # default in SQLite and we want the same integrity as on PostgreSQL.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cursor.close()


def _with_driver(url: URL) -> URL:
    """``postgres://`` and ``postgresql://`` as ``postgresql+psycopg://``.

    ``postgres://`` is libpq's (and many hosts') spelling, which SQLAlchemy does
    not know; a bare ``postgresql://`` means psycopg2 on SQLAlchemy 2.0 but
    psycopg on 2.1. The project ships (and tests) psycopg 3 only.
    """
    if url.drivername in ("postgres", "postgresql"):
        return url.set(drivername="postgresql+psycopg")
    return url


def create_db_engine(
    url: str, *, wait: float = DEFAULT_WAIT, notice: Notice | None = None
) -> Engine:
    """An engine for ``url`` that waits up to ``wait`` seconds for other commands' locks.

    ``notice`` is called with one sentence when a statement or a lock of
    this engine has been waiting for :data:`NOTICE_AFTER` seconds.
    """
    try:
        parsed = _with_driver(make_url(url))
        sqlite = parsed.get_backend_name() == "sqlite"
        engine = create_engine(
            parsed,
            execution_options={WAIT_NOTICE_OPTION: notice},
            **({"connect_args": {"timeout": wait}} if sqlite else {}),
        )
    except (ArgumentError, ImportError, ValueError) as exc:
        missing = getattr(exc, "name", None) or ""  # the module an ImportError names
        hint = (
            " (PostgreSQL needs its driver: pip install 'arena[postgres]')"
            if missing.startswith("psycopg")
            else ""
        )
        raise DatabaseError(
            mask_passwords(f"cannot use database URL {url!r}: {exc}{hint}")
        ) from None
    if sqlite:
        event.listen(engine, "connect", _sqlite_pragmas)
    elif engine.dialect.name == "postgresql":
        event.listen(engine, "connect", _pg_lock_timeout(wait))
        _announce_pg_lock_waits(engine)
    return engine


#: Message of every lock wait that is not a named one (:func:`announce_wait`).
LOCK_WAIT_MESSAGE = "waiting for another command's lock on the database"


def _announce_pg_lock_waits(engine: Engine) -> None:
    """Tell the engine's notice when any statement has waited on a lock for a while.

    PostgreSQL waits on row and table locks (a migration, a concurrent write)
    wherever a statement meets them, up to ``lock_timeout``. A statement still
    running after :data:`NOTICE_AFTER` s is looked up in ``pg_stat_activity``
    from another connection, once a second until it ends: a long scan is not a
    wait, only ``wait_event_type = 'Lock'`` is.
    """
    local = threading.local()

    def before(
        conn: Connection,
        cursor: Any,
        statement: str,
        parameters: Any,
        context: Any,
        executemany: bool,
    ) -> None:
        notice = wait_notice_of(conn)
        if notice is None or getattr(local, "watching", False):
            return
        done = threading.Event()
        conn.info["arena_statement_done"] = done
        dbapi = conn.connection.dbapi_connection
        assert dbapi is not None  # a statement is about to run on it
        pid = dbapi.info.backend_pid
        watcher = threading.Thread(target=watch, args=(pid, done, notice), daemon=True)
        watcher.start()

    def after(conn: Connection, *_args: Any) -> None:
        done = conn.info.pop("arena_statement_done", None)
        if done is not None:
            done.set()

    def failed(context: ExceptionContext) -> None:
        if context.connection is not None:
            after(context.connection)

    def watch(pid: int, done: threading.Event, notice: Notice) -> None:
        local.watching = True
        while not done.wait(NOTICE_AFTER):
            try:
                with engine.connect() as other:
                    kind = other.exec_driver_sql(
                        "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %(pid)s",
                        {"pid": pid},
                    ).scalar()
            except Exception:  # noqa: BLE001 - a failed look is no reason to disturb the command
                return
            if kind == "Lock":
                if not done.is_set():
                    notice(LOCK_WAIT_MESSAGE)
                return

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    event.listen(engine, "handle_error", failed)


def _pg_lock_timeout(wait: float) -> Callable[[Any, Any], None]:
    def set_timeout(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"SET lock_timeout = {max(1, round(wait * 1000))}")
        cursor.close()
        dbapi_connection.commit()  # a SET inside a rolled-back transaction is undone

    return set_timeout


@contextmanager
def announce_wait(bind: Engine | Connection, what: str) -> Iterator[None]:
    """Tell ``bind``'s notice if the block is still waiting after :data:`NOTICE_AFTER` s."""
    notice = wait_notice_of(bind)
    if notice is None:
        yield
        return
    timer = threading.Timer(
        NOTICE_AFTER,
        notice,
        [f"waiting for another command to finish writing to the database ({what})"],
    )
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def take_write_lock(conn: Connection, what: str) -> None:
    """SQLite: take the database's write lock now, at the start of the transaction.

    Waiting for it here (up to ``--wait``, saying so after a second) is safe:
    nothing has been read yet. A transaction that read first and wanted to
    write later could only fail once another writer had committed.
    PostgreSQL needs nothing: rows and advisory locks are waited for as met.
    """
    if conn.dialect.name == "sqlite":
        with announce_wait(conn, what):
            conn.exec_driver_sql("BEGIN IMMEDIATE")


def current_revision(engine: Engine | Connection) -> str | None:
    if isinstance(engine, Connection):
        return _revision(engine)
    with engine.connect() as conn:
        return _revision(conn)


def _revision(conn: Connection) -> str | None:
    if not inspect(conn).has_table("alembic_version"):
        return None
    rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    if len(rows) > 1:  # Alembic keeps one row; two mean the bookkeeping was edited
        raise DatabaseError(
            f"the database's schema revision table (alembic_version) holds {len(rows)} rows "
            f"({', '.join(map(str, rows))}), not one: it was changed by hand or by another "
            "tool; delete the rows that are not the database's real revision, or restore a backup"
        )
    return rows[0] if rows else None


def _check_whole(engine: Engine) -> None:
    """Refuse a database at the newest revision that lacks one of arena's tables
    (dropped by hand or by another tool) before a command meets the hole."""
    present = set(inspect(engine).get_table_names())
    missing = sorted(set(metadata.tables) - present)
    if missing:
        raise DatabaseError(
            f"database {_display_url(engine)} is missing arena's table(s) {', '.join(missing)} "
            "(dropped by hand or by another tool); restore it from a backup"
        )


def _check_schema_exists(engine: Engine) -> None:
    """PostgreSQL: the URL's search_path must name a schema that exists, or every
    table would be looked up, and created, nowhere."""
    with engine.connect() as conn:
        schema = conn.execute(text("SELECT current_schema()")).scalar()
        if schema is None:
            path = conn.execute(text("SHOW search_path")).scalar()
            raise DatabaseError(
                f"database {_display_url(engine)}: no schema of its search_path ({path}) "
                "exists; create it (CREATE SCHEMA ...) or fix the URL's options"
            )


def check_known(revision: str | None, url: str) -> None:
    """Refuse a schema revision this arena does not know (written by a newer arena)."""
    if revision is None or revision == HEAD_REVISION:
        return
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config(url))
    if revision not in {rev.revision for rev in script.walk_revisions()}:
        raise DatabaseError(
            f"this database was written by a newer arena (revision {revision}); upgrade arena "
            f"(this one knows revisions up to {HEAD_REVISION})"
        )


@contextmanager
def migration_transaction(engine: Engine) -> Iterator[Connection]:
    """A transaction holding the schema-migration locks: concurrent first runs take
    turns (see the module doc)."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            with announce_wait(conn, "schema migration"):
                key = advisory_key(conn, "migrate")
                conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%(key)s)", {"key": key})
        take_write_lock(conn, "schema migration")
        yield conn


def upgrade(engine: Engine, url: str, revision: str = "head") -> None:
    """Migrate under the migration locks (:func:`migration_transaction`)."""
    from alembic import command

    cfg = alembic_config(url)
    with migration_transaction(engine) as conn:
        check_known(_revision(conn), url)
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def open_engine(
    url: str,
    *,
    migrate_new: bool = True,
    wait: float = DEFAULT_WAIT,
    notice: Notice | None = None,
) -> Engine:
    """Engine for ``url`` whose schema is at the newest revision.

    Parameters
    ----------
    url
        SQLAlchemy database URL.
    migrate_new
        Create the schema in a database that has none (ingest, demo); when
        False such a database is refused (read-only commands).
    wait
        Seconds to wait for another command's lock (see :func:`create_db_engine`).
    notice
        Told once a statement has waited that long for a lock (see :func:`create_db_engine`).

    Raises
    ------
    DatabaseError
        The server is unreachable, the URL is malformed, the database is empty or
        not arena's (and ``migrate_new`` is False), or the schema is at another
        revision (the message says to run ``arena db upgrade`` or to upgrade arena).
    """
    engine = create_db_engine(url, wait=wait, notice=notice)
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not migrate_new and path and path != ":memory:" and not path.startswith("file:"):
        if not Path(path).exists():  # connecting would create an empty file
            raise DatabaseError(f"no database file {path}; `arena ingest FILE` creates one")
    try:
        if engine.dialect.name == "postgresql":
            _check_schema_exists(engine)
        revision = current_revision(engine)
        if revision is None:
            tables = sorted(inspect(engine).get_table_names())
            if "battles" in tables:
                raise DatabaseError(
                    f"database {_display_url(engine)} has arena tables but no alembic "
                    "revision; it was not created by arena"
                )
            if not migrate_new:
                state = (
                    f"is not an arena database (it has other tables: {', '.join(tables[:5])})"
                    if tables
                    else "is empty: there is no arena database there yet"
                )
                raise DatabaseError(
                    f"database {_display_url(engine)} {state}; `arena ingest FILE` creates one"
                )
            upgrade(engine, url)
            return engine
    except OperationalError as exc:
        raise DatabaseError(
            mask_passwords(f"cannot open database {_display_url(engine)}: {exc.orig}")
        ) from exc
    if revision != HEAD_REVISION:
        check_known(revision, url)
        raise DatabaseError(
            f"database schema is at revision {revision}, this arena needs {HEAD_REVISION}: "
            f"upgrade it (`arena db upgrade` on {_display_url(engine)})"
        )
    _check_whole(engine)
    return engine


def _display_url(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)
