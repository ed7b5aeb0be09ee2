"""Which board a reader means: a snapshot id, or a board's latest by category, source,
style control and comparable set, with one-line errors naming what is unknown.

Import-light on purpose (no inference, no scipy): every command that shows a
board starts here, and ``arena leaderboard`` should answer at once.
"""

from __future__ import annotations

from sqlalchemy import Connection

from arena.boards.components import component_board
from arena.boards.keys import BoardKey
from arena.boards.snapshots import Board, SnapshotError, latest_snapshot_id, load_board
from arena.core.words import unknown

__all__ = [
    "check_category",
    "check_models",
    "check_source",
    "resolve_board",
    "resolve_snapshot_id",
    "samples_pruned",
]


def samples_pruned(snapshot_id: int) -> SnapshotError:
    """The error for a snapshot whose samples and pairs ``arena snapshots prune`` dropped."""
    return SnapshotError(
        f"snapshot {snapshot_id}'s bootstrap samples were pruned (arena snapshots prune): "
        "its summary rows remain for history and diff; use a newer snapshot"
    )


def check_category(conn: Connection, category: str) -> str:
    """The key of ``category`` (a key or a label, any case); :class:`SnapshotError`
    with "did you mean" and the known categories if it names none."""
    from arena.store.categories import CategoryError, resolve_category

    try:
        return resolve_category(conn, category)
    except CategoryError as exc:
        raise SnapshotError(str(exc)) from None


def check_source(conn: Connection, source: str) -> None:
    """Raise :class:`SnapshotError` listing the sources battles were ingested with if ``source`` is not one."""
    from sqlalchemy import select

    from arena.db.tables import battles

    column = battles.c.source
    found = conn.execute(select(column).where(column == source).limit(1)).first()
    if found is None:
        known = conn.execute(select(column).where(column.is_not(None)).distinct())
        names = sorted(s for s in known.scalars() if s is not None)
        raise SnapshotError(unknown("source", source, names, list_known=True))


def check_models(board: Board, *names: str) -> None:
    """Raise :class:`SnapshotError` with "did you mean" suggestions for a model not on ``board``."""
    known = [r.model for r in board.rows]
    for name in names:
        if name not in known:
            raise SnapshotError(f"{unknown('model', name, known)} (snapshot {board.snapshot.id})")


def resolve_snapshot_id(
    conn: Connection,
    *,
    snapshot_id: int | None = None,
    category: str | None = None,
    style_control: bool = False,
    source: str | None = None,
) -> int:
    """``snapshot_id`` itself, else the id of the latest snapshot of the board of
    ``category`` (or overall), style-controlled with ``style_control``.

    Raises
    ------
    SnapshotError
        The board has no snapshot yet (an explicit id is not checked here).
    """
    if snapshot_id is not None:
        return snapshot_id
    if category is not None:
        category = check_category(conn, category)
    key = BoardKey(category=category, source=source, style_controlled=style_control)
    latest = latest_snapshot_id(conn, key)
    if latest is None:
        raw = latest_snapshot_id(conn, key.raw)
        if style_control and raw is not None:
            # a rebuild writes a style-controlled board only from style metadata
            raise SnapshotError(
                f"no style-controlled board {str(key)!r}: the battles of its raw board carry "
                "no style metadata (conv_metadata at ingest), so a rebuild cannot write one; "
                "ask without style control for the raw board"
            )
        command = "arena rebuild" + "".join(
            f" --{name} {value}"
            for name, value in (("category", category), ("source", source))
            if value is not None
        )
        raise SnapshotError(f"no snapshot for board {str(key)!r} yet: run `{command}`")
    return latest


def resolve_board(
    conn: Connection,
    *,
    snapshot_id: int | None = None,
    category: str | None = None,
    style_control: bool = False,
    component: int | None = None,
    source: str | None = None,
) -> Board:
    """The board of ``snapshot_id``, else the latest snapshot of ``category`` and/or
    ``source`` (``arena rebuild --source``), or overall.

    With ``style_control``, the style-controlled board: the latest one of the
    category, or the one paired with ``snapshot_id`` when that is a raw board.
    With ``component`` N, the board of comparable set N written by the same
    rebuild (``--components separate``; 1 is the main board).

    Raises
    ------
    SnapshotError
        The snapshot does not exist, the board has none yet, or its rebuild
        wrote no board for that comparable set.
    """
    if component is not None:
        board = resolve_board(conn, snapshot_id=snapshot_id, category=category, source=source)
        board = component_board(conn, board, component)
        return resolve_board(conn, snapshot_id=board.snapshot.id, style_control=style_control)
    if snapshot_id is None and category is not None:
        category = check_category(conn, category)
    if snapshot_id is None and source is not None:
        check_source(conn, source)
    snapshot_id = resolve_snapshot_id(
        conn, snapshot_id=snapshot_id, category=category, style_control=style_control, source=source
    )
    found = load_board(conn, snapshot_id)
    if found is None:
        raise SnapshotError(f"no snapshot {snapshot_id}")
    board = found
    if style_control and not board.style_controlled:
        if board.paired_snapshot is None:
            raise SnapshotError(
                f"snapshot {snapshot_id} ({board.snapshot.board}) has no style-controlled board "
                "from the same rebuild (its battles carry no style metadata, or the rebuild "
                "ran without style control)"
            )
        found = load_board(conn, board.paired_snapshot)
        if found is None:  # pruned since the raw board was read
            raise SnapshotError(f"no snapshot {board.paired_snapshot}")
        board = found
    return board
