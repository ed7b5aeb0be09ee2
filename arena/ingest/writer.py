"""Writing normalised battles into the store, fast, inside the caller's transaction.

Rows go in through the DBAPI's bulk paths (``executemany`` on SQLite, ``COPY`` on
PostgreSQL) via SQLAlchemy's connection, because ORM objects cost ~10x more per
row. Battle ids are assigned here so that category links can be written in the
same pass; on SQLite the writer holds the write lock from its first statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, func, insert, select

from arena.db.models import Battle, Category, Model
from arena.ingest.records import ParsedBattle

_BATTLE_COLUMNS = (
    "id", "external_id", "model_a_id", "model_b_id", "outcome", "weight", "source",
    "judge", "question", "language", "occurred_at", "batch_id", "excluded_reason",
)
_LOOKUP_CHUNK = 5000


@dataclass
class ChunkResult:
    inserted: int
    excluded: int
    duplicates: int
    #: (position in chunk, message) for ids repeated inside the file being ingested
    repeated: list[tuple[int, str]]


class BattleWriter:
    """Insert chunks of :class:`ParsedBattle` for one ingest batch."""

    def __init__(self, conn: Connection, *, batch_id: int, source: str | None) -> None:
        self.conn = conn
        self.batch_id = batch_id
        self.source = source
        self.dialect = conn.dialect.name
        self.models = dict(conn.execute(select(Model.name, Model.id)).all())
        self.categories = dict(conn.execute(select(Category.name, Category.id)).all())
        self._next_id = (conn.execute(select(func.max(Battle.id))).scalar() or 0) + 1
        self.new_models = 0

    # -- name -> id ---------------------------------------------------------
    def _model_id(self, name: str) -> int:
        model_id = self.models.get(name)
        if model_id is None:
            model_id = self.conn.execute(
                insert(Model).values(name=name).returning(Model.id)
            ).scalar_one()
            self.models[name] = model_id
            self.new_models += 1
        return model_id

    def _category_id(self, name: str) -> int:
        category_id = self.categories.get(name)
        if category_id is None:
            category_id = self.conn.execute(
                insert(Category).values(name=name).returning(Category.id)
            ).scalar_one()
            self.categories[name] = category_id
        return category_id

    def _existing(self, ids: list[str]) -> dict[str, int]:
        """external id -> batch id of those already stored (driver SQL: this runs per chunk
        and compiling a 5,000-parameter IN through the SQL expression layer cost more
        than the lookup itself)."""
        found: dict[str, int] = {}
        for start in range(0, len(ids), _LOOKUP_CHUNK):
            part = ids[start:start + _LOOKUP_CHUNK]
            if self.dialect == "postgresql":
                rows = self.conn.exec_driver_sql(
                    "SELECT external_id, batch_id FROM battles WHERE external_id = ANY(%(ids)s)",
                    {"ids": part},
                )
            else:
                marks = ",".join("?" * len(part))
                rows = self.conn.exec_driver_sql(
                    f"SELECT external_id, batch_id FROM battles WHERE external_id IN ({marks})",
                    tuple(part),
                )
            found.update(rows.all())
        return found

    def _reserve_ids(self, n: int) -> list[int]:
        if self.dialect == "postgresql":
            # Sequence values, so concurrent writers never collide.
            rows = self.conn.exec_driver_sql(
                "SELECT nextval(pg_get_serial_sequence('battles', 'id')) "
                "FROM generate_series(1, %(n)s)", {"n": n}
            )
            return [r[0] for r in rows]
        start = self._next_id
        self._next_id += n
        return list(range(start, start + n))

    # -- the chunk ----------------------------------------------------------
    def write(self, chunk: Sequence[ParsedBattle]) -> ChunkResult:
        with_ids = [b.external_id for b in chunk if b.external_id is not None]
        existing = self._existing(with_ids) if with_ids else {}
        seen: dict[str, int] = {}
        keep: list[ParsedBattle] = []
        repeated: list[tuple[int, str]] = []
        duplicates = 0
        for pos, battle in enumerate(chunk):
            ext = battle.external_id
            if ext is not None:
                if existing.get(ext) == self.batch_id or ext in seen:
                    repeated.append((pos, f"{ext!r} appears twice in this file"))
                    continue
                if ext in existing:
                    duplicates += 1
                    continue
                seen[ext] = pos
            keep.append(battle)
        if not keep:
            return ChunkResult(0, 0, duplicates, repeated)

        ids = self._reserve_ids(len(keep))
        sqlite = self.dialect == "sqlite"
        models = self.models
        model_id = self._model_id
        source, batch_id = self.source, self.batch_id
        rows = []
        links = []
        excluded = 0
        for battle_id, b in zip(ids, keep, strict=True):
            when = b.occurred_at
            if sqlite and when is not None:
                # The text form SQLAlchemy's SQLite DateTime reads back (UTC, naive).
                when = when.strftime("%Y-%m-%d %H:%M:%S.%f")
            a_id = models.get(b.model_a) or model_id(b.model_a)
            b_id = models.get(b.model_b) or model_id(b.model_b)
            rows.append((
                battle_id, b.external_id, a_id, b_id, b.outcome.value, b.weight, source,
                b.judge, b.question, b.language, when, batch_id, b.excluded_reason,
            ))
            if b.excluded_reason is not None:
                excluded += 1
            if b.categories:
                for name in b.categories:
                    links.append((self._category_id(name), battle_id))
        if sqlite:
            marks = ", ".join("?" * len(_BATTLE_COLUMNS))
            self.conn.exec_driver_sql(
                f"INSERT INTO battles ({', '.join(_BATTLE_COLUMNS)}) VALUES ({marks})", rows
            )
            if links:
                self.conn.exec_driver_sql(
                    "INSERT INTO battle_categories (category_id, battle_id) VALUES (?, ?)", links
                )
        else:
            self._copy("battles", _BATTLE_COLUMNS, rows)
            if links:
                self._copy("battle_categories", ("category_id", "battle_id"), links)
        return ChunkResult(len(keep), excluded, duplicates, repeated)

    def _copy(self, table: str, columns: Sequence[str], rows: list[tuple]) -> None:
        cursor = self.conn.connection.cursor()
        try:
            with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        finally:
            cursor.close()
