"""PostgreSQL advisory lock keys of one arena: its database and schema, not the server.

Advisory locks are global to a PostgreSQL server's database: a constant key
would make two arenas in two schemas of one database (or a test suite and
another user of the server) wait for each other. Each key is therefore a hash
of ``current_database()``, ``current_schema()`` and the lock's name, so only
the commands of one arena ever share a lock. SQLite needs none of this: its
locks belong to the database file.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import Connection

from arena.core.errors import ArgumentError

__all__ = ["LOCK_NAMES", "advisory_key", "arena_identity"]

#: The advisory locks arena takes, by name (the file lock adds the file's sha256).
LOCK_NAMES = ("migrate", "nightly", "battle-ids", "file", "serve", "provisional")


def arena_identity(conn: Connection) -> tuple[str, str]:
    """``(current_database(), current_schema())`` of a PostgreSQL connection.

    ``current_schema()`` is the first schema of the ``search_path`` that
    exists (NULL when none does: then tables could not be created either, and
    the key uses an empty schema name).
    """
    database, schema = conn.exec_driver_sql("SELECT current_database(), current_schema()").one()
    return str(database), "" if schema is None else str(schema)


def advisory_key(conn: Connection, name: str, detail: str = "") -> int:
    """The 64-bit advisory lock key of lock ``name`` (plus ``detail``) in this arena.

    A BLAKE2b hash of the database, the schema, the name and the detail, each
    length-prefixed, so no two (database, schema, name, detail) share a key
    but by a 2**-64 chance.
    """
    if name not in LOCK_NAMES:
        raise ArgumentError(f"unknown lock {name!r}; one of {', '.join(LOCK_NAMES)}")
    database, schema = arena_identity(conn)
    h = hashlib.blake2b(digest_size=8, person=b"arena-lock")
    for part in (database, schema, name, detail):
        raw = part.encode()
        h.update(len(raw).to_bytes(8, "big") + raw)
    return int.from_bytes(h.digest(), "big", signed=True)
