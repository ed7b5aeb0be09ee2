"""What moved between two snapshots of one board: ratings, intervals, rank sets."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from arena.boards.components import same_set
from arena.boards.resolve import resolve_board
from arena.boards.snapshots import BoardRow, SnapshotError, SnapshotInfo, options_differ

__all__ = ["STATUSES", "BoardDiff", "DiffRow", "diff", "rank_move", "rank_set"]


#: ``DiffRow.status`` values, in words a reader needs no legend for.
STATUSES = ("new", "gone", "up", "down", "moved", "unchanged", "now ranked", "not ranked")


@dataclass(frozen=True)
class DiffRow:
    """One model between two snapshots.

    The rank is the board's simultaneous rank set (``rank_low``..``rank_high``),
    the one the leaderboard shows; ``rank_ub``/``old_rank_ub`` keep LMArena's
    interval-overlap best rank as a named extra. ``status`` is one of
    :data:`STATUSES`: ``new``/``gone`` (absent from the old/new snapshot),
    ``up``/``down`` (both ends of the rank set moved the same way, or stayed
    with the other end moving), ``moved`` (the set or the tier changed
    otherwise), ``unchanged``, ``now ranked`` (unranked before) or
    ``not ranked`` (unranked on the new board). ``note`` says why a rank is
    blank (``None`` where both are shown). ``None`` where the model is absent
    from a snapshot (or unranked there).
    """

    model: str
    status: str
    rank_low: int | None
    rank_high: int | None
    old_rank_low: int | None
    old_rank_high: int | None
    tier: int | None
    old_tier: int | None
    rating: float | None
    d_rating: float | None
    ci_low: float | None
    ci_high: float | None
    old_ci_low: float | None
    old_ci_high: float | None
    note: str | None
    #: LMArena's interval-overlap best rank (an extra, never the rank shown)
    rank_ub: int | None
    old_rank_ub: int | None
    #: the model's column in the snapshot's samples (model order, not rating order; never
    #: a rank: see rank_low)
    position: int | None = None
    old_position: int | None = None


def rank_set(row: BoardRow | None) -> tuple[int | None, int | None]:
    """A row's rank as the leaderboard shows it; ``(None, None)`` if absent or unranked.

    The simultaneous rank set; a snapshot written before the sets existed
    (migration 0013) has only the overlap rank, which its leaderboard shows.
    """
    if row is None or not row.ranked:
        return None, None
    if row.rank_low is None:
        if row.rank_ub is None:
            return None, None
        return row.rank_ub, row.rank_lb if row.rank_lb is not None else row.rank_ub
    return row.rank_low, row.rank_high


def _status(new: BoardRow | None, old: BoardRow | None) -> str:
    if old is None:
        return "new"
    if new is None:
        return "gone"
    (lo, hi), (olo, ohi) = rank_set(new), rank_set(old)
    if lo is None or hi is None:
        return "not ranked"
    if olo is None or ohi is None:
        return "now ranked"
    move = rank_move((lo, hi), (olo, ohi))
    return "moved" if move == "unchanged" and new.tier != old.tier else move


def rank_move(now: tuple[int, int], before: tuple[int, int]) -> str:
    """How a rank set moved: ``up``, ``down``, ``moved`` (wider or narrower) or ``unchanged``.

    ``up``: neither end got worse and one got better; ``down`` the converse.
    Every rank change arena shows (``arena diff``, the site's marks) is this one.
    """
    (lo, hi), (olo, ohi) = now, before
    if (lo, hi) == (olo, ohi):
        return "unchanged"
    if lo <= olo and hi <= ohi:
        return "up"
    if lo >= olo and hi >= ohi:
        return "down"
    return "moved"


def _note(new: BoardRow | None, old: BoardRow | None, old_id: int, new_id: int) -> str | None:
    """Why a rank cell of the row is blank, in words; ``None`` if neither is."""
    if old is None:
        return f"not on snapshot {old_id}"
    if new is None:
        return f"not on snapshot {new_id}"
    for row, sid in ((new, new_id), (old, old_id)):
        if rank_set(row)[0] is None:
            why = row.unranked_reason or "not ranked"
            return f"snapshot {sid}: {why}"
    return None


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

    @property
    def compared(self) -> str:
        """One line naming both snapshots: id, board and when each was built."""

        def one(s: SnapshotInfo) -> str:
            return f"snapshot {s.id} of board {s.board} ({s.created_at:%Y-%m-%d %H:%M} UTC)"

        return f"{one(self.old)} against {one(self.new)}; rank = the simultaneous rank set"


def _minus(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None else x - y


def _row(r: BoardRow | None, p: BoardRow | None, old_id: int, new_id: int) -> DiffRow:
    lo, hi = rank_set(r)
    olo, ohi = rank_set(p)
    return DiffRow(
        model=(r or p).model,  # type: ignore[union-attr]
        status=_status(r, p),
        rank_low=lo,
        rank_high=hi,
        old_rank_low=olo,
        old_rank_high=ohi,
        tier=None if r is None else r.tier,
        old_tier=None if p is None else p.tier,
        rating=None if r is None else r.rating,
        d_rating=None if r is None or p is None else _minus(r.rating, p.rating),
        ci_low=None if r is None else r.ci_low,
        ci_high=None if r is None else r.ci_high,
        old_ci_low=None if p is None else p.ci_low,
        old_ci_high=None if p is None else p.ci_high,
        note=_note(r, p, old_id, new_id),
        rank_ub=None if r is None else r.rank_ub,
        old_rank_ub=None if p is None else p.rank_ub,
        position=None if r is None else r.position,
        old_position=None if p is None else p.position,
    )


def diff(conn: Connection, old: int, new: int) -> BoardDiff:
    """Rating, interval, rank set and tier changes between two snapshots of one board.

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
    rows = [_row(r, before.get(r.model), old, new) for r in b.rows]
    rows.extend(_row(None, p, old, new) for name, p in before.items() if name not in after)
    differ = tuple(options_differ(a.snapshot.options, b.snapshot.options))
    return BoardDiff(old=a.snapshot, new=b.snapshot, rows=tuple(rows), options_differ=differ)
