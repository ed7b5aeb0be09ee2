"""Reading boards for people: which snapshot, what moved between two, A against B.

Everything here reads snapshots only (never battles), so a leaderboard, a diff
or a head-to-head verdict is the same whether it is asked for by ``arena
leaderboard|diff|compare``, by the published site or from Python.
(About 430 lines: resolving a board, diffing two snapshots and one pair's
verdict share the board lookup and the checks that two boards are comparable;
the comparable-set lookups live in :mod:`arena.boards.components`.)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from sqlalchemy import Connection

from arena.boards.components import common_set, component_board, linked, same_set
from arena.boards.inference import stored_inference
from arena.boards.keys import BoardKey
from arena.boards.snapshots import (
    Board,
    SnapshotError,
    SnapshotInfo,
    latest_snapshot_id,
    load_board,
    load_pairs,
    load_samples,
    options_differ,
)
from arena.core.defaults import DEFAULT_LEVEL
from arena.core.errors import ArgumentError
from arena.core.formats import count
from arena.core.words import unknown
from arena.engine.compare import compare_pair

__all__ = [
    "BoardDiff",
    "DiffRow",
    "HeadToHead",
    "compare",
    "diff",
    "resolve_board",
    "resolve_snapshot_id",
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

    from arena.db.models import Battle

    found = conn.execute(select(Battle.source).where(Battle.source == source).limit(1)).first()
    if found is None:
        known = conn.execute(select(Battle.source).where(Battle.source.is_not(None)).distinct())
        raise SnapshotError(unknown("source", source, sorted(known.scalars()), list_known=True))


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
    board = load_board(conn, snapshot_id)
    if board is None:
        raise SnapshotError(f"no snapshot {snapshot_id}")
    if style_control and not board.style_controlled:
        if board.paired_snapshot is None:
            raise SnapshotError(
                f"snapshot {snapshot_id} ({board.snapshot.board}) has no style-controlled board "
                "from the same rebuild (its battles carry no style metadata, or the rebuild "
                "ran without style control)"
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
    them).  ``uncorrected`` is the pair tested alone (its paired bootstrap
    interval of rating(A) - rating(B) at ``level`` and the verdict of that
    interval), not corrected for the ``n_pairs`` pairs of the board.
    ``difference`` is rating(A) - rating(B); ``p_a_better`` the share of
    bootstrap rounds in which A is ahead; ``win_probability_a`` the
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

    def document(self) -> dict:
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

    def flat(self) -> dict:
        """One CSV row: the document with nested values spelled out (``uncorrected_ci_low``)."""
        doc = self.document()
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
