"""A stored board's one inference, recomputed from its snapshot.

The rebuild runs :func:`arena.engine.inference.rank_sets.board_inference` on the ranked
models' samples exactly as the snapshot stores them (float32), so reading the
snapshot back gives the same separated pairs bit for bit: ``arena compare``,
the page and anyone else who asks "does this board separate A from B?" get the
board's own answer (see ``docs/tiers.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection

from arena.boards.snapshots import Board, SnapshotError, load_board, load_samples
from arena.core.defaults import DEFAULT_LEVEL
from arena.engine.inference.rank_sets import BoardInference, board_inference, marginal_rank_set

__all__ = ["StoredInference", "board_separated_pairs", "stored_inference"]


@dataclass(frozen=True)
class StoredInference:
    """The inference of one snapshot over its ranked models.

    ``index`` maps a ranked model's name to its index in ``inference``'s arrays;
    ``samples`` and ``rating`` are the ranked models' columns (float64).
    """

    board: Board
    inference: BoardInference
    index: dict[str, int]
    rating: np.ndarray
    samples: np.ndarray

    def verdict(self, model_a: str, model_b: str) -> int:
        """``1``: the board shows A better than B; ``-1``: B better; ``0``: not separated."""
        return self.inference.separated(self.index[model_a], self.index[model_b])

    def rank_set(self, model: str) -> tuple[int, int]:
        """The model's simultaneous rank set (the board's)."""
        i = self.index[model]
        return int(self.inference.rank_low[i]), int(self.inference.rank_high[i])

    def rank_alone(self, model: str) -> tuple[int, int]:
        """The model's marginal rank set: its ranks when it alone is asked about."""
        return marginal_rank_set(
            self.rating,
            self.samples,
            self.index[model],
            level=self.inference.level,
            margin=self.inference.margin,
        )


def stored_inference(board: Board, samples: np.ndarray) -> StoredInference | None:
    """The board's inference from its stored samples; None if no model is ranked.

    Raises
    ------
    SnapshotError
        A ranked model's samples are not finite (a damaged snapshot).
    """
    ranked = sorted((r for r in board.rows if r.ranked), key=lambda r: r.position)
    if not ranked:
        return None
    pos = np.array([r.position for r in ranked])
    rating = np.array([r.rating for r in ranked], dtype=np.float64)
    cols = np.asarray(samples[:, pos], dtype=np.float64)
    if not np.all(np.isfinite(cols)):
        raise SnapshotError(
            f"snapshot {board.snapshot.id}: stored samples of ranked models are not finite"
        )
    facts = (board.snapshot.diagnostics or {}).get("tiers") or {}
    method = facts.get("inference", "auto")
    level = float(board.snapshot.options.get("level", DEFAULT_LEVEL))
    # the margin the rebuild used (none before issue 41): the snapshot's own verdicts
    margin = float(facts.get("margin", 0.0))
    inf = board_inference(rating, cols, level=level, method=method, margin=margin)
    index = {r.model: i for i, r in enumerate(ranked)}
    return StoredInference(board, inf, index, rating, cols)


def board_separated_pairs(conn: Connection, snapshot_id: int) -> list[tuple[str, str]]:
    """The pairs of models that snapshot ``snapshot_id``'s board separates.

    Each pair is ``(better, worse)`` by model name, as the board's simultaneous
    inference has it (the test behind its rank sets, tiers and ``arena
    compare``'s verdict); unranked models are in no pair.

    Raises
    ------
    SnapshotError
        No such snapshot, or its samples were pruned.
    """
    board = load_board(conn, snapshot_id)
    if board is None:
        raise SnapshotError(f"no snapshot {snapshot_id}")
    samples = load_samples(conn, snapshot_id)
    if samples is None:
        raise SnapshotError(f"snapshot {snapshot_id}'s bootstrap samples were pruned")
    got = stored_inference(board, samples)
    if got is None:
        return []
    names = sorted(got.index, key=got.index.__getitem__)
    inf = got.inference
    o = inf.order
    if inf.better is not None:
        a, b = np.nonzero(inf.better)
    else:
        assert inf.bound_low is not None and inf.bound_high is not None  # Bonferroni method
        lo, hi = inf.bound_low[o], inf.bound_high[o]
        a, b = np.nonzero(lo[:, None] > hi[None, :])
    return [(names[i], names[j]) for i, j in zip(o[a].tolist(), o[b].tolist(), strict=True)]
