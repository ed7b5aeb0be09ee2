"""The store side of :mod:`arena.plan.weights`: a snapshot's ratings, samples and pair counts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sqlalchemy import Connection

from arena.boards.snapshots import SnapshotInfo, load_board, load_pairs, load_samples
from arena.core.defaults import DEFAULT_LEVEL

__all__ = ["PlanInputs", "plan_inputs"]


@dataclass(frozen=True)
class PlanInputs:
    snapshot: SnapshotInfo
    names: tuple[str, ...]  # in sample-column (position) order
    rating: np.ndarray
    samples: np.ndarray
    pair_battles: sp.csr_matrix  # battles per unordered pair, symmetric, by position
    ranked: np.ndarray
    level: float

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            from arena.core.words import unknown

            raise KeyError(
                f"{unknown('model', name, self.names)} (board {self.snapshot.board!r})"
            ) from None


def plan_inputs(conn: Connection, snapshot_id: int) -> PlanInputs | None:
    """Everything :mod:`arena.plan.weights` needs from one snapshot (None if it does not exist).

    Raises ``arena.boards.snapshots.SnapshotError`` if the snapshot's samples were pruned.
    """
    board = load_board(conn, snapshot_id)
    if board is None:
        return None
    samples = load_samples(conn, snapshot_id)
    if samples is None:
        from arena.boards.resolve import samples_pruned

        raise samples_pruned(snapshot_id)
    rows = sorted(board.rows, key=lambda r: r.position)
    names = tuple(r.model for r in rows)
    pos = {n: k for k, n in enumerate(names)}
    m = len(names)
    records = load_pairs(conn, snapshot_id)
    i = np.array([pos[p.model_a] for p in records], dtype=np.int64)
    j = np.array([pos[p.model_b] for p in records], dtype=np.int64)
    n = np.array([p.a_wins + p.b_wins + p.ties for p in records], dtype=np.float64)
    # sparse: a 10,000-model board has 200k played pairs, not 100M cells
    pairs = sp.csr_matrix((np.r_[n, n], (np.r_[i, j], np.r_[j, i])), shape=(m, m))
    return PlanInputs(
        snapshot=board.snapshot,
        names=names,
        # NaN for a model with no rating on the board's scale (outside the comparable set)
        rating=np.array([np.nan if r.rating is None else r.rating for r in rows], dtype=float),
        samples=np.asarray(samples, dtype=np.float64),
        pair_battles=pairs,
        ranked=np.array([r.ranked for r in rows]),
        level=float(board.snapshot.options.get("level", DEFAULT_LEVEL)),
    )
