"""Writing one snapshot: the only code that inserts into the snapshot tables.

Called by :mod:`arena.jobs.rebuild` inside its one transaction; the typed reads of
the same tables are in :mod:`arena.boards.snapshots`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, insert

from arena.boards.keys import BoardKey
from arena.core.version import __version__
from arena.db.bulk import write_numbers
from arena.db.models import (
    Snapshot,
    SnapshotPair,
    SnapshotRow,
    SnapshotSamples,
    SnapshotStyleCoefficient,
)

if TYPE_CHECKING:
    from arena.engine.board import BoardRating

__all__ = ["row_values", "write_snapshot"]


def _finite(x: float) -> float | None:
    """NULL for no rating / no bound (NaN outside the comparable set, inf for an open end)."""
    return float(x) if np.isfinite(x) else None


def write_snapshot(
    conn: Connection,
    *,
    board: BoardKey,
    run_id: str,
    options: dict[str, Any],
    seed: int,
    watermark: int,
    model_ids: np.ndarray,
    n_excluded: int,
    result: BoardRating,
    hidden: set[int],
    diagnostics: dict[str, Any],
) -> int:
    """Insert one snapshot (header, rows, pairs, samples, style coefficients); returns its id.

    Per-model arrays of ``result`` are in table index order and ``model_ids``
    maps that index to ``models.id``; ``diagnostics`` are stored beside the
    fit's own. The snapshot's category and source are ``board``'s. The caller
    owns the transaction.
    """
    ratings, table = result.ratings, result.table
    diag = {
        **ratings.diagnostics,
        "warnings": ratings.warnings,
        "n_cells": int(table.n_cells),
        "tiers": result.tier_info,
        **diagnostics,
    }
    snapshot_id = conn.execute(
        insert(Snapshot)
        .values(
            board=str(board),
            category=board.category,
            source=board.source,
            run_id=run_id,
            options_json=json.dumps(options, sort_keys=True),
            seed=seed,
            code_version=__version__,
            watermark=watermark,
            n_battles=float(table.n.sum()),
            n_excluded=n_excluded,
            n_models=int(table.n_models),
            diagnostics_json=json.dumps(diag, sort_keys=True, default=float),
        )
        .returning(Snapshot.id)
    ).scalar_one()
    rows = [dict(snapshot_id=snapshot_id, **r) for r in row_values(result, model_ids, hidden)]
    conn.execute(insert(SnapshotRow), rows)
    p = result.pairs
    # up to M (M - 1) / 2 rows (432,000 at 1,000 models): columns as Python lists and
    # the driver's bulk path; through SQLAlchemy's executemany this was 5 s of a rebuild
    write_numbers(
        conn,
        SnapshotPair.__table__.name,
        ("snapshot_id", "model_a_id", "model_b_id", "a_wins", "b_wins", "ties"),
        zip(
            model_ids[p.lo].tolist(),
            model_ids[p.hi].tolist(),
            p.lo_wins.tolist(),
            p.hi_wins.tolist(),
            p.ties.tolist(),
            strict=True,
        ),
        first=snapshot_id,
        references=[("snapshots", [snapshot_id]), ("models", model_ids.tolist())],
    )
    samples = np.ascontiguousarray(ratings.samples, dtype="<f4")
    conn.execute(
        insert(SnapshotSamples).values(
            snapshot_id=snapshot_id,
            rounds=samples.shape[0],
            n_models=samples.shape[1],
            data=samples.tobytes(),
        )
    )
    from arena.engine.style.rate import StyleRatings

    if isinstance(ratings, StyleRatings) and ratings.features:
        coefficients = ratings.coefficients()
        conn.execute(
            insert(SnapshotStyleCoefficient),
            [dict(snapshot_id=snapshot_id, position=k, **c) for k, c in enumerate(coefficients)],
        )
    return snapshot_id


def row_values(
    result: BoardRating, model_ids: np.ndarray, hidden: set[int]
) -> list[dict[str, Any]]:
    """The ``snapshot_rows`` columns of every model of ``result`` (all but ``snapshot_id``);
    the provisional board (:mod:`arena.boards.provisional`) stores the same values."""
    ratings, rec = result.ratings, result.record
    rows = []
    for i, mid in enumerate(model_ids.tolist()):
        ranked = bool(result.ranked[i])
        flags = result.flags[i] + (("hidden",) if mid in hidden else ())
        rows.append(
            dict(
                model_id=mid,
                position=i,
                rating=_finite(ratings.rating[i]),
                ci_low=_finite(ratings.ci_low[i]),
                ci_high=_finite(ratings.ci_high[i]),
                rank=int(result.rank[i]) if ranked else None,
                rank_ub=int(result.rank_ub[i]) if ranked else None,
                rank_lb=int(result.rank_lb[i]) if ranked and result.rank_lb is not None else None,
                rank_low=_rank(result.rank_low, i, ranked),
                rank_high=_rank(result.rank_high, i, ranked),
                tier=int(result.tier[i]) if ranked else None,
                battles=float(rec[i, 0]),
                wins=float(rec[i, 1]),
                losses=float(rec[i, 2]),
                ties=float(rec[i, 3]),
                flags=",".join(flags)[:255],
                ranked=ranked,
            )
        )
    return rows


def _rank(values: np.ndarray | None, i: int, ranked: bool) -> int | None:
    """A per-model rank as stored: NULL for an unranked model (or none computed)."""
    return int(values[i]) if ranked and values is not None else None
