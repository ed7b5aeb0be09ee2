"""Provisional boards: a full snapshot's board refitted on the battles stored since.

``arena serve`` keeps one per board current (:mod:`arena.jobs.provisional`);
this module is the only code that writes and reads them.  They live in their
own table (``provisional_snapshots``), so nothing that reads full snapshots
(history, diff, publish, audit, the nightly's kept boards) can take one for a
rebuild, and only the latest of each board is kept.  A provisional board is
shown only while the full snapshot it was built on is its board's latest: the
next full rebuild replaces it.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, delete, insert, select

from arena.boards.keys import BoardKey
from arena.boards.snapshots import Board, SnapshotInfo, board_row
from arena.boards.write import row_values
from arena.core.formats import iso_utc
from arena.core.version import __version__
from arena.db.models import Model, ProvisionalSnapshot

if TYPE_CHECKING:
    from arena.engine.board import BoardRating

__all__ = [
    "KIND",
    "latest_provisional_id",
    "load_provisional",
    "provisional_watermark",
    "write_provisional",
]

#: The ``kind`` of every provisional board (a full rebuild's snapshot is ``full``).
KIND = "provisional"


def write_provisional(
    conn: Connection,
    *,
    board: BoardKey,
    since: SnapshotInfo,
    method: str,
    watermark: int,
    battles_since: int,
    options: dict[str, Any],
    model_ids: np.ndarray,
    n_excluded: int,
    result: BoardRating,
    hidden: set[int],
    diagnostics: dict[str, Any],
) -> int:
    """Store the provisional board of ``board`` in place of the previous one; returns its id.

    ``since`` is the full snapshot it was built on. The caller owns the transaction.
    """
    ratings, table = result.ratings, result.table
    diag = {
        **ratings.diagnostics,
        "warnings": ratings.warnings,
        "n_cells": int(table.n_cells),
        "tiers": result.tier_info,
        **diagnostics,
    }
    rows = row_values(result, model_ids, hidden)
    new_id: int = conn.execute(
        insert(ProvisionalSnapshot)
        .values(
            board=str(board),
            kind=KIND,
            since_snapshot=since.id,
            method=method,
            watermark=watermark,
            battles_since=battles_since,
            options_json=json.dumps(options, sort_keys=True),
            seed=int(options.get("seed", since.seed)),
            code_version=__version__,
            n_battles=float(table.n.sum()),
            n_excluded=n_excluded,
            n_models=int(table.n_models),
            diagnostics_json=json.dumps(diag, sort_keys=True, default=float),
            rows_json=json.dumps(rows),
        )
        .returning(ProvisionalSnapshot.id)
    ).scalar_one()
    # only the latest is kept: a reader sees the old one or the new one, never neither
    conn.execute(
        delete(ProvisionalSnapshot).where(
            ProvisionalSnapshot.board == str(board), ProvisionalSnapshot.id != new_id
        )
    )
    return new_id


def latest_provisional_id(conn: Connection, board: BoardKey) -> int | None:
    """The id of ``board``'s stored provisional board (current or not), or None."""
    return conn.execute(
        select(ProvisionalSnapshot.id)
        .where(ProvisionalSnapshot.board == str(board))
        .order_by(ProvisionalSnapshot.id.desc())
        .limit(1)
    ).scalar()


def provisional_watermark(conn: Connection, since: SnapshotInfo) -> int | None:
    """The watermark of the provisional board built on ``since``, or None if there is none."""
    return conn.execute(
        select(ProvisionalSnapshot.watermark)
        .where(
            ProvisionalSnapshot.board == since.board,
            ProvisionalSnapshot.since_snapshot == since.id,
        )
        .order_by(ProvisionalSnapshot.id.desc())
        .limit(1)
    ).scalar()


def load_provisional(conn: Connection, full: Board) -> Board | None:
    """The provisional board built on ``full`` (a board's latest full snapshot), or None.

    None when no battle came after ``full`` was written (nothing refitted yet) or
    the stored provisional board was built on an older snapshot (a full
    rebuild has replaced it).
    """
    table = ProvisionalSnapshot.__table__
    s = conn.execute(
        select(*table.c)
        .where(
            ProvisionalSnapshot.board == full.snapshot.board,
            ProvisionalSnapshot.since_snapshot == full.snapshot.id,
        )
        .order_by(ProvisionalSnapshot.id.desc())
        .limit(1)
    ).first()
    if s is None:
        return None
    info = SnapshotInfo(
        id=s.id,
        created_at=s.computed_at,
        board=s.board,
        category=full.snapshot.category,
        source=full.snapshot.source,
        run_id=f"provisional:{s.id}",
        options=json.loads(s.options_json),
        seed=s.seed,
        code_version=s.code_version,
        watermark=s.watermark,
        n_battles=s.n_battles,
        n_excluded=s.n_excluded,
        n_models=s.n_models,
        diagnostics=json.loads(s.diagnostics_json),
        kind=s.kind,
        provisional={
            "since_snapshot": s.since_snapshot,
            "battles_since": s.battles_since,
            "computed_at": iso_utc(s.computed_at),
            "method": s.method,
        },
    )
    stored = [SimpleNamespace(**r) for r in json.loads(s.rows_json)]
    models = {
        m.id: m
        for m in conn.execute(
            select(
                Model.id,
                Model.name,
                Model.hidden,
                Model.display_name,
                Model.organisation,
                Model.licence,
                Model.link,
            ).where(Model.id.in_([r.model_id for r in stored]))
        ).all()
    }
    rows = [board_row(r, models[r.model_id], info) for r in stored]
    rows.sort(key=lambda b: (not b.ranked, b.rating is None, -(b.rating or 0.0), b.model))
    return Board(info, tuple(rows))
