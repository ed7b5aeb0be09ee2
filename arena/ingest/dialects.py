"""What an ingest does differently on SQLite and PostgreSQL, one object per engine.

:class:`BattleWriter <arena.ingest.writer.BattleWriter>` is written once for
both engines; it picks one of these once (:func:`rows_for`) and calls the
same methods on either:

* ``reserve_ids`` -- a block of battle ids (SQLite: counted here under the
  write lock; PostgreSQL: one ``setval`` on the sequence under an advisory lock);
* ``insert`` -- battle rows and their keys (``battle_keys``: external id ->
  battle id, the store-wide de-duplication), keys first: a battle whose key is
  stored already is skipped (SQLite: ``executemany``; PostgreSQL: ``COPY``,
  keys staged on a conflict);
* ``rows`` -- plain rows into a table that cannot conflict;
* ``existing`` -- the stored battles of some external ids;
* ``merge_counts`` -- add an ingest's counts to ``battle_counts`` (an upsert);
* ``check_references`` -- the set-wise stand-in for skipped foreign-key checks.

(About 480 lines: the two engines' implementations of one interface stay side
by side, so that a change to one is read against the other.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, repeat
from typing import Any

from sqlalchemy import Connection, CursorResult, literal

from arena.db.advisory import advisory_key
from arena.db.bulk import copy_rows, may_skip_triggers
from arena.db.session import SQLITE_INGEST_CACHE_KIB, announce_wait

#: Characters that COPY's text format would need escaped (then rows go one by one).
_COPY_SPECIAL = re.compile(r"[\\\t\n\r]")
#: the count table's columns, key first (arena.ingest.counts)
_COUNT_KEY = "category_id, model_a_id, model_b_id, outcome, weight, rated"
_COUNT_MERGE = f"ON CONFLICT ({_COUNT_KEY}) DO UPDATE SET n = battle_counts.n + excluded.n"
#: a count-table row ``c`` and a staged row ``s`` of the same cell (PostgreSQL merge)
_SAME_CELL = " AND ".join(f"c.{col} = s.{col}" for col in _COUNT_KEY.split(", "))
#: count-table cells a statement on SQLite (4-5 parameters each: under 999, the old limit)
_MERGE_ROWS = 100
#: PostgreSQL: up to this many count-table cells are merged by one upsert statement
#: (a served group's few cells: one round trip instead of the stage-and-merge's six)
_UPSERT_CELLS = 500
_LOOKUP_SELECT = (
    "SELECT k.external_id, b.batch_id, b.id, ma.name, mb.name, b.outcome, b.weight, "
    "b.source FROM battle_keys k JOIN battles b ON b.id = k.battle_id "
    "JOIN models ma ON ma.id = b.model_a_id JOIN models mb ON mb.id = b.model_b_id "
    "WHERE k.external_id "
)
_KEY_COLUMNS = ("external_id", "battle_id")
#: Tables whose rows are whole numbers only, never NULL: their COPY text is one
#: ``%d`` format per row (~0.4 us against write_row's ~1.8 us for a style row)
_WHOLE_NUMBER_TABLES = frozenset({"battle_style", "battle_categories"})


def _without(rows: Iterable[tuple[Any, ...]], skipped: set[int]) -> list[tuple[Any, ...]]:
    """Battle rows (id first) whose id is not in ``skipped``."""
    return [row for row in rows if row[0] not in skipped]


class SqliteRows:
    """SQLite: the writer holds the database's write lock from its first statement."""

    name = "sqlite"
    #: foreign keys are never checked per row during an ingest (see the loader)
    fk_per_row = False
    #: text form of ``occurred_at`` that SQLAlchemy's SQLite DateTime reads back (UTC, naive)
    time_format: str | None = "%Y-%m-%d %H:%M:%S.%f"

    def __init__(self, conn: Connection, *, batch_id: int, source: str | None, next_id: int):
        self.conn = conn
        self.batch_id = batch_id
        self.source = source
        self.first_id = self._next_id = next_id
        # Index maintenance is the cost of a large ingest: give it more cache.
        conn.exec_driver_sql(f"PRAGMA cache_size=-{SQLITE_INGEST_CACHE_KIB}")

    @property
    def last_id(self) -> int:
        return self._next_id - 1

    def reserve_ids(self, n: int) -> list[int]:
        start = self._next_id
        self._next_id += n
        return list(range(start, start + n))

    def existing(self, part: list[str]) -> CursorResult[*tuple[Any, ...]]:
        marks = ",".join("?" * len(part))
        return self.conn.exec_driver_sql(_LOOKUP_SELECT + f"IN ({marks})", tuple(part))

    def copy_text(self, *_args: Any, **_kwargs: Any) -> None:
        return None  # no COPY on SQLite

    def rows(self, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        marks = ", ".join("?" * len(columns))
        self.conn.exec_driver_sql(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows
        )

    def merge_counts(self, groups: list[tuple[Any, ...]]) -> None:
        """Groups ``(category_id, weight, rated, a_ids, b_ids, outcomes, n)`` (see
        ``CountAccumulator.groups``), upserted :data:`_MERGE_ROWS` cells a statement.

        sqlite3 costs per executed row and per bound parameter, so a group's
        board, rating flag and a weight of 1 are literals (other weights stay
        parameters: SQLite's text-to-float conversion may not round correctly)
        and a statement carries many rows: 186k cells took 0.34 s as one row
        and seven parameters a statement, 0.14 s like this."""
        cursor = self.conn.connection.cursor()
        try:
            for category_id, weight, rated, a_ids, b_ids, outcomes, n in groups:
                columns = [a_ids, b_ids, outcomes, n]
                weight_sql = "1.0"
                if weight != 1.0:
                    columns.insert(3, [weight] * len(n))
                    weight_sql = "?"
                cell = f"({int(category_id)}, ?, ?, ?, {weight_sql}, {int(bool(rated))}, ?)"
                flat = list(chain.from_iterable(zip(*columns, strict=True)))
                step = _MERGE_ROWS * len(columns)
                full = len(flat) - len(flat) % step
                if full:
                    sql = _count_upsert(cell, _MERGE_ROWS)
                    parts = (flat[i : i + step] for i in range(0, full, step))
                    # sqlite3 takes any iterable of rows; SQLAlchemy's DBAPICursor
                    # protocol asks for a Sequence (a list would copy every row)
                    cursor.executemany(sql, parts)  # type: ignore[arg-type]
                if full < len(flat):
                    cursor.execute(_count_upsert(cell, len(n) % _MERGE_ROWS), flat[full:])
        finally:
            cursor.close()

    def insert(
        self,
        names: Sequence[str],
        rows: Iterable[tuple[Any, ...]],
        ids: list[int],
        *,
        keys: list[tuple[str, int]] | None,
        may_conflict: bool,
        copy_text: str | None = None,
    ) -> set[int] | None:
        """Insert battle rows (id first) and their ``keys`` (external id, battle id);
        the ids actually inserted, or None when all were.  With ``may_conflict``, a
        battle whose external id is stored already is skipped."""
        skipped = self._insert_keys(keys, may_conflict=may_conflict) if keys else None
        if skipped:
            rows = _without(rows, skipped)
        # The batch and source are the same on every row: SQL literals, not
        # parameters (sqlite3 binds each parameter of each row separately).
        bound = list(names)
        literals = {"batch_id": self._literal(int(self.batch_id))}
        if self.source is not None:
            literals["source"] = self._literal(self.source)
        columns = ", ".join([*bound, *literals])
        marks = ", ".join(["?"] * len(bound) + list(literals.values()))
        cursor = self.conn.connection.cursor()
        try:
            sql = f"INSERT INTO battles ({columns}) VALUES ({marks})"
            # sqlite3 takes any iterable of rows; SQLAlchemy's DBAPICursor protocol
            # asks for a Sequence (a list would copy every row)
            cursor.executemany(sql, rows)  # type: ignore[arg-type]
        finally:
            cursor.close()
        return set(ids) - skipped if skipped else None

    def _insert_keys(self, keys: list[tuple[str, int]], *, may_conflict: bool) -> set[int]:
        """Write the keys; the battle ids whose external id was stored already."""
        conflict = " ON CONFLICT (external_id) DO NOTHING" if may_conflict else ""
        cursor = self.conn.connection.cursor()
        try:
            cursor.executemany(
                "INSERT INTO battle_keys (external_id, battle_id) VALUES (?, ?)" + conflict, keys
            )
            count = cursor.rowcount
        finally:
            cursor.close()
        if not may_conflict or count == len(keys):
            return set()
        # which keys are this chunk's: looked up by key (only when some were stored)
        mine: set[int] = set()
        for start in range(0, len(keys), 5000):
            part = [k[0] for k in keys[start : start + 5000]]
            mine.update(
                r[0]
                for r in self.conn.exec_driver_sql(
                    "SELECT battle_id FROM battle_keys WHERE external_id IN "
                    f"({','.join('?' * len(part))})",
                    tuple(part),
                )
            )
        return {k[1] for k in keys} - mine

    def _literal(self, value: int | str) -> str:
        """``value`` as an SQL literal, quoted by the dialect's own compiler."""
        return str(
            literal(value).compile(
                dialect=self.conn.dialect, compile_kwargs={"literal_binds": True}
            )
        )

    def check_references(self) -> int | None:
        """A battle of this batch naming no stored model (SQLite never checks per row)."""
        return self.conn.exec_driver_sql(
            "SELECT id FROM battles WHERE id >= ? AND (model_a_id NOT IN (SELECT id FROM models) "
            "OR model_b_id NOT IN (SELECT id FROM models) OR batch_id != ?) LIMIT 1",
            (self.first_id, self.batch_id),
        ).scalar()


class PostgresRows:
    """PostgreSQL: COPY for every write, battle ids drawn in blocks under an advisory lock."""

    name = "postgresql"
    time_format: str | None = None

    def __init__(
        self,
        conn: Connection,
        *,
        batch_id: int,
        source: str | None,
        next_id: int,
        few_rows: bool = False,
        ids_locked: bool = False,
    ):
        self.conn = conn
        self.batch_id = batch_id
        self.source = source
        self.first_id = next_id
        self.last_id = 0
        #: the battle-id lock (hold_battle_ids) is held: taken by the caller, or here
        self._locked = ids_locked
        self._locked_first = False
        self._conflicts_seen = False
        #: foreign keys are verified set-wise at the end (see defer_references); a
        #: writer of a few rows (``few_rows``: arena serve's group commits) keeps the
        #: per-row checks, cheaper for a few dozen rows than the four statements
        self.triggers_off = False if few_rows else self.defer_references()
        #: and merges its count cells by one upsert (see merge_counts)
        self.few_rows = few_rows
        #: checking foreign keys row by row: a bulk load drops and re-adds them
        self.fk_per_row = not self.triggers_off

    def defer_references(self) -> bool:
        """Skip the per-row foreign-key triggers for this transaction, if the role may.

        Foreign keys are enforced by triggers, ~15 us a row -- more than the
        rest of a row's insert.  A role that may set ``session_replication_role``
        turns them off for this transaction only; :meth:`check_references` then
        verifies the new rows set-wise before the commit.  Who may: superusers,
        and on PostgreSQL 15+ any role granted ``SET`` on the parameter
        (``GRANT SET ON PARAMETER session_replication_role TO ...``), which
        ``has_parameter_privilege`` reports.  Other roles keep the per-row checks.
        """
        if not may_skip_triggers(self.conn):
            return False
        self.conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
        return True

    def reserve_ids(self, n: int) -> list[int]:
        if not n:
            return []
        # A block of sequence values in one call (n nextval calls cost 3 us each:
        # a third of a large ingest).  setval after nextval is not atomic, so
        # writers take a transaction-level advisory lock first: concurrent
        # ingests queue up, and nothing else in arena draws battle ids.
        if not self._locked:
            hold_battle_ids(self.conn)
            self._locked = True
        last = self.conn.exec_driver_sql(
            "SELECT setval(pg_get_serial_sequence('battles', 'id'), "
            "nextval(pg_get_serial_sequence('battles', 'id')) + %(n)s - 1)",
            {"n": n},
        ).scalar_one()
        if not self._locked_first:
            # under the lock, ids only grow: the first block starts this ingest's range
            self.first_id, self._locked_first = last - n + 1, True
        self.last_id = last
        return list(range(last - n + 1, last + 1))

    def existing(self, part: list[str]) -> CursorResult[*tuple[Any, ...]]:
        return self.conn.exec_driver_sql(_LOOKUP_SELECT + "= ANY(%(ids)s)", {"ids": part})

    def copy_text(
        self,
        ids: Sequence[int],
        a_ids: Sequence[int],
        b_ids: Sequence[int],
        outcome: Iterable[str],
        external_id: Sequence[str] | None,
        excluded: Sequence[str | None] | None,
        n: int,
        texts: Sequence[Sequence[str]] = (),
        weight: Sequence[float] | None = None,
    ) -> str | None:
        """A column block in COPY text format, joined at C speed (``copy.write_row``
        costs ~1.2-1.8 us a row); None if a text value would need escaping.

        ``texts``: more text columns (question, judge) and ``weight``, in this order
        after the others (the order of the writer's column names)."""
        text_cols: list[Iterable[str]] = [map(str, ids), map(str, a_ids), map(str, b_ids), outcome]
        for values in (external_id, *texts) if external_id is not None else texts:
            if _COPY_SPECIAL.search("\x00".join(values)):
                return None
        if external_id is not None:
            text_cols.append(external_id)
        if excluded is not None:
            text_cols.append(["\\N" if v is None else v for v in excluded])
        text_cols.extend(texts)
        if weight is not None:  # repr: the shortest text that reads back as the same float
            text_cols.append(map(repr, weight))
        tail = str(int(self.batch_id))
        if self.source is not None:
            if _COPY_SPECIAL.search(self.source):
                return None
            tail += "\t" + self.source
        text_cols.append(repeat(tail, n))
        return "\n".join(map("\t".join, zip(*text_cols, strict=True))) + "\n"

    def rows(self, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        if table in _WHOLE_NUMBER_TABLES:  # COPY text by one format per row, not write_row
            line = "\t".join(["%d"] * len(columns)) + "\n"
            self._copy(table, columns, "".join(map(line.__mod__, rows)))
            return
        self._copy(table, columns, rows)

    def merge_counts(self, groups: list[tuple[Any, ...]]) -> None:
        """Groups ``(category_id, weight, rated, a_ids, b_ids, outcomes, n)`` (see
        ``CountAccumulator.groups``) as COPY text made at C speed, staged, then an
        UPDATE of the stored cells and an INSERT of the others: an upsert's
        speculative inserts cost the server 0.62-0.66 s for 186k new cells, this
        0.35-0.39 s (both ~1.1 s when all exist); into an empty table (a first
        load) the text is copied straight in.  No upsert needed: every writer of
        ``battle_counts`` (ingest, recount) holds ``hold_battle_ids``'s lock."""
        text = "".join(
            "".join(
                map(
                    f"{int(category_id)}\t%d\t%d\t%s\t{float(weight)!r}\t{'t' if rated else 'f'}"
                    "\t%d\n".__mod__,
                    zip(a_ids, b_ids, outcomes, n, strict=True),
                )
            )
            for category_id, weight, rated, a_ids, b_ids, outcomes, n in groups
        )
        columns = [*_COUNT_KEY.split(", "), "n"]
        cells = sum(len(g[3]) for g in groups)
        # (a large write stages: for 500-record batches, one upsert of hundreds of
        # cells cost 25 us a battle of server CPU against 19 for COPY and merge)
        if self.few_rows and cells <= _UPSERT_CELLS:
            if cells:
                self._upsert_counts(groups, cells)
            return
        if self.conn.exec_driver_sql("SELECT NOT EXISTS (SELECT 1 FROM battle_counts)").scalar():
            self._copy("battle_counts", columns, text)
            return
        self.conn.exec_driver_sql(
            "CREATE TEMP TABLE arena_count_stage (category_id INTEGER, model_a_id INTEGER, "
            "model_b_id INTEGER, outcome VARCHAR(16), weight FLOAT, rated BOOLEAN, n BIGINT) "
            "ON COMMIT DROP"
        )
        self._copy("arena_count_stage", columns, text)
        self.conn.exec_driver_sql(
            f"UPDATE battle_counts c SET n = c.n + s.n FROM arena_count_stage s WHERE {_SAME_CELL}"
        )
        self.conn.exec_driver_sql(
            f"INSERT INTO battle_counts ({_COUNT_KEY}, n) SELECT {_COUNT_KEY}, n "
            "FROM arena_count_stage s "
            f"WHERE NOT EXISTS (SELECT 1 FROM battle_counts c WHERE {_SAME_CELL})"
        )
        self.conn.exec_driver_sql("DROP TABLE arena_count_stage")

    def _upsert_counts(self, groups: list[tuple[Any, ...]], cells: int) -> None:
        """A few cells (at most ``_UPSERT_CELLS``) by one upsert statement."""
        params: list[Any] = []
        for category_id, weight, rated, a_ids, b_ids, outcomes, n in groups:
            for a, b, outcome, k in zip(a_ids, b_ids, outcomes, n, strict=True):
                params += (int(category_id), int(a), int(b), outcome, float(weight), bool(rated))
                params.append(int(k))
        cell = "(%s, %s, %s, %s, %s, %s, %s)"
        self.conn.exec_driver_sql(
            f"INSERT INTO battle_counts ({_COUNT_KEY}, n) VALUES {', '.join([cell] * cells)} "
            + _COUNT_MERGE,
            tuple(params),
        )

    def insert(
        self,
        names: Sequence[str],
        rows: Iterable[tuple[Any, ...]],
        ids: list[int],
        *,
        keys: list[tuple[str, int]] | None,
        may_conflict: bool,
        copy_text: str | None = None,
    ) -> set[int] | None:
        """Insert battle rows (id first) and their ``keys`` (external id, battle id);
        the ids actually inserted, or None when all were.  With ``may_conflict``, a
        battle whose external id is stored already is skipped.

        ``copy_text``: the same rows already rendered by :meth:`copy_text`
        (batch and source included), used instead of ``rows``.
        """
        skipped = self._insert_keys(keys, may_conflict=may_conflict) if keys else None
        names = [*names, "batch_id"] + (["source"] if self.source is not None else [])
        tail = (self.batch_id,) if self.source is None else (self.batch_id, self.source)
        if skipped and copy_text is not None:
            # one line per battle, in id order
            copy_text = "".join(
                line + "\n"
                for line, battle_id in zip(copy_text.split("\n"), ids, strict=False)
                if battle_id not in skipped
            )
        elif skipped:
            rows = _without(rows, skipped)
        data = copy_text if copy_text is not None else (row + tail for row in rows)
        self._copy("battles", names, data)
        return set(ids) - skipped if skipped else None

    def _insert_keys(self, keys: list[tuple[str, int]], *, may_conflict: bool) -> set[int]:
        """Write the keys; the battle ids whose external id was stored already."""
        text = _copy_lines(keys)
        if not may_conflict:
            self._copy("battle_keys", _KEY_COLUMNS, text)
            return set()
        from psycopg.errors import UniqueViolation  # PostgreSQL driver: only on this path

        if not self._conflicts_seen:
            # New data is the common case: COPY straight into the table, and only
            # if a key turns out to be stored already, undo the chunk's keys and stage them.
            self.conn.exec_driver_sql("SAVEPOINT arena_chunk")
            try:
                self._copy("battle_keys", _KEY_COLUMNS, text)
            except UniqueViolation:
                self.conn.exec_driver_sql("ROLLBACK TO SAVEPOINT arena_chunk")
                self._conflicts_seen = True
            else:
                self.conn.exec_driver_sql("RELEASE SAVEPOINT arena_chunk")
                return set()
        # COPY cannot skip conflicts: stage the keys, then insert what is new (in id
        # order, so the first of two rows of a file with one id is the one stored).
        self.conn.exec_driver_sql(
            "CREATE TEMP TABLE IF NOT EXISTS arena_key_stage "
            "(external_id VARCHAR(255), battle_id BIGINT) ON COMMIT DROP"
        )
        self._copy("arena_key_stage", _KEY_COLUMNS, text)
        got = self.conn.exec_driver_sql(
            "INSERT INTO battle_keys (external_id, battle_id) SELECT external_id, battle_id "
            "FROM arena_key_stage ORDER BY battle_id ON CONFLICT (external_id) DO NOTHING "
            "RETURNING battle_id"
        )
        skipped = {k[1] for k in keys}.difference(r[0] for r in got)
        self.conn.exec_driver_sql("TRUNCATE arena_key_stage")
        return skipped

    def _copy(
        self, table: str, columns: Sequence[str], rows: Iterable[tuple[Any, ...]] | str
    ) -> None:
        copy_rows(self.conn, table, columns, rows)

    def check_references(self) -> int | None:
        """A battle of this batch naming no stored model, where the triggers were off."""
        if not self.triggers_off:
            return None  # checked row by row
        # (category links need no check: their ids come from this writer's inserts
        # and from the categories table, read in this transaction)
        bad = self.conn.exec_driver_sql(
            "SELECT b.id FROM battles b WHERE b.id BETWEEN %(lo)s AND %(hi)s "
            "AND b.batch_id = %(batch)s "
            "AND (NOT EXISTS (SELECT 1 FROM models m WHERE m.id = b.model_a_id) "
            "OR NOT EXISTS (SELECT 1 FROM models m WHERE m.id = b.model_b_id)) LIMIT 1",
            {"lo": self.first_id, "hi": self.last_id, "batch": self.batch_id},
        ).scalar()
        self.conn.exec_driver_sql("SET LOCAL session_replication_role = origin")
        return bad


def _copy_lines(keys: list[tuple[str, int]]) -> str | list[tuple[str, int]]:
    """Keys in COPY text format, joined at C speed; as rows if an id needs escaping."""
    ext = [k[0] for k in keys]
    if _COPY_SPECIAL.search("\x00".join(ext)):
        return keys
    return "\n".join(map("\t".join, zip(ext, map(str, (k[1] for k in keys)), strict=True))) + "\n"


def _count_upsert(cell: str, rows: int) -> str:
    """An upsert of ``rows`` count-table cells of the form ``cell`` (SQLite)."""
    return f"INSERT INTO battle_counts ({_COUNT_KEY}, n) VALUES {', '.join([cell] * rows)} {_COUNT_MERGE}"


def hold_battle_ids(conn: Connection, what: str = "another ingest") -> None:
    """PostgreSQL: take the battle-id lock to the end of the transaction (ingests queue)."""
    with announce_wait(conn, what):
        key = advisory_key(conn, "battle-ids")
        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%(key)s)", {"key": key})


def rows_for(
    conn: Connection,
    *,
    batch_id: int,
    source: str | None,
    next_id: int,
    few_rows: bool = False,
    ids_locked: bool = False,
) -> SqliteRows | PostgresRows:
    """The engine's :class:`SqliteRows` or :class:`PostgresRows`, chosen once."""
    if conn.dialect.name == "postgresql":
        return PostgresRows(
            conn,
            batch_id=batch_id,
            source=source,
            next_id=next_id,
            few_rows=few_rows,
            ids_locked=ids_locked,
        )
    return SqliteRows(conn, batch_id=batch_id, source=source, next_id=next_id)


def dialect_insert(conn: Connection) -> Callable[..., Any]:
    """The dialect's ``insert`` construct (with ``on_conflict_*``)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert
