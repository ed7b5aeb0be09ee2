"""The store side of :mod:`arena.plan`: a snapshot's ratings, samples and pair counts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection

from arena.snapshots import SnapshotInfo, load_board, load_pairs, load_samples

__all__ = ["PlanInputs", "plan_inputs"]


@dataclass(frozen=True)
class PlanInputs:
    snapshot: SnapshotInfo
    names: tuple[str, ...]  # in sample-column (position) order
    rating: np.ndarray
    samples: np.ndarray
    pair_battles: np.ndarray
    ranked: np.ndarray
    level: float

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            from arena.words import unknown

            raise KeyError(
                f"{unknown('model', name, self.names)} (board {self.snapshot.board!r})"
            ) from None


def plan_inputs(conn: Connection, snapshot_id: int) -> PlanInputs | None:
    """Everything :mod:`arena.plan` needs from one snapshot (None if it does not exist).

    Raises ``arena.compare.SnapshotError`` if the snapshot's samples were pruned.
    """
    board = load_board(conn, snapshot_id)
    if board is None:
        return None
    samples = load_samples(conn, snapshot_id)
    if samples is None:
        from arena.compare import samples_pruned

        raise samples_pruned(snapshot_id)
    rows = sorted(board.rows, key=lambda r: r.position)
    names = tuple(r.model for r in rows)
    pos = {n: k for k, n in enumerate(names)}
    m = len(names)
    pairs = np.zeros((m, m))
    for p in load_pairs(conn, snapshot_id):
        i, j = pos[p.model_a], pos[p.model_b]
        pairs[i, j] = pairs[j, i] = p.a_wins + p.b_wins + p.ties
    return PlanInputs(
        snapshot=board.snapshot,
        names=names,
        # NaN for a model with no rating on the board's scale (outside the comparable set)
        rating=np.array([np.nan if r.rating is None else r.rating for r in rows], dtype=float),
        samples=np.asarray(samples, dtype=np.float64),
        pair_battles=pairs,
        ranked=np.array([r.ranked for r in rows]),
        level=float(board.snapshot.options.get("level", 0.95)),
    )
