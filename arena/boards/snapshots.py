"""Snapshots: written once by the rebuild, the only source for leaderboard,
compare, diff and publish.

A snapshot is immutable once written (:func:`arena.boards.write.write_snapshot`,
called by :mod:`arena.jobs.rebuild` inside its one transaction). This module turns its rows
into typed objects and into the JSON/CSV documents that both ``arena
leaderboard`` and the published site's downloads use. (About 450 lines: the
typed objects, documents and key helpers of one table family; the reading of
comparable sets' boards lives in :mod:`arena.boards.components`.)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Row, select

from arena.boards.keys import OVERALL, BoardKey
from arena.core.errors import ArenaError, OptionError
from arena.core.formats import count, iso_utc
from arena.db.tables import (
    models,
    snapshot_pairs,
    snapshot_rows,
    snapshot_samples,
    snapshot_style_coefficients,
    snapshots,
)
from arena.engine.messages import unranked_reason

if TYPE_CHECKING:
    import numpy as np


class SnapshotError(ArenaError, LookupError):
    """No such snapshot, no snapshot of a board yet, or a model not on the board."""


class SnapshotOptionError(SnapshotError, OptionError):
    """A board asked for by an option no rebuild wrote, naming the parameters (CLI: flags)."""

    # LookupError precedes OptionError in the MRO; its __init__ takes no keywords
    __init__ = OptionError.__init__


#: Row fields of the leaderboard JSON/CSV documents, in column order. There is
#: no ordinal rank: ``rank_low``..``rank_high`` is the simultaneous rank
#: confidence set of the board's one inference (all models at once), and
#: ``rank_ub``..``rank_lb`` LMArena's interval-overlap rank (``docs/tiers.md``);
#: rows come in board order (ranked models by rating).
#: ``rating``/``ci_low``/``ci_high`` are null when there is no rating on the
#: board's scale or no bound (an open one-sided interval); ``unranked_reason``
#: says in words why a model has no rank, tier or verdict.
ROW_FIELDS = (
    "model",
    "rating",
    "ci_low",
    "ci_high",
    "rank_low",
    "rank_high",
    "rank_ub",
    "rank_lb",
    "tier",
    "battles",
    "wins",
    "losses",
    "ties",
    "flags",
    "unranked_reason",
)

#: Options that change the numbers of a board, in the order they are shown.
NUMBER_OPTIONS = ("ties", "cluster", "ci", "level", "prior", "anchor", "min_battles")


def options_summary(options: dict[str, Any]) -> str:
    """``ties=half cluster=battle ci=bootstrap level=0.95 prior=none anchor=none min-battles=50``."""
    parts = []
    for key in NUMBER_OPTIONS:
        value = options.get(key)
        if isinstance(value, list | tuple):
            value = "@".join(str(v) for v in value)
        parts.append(f"{key.replace('_', '-')}={'none' if value is None else value}")
    return " ".join(parts)


def options_differ(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Number-changing options that differ: ``["ties: half vs davidson", ...]``."""
    return [
        f"{key.replace('_', '-')}: {a.get(key)} vs {b.get(key)}"
        for key in NUMBER_OPTIONS
        if a.get(key) != b.get(key)
    ]


@dataclass(frozen=True)
class SnapshotInfo:
    id: int
    created_at: datetime
    board: str
    category: str | None
    source: str | None
    run_id: str
    options: dict[str, Any]
    seed: int
    code_version: str
    watermark: int
    n_battles: float
    n_excluded: int
    n_models: int
    diagnostics: dict[str, Any]
    #: ``full`` (a rebuild's snapshot) or ``provisional`` (:mod:`arena.boards.provisional`)
    kind: str = "full"
    #: of a provisional board: ``since_snapshot``, ``battles_since``, ``computed_at``, ``method``
    provisional: dict[str, Any] | None = None

    @property
    def key(self) -> BoardKey:
        """The board this snapshot is of (``board`` is its text, as stored)."""
        return BoardKey.parse(self.board)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["created_at"] = iso_utc(self.created_at)
        return d


@dataclass(frozen=True)
class BoardRow:
    model: str
    model_id: int
    position: int
    rating: float | None
    ci_low: float | None
    ci_high: float | None
    rank: int | None
    rank_ub: int | None
    tier: int | None
    battles: float
    wins: float
    losses: float
    ties: float
    flags: tuple[str, ...]
    ranked: bool
    hidden: bool
    display_name: str | None
    organisation: str | None
    licence: str | None
    link: str | None
    rank_lb: int | None = None
    unranked_reason: str | None = None
    #: simultaneous rank set (None if unranked, or a snapshot older than revision 0013)
    rank_low: int | None = None
    rank_high: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {f: getattr(self, f) for f in ROW_FIELDS}
        d["flags"] = list(self.flags)
        for f in ("battles", "wins", "losses", "ties"):
            d[f] = count(d[f])
        return d


@dataclass(frozen=True)
class StyleCoefficient:
    """A style coefficient (logits per covariate SD) with its interval."""

    feature: str
    estimate: float
    ci_low: float
    ci_high: float
    se: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Board:
    snapshot: SnapshotInfo
    rows: tuple[BoardRow, ...]  # ranked rows by rating (desc), then unranked by rating
    #: Coefficients of a style-controlled board (empty for a raw board).
    style_coefficients: tuple[StyleCoefficient, ...] = ()
    #: Id of the paired board's snapshot from the same rebuild run (raw <-> style), if any.
    paired_snapshot: int | None = None

    @property
    def key(self) -> BoardKey:
        return self.snapshot.key

    @property
    def style_controlled(self) -> bool:
        return self.key.style_controlled

    def visible_rows(self) -> tuple[BoardRow, ...]:
        return tuple(r for r in self.rows if not r.hidden)

    def to_dict(self, *, include_hidden: bool = False) -> dict[str, Any]:
        """The leaderboard JSON document: ``{"snapshot": {...}, "rows": [...]}``."""
        s = self.snapshot
        key = s.key
        rows = self.rows if include_hidden else self.visible_rows()
        doc: dict[str, Any] = {
            "snapshot": {
                "id": s.id,
                "kind": s.kind,
                "created_at": iso_utc(s.created_at),
                "board": s.board,
                "category": s.category,
                "source": s.source,
                "options": s.options,
                "watermark": s.watermark,
                "counts": {
                    "battles": count(s.n_battles),
                    "excluded": s.n_excluded,
                    "models": s.n_models,
                },
                "code_version": s.code_version,
                "hidden_models": sum(1 for r in self.rows if r.hidden),
                "model": {
                    "ties": s.options.get("ties"),
                    # Davidson: P(tie) = nu / (e^(d/2) + e^(-d/2) + nu); null for half ties
                    "tie_param": s.diagnostics.get("tie_param"),
                    "tie_param_se": s.diagnostics.get("tie_param_se"),
                    "position_param": s.diagnostics.get("position_param"),
                    "position_se": s.diagnostics.get("position_se"),
                },
                "components": s.diagnostics.get("components"),
                # the fixed draws behind ranks and tiers and their check (issue 41);
                # null for bootstrap boards and snapshots from before
                "draws_check": (s.diagnostics.get("tiers") or {}).get("draws_check"),
                # which comparable set this board ranks (1: the main board) and,
                # on a main board built with --components separate, the others' boards
                "component": key.component,
                "main_board": str(key.main),
                "component_boards": s.diagnostics.get("component_boards", []),
                "style_controlled": self.style_controlled,
                "paired_board": str(key.paired),
                "paired_snapshot": self.paired_snapshot,
                **(
                    {"style_coefficients": [c.to_dict() for c in self.style_coefficients]}
                    if self.style_controlled
                    else {}
                ),
            },
            "rows": [r.to_dict() for r in rows],
        }
        if s.provisional is not None:
            doc["provisional"] = dict(s.provisional)
        return doc


def _info(s: Row[Any]) -> SnapshotInfo:
    """The snapshot of one row of ``snapshots``."""
    return SnapshotInfo(
        id=s.id,
        created_at=s.created_at,
        board=s.board,
        category=s.category,
        source=s.source,
        run_id=s.run_id,
        options=json.loads(s.options_json),
        seed=s.seed,
        code_version=s.code_version,
        watermark=s.watermark,
        n_battles=s.n_battles,
        n_excluded=s.n_excluded,
        n_models=s.n_models,
        diagnostics=json.loads(s.diagnostics_json),
    )


def list_snapshots(conn: Connection, *, board: BoardKey | None = None) -> list[SnapshotInfo]:
    query = select(snapshots).order_by(snapshots.c.id)
    if board is not None:
        query = query.where(snapshots.c.board == str(board))
    return [_info(s) for s in conn.execute(query)]


def latest_snapshot_id(conn: Connection, board: BoardKey = OVERALL) -> int | None:
    found: int | None = conn.execute(
        select(snapshots.c.id)
        .where(snapshots.c.board == str(board))
        .order_by(snapshots.c.id.desc())
        .limit(1)
    ).scalar()
    return found


def previous_snapshot_id(conn: Connection, snapshot: SnapshotInfo) -> int | None:
    """The snapshot of the same board written just before this one."""
    found: int | None = conn.execute(
        select(snapshots.c.id)
        .where(snapshots.c.board == snapshot.board, snapshots.c.id < snapshot.id)
        .order_by(snapshots.c.id.desc())
        .limit(1)
    ).scalar()
    return found


def snapshot_info(conn: Connection, snapshot_id: int) -> SnapshotInfo | None:
    s = conn.execute(select(snapshots).where(snapshots.c.id == snapshot_id)).first()
    return _info(s) if s is not None else None


def load_board(conn: Connection, snapshot_id: int) -> Board | None:
    info = snapshot_info(conn, snapshot_id)
    if info is None:
        return None
    out = _board_rows(conn, snapshot_id, info)
    paired = paired_snapshot_id(conn, info)
    if info.key.style_controlled and paired is not None:
        out.extend(_without_style(conn, paired, {r.model for r in out}))
    # ranked by rating, then unranked with a rating, then models with none
    out.sort(key=lambda b: (not b.ranked, b.rating is None, -(b.rating or 0.0), b.model))
    return Board(
        info,
        tuple(out),
        style_coefficients=load_style_coefficients(conn, snapshot_id),
        paired_snapshot=paired,
    )


#: Why a model of the raw board is not on its style-controlled board.
NO_STYLE_WORDS = (
    "{name} has no battle with style metadata on this board: "
    "the style-controlled fit cannot rate it"
)


def _without_style(conn: Connection, raw_id: int, present: set[str]) -> list[BoardRow]:
    """The raw board's models that its style-controlled pair could not rate, as unranked rows.

    They have no column in the style board's samples (``position`` -1).
    """
    raw_info = snapshot_info(conn, raw_id)
    if raw_info is None:
        return []
    return [
        replace(
            r,
            position=-1,
            rating=None,
            ci_low=None,
            ci_high=None,
            rank=None,
            rank_ub=None,
            rank_lb=None,
            rank_low=None,
            rank_high=None,
            tier=None,
            battles=0.0,
            wins=0.0,
            losses=0.0,
            ties=0.0,
            flags=("no_style",) + (("hidden",) if "hidden" in r.flags else ()),
            ranked=False,
            unranked_reason=NO_STYLE_WORDS.format(name=r.model),
        )
        for r in _board_rows(conn, raw_id, raw_info)
        if r.model not in present
    ]


def _board_rows(conn: Connection, snapshot_id: int, info: SnapshotInfo) -> list[BoardRow]:
    m = models.c
    rows = conn.execute(
        select(snapshot_rows, m.name, m.hidden, m.display_name, m.organisation, m.licence, m.link)
        .join(models, m.id == snapshot_rows.c.model_id)
        .where(snapshot_rows.c.snapshot_id == snapshot_id)
    ).all()
    return [board_row(r, r, info) for r in rows]


def board_row(sr: Any, model: Any, info: SnapshotInfo) -> BoardRow:
    """One :class:`BoardRow` from stored row values ``sr`` (the columns of
    ``snapshot_rows``, as attributes) and the model's record ``model`` (``name``,
    ``hidden``, ``display_name``, ``organisation``, ``licence``, ``link``)."""
    flags = tuple(f for f in sr.flags.split(",") if f)
    return BoardRow(
        model=model.name,
        model_id=sr.model_id,
        position=sr.position,
        rating=sr.rating,
        ci_low=sr.ci_low,
        ci_high=sr.ci_high,
        rank=sr.rank,
        rank_ub=sr.rank_ub,
        rank_lb=sr.rank_lb,
        rank_low=sr.rank_low,
        rank_high=sr.rank_high,
        unranked_reason=None
        if sr.ranked
        else unranked_reason(
            model.name, flags, sr.battles, min_battles=int(info.options.get("min_battles", 1))
        ),
        tier=sr.tier,
        battles=sr.battles,
        wins=sr.wins,
        losses=sr.losses,
        ties=sr.ties,
        flags=flags,
        ranked=sr.ranked,
        hidden=bool(model.hidden),
        display_name=model.display_name,
        organisation=model.organisation,
        licence=model.licence,
        link=model.link,
    )


def load_style_coefficients(conn: Connection, snapshot_id: int) -> tuple[StyleCoefficient, ...]:
    c = snapshot_style_coefficients.c
    rows = conn.execute(
        select(c.feature, c.estimate, c.ci_low, c.ci_high, c.se)
        .where(c.snapshot_id == snapshot_id)
        .order_by(c.position)
    ).all()
    return tuple(StyleCoefficient(*r) for r in rows)


def paired_snapshot_id(conn: Connection, info: SnapshotInfo) -> int | None:
    """The paired board's snapshot written by the same rebuild run (raw <-> style)."""
    found: int | None = conn.execute(
        select(snapshots.c.id).where(
            snapshots.c.run_id == info.run_id, snapshots.c.board == str(info.key.paired)
        )
    ).scalar()
    return found


def load_samples(conn: Connection, snapshot_id: int) -> np.ndarray | None:
    """Bootstrap ratings, shape (rounds, models), columns in ``BoardRow.position`` order."""
    c = snapshot_samples.c
    row = conn.execute(
        select(c.rounds, c.n_models, c.data).where(c.snapshot_id == snapshot_id)
    ).first()
    if row is None:
        return None
    import numpy as np  # here, not at the top: a leaderboard reads no samples

    return np.frombuffer(row.data, dtype="<f4").reshape(row.rounds, row.n_models)


@dataclass(frozen=True)
class PairRecord:
    model_a: str
    model_b: str
    a_wins: float
    b_wins: float
    ties: float


def load_pairs(conn: Connection, snapshot_id: int) -> list[PairRecord]:
    """Direct head-to-head records (each unordered pair once)."""
    ma, mb, p = models.alias(), models.alias(), snapshot_pairs.c
    rows = conn.execute(
        select(ma.c.name, mb.c.name, p.a_wins, p.b_wins, p.ties)
        .join(ma, ma.c.id == p.model_a_id)
        .join(mb, mb.c.id == p.model_b_id)
        .where(p.snapshot_id == snapshot_id)
    ).all()
    return [PairRecord(*r) for r in rows]


def rating_history(
    conn: Connection, board: BoardKey
) -> dict[str, list[tuple[int, datetime, float | None, float | None, float | None]]]:
    """Per model: (snapshot id, created_at, rating, ci_low, ci_high) for every snapshot of
    ``board`` (rating and bounds None where the snapshot has none)."""
    s, r = snapshots.c, snapshot_rows.c
    rows = conn.execute(
        select(models.c.name, s.id, s.created_at, r.rating, r.ci_low, r.ci_high)
        .join(snapshot_rows, r.snapshot_id == s.id)
        .join(models, models.c.id == r.model_id)
        .where(s.board == str(board))
        .order_by(s.id)
    ).all()
    history: dict[str, list[tuple[int, datetime, float | None, float | None, float | None]]] = {}
    for name, sid, created, rating, lo, hi in rows:
        history.setdefault(name, []).append((sid, created, rating, lo, hi))
    return history
