"""The audit's store side: a snapshot's votes in, the audit document out.

The only module of :mod:`arena.audit` that touches the database.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
from sqlalchemy import Connection, and_, delete, insert, select

from arena.audit.votes import Votes
from arena.boards.keys import OVERALL, BoardKey
from arena.boards.snapshots import SnapshotInfo
from arena.core.defaults import (
    DEFAULT_AUDIT_ALPHA,
    DEFAULT_LEVEL,
    DEFAULT_MIN_BATTLES,
    DEFAULT_ROUNDS,
)
from arena.core.errors import ArenaError
from arena.core.outcomes import OUTCOME_CODES
from arena.core.version import __version__
from arena.db.models import (
    Battle,
    BattleCategory,
    Category,
    Model,
    Snapshot,
    SnapshotAudit,
    SnapshotRow,
)
from arena.db.session import take_write_lock

__all__ = [
    "snapshot_conditions",
    "snapshot_votes",
    "save_audit",
    "load_audit",
    "latest_audit",
    "audit_snapshot",
    "latest_flagged_judges",
    "AuditError",
    "EXCLUDED_JUDGES",
]

#: Snapshot option listing judges a rebuild left out (``--exclude-flagged``).
EXCLUDED_JUDGES = "exclude_judges"
_CODE = {o.value: c for o, c in OUTCOME_CODES.items()}


def snapshot_conditions(snapshot: SnapshotInfo) -> list:
    """The WHERE conditions that select the battles behind ``snapshot`` (its filters and watermark)."""
    opts = snapshot.options
    conds = [Battle.excluded_reason.is_(None), Battle.id <= snapshot.watermark]
    if opts.get("source") is not None:
        conds.append(Battle.source == opts["source"])
    if opts.get("since") is not None:
        conds.append(Battle.occurred_at >= opts["since"])
    if opts.get("until") is not None:
        conds.append(Battle.occurred_at < opts["until"])
    excluded = opts.get(EXCLUDED_JUDGES) or []
    if excluded:
        conds.append(Battle.judge.is_(None) | Battle.judge.not_in(excluded))
    if snapshot.key.component > 1:  # a comparable set's board: its models' votes
        members = select(SnapshotRow.model_id).where(SnapshotRow.snapshot_id == snapshot.id)
        conds += [Battle.model_a_id.in_(members), Battle.model_b_id.in_(members)]
    return conds


def snapshot_votes(conn: Connection, snapshot: SnapshotInfo) -> Votes:
    """The rated votes behind a snapshot: same board filters, same watermark.

    Categories are read only for the overall board (a category board is one
    category already).
    """
    conds = snapshot_conditions(snapshot)
    query = select(
        Battle.id,
        Battle.model_a_id,
        Battle.model_b_id,
        Battle.outcome,
        Battle.weight,
        Battle.judge,
        Battle.question,
    )
    if snapshot.category is not None:
        query = (
            query.join(BattleCategory, BattleCategory.battle_id == Battle.id)
            .join(Category, Category.id == BattleCategory.category_id)
            .where(Category.name == snapshot.category)
        )
    rows = conn.execute(query.where(and_(*conds)).order_by(Battle.id)).all()
    ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    a_ids = np.fromiter((r[1] for r in rows), np.int64, len(rows))
    b_ids = np.fromiter((r[2] for r in rows), np.int64, len(rows))
    model_ids, inv = np.unique(np.concatenate([a_ids, b_ids]), return_inverse=True)
    names_by_id = dict(conn.execute(select(Model.id, Model.name)).all())
    cats: dict[str, list[int]] = defaultdict(list)
    if snapshot.category is None and rows:
        pos = {int(b): k for k, b in enumerate(ids.tolist())}
        crows = conn.execute(
            select(BattleCategory.battle_id, Category.name)
            .join(Category, Category.id == BattleCategory.category_id)
            .join(Battle, Battle.id == BattleCategory.battle_id)
            .where(and_(*conds))
        )
        for battle_id, name in crows:
            k = pos.get(int(battle_id))
            if k is not None:
                cats[name].append(k)
    return Votes.build(
        [names_by_id[int(m)] for m in model_ids],
        inv[: len(rows)],
        inv[len(rows) :],
        np.fromiter((_CODE[r[3]] for r in rows), np.int8, len(rows)),
        weight=np.fromiter((r[4] for r in rows), np.float64, len(rows)),
        judge=[r[5] for r in rows],
        question=[r[6] for r in rows],
        categories={k: np.asarray(v) for k, v in cats.items()},
    )


def save_audit(conn: Connection, snapshot_id: int, document: dict) -> None:
    """Store (or replace) the audit document of a snapshot."""
    conn.execute(delete(SnapshotAudit).where(SnapshotAudit.snapshot_id == snapshot_id))
    conn.execute(
        insert(SnapshotAudit).values(
            snapshot_id=snapshot_id,
            code_version=__version__,
            report_json=json.dumps(document, sort_keys=True),
        )
    )


def load_audit(conn: Connection, snapshot_id: int) -> dict | None:
    """The stored audit document of a snapshot, or None."""
    text = conn.execute(
        select(SnapshotAudit.report_json).where(SnapshotAudit.snapshot_id == snapshot_id)
    ).scalar()
    return None if text is None else json.loads(text)


def latest_audit(conn: Connection, board: str, up_to: int) -> dict | None:
    """The newest stored audit of ``board`` (a board key's text) whose snapshot is
    at most ``up_to``, or None: what the site shows for a board published at
    snapshot ``up_to`` (an audit stored with an earlier snapshot says which)."""
    text = conn.execute(
        select(SnapshotAudit.report_json)
        .join(Snapshot, Snapshot.id == SnapshotAudit.snapshot_id)
        .where(Snapshot.board == board, Snapshot.id <= up_to)
        .order_by(Snapshot.id.desc())
        .limit(1)
    ).scalar()
    return None if text is None else json.loads(text)


class AuditError(ArenaError):
    """No snapshot to audit, or nothing in it."""


def audit_snapshot(
    engine,
    *,
    snapshot_id: int | None = None,
    board: BoardKey = OVERALL,
    level: float = DEFAULT_LEVEL,
    alpha: float = DEFAULT_AUDIT_ALPHA,
    seed: int | None = None,
    rounds: int | None = None,
    only: tuple[str, ...] | None = None,
    store: bool = True,
    progress=None,
):
    """Audit the votes behind a snapshot (default: the latest of ``board``).

    The fit options (tie convention, "both bad", ranking threshold, seed)
    are the snapshot's, so the audit judges the board as published.  With
    ``store`` the JSON document is saved with the snapshot (a full audit only).

    Returns
    -------
    (SnapshotInfo, AuditReport)
    """
    from arena.audit.report import run_audit
    from arena.audit.setup import AuditOptions
    from arena.boards.snapshots import latest_snapshot_id, snapshot_info

    with engine.connect() as conn:
        sid = snapshot_id if snapshot_id is not None else latest_snapshot_id(conn, board)
        if sid is None:
            raise AuditError(f"no snapshot for board {str(board)!r} yet: run `arena rebuild`")
        info = snapshot_info(conn, sid)
        if info is None:
            raise AuditError(f"no snapshot {sid}")
        votes = snapshot_votes(conn, info)
        organisations = dict(
            conn.execute(
                select(Model.name, Model.organisation).where(Model.organisation.is_not(None))
            ).all()
        )
    o = info.options
    opts = AuditOptions(
        level=level,
        alpha=alpha,
        seed=info.seed if seed is None else seed,
        # the audit's bootstraps and simulations: the declared default when not given
        rounds=DEFAULT_ROUNDS if rounds is None else rounds,
        ties=o.get("ties", "half"),
        both_bad=o.get("both_bad", "tie"),
        min_battles=int(o.get("min_battles", DEFAULT_MIN_BATTLES)),
    )
    try:
        report = run_audit(votes, opts, only=only, progress=progress, organisations=organisations)
    except ValueError as exc:
        raise AuditError(f"snapshot {sid}: {exc}") from None
    if store and only is None:
        with engine.begin() as conn:
            take_write_lock(conn, "store the audit")
            save_audit(conn, sid, {"snapshot": sid, **report.to_dict()})
    return info, report


def latest_flagged_judges(conn: Connection, board: BoardKey = OVERALL) -> list[str]:
    """Judges flagged by the stored audit of the latest snapshot of ``board``.

    Raises
    ------
    AuditError
        No snapshot, or its audit was never stored (run ``arena audit``).
    """
    from arena.boards.snapshots import latest_snapshot_id

    sid = latest_snapshot_id(conn, board)
    if sid is None:
        raise AuditError(f"no snapshot for board {str(board)!r} yet: run `arena rebuild`")
    doc = load_audit(conn, sid)
    if doc is None:
        raise AuditError(f"snapshot {sid} ({board}) has no stored audit: run `arena audit` first")
    return list(doc.get("flagged_judges", []))
