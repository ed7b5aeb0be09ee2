"""Retention: drop the bulky detail of old snapshots, keep their summary rows.

A snapshot's bootstrap samples (``snapshot_samples``, rounds x models float32)
and its head-to-head table (``snapshot_pairs``, up to M(M-1)/2 rows) are what
grow night after night; only compare, tiering of that snapshot and the page of
the *latest* board read them. History (``rating_history``, the page's chart) and
``arena diff`` read ``snapshots`` + ``snapshot_rows`` only, which are kept, as
are style coefficients and audits (a few rows each).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Connection, delete, func, select, text

from arena.core.errors import ArgumentError
from arena.core.options import checked
from arena.db.models import Base, Snapshot, SnapshotPair, SnapshotSamples

#: Payload of one ``snapshot_pairs`` row: two 4-byte model ids beside the
#: snapshot id and three 8-byte floats (storage overhead not counted).
PAIR_ROW_BYTES = 3 * 4 + 3 * 8
#: SQLite's bound-parameter limit is 999 on old builds: delete in chunks.
_CHUNK = 500


@dataclass(frozen=True)
class PruneResult:
    """What :func:`prune_snapshots` dropped (or would drop, with ``dry_run``).

    ``bytes_freed`` is an estimate from the rows deleted: the sample blobs'
    lengths plus :data:`PAIR_ROW_BYTES` per pair row (page and index overhead
    not counted, and the file only shrinks after VACUUM on SQLite).
    """

    snapshot_ids: tuple[int, ...]
    kept: int
    sample_rows: int
    pair_rows: int
    bytes_freed: int
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "pruned": len(self.snapshot_ids),
            "kept": self.kept,
            "snapshot_ids": list(self.snapshot_ids),
            "sample_rows": self.sample_rows,
            "pair_rows": self.pair_rows,
            "bytes_freed": self.bytes_freed,
            "dry_run": self.dry_run,
        }


def _utc(t: datetime) -> datetime:
    # SQLite hands back naive datetimes; arena stores UTC
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def check_retention(*, keep_days: float | None, keep_last: int | None, prefix: str = "") -> None:
    """Raise :class:`~arena.core.errors.OptionError` (naming ``prefix`` + the parameter)
    unless ``keep_days`` and ``keep_last`` are values their declarations take
    (:mod:`arena.core.options`: days from 0 to :data:`KEEP_DAYS_MAX`, at least
    one snapshot); ``prefix="prune_"`` for the nightly job's names."""
    checked({prefix + "keep_days": keep_days, prefix + "keep_last": keep_last})


def prunable(
    conn: Connection,
    *,
    keep_days: float | None = None,
    keep_last: int | None = None,
    now: datetime | None = None,
) -> tuple[list[int], int]:
    """Ids of snapshots older than ``keep_days`` and not among their board's newest ``keep_last``.

    The latest snapshot of every board is always kept. Returns (ids, snapshots kept).
    """
    if keep_days is None and keep_last is None:
        raise ArgumentError("give keep_days, keep_last or both")
    check_retention(keep_days=keep_days, keep_last=keep_last)
    now = _utc(now or datetime.now(UTC))
    cutoff = None if keep_days is None else now - timedelta(days=keep_days)
    newest = max(1, keep_last or 0)
    by_board: dict[str, list[tuple[int, datetime]]] = defaultdict(list)
    for sid, board, created in conn.execute(
        select(Snapshot.id, Snapshot.board, Snapshot.created_at).order_by(Snapshot.id.desc())
    ):
        by_board[board].append((sid, _utc(created)))
    ids, kept = [], 0
    for snaps in by_board.values():
        for k, (sid, created) in enumerate(snaps):
            if k >= newest and (cutoff is None or created < cutoff):
                ids.append(sid)
            else:
                kept += 1
    return sorted(ids), kept


def prune_snapshots(
    conn: Connection,
    *,
    keep_days: float | None = None,
    keep_last: int | None = None,
    now: datetime | None = None,
    dry_run: bool = False,
) -> PruneResult:
    """Drop the samples and pair tables of old snapshots, keeping their summary rows.

    Parameters
    ----------
    conn : Connection
        Open connection; the caller commits (``engine.begin()``).
    keep_days : float, optional
        Keep the detail of snapshots created within this many days of ``now``.
    keep_last : int, optional
        Keep the detail of each board's newest ``keep_last`` snapshots.
        A snapshot is pruned only if it is outside both; the latest snapshot
        of every board is never pruned.
    now : datetime, optional
        Reference time (default: the current UTC time).
    dry_run : bool
        Count what would be dropped, delete nothing.

    Returns
    -------
    PruneResult
    """
    ids, kept = prunable(conn, keep_days=keep_days, keep_last=keep_last, now=now)
    n_samples = n_pairs = freed = 0
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        s_rows, s_bytes = conn.execute(
            select(func.count(), func.coalesce(func.sum(func.length(SnapshotSamples.data)), 0))
            .select_from(SnapshotSamples)
            .where(SnapshotSamples.snapshot_id.in_(chunk))
        ).one()
        p_rows = conn.execute(
            select(func.count())
            .select_from(SnapshotPair)
            .where(SnapshotPair.snapshot_id.in_(chunk))
        ).scalar_one()
        n_samples += int(s_rows)
        n_pairs += int(p_rows)
        freed += int(s_bytes) + int(p_rows) * PAIR_ROW_BYTES
        if not dry_run:
            conn.execute(delete(SnapshotSamples).where(SnapshotSamples.snapshot_id.in_(chunk)))
            conn.execute(delete(SnapshotPair).where(SnapshotPair.snapshot_id.in_(chunk)))
    # ids include snapshots pruned on an earlier run (their counts add nothing)
    return PruneResult(
        snapshot_ids=tuple(ids),
        kept=kept,
        sample_rows=n_samples,
        pair_rows=n_pairs,
        bytes_freed=freed,
        dry_run=dry_run,
    )


@dataclass(frozen=True)
class TableSize:
    table: str
    rows: int
    bytes: int


@dataclass(frozen=True)
class DbStats:
    """Size of each arena table and of the latest rebuild run's snapshots.

    ``method`` says where the bytes come from: ``pg_total_relation_size``
    (table + indexes + TOAST), ``dbstat`` (SQLite pages of the table and its
    indexes) or ``estimate`` (sum of the stored values' lengths: no page or
    index overhead). ``bytes_per_night`` is the latest run's share of each
    snapshot table (by rows, by blob length for the samples): an estimate.
    """

    method: str
    tables: tuple[TableSize, ...]
    run_id: str | None
    run_snapshots: int
    bytes_per_night: int

    @property
    def total_rows(self) -> int:
        return sum(t.rows for t in self.tables)

    @property
    def total_bytes(self) -> int:
        return sum(t.bytes for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "tables": [t.__dict__ for t in self.tables],
            "total_rows": self.total_rows,
            "total_bytes": self.total_bytes,
            "latest_run": self.run_id,
            "run_snapshots": self.run_snapshots,
            "bytes_per_night": self.bytes_per_night,
        }


def _table_bytes(conn: Connection, names: list[str]) -> tuple[str, dict[str, int]]:
    dialect = conn.dialect.name
    if dialect == "postgresql":
        return "pg_total_relation_size", {
            n: int(
                conn.execute(
                    text("SELECT pg_total_relation_size(CAST(:t AS regclass))"), {"t": n}
                ).scalar_one()
            )
            for n in names
        }
    if dialect == "sqlite":
        try:
            rows = conn.execute(
                text(
                    "SELECT m.tbl_name, SUM(d.pgsize) FROM dbstat d "
                    "JOIN sqlite_master m ON m.name = d.name GROUP BY m.tbl_name"
                )
            ).all()
        except Exception:  # SQLite built without SQLITE_ENABLE_DBSTAT_VTAB
            rows = None
        if rows is not None:
            found = {t: int(b or 0) for t, b in rows}
            return "dbstat", {n: found.get(n, 0) for n in names}
    out = {}
    for n in names:
        cols = Base.metadata.tables[n].columns
        expr = " + ".join(f"COALESCE(LENGTH({c.name}), 0)" for c in cols)
        out[n] = int(conn.execute(text(f"SELECT COALESCE(SUM({expr}), 0) FROM {n}")).scalar_one())
    return "estimate", out


def db_stats(conn: Connection) -> DbStats:
    """Rows and bytes of every arena table, and the bytes of the latest rebuild run."""
    names = [t.name for t in Base.metadata.sorted_tables]
    rows = {
        n: int(conn.execute(select(func.count()).select_from(Base.metadata.tables[n])).scalar_one())
        for n in names
    }
    method, sizes = _table_bytes(conn, names)
    tables = tuple(TableSize(n, rows[n], sizes[n]) for n in names)
    run_id = conn.execute(select(Snapshot.run_id).order_by(Snapshot.id.desc()).limit(1)).scalar()
    if run_id is None:
        return DbStats(method, tables, None, 0, 0)
    run_ids = select(Snapshot.id).where(Snapshot.run_id == run_id).scalar_subquery()
    n_run = len(conn.execute(select(Snapshot.id).where(Snapshot.run_id == run_id)).all())
    per_night = sizes["snapshots"] * n_run / max(rows["snapshots"], 1)
    for n in names:
        table = Base.metadata.tables[n]
        if n == "snapshots" or "snapshot_id" not in table.c or not rows[n]:
            continue
        sid = table.c.snapshot_id
        weight: ColumnElement[int]
        if n == SnapshotSamples.__table__.name:
            weight = func.coalesce(func.sum(func.length(table.c.data)), 0)
        else:
            weight = func.count()
        # an aggregate without GROUP BY: always one row, never NULL (coalesce)
        part = conn.execute(select(weight).select_from(table).where(sid.in_(run_ids))).scalar_one()
        whole = conn.execute(select(weight).select_from(table)).scalar_one()
        if whole:
            per_night += sizes[n] * float(part) / float(whole)
    return DbStats(method, tables, run_id, n_run, int(round(per_night)))


__all__ = [
    "PAIR_ROW_BYTES",
    "DbStats",
    "PruneResult",
    "TableSize",
    "db_stats",
    "prunable",
    "prune_snapshots",
]
