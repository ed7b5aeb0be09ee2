"""Reading the boards of comparable sets (``arena rebuild --components separate``).

A rebuild that splits a board writes the main board (set 1) and one board per
other comparable set (``BoardKey.component`` N, text ``KEY|component:N``) in one run. Sets are numbered anew
by each rebuild, so a set's board is looked up through its run, never as the
latest snapshot of its key, and is current only beside the main board written
with it.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from arena.boards.keys import BoardKey
from arena.boards.snapshots import (
    Board,
    BoardRow,
    SnapshotError,
    SnapshotInfo,
    SnapshotOptionError,
    latest_snapshot_id,
    load_board,
)
from arena.core.errors import escape
from arena.db.tables import snapshots

__all__ = [
    "common_set",
    "component_board",
    "component_snapshots",
    "is_current",
    "linked",
    "same_set",
]


def same_set(old: Board, new: Board) -> bool:
    """Whether two snapshots of one board key rank the same comparable set.

    A main board (set 1) always does. Set N >= 2 is numbered anew by each rebuild
    (by battles), so two snapshots of ``KEY|component:N`` hold one set only when
    they share a model: ``arena diff`` refuses the pair otherwise, and the
    published page shows no rank changes against it (its arrows would compare
    other models' ranks).
    """
    if new.key.component == 1:
        return True
    return not {r.model for r in old.rows}.isdisjoint(r.model for r in new.rows)


def component_snapshots(conn: Connection, info: SnapshotInfo) -> dict[int, int]:
    """Comparable set number -> snapshot id of every board of one set, from ``info``'s run.

    The boards are those sharing ``info``'s main board (``--components
    separate``), raw or style-controlled as ``info`` is; 1 is the main board.
    A component board is current only beside the main board of its run, so
    readers look them up through the run, never by the latest of a key.
    """
    key = info.key
    rows = conn.execute(
        select(snapshots.c.board, snapshots.c.id).where(snapshots.c.run_id == info.run_id)
    ).all()
    found = {}
    for text, sid in rows:
        other = BoardKey.parse(text)
        if other.main == key.main and other.style_controlled == key.style_controlled:
            found[other.component] = sid
    return found


def is_current(conn: Connection, info: SnapshotInfo) -> bool:
    """False for a comparable set's board whose main board has been rebuilt since.

    A later rebuild may have merged, renumbered or not split the sets, so a
    set's board is shown only beside the main board written with it.
    """
    key = info.key
    if key.component == 1:
        return True
    latest = latest_snapshot_id(conn, key.with_component(1))
    return latest is not None and component_snapshots(conn, info).get(1) == latest


def component_board(conn: Connection, board: Board, number: int) -> Board:
    """The board of comparable set ``number`` written by ``board``'s rebuild (1: the main one).

    Raises
    ------
    SnapshotError
        That rebuild wrote no such set's board; the message lists those it wrote.
    """
    found = component_snapshots(conn, board.snapshot)
    if number in found:
        if found[number] == board.snapshot.id:
            return board
        other = load_board(conn, found[number])
        if other is None:  # pruned since the board was read
            raise SnapshotError(f"no snapshot {found[number]}")
        return other
    main = str(board.key.main)
    if len(found) <= 1:
        raise SnapshotOptionError(
            "component",
            escape(f"the rebuild of board {main!r} (snapshot {board.snapshot.id}) wrote no board")
            + f" for comparable set {number} ({{name}} {number}): it ranked one set "
            "({components} largest, or every model is connected); a rebuild with "
            "{components} separate writes one board per set",
            also=("components",),
        )
    raise SnapshotError(
        f"no comparable set {number} in the rebuild of board {main!r} (snapshot "
        f"{board.snapshot.id}); it wrote sets {', '.join(map(str, sorted(found)))} "
        "(1 is the main board)"
    )


def linked(ra: BoardRow, rb: BoardRow) -> bool:
    """False when exactly one of two rows of a board is outside its group of models."""
    return ("disconnected" in ra.flags) == ("disconnected" in rb.flags)


def common_set(conn: Connection, board: Board, *names: str) -> tuple[Board, bool]:
    """The board of the comparable set holding both models, and whether battles link them.

    Only when some model has no rating on ``board`` and its rebuild wrote one
    board per comparable set; otherwise ``board`` itself (and True: unknown).
    """
    rows = {r.model: r for r in board.rows if r.model in names}
    if all(r.rating is not None for r in rows.values()):
        return board, True
    sets = component_snapshots(conn, board.snapshot)
    if len(sets) <= 1:
        return board, True
    home: dict[str, tuple[int, Board]] = {}
    for number, sid in sorted(sets.items()):
        other = board if sid == board.snapshot.id else load_board(conn, sid)
        if other is None:  # pruned since the board was read
            raise SnapshotError(f"no snapshot {sid}")
        for r in other.rows:
            if r.model in names and r.rating is not None:
                home[r.model] = (number, other)
    if len(home) < len(names):  # a model in no set (never lost, say): nothing more to know
        return board, True
    (na, ba), (nb, bb) = home[names[0]], home[names[1]]
    if na == nb:
        return ba, True
    group = [(b.snapshot.diagnostics.get("component") or {}).get("group") for b in (ba, bb)]
    if 1 in (na, nb):  # one in the main set: the other's flag on the main board says
        return board, linked(rows[names[0]], rows[names[1]])
    return board, group[0] is not None and group[0] == group[1]
