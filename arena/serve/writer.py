"""Votes and battle batches stored by group commit, with the file ingester's rules.

A request is acknowledged only after its battles are committed.  Requests do
not each pay for a commit (one fsync on SQLite, one WAL flush on PostgreSQL):
a single writer thread takes every job waiting in a bounded queue and stores
them in ONE transaction, through the same :class:`arena.ingest.writer.BattleWriter`
a file ingest uses -- so the count table, the key table and the style tables
stay current exactly as after ``arena ingest``, and ``arena rebuild`` and
``arena nightly`` work unchanged on served battles.

Each job is all or nothing: a vote whose token was used already, or a batch
holding an id stored with other content, is refused before anything of it is
written, and the other jobs of the group are stored as usual.  On PostgreSQL,
several workers (processes, machines) serialise their group transactions on
one advisory lock, which makes the "already stored?" check exact.
"""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, insert
from sqlalchemy.exc import DBAPIError

from arena.core.errors import ArenaError
from arena.db.advisory import advisory_key
from arena.db.models import IngestBatch
from arena.db.session import take_write_lock
from arena.db.tables import utcnow
from arena.ingest.errors import RowError
from arena.ingest.fields import EXPAND_MAX
from arena.ingest.records import ParsedBattle, parse_json_object
from arena.ingest.shapes import resolve_schema
from arena.ingest.writer import BattleWriter, StoredNames, names_fingerprint

__all__ = [
    "BatchJob",
    "BatchResult",
    "GroupWriter",
    "QueueFull",
    "RecordRejected",
    "TooManyBattles",
    "VoteJob",
    "parse_records",
]


#: PostgreSQL: a group of at most this many battles keeps the per-row foreign-key
#: checks (fewer statements); a larger one (batches) turns them off and checks
#: set-wise, as a file ingest does: per-row checks tripled the database's CPU per
#: battle of 500-record batches (bench_serve.py: 19.5 -> 60 us, 20,228 -> 11,198/s)
FEW_ROWS = 100


class QueueFull(Exception):
    """The writer's queue is full: the client should retry later (HTTP 503)."""


class RecordRejected(ArenaError, ValueError):
    """Record ``index`` of a request is invalid (HTTP 422) or conflicts (HTTP 409)."""

    def __init__(self, index: int, field_name: str, message: str, *, conflict: bool = False):
        super().__init__(message)
        self.index = index
        self.field = field_name
        self.message = message
        self.conflict = conflict

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "field": self.field, "message": self.message}


class TooManyBattles(ArenaError, ValueError):
    """A request whose records expand to more battles than one request may store (HTTP 413)."""

    def __init__(self, index: int, limit: int) -> None:
        super().__init__(
            f"the records up to index {index} expand to more than {limit} battles; "
            f"at most {limit} battles a request (aggregated rows count every battle they stand for)"
        )
        self.index = index
        self.limit = limit


#: Record shape (its set of keys) -> how to read it; votes share one or two shapes.
_SCHEMAS: dict[frozenset[str], Any] = {}


def parse_records(
    objs: Sequence[Any], *, max_expand: int = EXPAND_MAX, max_battles: int | None = None
) -> list[list[ParsedBattle]]:
    """Parse JSON records with the file ingester's rules (one list of battles each).

    Raises :class:`RecordRejected` naming the first bad record's index and field,
    :class:`TooManyBattles` as soon as the records expand to more than
    ``max_battles`` battles (None: no limit).
    """
    schemas = _SCHEMAS
    out: list[list[ParsedBattle]] = []
    total = 0
    for index, obj in enumerate(objs):
        if not isinstance(obj, Mapping):
            raise RecordRejected(index, "json", "not a JSON object")
        keys = frozenset(obj)
        schema = schemas.get(keys)
        try:
            if schema is None or schema.max_expand != max_expand:
                schema = resolve_schema(list(obj), {}, max_expand=max_expand)
                if len(schemas) < 256:  # a handful of record shapes in practice
                    schemas[keys] = schema
            parsed = parse_json_object(schema, obj)
        except RowError as exc:
            raise RecordRejected(index, exc.field, str(exc)) from None
        battles = parsed if isinstance(parsed, list) else [parsed]
        total += len(battles)
        if max_battles is not None and total > max_battles:
            raise TooManyBattles(index, max_battles)
        out.append(battles)
    return out


@dataclass
class VoteJob:
    """One vote: the battle its token names, under the token's id."""

    battle: ParsedBattle
    source: str
    future: Future[Any] = field(default_factory=Future)


@dataclass
class BatchJob:
    """One ``POST /v1/battles`` request: all of its battles, or none."""

    records: list[list[ParsedBattle]]
    source: str
    future: Future[Any] = field(default_factory=Future)


@dataclass(frozen=True)
class BatchResult:
    inserted: int
    duplicates: int


#: what a battle says, as compared with a stored one: model_a, model_b, outcome, weight, source
_Content = tuple[str, str, str, float, str | None]
#: one group's (future, result or error) per job, votes stored, battles stored
_GroupOutcome = tuple[list[tuple[Future[Any], Any]], int, int]


def _content(b: ParsedBattle, source: str | None) -> _Content:
    return (b.model_a, b.model_b, b.outcome, float(b.weight), source)


#: what a stored battle says, by external id (driver SQL: compiling the same
#: select with aliased models through the expression layer, once per group,
#: cost more CPU than the lookup itself)
_STORED_SELECT = (
    "SELECT k.external_id, ma.name, mb.name, b.outcome, b.weight, b.source "
    "FROM battle_keys k JOIN battles b ON b.id = k.battle_id "
    "JOIN models ma ON ma.id = b.model_a_id JOIN models mb ON mb.id = b.model_b_id "
    "WHERE k.external_id "
)


def _stored_contents(conn: Connection, ids: list[str]) -> dict[str, _Content]:
    """External id -> what the stored battle says, for the ids that are stored."""
    out: dict[str, _Content] = {}
    postgres = conn.dialect.name == "postgresql"
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        if postgres:
            rows = conn.exec_driver_sql(_STORED_SELECT + "= ANY(%(ids)s)", {"ids": part})
        else:
            marks = ",".join("?" * len(part))
            rows = conn.exec_driver_sql(_STORED_SELECT + f"IN ({marks})", tuple(part))
        for ext, ma, mb, outcome, weight, source in rows:
            out[ext] = (ma, mb, outcome, float(weight), source)
    return out


class GroupWriter:
    """A writer thread storing queued jobs, one transaction per group.

    Parameters
    ----------
    engine
        The arena database.
    max_queue
        Jobs that may wait; :meth:`submit` raises :class:`QueueFull` beyond it.
    max_group
        Battles one transaction takes at most (a large batch is one group alone).
    on_commit
        Called after each commit with (votes stored, battles stored), for metrics.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        max_queue: int = 10_000,
        max_group: int = 5_000,
        on_commit: Callable[[int, int], None] | None = None,
    ) -> None:
        self.engine = engine
        self.max_group = max_group
        self._queue: queue.Queue[VoteJob | BatchJob | None] = queue.Queue(maxsize=max_queue)
        self._on_commit = on_commit
        self._stop = threading.Event()
        self._lock_key: int | None = None
        #: the writer's name -> id maps, kept between groups while the store's
        #: fingerprint of them holds (dropped after a failed group: its new names
        #: were rolled back)
        self._names: StoredNames | None = None
        self._names_print: tuple[Any, ...] | None = None
        #: set once a group's transaction is about to commit (see _store_group)
        self._committing = False
        self._thread = threading.Thread(target=self._run, name="arena-serve-writer", daemon=True)
        self._thread.start()

    def depth(self) -> int:
        return self._queue.qsize()

    def submit(self, job: VoteJob | BatchJob) -> Future[Any]:
        if self._stop.is_set():
            raise QueueFull("the server is shutting down")
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            raise QueueFull("too many writes waiting; retry shortly") from None
        return job.future

    def close(self, timeout: float = 30.0) -> None:
        """Stop taking jobs, store every queued one, then stop the thread."""
        self._stop.set()
        self._queue.put(None)
        self._thread.join(timeout)

    # -- the writer thread ---------------------------------------------------
    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                if self._queue.empty():
                    return
                self._queue.put(None)  # jobs queued behind the marker still get stored
                continue
            group = [job]
            size = self._size(job)
            while size < self.max_group:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._queue.put(None)
                    break
                group.append(nxt)
                size += self._size(nxt)
            self._store_group(group)

    @staticmethod
    def _size(job: VoteJob | BatchJob) -> int:
        return 1 if isinstance(job, VoteJob) else sum(len(r) for r in job.records)

    def _store_group(self, group: list[VoteJob | BatchJob]) -> None:
        try:
            stored = self._try_group(group)
        except DBAPIError as exc:
            # A connection the database server dropped (a restart, pg_terminate_backend)
            # fails the first statement; SQLAlchemy then invalidates the whole pool, so
            # one more try runs on a fresh connection.  Only when the commit was not
            # reached: a commit that lost its connection may have stored the group.
            if not exc.connection_invalidated or self._committing:
                self._fail(group, exc)
                return
            self._names = None  # the failed try's new names were rolled back
            try:
                stored = self._try_group(group)
            except Exception as again:
                self._fail(group, again)
                return
        except Exception as exc:  # a bug or the database failed: every job of the group fails
            self._fail(group, exc)
            return
        results, votes, battles = stored
        for future, outcome in results:
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
        if self._on_commit is not None:
            self._on_commit(votes, battles)

    def _fail(self, group: list[VoteJob | BatchJob], exc: BaseException) -> None:
        self._names = None  # its new names, if any, were rolled back
        for job in group:
            if not job.future.done():
                job.future.set_exception(exc)

    def _try_group(self, group: list[VoteJob | BatchJob]) -> _GroupOutcome:
        """Store ``group`` in one transaction: (results, votes, battles) once committed."""
        self._committing = False
        with self.engine.connect() as conn:
            with conn.begin():
                take_write_lock(conn, "arena serve")
                postgres = conn.dialect.name == "postgresql"
                if postgres:
                    # The battle-id lock of every ingest (hold_battle_ids): workers and
                    # file ingests queue on it, so the "already stored?" pre-check is
                    # exact and the writer below need not take it again.
                    if self._lock_key is None:  # this arena's (database, schema) never changes
                        self._lock_key = advisory_key(conn, "battle-ids")
                    conn.exec_driver_sql(
                        "SELECT pg_advisory_xact_lock(%(k)s)", {"k": self._lock_key}
                    )
                fingerprint, next_id = names_fingerprint(conn)
                if self._names is None or fingerprint != self._names_print:
                    self._names = StoredNames.read(conn, next_id)
                    self._names_print = fingerprint
                else:
                    self._names.next_id = next_id
                stored = self._write(conn, group, ids_locked=postgres)
                self._committing = True  # leaving the block commits
        return stored

    def _write(
        self, conn: Connection, group: list[VoteJob | BatchJob], *, ids_locked: bool
    ) -> _GroupOutcome:
        ids = [
            b.external_id
            for job in group
            for b in (
                [job.battle] if isinstance(job, VoteJob) else (x for r in job.records for x in r)
            )
            if b.external_id
        ]
        stored = _stored_contents(conn, ids) if ids else {}
        seen: dict[str, _Content] = {}
        by_source: dict[str, list[ParsedBattle]] = {}
        results: list[tuple[Future[Any], Any]] = []
        votes = 0
        for job in group:
            if isinstance(job, VoteJob):
                ext = job.battle.external_id
                assert ext is not None, "a vote's record carries its token's id"
                if ext in stored or ext in seen:
                    results.append((job.future, "used"))
                    continue
                seen[ext] = _content(job.battle, job.source)
                by_source.setdefault(job.source, []).append(job.battle)
                results.append((job.future, "stored"))
                votes += 1
                continue
            fresh: list[ParsedBattle] = []
            duplicates = 0
            mine: dict[str, _Content] = {}
            failure: RecordRejected | None = None
            for index, record in enumerate(job.records):
                for b in record:
                    if not b.external_id:
                        fresh.append(b)
                        continue
                    content = _content(b, job.source)
                    have = stored.get(b.external_id) or seen.get(b.external_id)
                    if have is None:
                        have = mine.get(b.external_id)
                        if have is None:
                            mine[b.external_id] = content
                            fresh.append(b)
                            continue
                    if have == content:
                        duplicates += 1
                        continue
                    failure = RecordRejected(
                        index,
                        "id",
                        f"id {b.external_id!r} is already stored with other content",
                        conflict=True,
                    )
                    break
                if failure is not None:
                    break
            if failure is not None:
                results.append((job.future, failure))
                continue
            seen.update(mine)
            by_source.setdefault(job.source, []).extend(fresh)
            results.append((job.future, BatchResult(len(fresh), duplicates)))
        total, first = 0, True
        for source, battles in by_source.items():
            if battles:
                if not first:  # a second source in this group: its ids follow the first's
                    assert self._names is not None
                    self._names.next_id = names_fingerprint(conn)[1]
                total += self._store(conn, source, battles, ids_locked=ids_locked)
                first = False
        return results, votes, total

    def _store(
        self, conn: Connection, source: str, battles: list[ParsedBattle], *, ids_locked: bool
    ) -> int:
        # The pre-check (_write) made every battle of the group fresh, so the batch
        # row is written once with its final counts (one statement, built once),
        # and the writer's result is checked against them before the commit.
        now = utcnow()
        excluded = sum(b.excluded_reason is not None for b in battles)
        batch_id = conn.execute(
            _BATCH_INSERT,
            {
                "file_name": "arena serve",
                "sha256": secrets.token_hex(32),
                "format": "serve",
                "source": source,
                "rows_read": len(battles),
                "inserted": len(battles),
                "excluded": excluded,
                "started_at": now,
                "finished_at": now,
            },
        ).scalar_one()
        writer = BattleWriter(
            conn,
            batch_id=batch_id,
            source=source,
            few_rows=len(battles) <= FEW_ROWS,
            names=self._names,
            ids_locked=ids_locked,
            keys_new=True,  # the pre-check (_write), under the battle-id lock
        )
        writer.bulk = False
        result = writer.write(battles)
        writer.finish()
        if (result.inserted, result.excluded) != (len(battles), excluded):
            # the pre-check makes this impossible; raising rolls the group back
            raise RuntimeError(
                f"arena serve: stored {result.inserted} of {len(battles)} battles "
                f"({result.duplicates + len(result.repeated)} already stored although the "
                "pre-check found none; a bug; nothing committed)"
            )
        return result.inserted


#: the batch row of one group's battles of one source (see GroupWriter._store)
_BATCH_INSERT = insert(IngestBatch).returning(IngestBatch.id)
