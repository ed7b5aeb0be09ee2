"""One pair's head-to-head verdict on a stored board, for people (``arena compare``).

It reads snapshots only (never battles), so the verdict is the same whether it
is asked for by ``arena compare``, by the published site or from Python. Which
board is meant is :mod:`arena.boards.resolve`; what moved between two snapshots
is :mod:`arena.boards.diff`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sqlalchemy import Connection

from arena.boards.components import common_set, linked
from arena.boards.inference import stored_inference
from arena.boards.resolve import check_models, resolve_board, samples_pruned
from arena.boards.snapshots import (
    load_pairs,
    load_samples,
)
from arena.core.defaults import DEFAULT_LEVEL
from arena.core.errors import ArgumentError
from arena.core.formats import count
from arena.engine.inference.compare import compare_pair

__all__ = ["HeadToHead", "compare"]


@dataclass(frozen=True)
class Uncorrected:
    """The pair tested alone: its paired interval and the verdict it would give.

    Not corrected for the other pairs of the board, so it may call a pair
    better that the board (which tests all its pairs at once) does not.
    """

    ci_low: float | None
    ci_high: float | None
    verdict: str


@dataclass(frozen=True)
class HeadToHead:
    """Is model A better than model B on one snapshot?

    ``verdict`` is the board's: the one simultaneous test of all its pairs
    behind its rank sets and tiers (``significant``: the board separates
    them).  ``uncorrected`` is the pair tested alone (its paired interval of
    rating(A) - rating(B) over the board's rounds at ``level`` and the verdict of that
    interval), not corrected for the ``n_pairs`` pairs of the board.
    ``difference`` is rating(A) - rating(B); ``p_a_better`` the share of
    the board's rounds (bootstrap rounds, or its fixed normal draws) in which A is ahead; ``win_probability_a`` the
    Bradley-Terry prediction; ``a_wins``/``b_wins``/``ties`` the direct record
    (0 if they never met).  ``rank_a``/``rank_b``: each model's rank set on
    the board (all models at once), ``rank_alone_a``/``rank_alone_b``: its
    set when it alone is asked about.  When either model is unranked there is
    no verdict (``reason`` says why) and the numbers are ``None``.
    """

    snapshot: int
    model_a: str
    model_b: str
    rating_a: float | None
    rating_b: float | None
    difference: float | None
    level: float
    p_a_better: float | None
    win_probability_a: float | None
    significant: bool
    verdict: str
    uncorrected: Uncorrected
    a_wins: int | float
    b_wins: int | float
    ties: int | float
    #: pairs of ranked models on the board, all tested at once for ``verdict``
    n_pairs: int = 0
    rank_a: tuple[int, int] | None = None
    rank_b: tuple[int, int] | None = None
    rank_alone_a: tuple[int, int] | None = None
    rank_alone_b: tuple[int, int] | None = None
    #: Why there is no verdict (a model unranked), in words; None otherwise.
    reason: str | None = None
    #: False when no path of battles links the two (they lie in different groups).
    met_through_others: bool = True
    #: Key of the board compared on (a comparable set's own board when both are in it).
    board: str = ""

    @property
    def met(self) -> bool:
        """Whether the two played each other directly."""
        return self.a_wins + self.b_wins + self.ties > 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``arena compare --format json``."""
        doc = {
            k: getattr(self, k)
            for k in self.__dataclass_fields__
            if k not in ("a_wins", "b_wins", "ties", "uncorrected")
        }
        for k in ("rank_a", "rank_b", "rank_alone_a", "rank_alone_b"):
            doc[k] = None if doc[k] is None else list(doc[k])
        doc["uncorrected"] = asdict(self.uncorrected)
        doc["record"] = {"a_wins": self.a_wins, "b_wins": self.b_wins, "ties": self.ties}
        return doc

    def flat(self) -> dict[str, Any]:
        """One CSV row: the document with nested values spelled out (``uncorrected_ci_low``)."""
        doc = self.to_dict()
        row = {}
        for k, v in doc.items():
            if isinstance(v, dict):
                row.update({f"{k}_{kk}" if k != "record" else kk: vv for kk, vv in v.items()})
            elif isinstance(v, list):
                row[k] = "-".join(str(x) for x in v)
            else:
                row[k] = v
        return row


def compare(
    conn: Connection,
    model_a: str,
    model_b: str,
    *,
    snapshot_id: int | None = None,
    category: str | None = None,
    style_control: bool = False,
    component: int | None = None,
    source: str | None = None,
) -> HeadToHead:
    """Head-to-head verdict between two models of one snapshot (see :class:`HeadToHead`).

    Parameters
    ----------
    conn : sqlalchemy.Connection
    model_a, model_b : str
        Model names; the verdict is about A against B.
    snapshot_id : int, optional
        Default: the latest snapshot of ``category`` and/or ``source`` (or of the
        overall board).
    category, source : str, optional
    component : int, optional
        Compare on the board of this comparable set (``--components
        separate``). Default: the main board, or the board of the set both
        models belong to when they are outside the main one.

    Raises
    ------
    SnapshotError
        No such snapshot, or a model that is not on it.
    ValueError
        ``model_a == model_b``.
    """
    if model_a == model_b:
        raise ArgumentError("compare two different models")
    board = resolve_board(
        conn,
        snapshot_id=snapshot_id,
        category=category,
        style_control=style_control,
        component=component,
        source=source,
    )
    check_models(board, model_a, model_b)
    connected = True
    if component is None:
        board, connected = common_set(conn, board, model_a, model_b)
    sid = board.snapshot.id
    rows = {r.model: r for r in board.rows}
    samples = load_samples(conn, sid)
    if samples is None:
        raise samples_pruned(sid)
    pairs = load_pairs(conn, sid)
    ra, rb = rows[model_a], rows[model_b]
    level = float(board.snapshot.options.get("level", DEFAULT_LEVEL))
    # an unranked model (few battles, off the comparable set's scale) gets no verdict;
    # only the two models' own columns are read, so another model's missing samples
    # (outside the comparable set: NaN) cannot touch this pair
    two = np.asarray(samples[:, [ra.position, rb.position]], dtype=np.float64)
    rating = np.array([np.nan if r.rating is None else r.rating for r in (ra, rb)])
    unranked = {k: r.unranked_reason for k, r in enumerate((ra, rb)) if r.unranked_reason}
    if unranked:
        two = np.zeros_like(two)  # no interval is read: a model without samples is fine
    c = compare_pair(two, 0, 1, rating=rating, level=level, unranked=unranked)
    wins_a = wins_b = ties = 0.0
    for p in pairs:
        if {p.model_a, p.model_b} == {model_a, model_b}:
            flip = p.model_a != model_a
            wins_a, wins_b = (p.b_wins, p.a_wins) if flip else (p.a_wins, p.b_wins)
            ties = p.ties
    alone = {
        "i": f"{model_a} is better",
        "j": f"{model_b} is better",
        "none": "not distinguishable at this level",
        "unranked": f"no verdict: {c.reason}",
    }[c.verdict]

    def number(x: float) -> float | None:
        return float(x) if np.isfinite(x) else None

    n_pairs = 0
    rank_sets: dict[str, tuple[int, int] | None] = {}
    if c.reason is None:
        got = stored_inference(board, samples)
        assert got is not None, "both models are ranked (c.reason is None)"
        n_pairs = int(got.inference.n_pairs)
        sep = got.verdict(model_a, model_b)
        verdict = {
            1: f"{model_a} is better",
            -1: f"{model_b} is better",
            0: "not distinguishable by this board",
        }[sep]
        for key, name in (("a", model_a), ("b", model_b)):
            rank_sets[f"rank_{key}"] = got.rank_set(name)
            rank_sets[f"rank_alone_{key}"] = got.rank_alone(name)
    else:
        sep = 0
        verdict = alone
    return HeadToHead(
        snapshot=sid,
        model_a=model_a,
        model_b=model_b,
        rating_a=ra.rating,
        rating_b=rb.rating,
        difference=number(c.diff),
        level=level,
        p_a_better=number(c.p_better),
        win_probability_a=number(c.win_prob),
        significant=sep != 0,
        verdict=verdict,
        uncorrected=Uncorrected(number(c.low), number(c.high), alone),
        n_pairs=n_pairs,
        reason=c.reason,
        met_through_others=connected and linked(ra, rb),
        board=board.snapshot.board,
        a_wins=count(wins_a),
        b_wins=count(wins_b),
        ties=count(ties),
        **rank_sets,
    )
