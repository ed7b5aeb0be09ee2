"""What moved between two snapshots of one board: ratings, intervals, rank sets."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from arena.boards.components import same_set
from arena.boards.resolve import resolve_board
from arena.boards.snapshots import SnapshotError, SnapshotInfo, options_differ

__all__ = ["BoardDiff", "DiffRow", "diff"]


@dataclass(frozen=True)
class DiffRow:
    """One model between two snapshots; ``status`` is ``"new"``, ``"gone"`` or ``""``.

    ``None`` where the model is absent from a snapshot (or unranked there).
    """

    model: str
    status: str
    rating: float | None
    d_rating: float | None
    ci_low: float | None
    ci_high: float | None
    old_ci_low: float | None
    old_ci_high: float | None
    rank_ub: int | None
    old_rank_ub: int | None
    tier: int | None
    old_tier: int | None
    #: the model's column in the snapshot's samples (model order, not rating order; never
    #: a rank: see rank_ub)
    position: int | None = None
    old_position: int | None = None


@dataclass(frozen=True)
class BoardDiff:
    """What moved from snapshot ``old`` to snapshot ``new``.

    ``rows`` follow the new board's order, then the models that are gone.
    """

    old: SnapshotInfo
    new: SnapshotInfo
    rows: tuple[DiffRow, ...]
    #: Number-changing options that differ (``"ties: half vs davidson"``); empty if none.
    options_differ: tuple[str, ...] = ()


def _minus(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None else x - y


def diff(conn: Connection, old: int, new: int) -> BoardDiff:
    """Rating, interval, rank (UB) and tier changes between two snapshots of one board.

    Raises
    ------
    SnapshotError
        Either snapshot does not exist, or they are of different boards (overall
        vs a category: no common scale, nothing to diff).
    """
    a, b = (resolve_board(conn, snapshot_id=sid) for sid in (old, new))
    # one board, or a raw board and its style-controlled pair (same battles)
    if a.key not in (b.key, b.key.paired):
        raise SnapshotError(
            f"snapshots {old} and {new} are different boards ({a.snapshot.board} vs "
            f"{b.snapshot.board}): their ratings are not on one scale, so there is nothing to diff"
        )
    before = {r.model: r for r in a.rows}
    after = {r.model for r in b.rows}
    if not same_set(a, b):
        raise SnapshotError(
            f"snapshots {old} and {new} of board {b.snapshot.board} hold different comparable "
            "sets (no model in common: sets are numbered by battles in each rebuild), so there "
            "is nothing to diff"
        )
    rows = []
    for r in b.rows:
        p = before.get(r.model)
        rows.append(
            DiffRow(
                model=r.model,
                status="new" if p is None else "",
                rating=r.rating,
                d_rating=None if p is None else _minus(r.rating, p.rating),
                ci_low=r.ci_low,
                ci_high=r.ci_high,
                old_ci_low=None if p is None else p.ci_low,
                old_ci_high=None if p is None else p.ci_high,
                rank_ub=r.rank_ub,
                old_rank_ub=None if p is None else p.rank_ub,
                tier=r.tier,
                old_tier=None if p is None else p.tier,
                position=r.position,
                old_position=None if p is None else p.position,
            )
        )
    rows.extend(
        DiffRow(
            model=name,
            status="gone",
            rating=None,
            d_rating=None,
            ci_low=None,
            ci_high=None,
            old_ci_low=p.ci_low,
            old_ci_high=p.ci_high,
            rank_ub=None,
            old_rank_ub=p.rank_ub,
            tier=None,
            old_tier=p.tier,
            old_position=p.position,
        )
        for name, p in before.items()
        if name not in after
    )
    differ = tuple(options_differ(a.snapshot.options, b.snapshot.options))
    return BoardDiff(old=a.snapshot, new=b.snapshot, rows=tuple(rows), options_differ=differ)
