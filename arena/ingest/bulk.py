"""Bulk loads: write a large file with the secondary indexes dropped, then build them.

A file that will add at least ``BULK_RATIO`` x the stored battles (and
``BULK_MIN_ROWS`` or more) goes in with the aggregation index dropped and
without its external-id keys; before the commit the index is built again by
one sort, and the keys (``battle_keys``) are written by one statement:
PostgreSQL drops the key table's primary key meanwhile and builds it again by
one sort; SQLite (which cannot drop it) inserts the keys in key order.  At
10M rows, random B-tree inserts cost about three times that.
Writing the keys also finds any id stored twice at once: :class:`BulkConflict`
tells the loader to roll the attempt back and redo the file row by row, which
names every offending line.  Concurrent readers: SQLite readers keep their
snapshot; PostgreSQL readers of ``battles`` wait for the commit (DROP INDEX
locks the table).
"""

from __future__ import annotations

from sqlalchemy import Connection, ForeignKeyConstraint, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.schema import AddConstraint, CreateIndex, DropConstraint

from arena.db.models import Battle, BattleCategory, BattleKey

#: Bulk mode: at least this many new rows, and at least BULK_RATIO x the stored battles.
BULK_MIN_ROWS = 100_000
BULK_RATIO = 0.5
#: The secondary indexes a bulk load drops and builds again.
BULK_INDEXES = ("ix_battles_pair_outcome",)
#: SQLite page cache of a bulk load (KiB): appending needs little, and SQLite
#: sizes the index builds' sort buffers from it, so it bounds their memory.
SQLITE_SORT_CACHE_KIB = 65_536


class BulkConflict(Exception):
    """A bulk load met an external id stored twice: redo the file row by row."""


def wants_bulk(expected_rows: float, stored_rows: int) -> bool:
    return expected_rows >= BULK_MIN_ROWS and expected_rows >= BULK_RATIO * stored_rows


def _foreign_keys(conn: Connection) -> list[ForeignKeyConstraint]:
    """The foreign keys of the tables a load writes, as the schema names them, that
    the database has (a battles table partitioned by time has no unique ``id``, so
    ``battle_categories`` cannot reference it: docs/scale.md)."""
    schema = [
        *Battle.__table__.foreign_key_constraints,
        *BattleCategory.__table__.foreign_key_constraints,
    ]
    have = set(
        conn.exec_driver_sql(
            "SELECT conname FROM pg_constraint WHERE contype = 'f' "
            "AND connamespace = current_schema()::regnamespace"
        ).scalars()
    )
    return [fk for fk in schema if fk.name in have]


def drop_indexes(conn: Connection, *, foreign_keys: bool) -> list[ForeignKeyConstraint]:
    """Drop the secondary indexes (and, PostgreSQL only, if asked, the foreign keys);
    returns the foreign keys dropped, for :func:`build_indexes`."""
    for name in BULK_INDEXES:
        conn.exec_driver_sql(f"DROP INDEX {name}")
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("ALTER TABLE battle_keys DROP CONSTRAINT pk_battle_keys")
    dropped = []
    if foreign_keys:
        # PostgreSQL checks a foreign key by a trigger per row (~15 us); adding the
        # constraint again validates all rows in one join.  Only the tables' owner
        # is needed for this, no superuser.
        dropped = _foreign_keys(conn)
        for fk in dropped:
            conn.execute(DropConstraint(fk))
    if conn.dialect.name == "sqlite":
        # appending rows needs no big cache (it was for random index inserts)
        conn.exec_driver_sql(f"PRAGMA cache_size=-{SQLITE_SORT_CACHE_KIB}")
    return dropped


def build_indexes(
    conn: Connection, *, foreign_keys: list[ForeignKeyConstraint], first_id: int, last_id: int
) -> None:
    """Write the keys of battles ``first_id..last_id`` and build the dropped indexes
    (and foreign keys) exactly as the schema defines them.

    Raises BulkConflict when a key meets an id stored twice.
    """
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SET LOCAL maintenance_work_mem = '256MB'")
    else:
        conn.exec_driver_sql(f"PRAGMA cache_size=-{SQLITE_SORT_CACHE_KIB}")
    pg = conn.dialect.name == "postgresql"
    try:
        conn.execute(
            text(
                "INSERT INTO battle_keys (external_id, battle_id) SELECT external_id, id "
                "FROM battles WHERE id BETWEEN :lo AND :hi AND external_id IS NOT NULL"
                + ("" if pg else " ORDER BY external_id")
            ),
            {"lo": first_id, "hi": last_id},
        )
        if pg:
            conn.execute(AddConstraint(BattleKey.__table__.primary_key))
    except IntegrityError:
        raise BulkConflict("battle_keys") from None
    for index in Battle.__table__.indexes:
        if index.name in BULK_INDEXES:
            conn.execute(CreateIndex(index))
    for fk in foreign_keys:
        conn.execute(AddConstraint(fk))
