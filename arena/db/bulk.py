"""Bulk SQL writes shared by ingest and the snapshot writer (PostgreSQL COPY, SQLite executemany).

:func:`write_numbers` is the bulk path of many rows of a few numbers (a
snapshot's head-to-head pairs); :func:`copy_rows` is PostgreSQL's ``COPY``;
:func:`may_skip_triggers` and :func:`lock_references` let a large COPY skip the
per-row foreign-key triggers with the same guarantee. They live in the database
layer so that neither ingest nor the snapshot layer imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection

__all__ = [
    "TRIGGERS_WORTH_SKIPPING",
    "copy_rows",
    "lock_references",
    "may_skip_triggers",
    "write_numbers",
]


def copy_rows(
    conn: Connection, table: str, columns: Sequence[str], rows: Iterable[tuple[Any, ...]] | str
) -> None:
    """PostgreSQL: ``COPY table (columns) FROM STDIN`` of tuples, or of ready COPY text."""
    cursor = conn.connection.cursor()
    try:
        with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            if isinstance(rows, str):
                copy.write(rows)
                return
            for row in rows:
                copy.write_row(row)
    finally:
        cursor.close()


def may_skip_triggers(conn: Connection) -> bool:
    """PostgreSQL: may this role set ``session_replication_role`` (skip foreign-key triggers)?

    Superusers may, and on PostgreSQL 15+ any role granted ``SET`` on the
    parameter (``GRANT SET ON PARAMETER session_replication_role TO ...``).
    """
    return bool(
        conn.exec_driver_sql(
            "SELECT CASE WHEN current_setting('server_version_num')::int >= 150000 "
            "THEN has_parameter_privilege('session_replication_role', 'SET') "
            "ELSE (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) END"
        ).scalar()
    )


def lock_references(conn: Connection, references: Sequence[tuple[str, Iterable[int]]]) -> None:
    """Lock the parent rows ``(table, ids)`` as a foreign-key trigger does, all at once.

    ``FOR KEY SHARE`` until the commit: no one can delete or re-key them
    meanwhile.  Raises ``LookupError`` naming the first id that is not there.
    """
    for parent, ids in references:
        wanted = sorted({int(i) for i in ids})
        found = conn.exec_driver_sql(
            f"SELECT id FROM {parent} WHERE id = ANY(%(ids)s) ORDER BY id FOR KEY SHARE",
            {"ids": wanted},
        ).scalars()
        missing = sorted(set(wanted) - set(found))
        if missing:
            raise LookupError(f"{parent} has no row with id {missing[0]}")


#: Rows from which :func:`write_numbers` skips the per-row foreign-key triggers.
TRIGGERS_WORTH_SKIPPING = 5_000


def write_numbers(
    conn: Connection,
    table: str,
    columns: Sequence[str],
    rows: Iterable[tuple[Any, ...]],
    first: int,
    *,
    references: Sequence[tuple[str, Iterable[int]]] = (),
) -> None:
    """Rows of Python ints and finite floats, each preceded by the same int ``first``.

    The bulk path for many rows of a few numbers (a snapshot's head-to-head pairs):
    SQLite binds them through the driver's ``executemany`` with ``first`` a literal
    (sqlite3 binds each parameter of each row; a float bound is stored bit for bit),
    PostgreSQL COPYs text formatted at C speed, where ``repr`` of a float reads back
    to the same double.  ``columns`` names ``first``'s column, then the rest.

    ``references``: every ``(parent table, ids)`` the rows' foreign keys point
    at.  On PostgreSQL, where the role may, the rows' per-row foreign-key
    triggers are skipped and these parents are locked and checked set-wise
    instead (:func:`lock_references`): the same guarantee, without three
    trigger calls a row (4.4 of a 1,000-model rebuild's 20 s).
    """
    first_sql = str(int(first))
    if conn.dialect.name == "postgresql":
        line = first_sql + "\t%r" * (len(columns) - 1) + "\n"
        text = "".join(map(line.__mod__, rows))
        # a few rows: the triggers cost less than the extra statements (a board
        # split into 2,000 small sets writes 2,000 snapshots); a line is a row
        few = text.count("\n") < TRIGGERS_WORTH_SKIPPING
        if few or not references or not may_skip_triggers(conn):
            copy_rows(conn, table, columns, text)
            return
        lock_references(conn, references)
        role = conn.exec_driver_sql("SELECT current_setting('session_replication_role')").scalar()
        conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
        copy_rows(conn, table, columns, text)
        # no finally: a failed COPY aborts the transaction, which ends the SET
        # LOCAL with it (a SET there would fail and hide the COPY's error)
        conn.exec_driver_sql(f"SET LOCAL session_replication_role = {role}")
        return
    marks = ", ".join([first_sql, *["?"] * (len(columns) - 1)])
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
    cursor = conn.connection.cursor()
    try:
        # sqlite3's executemany takes any iterable of rows; SQLAlchemy's
        # DBAPICursor protocol asks for a Sequence (a list would copy them all)
        cursor.executemany(sql, rows)  # type: ignore[arg-type]
    finally:
        cursor.close()
