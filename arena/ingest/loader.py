"""Ingest one input file into the battle store as one transaction."""

from __future__ import annotations

import errno
import gc
import gzip
import zlib
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sqlalchemy import Connection, Engine, insert, select, update

from arena.core.errors import ArenaError, OptionError, escape
from arena.core.text import text_problem
from arena.db.advisory import advisory_key
from arena.db.models import IngestBatch
from arena.db.session import announce_wait, take_write_lock
from arena.db.tables import utcnow
from arena.ingest.ahead import read_ahead
from arena.ingest.bulk import BulkConflict
from arena.ingest.chunks import Chunk, Location, read_chunks, where
from arena.ingest.fields import EXPAND_MAX
from arena.ingest.prefix import Prefix, content_stream, stored_prefix
from arena.ingest.records import (
    RowError,
)
from arena.ingest.rejects import RejectSink
from arena.ingest.sources import (
    FileChanged,
    InputError,
    InputFile,
    changed_since,
    detect_format,
    open_binary,
    open_input,
)
from arena.ingest.writer import BattleWriter

#: Records per chunk (tests make it small to exercise several chunks).
CHUNK_ROWS = 20_000
#: How PostgreSQL's chunks are read: by a thread, ahead of the writes (tests swap
#: in reading in turn to compare).
READ_AHEAD: Callable[
    [Generator[tuple[Chunk, int], None, None]], Generator[tuple[Chunk, int], None, None]
] = read_ahead
Progress = Callable[[int], None]  # called with the number of input bytes consumed so far


class IngestError(ArenaError):
    """The file was rejected as a whole; nothing of it was written."""


class IngestOptionError(IngestError, OptionError):
    """A bad ingest option, named by its parameter (the CLI names the flag)."""


class IngestChanged(IngestError):
    """The file changed while it was read (still being written?); nothing of it was
    written, and it should be read again once it is complete."""


#: Longest ``--source`` label (the column's width).
SOURCE_MAX = 255


class _AlreadyIngested(Exception):
    """Found inside the write transaction: another ingest stored this file first."""

    def __init__(self, batch_id: int) -> None:
        super().__init__(batch_id)
        self.batch_id = batch_id


def _prior_batch(conn: Connection, sha256: str, *, other_than: int | None = None) -> int | None:
    """The first finished batch that stored a file with this sha256."""
    query = select(IngestBatch.id).where(
        IngestBatch.sha256 == sha256, IngestBatch.finished_at.is_not(None)
    )
    if other_than is not None:
        query = query.where(IngestBatch.id != other_than)
    return conn.execute(query.order_by(IngestBatch.id).limit(1)).scalar()


def _claim_file(conn: Connection, sha256: str, batch_id: int) -> None:
    """Make the same-file check part of the write transaction.

    Two ingests of one file at the same moment both passed a check made before
    their transactions and stored the file twice.  Here the check runs after
    this transaction holds the file: SQLite -- the batch insert took the
    database's write lock, so the other ingest has committed or not started;
    PostgreSQL -- an advisory lock on the file's hash, held to the commit,
    queues the second ingest behind the first, and READ COMMITTED then shows
    it the first one's batch.
    """
    if conn.dialect.name == "postgresql":
        key = advisory_key(conn, "file", sha256)
        with announce_wait(conn, "the same file"):
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%(key)s)", {"key": key})
    prior = _prior_batch(conn, sha256, other_than=batch_id)
    if prior is not None:
        raise _AlreadyIngested(prior)


@dataclass
class IngestReport:
    file: str
    format: str
    sha256: str
    batch_id: int | None = None
    rows_read: int = 0
    inserted: int = 0
    duplicates: int = 0
    excluded: int = 0
    rejected: int = 0
    new_models: int = 0
    already_ingested_as: int | None = None
    shape: str = ""
    #: loaded with the secondary indexes dropped and rebuilt (a large file; see arena.ingest.bulk)
    bulk: bool = False
    #: things worth a look that did not stop the ingest (model names differing only by case)
    warnings: list[str] = field(default_factory=list)
    #: the stored batch this file begins with, and its lines that were not read again
    #: (a cumulative export, a file that grew; see arena.ingest.prefix)
    prefix_of: int | None = None
    lines_skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _load(
    engine: Engine,
    src: InputFile,
    fmt: str,
    source: str | None,
    mapping: Mapping[str, str],
    rejects: RejectSink | None,
    progress: Progress | None,
    size: int,
    *,
    max_expand: int,
    bulk_allowed: bool,
    buffered: list[tuple[Any, ...]],
    prefix: Prefix | None = None,
) -> IngestReport:
    """One attempt at storing the file, in one transaction; rejected records are
    collected in ``buffered`` (file, location, error, record) for the caller."""
    report = IngestReport(file=src.display, format=fmt, sha256=src.sha256)
    with (
        _no_cyclic_gc(),
        engine.connect() as conn,
        _own_integrity_checks(conn),
        conn.begin(),
        open_binary(src) as binary,
        ExitStack() as stack,
    ):
        stream, content = content_stream(binary, src, fmt, prefix)
        take_write_lock(conn, f"ingest {src.display}")
        batch_id = conn.execute(
            insert(IngestBatch)
            .values(
                file_name=src.display[-1024:],
                sha256=src.sha256,
                format=fmt,
                source=source,
            )
            .returning(IngestBatch.id)
        ).scalar_one()
        report.batch_id = batch_id
        _claim_file(conn, src.sha256, batch_id)
        writer = BattleWriter(conn, batch_id=batch_id, source=source)
        names_before = set(writer.models)
        if not bulk_allowed:
            writer.bulk = False
        raw = getattr(binary, "fileobj", binary)  # gzip: report compressed bytes

        def reject(location: Location, error: RowError | str, record: Any) -> None:
            if rejects is None:
                raise IngestError(f"{src.display}: {where(location)}: {error}")
            buffered.append((src.display, where(location), error, record))
            report.rejected += 1

        skip = prefix.lines if prefix is not None else 0

        def positioned() -> Generator[tuple[Chunk, int], None, None]:
            # each chunk with how far into the file it reached, taken as it is read
            # (the reading runs ahead of the writes)
            chunks = read_chunks(
                src, fmt, stream, mapping, max_expand, rows=CHUNK_ROWS, skip_lines=skip
            )
            for chunk in chunks:
                yield chunk, (size if raw.closed else raw.tell())

        chunks = positioned()
        if conn.dialect.name == "postgresql":
            # read while the server works on a COPY; on SQLite the thread only
            # costs (see arena.ingest.ahead)
            chunks = READ_AHEAD(chunks)
        stack.callback(chunks.close)  # before the file closes, also on an error
        for chunk, done in chunks:
            if writer.bulk is None:
                # rows this file will add, from how far the first chunk got into it
                writer.start_bulk(chunk.rows_read * size / max(done, 1))
            report.rows_read += chunk.rows_read
            for location, error, record in chunk.errors:
                reject(location, error, record)
            result = None
            if chunk.columns is not None:
                result = writer.write_columns(chunk.columns)
            elif chunk.battles:
                result = writer.write(chunk.battles)
            if result is not None:
                for pos, message in result.repeated:
                    reject(chunk.where[pos], RowError("id", message), chunk.records[pos])
                report.inserted += result.inserted
                report.duplicates += result.duplicates
                report.excluded += result.excluded
            if progress is not None:
                progress(done)
        report.new_models = writer.new_models
        report.warnings = writer.case_warnings(names_before)
        report.bulk = bool(writer.bulk)
        writer.finish()
        change = changed_since(src)
        if change is not None:  # still being written: store nothing of a partial read
            raise FileChanged(f"{src.display}: {change}")
        conn.execute(
            update(IngestBatch)
            .where(IngestBatch.id == batch_id)
            .values(
                rows_read=report.rows_read,
                inserted=report.inserted,
                duplicates=report.duplicates,
                excluded=report.excluded,
                rejected=report.rejected,
                finished_at=utcnow(),
                content_bytes=src.size if content is None else content.count,
                content_sha256=src.sha256 if content is None else content.digest.hexdigest(),
            )
        )
    return report


def _changed(exc: FileChanged) -> str:
    return (
        f"{exc}; nothing of it was stored (is it still being written? copy files in "
        "under a hidden name, .NAME, and rename them when complete)"
    )


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """No cyclic garbage collection while a file is read.

    Parsing makes millions of small dicts, lists and tuples, none in a cycle;
    each collection walked all that were alive (a JSON-lines block of 20,000
    records holds about 200,000 objects), which cost ~40 % of the JSON parse.
    Reference counting still frees everything; collection resumes afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def _own_integrity_checks(conn: Connection) -> Iterator[None]:
    """SQLite: no per-row foreign-key checks while an ingest writes.

    They cost ~2 us a row (a third of the insert) and can only fail if the
    writer itself were wrong -- it takes every model id from the models table
    in the same transaction; :meth:`BattleWriter.check_references` verifies
    the new rows set-wise before the commit instead.  The pragma cannot change
    inside a transaction, so it is set on the connection around it.
    """
    sqlite = conn.dialect.name == "sqlite"
    if sqlite:
        conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
        conn.commit()
    try:
        yield
    finally:
        if sqlite:
            conn.exec_driver_sql("PRAGMA foreign_keys=ON")
            conn.commit()


def ingest_file(
    engine: Engine,
    path: str,
    *,
    fmt: str = "auto",
    source: str | None = None,
    mapping: Mapping[str, str] | None = None,
    rejects: RejectSink | None = None,
    progress: Progress | None = None,
    max_expand: int = EXPAND_MAX,
) -> IngestReport:
    """Validate and store every battle of one file in one transaction.

    Without ``rejects`` the first malformed record rejects the whole file
    (:class:`IngestError`, nothing written). With it, malformed records go to the
    sink with their reason and the rest is stored. Re-ingesting a file already
    ingested (same sha256) inserts nothing; battles whose external id is already
    stored count as duplicates. An aggregated-count row may stand for at most
    ``max_expand`` battles.
    """
    if source is not None:
        problem = text_problem(source, limit=SOURCE_MAX)
        if problem is not None:
            raise IngestOptionError("source", "{name} " + escape(f"{source!r}: {problem}"))
    try:
        src = open_input(path)
        fmt = detect_format(src, fmt)
    except FileChanged as exc:
        raise IngestChanged(_changed(exc)) from None
    except InputError as exc:
        raise IngestError(str(exc)) from None
    report = IngestReport(file=src.display, format=fmt, sha256=src.sha256)
    try:
        with engine.connect() as conn:
            prior = _prior_batch(conn, src.sha256)  # the common case, before any work
        if prior is not None:
            report.already_ingested_as = prior
            return report
        size = src.path.stat().st_size
        prefix = None
        if fmt in ("csv", "jsonl"):
            with engine.connect() as conn:
                prefix = stored_prefix(conn, src, source)
        attempt = partial(
            _load,
            engine,
            src,
            fmt,
            source,
            mapping or {},
            rejects,
            progress,
            size,
            max_expand=max_expand,
            prefix=prefix,
        )
        try:
            buffered: list[tuple[Any, ...]] = []
            report = attempt(bulk_allowed=True, buffered=buffered)
        except BulkConflict:
            # an id stored twice, found when the bulk load built the unique index:
            # redo the file row by row, which tells duplicates from repeats by line
            buffered = []
            report = attempt(bulk_allowed=False, buffered=buffered)
        if prefix is not None:
            report.prefix_of, report.lines_skipped = prefix.batch_id, prefix.lines
            report.warnings.append(
                f"its first {prefix.lines} lines are the content of {prefix.file_name} "
                f"(batch {prefix.batch_id}), stored before: read from line {prefix.lines + 1} on"
            )
        if rejects is not None:
            for entry in buffered:  # only now: a redone attempt must not report twice
                rejects.add(*entry)
    except _AlreadyIngested as exc:  # found inside the transaction: a concurrent ingest
        report.already_ingested_as = exc.batch_id
    except FileChanged as exc:
        raise IngestChanged(_changed(exc)) from None
    except InputError as exc:
        raise IngestError(str(exc)) from None
    except RecursionError:
        raise IngestError(f"{src.display}: nested too deeply (not a battle file)") from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC or exc.filename not in (None, str(src.path)):
            raise  # not a read of this file (a full disk, the rejects file)
        raise IngestError(f"{src.display}: cannot read: {exc.strerror or exc}") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        if not src.compressed:
            raise
        raise IngestError(f"{src.display}: corrupt or truncated gzip data ({exc})") from None
    finally:
        if path == "-":
            src.path.unlink(missing_ok=True)
    return report
