"""Open the database: engine creation, schema-revision checks, migrations.

A brand-new database is migrated to the newest revision automatically; a
database at an older revision is refused with a message that says to run
``arena db upgrade`` (migrating silently could surprise a production
PostgreSQL operator).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.exc import ArgumentError, OperationalError

from arena import resources

if TYPE_CHECKING:
    from alembic.config import Config

#: The newest migration; ``tests/test_db.py`` checks it against ``migrations/``.
#: Kept as a constant so that opening a database does not import Alembic
#: (~0.25 s of start-up for every command); Alembic loads only to migrate.
HEAD_REVISION = "0006"


class DatabaseError(Exception):
    """A database problem the user can act on (bad URL, old schema, unreachable server)."""


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


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets a rebuild read while an ingest writes; foreign keys are off by
    # default in SQLite and we want the same integrity as on PostgreSQL.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cursor.close()


def create_db_engine(url: str) -> Engine:
    try:
        engine = create_engine(url)
    except (ArgumentError, ModuleNotFoundError, ImportError) as exc:
        raise DatabaseError(f"cannot use database URL {url!r}: {exc}") from exc
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def upgrade(engine: Engine, url: str, revision: str = "head") -> None:
    from alembic import command

    cfg = alembic_config(url)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def open_engine(url: str, *, migrate_new: bool = True) -> Engine:
    """Engine for ``url`` whose schema is at the newest revision.

    Raises
    ------
    DatabaseError
        The server is unreachable, the URL is malformed, or the schema is at an
        older revision (the message says to run ``arena db upgrade``).
    """
    engine = create_db_engine(url)
    try:
        revision = current_revision(engine)
        if revision is None:
            tables = set(inspect(engine).get_table_names())
            if tables and "battles" in tables:
                raise DatabaseError(
                    f"database {engine.url!r} has arena tables but no alembic revision; "
                    "it was not created by arena"
                )
            if not migrate_new:
                return engine
            upgrade(engine, url)
            return engine
    except OperationalError as exc:
        raise DatabaseError(f"cannot open database {engine.url!r}: {exc.orig}") from exc
    head = HEAD_REVISION
    if revision != head:
        from alembic.script import ScriptDirectory

        script = ScriptDirectory.from_config(alembic_config(url))
        known = {rev.revision for rev in script.walk_revisions()}
        if revision not in known:
            raise DatabaseError(
                f"database schema revision {revision} is newer than this arena "
                f"(head {head}); upgrade the arena package"
            )
        if migrate_new:
            raise DatabaseError(
                f"database schema is at revision {revision}, this arena needs {head}: "
                f"run `arena --db {_display_url(engine)} db upgrade`"
            )
    return engine


def _display_url(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)
