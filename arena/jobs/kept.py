"""The boards a database already has, as the rebuilds that would write them again.

``arena nightly`` rebuilds what was published (issue 39): for each board's latest
snapshot (raw, main comparable set: style-controlled and other-set boards come
with their raw board), the rebuild run that wrote it, with the options stored
with the snapshot. Sources stay apart, excluded judges stay excluded, derived
categories and style variants are written again, and nothing is pooled that was
not pooled before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from arena.boards.keys import BoardKey
from arena.db.models import Snapshot
from arena.jobs.rebuild import RebuildOptions, rebuild_option_names

__all__ = ["KeptRun", "kept_runs", "stored_options"]


@dataclass(frozen=True)
class KeptRun:
    """One rebuild to run again: its options and whether it rated every category."""

    options: RebuildOptions
    all_categories: bool
    #: the boards of the latest snapshots it stands for
    boards: tuple[str, ...]


def stored_options(stored: Mapping[str, Any]) -> RebuildOptions:
    """The :class:`RebuildOptions` a snapshot's stored options (``Snapshot.options``) describe.

    Keys that are no rebuild option (written by older versions) are left out;
    ``anchor`` and ``since``/``until`` come back from their stored forms.
    """
    names = rebuild_option_names()
    values = {k: v for k, v in stored.items() if k in names}
    anchor = values.get("anchor")
    if isinstance(anchor, Mapping):
        values["anchor"] = (anchor["model"], float(anchor["rating"]))
    for key in ("since", "until"):
        if isinstance(values.get(key), str):
            values[key] = datetime.fromisoformat(values[key])
    return RebuildOptions.from_values(values)


def kept_runs(conn: Connection) -> list[KeptRun]:
    """The rebuilds that write every board's latest snapshot again, oldest run first.

    A run that wrote a board with no category (overall, or a source's board) and
    category boards is one ``all_categories`` rebuild; a run that wrote only
    category boards is one rebuild per category. Empty when no snapshot exists.
    """
    latest = select(func.max(Snapshot.id).label("id")).group_by(Snapshot.board).subquery()
    rows = conn.execute(
        select(Snapshot.id, Snapshot.board, Snapshot.run_id, Snapshot.options_json)
        .join(latest, latest.c.id == Snapshot.id)
        .order_by(Snapshot.id)
    ).all()
    runs: dict[str, list[Any]] = {}
    for r in rows:
        key = BoardKey.parse(r.board)
        if key.style_controlled or key.component != 1:
            continue  # written with their raw main board
        runs.setdefault(r.run_id, []).append((key, r))
    out: list[KeptRun] = []
    for snaps in runs.values():
        bases = [(k, r) for k, r in snaps if k.category is None]
        if bases:
            for key, r in bases:
                sub = tuple(str(k) for k, _ in snaps if k.source == key.source)
                out.append(
                    KeptRun(
                        stored_options(json.loads(r.options_json)),
                        all_categories=len(sub) > 1,
                        boards=sub,
                    )
                )
        else:
            out.extend(
                KeptRun(stored_options(json.loads(r.options_json)), False, (str(k),))
                for k, r in snaps
            )
    return out
