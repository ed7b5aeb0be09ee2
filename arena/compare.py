"""Reading boards for people: which snapshot, what moved between two, A against B.

Everything here reads snapshots only (never battles), so a leaderboard, a diff
or a head-to-head verdict is the same whether it is asked for by ``arena
leaderboard|diff|compare``, by the published site or from Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection

from arena.engine.compare import compare_pair
from arena.formats import count
from arena.snapshots import (
    Board,
    SnapshotInfo,
    board_key,
    latest_snapshot_id,
    load_board,
    load_pairs,
    load_samples,
)

__all__ = [
    "BoardDiff",
    "DiffRow",
    "HeadToHead",
    "SnapshotError",
    "compare",
    "diff",
    "resolve_board",
    "resolve_snapshot_id",
]


class SnapshotError(LookupError):
    """No such snapshot, no snapshot of a board yet, or a model not on the board."""


def resolve_snapshot_id(
    conn: Connection,
    *,
    snapshot_id: int | None = None,
    category: str | None = None,
    style: bool = False,
) -> int:
    """``snapshot_id`` itself, else the id of the latest snapshot of the board of
    ``category`` (or overall), style-controlled with ``style``.

    Raises
    ------
    SnapshotError
        The board has no snapshot yet (an explicit id is not checked here).
    """
    if snapshot_id is not None:
        return snapshot_id
    key = board_key(category=category, style=style)
    latest = latest_snapshot_id(conn, key)
    if latest is None:
        hint = " (style-controlled boards need battles with style metadata)" if style else ""
        raise SnapshotError(f"no snapshot for board {key!r} yet: run `arena rebuild`{hint}")
    return latest


def resolve_board(
    conn: Connection,
    *,
    snapshot_id: int | None = None,
    category: str | None = None,
    style: bool = False,
) -> Board:
    """The board of ``snapshot_id``, else the latest snapshot of ``category`` (or overall).

    With ``style``, the style-controlled board: the latest one of the
    category, or the one paired with ``snapshot_id`` when that is a raw board.

    Raises
    ------
    SnapshotError
        The snapshot does not exist, or the board has none yet.
    """
    snapshot_id = resolve_snapshot_id(conn, snapshot_id=snapshot_id, category=category, style=style)
    board = load_board(conn, snapshot_id)
    if board is None:
        raise SnapshotError(f"no snapshot {snapshot_id}")
    if style and not board.style_controlled:
        if board.paired_snapshot is None:
            raise SnapshotError(
                f"snapshot {snapshot_id} ({board.snapshot.board}) has no style-controlled board "
                "from the same rebuild (its battles carry no style metadata, or the rebuild "
                "ran with --style-control off)"
            )
        board = load_board(conn, board.paired_snapshot)
    return board


@dataclass(frozen=True)
class DiffRow:
    """One model between two snapshots; ``status`` is ``"new"``, ``"gone"`` or ``""``.

    ``None`` where the model is absent from a snapshot (or unranked there).
    """

    model: str
    status: str
    rating: float | None
    d_rating: float | None
    rank_ub: int | None
    old_rank_ub: int | None
    tier: int | None
    old_tier: int | None
    rank: int | None = None
    old_rank: int | None = None


@dataclass(frozen=True)
class BoardDiff:
    """What moved from snapshot ``old`` to snapshot ``new``.

    ``rows`` follow the new board's order, then the models that are gone.
    """

    old: SnapshotInfo
    new: SnapshotInfo
    rows: tuple[DiffRow, ...]


def diff(conn: Connection, old: int, new: int) -> BoardDiff:
    """Rating, rank (UB) and tier changes between two snapshots.

    Raises
    ------
    SnapshotError
        Either snapshot does not exist.
    """
    a, b = (resolve_board(conn, snapshot_id=sid) for sid in (old, new))
    before = {r.model: r for r in a.rows}
    after = {r.model for r in b.rows}
    rows = []
    for r in b.rows:
        p = before.get(r.model)
        rows.append(
            DiffRow(
                model=r.model,
                status="new" if p is None else "",
                rating=r.rating,
                d_rating=None if p is None else r.rating - p.rating,
                rank_ub=r.rank_ub,
                old_rank_ub=None if p is None else p.rank_ub,
                tier=r.tier,
                old_tier=None if p is None else p.tier,
                rank=r.rank,
                old_rank=None if p is None else p.rank,
            )
        )
    rows.extend(
        DiffRow(
            model=name,
            status="gone",
            rating=None,
            d_rating=None,
            rank_ub=None,
            old_rank_ub=p.rank_ub,
            tier=None,
            old_tier=p.tier,
            old_rank=p.rank,
        )
        for name, p in before.items()
        if name not in after
    )
    return BoardDiff(old=a.snapshot, new=b.snapshot, rows=tuple(rows))


@dataclass(frozen=True)
class HeadToHead:
    """Is model A better than model B on one snapshot?

    ``difference`` is rating(A) - rating(B) with its paired bootstrap interval
    ``ci_low``..``ci_high`` at ``level``; ``p_a_better`` the share of bootstrap
    rounds in which A is ahead; ``win_probability_a`` the Bradley-Terry
    prediction; ``a_wins``/``b_wins``/``ties`` the direct record (0 if they
    never met). The verdict follows the interval, not the point difference.
    """

    snapshot: int
    model_a: str
    model_b: str
    rating_a: float
    rating_b: float
    difference: float
    ci_low: float
    ci_high: float
    level: float
    p_a_better: float
    win_probability_a: float
    significant: bool
    verdict: str
    a_wins: int | float
    b_wins: int | float
    ties: int | float

    @property
    def met(self) -> bool:
        """Whether the two played each other directly."""
        return self.a_wins + self.b_wins + self.ties > 0

    def document(self) -> dict:
        """The JSON document of ``arena compare --format json``."""
        doc = {
            k: getattr(self, k)
            for k in self.__dataclass_fields__
            if k not in ("a_wins", "b_wins", "ties")
        }
        doc["record"] = {"a_wins": self.a_wins, "b_wins": self.b_wins, "ties": self.ties}
        return doc


def compare(
    conn: Connection,
    model_a: str,
    model_b: str,
    *,
    snapshot_id: int | None = None,
    category: str | None = None,
    style: bool = False,
) -> HeadToHead:
    """Head-to-head verdict between two models of one snapshot (see :class:`HeadToHead`).

    Parameters
    ----------
    conn : sqlalchemy.Connection
    model_a, model_b : str
        Model names; the verdict is about A against B.
    snapshot_id : int, optional
        Default: the latest snapshot of ``category`` (or of the overall board).
    category : str, optional

    Raises
    ------
    SnapshotError
        No such snapshot, or a model that is not on it.
    ValueError
        ``model_a == model_b``.
    """
    if model_a == model_b:
        raise ValueError("compare two different models")
    board = resolve_board(conn, snapshot_id=snapshot_id, category=category, style=style)
    sid = board.snapshot.id
    rows = {r.model: r for r in board.rows}
    for name in (model_a, model_b):
        if name not in rows:
            raise SnapshotError(f"model {name!r} is not in snapshot {sid}")
    samples = load_samples(conn, sid)
    pairs = load_pairs(conn, sid)
    ra, rb = rows[model_a], rows[model_b]
    rating = np.zeros(samples.shape[1])
    rating[ra.position], rating[rb.position] = ra.rating, rb.rating
    level = float(board.snapshot.options.get("level", 0.95))
    c = compare_pair(
        samples.astype(np.float64), ra.position, rb.position, rating=rating, level=level
    )
    wins_a = wins_b = ties = 0.0
    for p in pairs:
        if {p.model_a, p.model_b} == {model_a, model_b}:
            flip = p.model_a != model_a
            wins_a, wins_b = (p.b_wins, p.a_wins) if flip else (p.a_wins, p.b_wins)
            ties = p.ties
    if c.low > 0:
        verdict = f"{model_a} is better"
    elif c.high < 0:
        verdict = f"{model_b} is better"
    else:
        verdict = "not distinguishable at this level"
    return HeadToHead(
        snapshot=sid,
        model_a=model_a,
        model_b=model_b,
        rating_a=ra.rating,
        rating_b=rb.rating,
        difference=c.diff,
        ci_low=c.low,
        ci_high=c.high,
        level=level,
        p_a_better=c.p_better,
        win_probability_a=c.win_prob,
        significant=bool(c.significant),
        verdict=verdict,
        a_wins=count(wins_a),
        b_wins=count(wins_b),
        ties=count(ties),
    )
