"""Board keys that data cannot forge: names percent-encoded in ``snapshots.board``

Before, a key joined names with ``|`` and ``:`` as they were, so the category
``code|style`` had the key of the style-controlled board of ``code``. Now
``%``, ``|`` and ``:`` inside a category or source name are written ``%25``,
``%7C``, ``%3A`` (:mod:`arena.boards.keys`). Each stored key is rewritten from
the snapshot's own ``category`` and ``source`` columns, which the old key
began with, so an old key is read without guessing: what follows that prefix
is the comparable set (``|component:N``) and the style part (``|style``). The
keys inside ``diagnostics_json`` (``component_boards``,
``component.main_board``) are rewritten the same way. ``board`` grows to 1,600
characters: two names of 255 characters, each escaped character three.

Ordinary names (no ``%``, ``|`` or ``:``) keep their keys. Downgrade writes
the old form back.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from __future__ import annotations

import json
import re

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_ESCAPES = {"%": "%25", "|": "%7C", ":": "%3A"}
_TAIL = re.compile(r"(?:\|component:([0-9]+))?(\|style)?")

snapshots = sa.table(
    "snapshots",
    sa.column("id", sa.Integer),
    sa.column("board", sa.String),
    sa.column("category", sa.String),
    sa.column("source", sa.String),
    sa.column("diagnostics_json", sa.Text),
)


def _escape(name: str) -> str:
    return re.sub(r"[%|:]", lambda m: _ESCAPES[m.group(0)], name)


def _key(category: str | None, source: str | None, component: int, style: bool, esc) -> str:
    """A key in the new (``esc=_escape``) or the old (``esc=str``) form: same layout."""
    parts = []
    if category:
        parts.append(f"category:{esc(category)}")
    if source:
        parts.append(f"source:{esc(source)}")
    key = "|".join(parts) or "overall"
    if component > 1:
        key += f"|component:{component}"
    return key + ("|style" if style else "")


def _tail(key: str, prefix: str) -> tuple[int, bool]:
    """(component, style) of ``key`` written after its board's ``prefix``."""
    if key.startswith(prefix) and (m := _TAIL.fullmatch(key[len(prefix) :])):
        return int(m.group(1) or 1), m.group(2) is not None
    # not written by a rebuild from these columns: read it as the old readers did
    style = key.endswith("|style")
    raw = key[: -len("|style")] if style else key
    _, sep, number = raw.rpartition("|component:")
    return (int(number) if sep and number.isdigit() else 1), style


def _convert(key: str, category: str | None, source: str | None, old_to_new: bool) -> str:
    if old_to_new:
        component, style = _tail(key, _key(category, source, 1, False, str))
        return _key(category, source, component, style, _escape)
    component, style = _tail(key, _key(category, source, 1, False, _escape))
    return _key(category, source, component, style, str)


def _rewrite(old_to_new: bool) -> None:
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(
            snapshots.c.id,
            snapshots.c.board,
            snapshots.c.category,
            snapshots.c.source,
            snapshots.c.diagnostics_json,
        )
    ).all()
    for sid, board, category, source, diag_json in rows:
        new_board = _convert(board, category, source, old_to_new)
        diag = json.loads(diag_json) if diag_json else {}
        changed = False
        if isinstance(diag.get("component_boards"), list):
            keys = [_convert(k, category, source, old_to_new) for k in diag["component_boards"]]
            changed |= keys != diag["component_boards"]
            diag["component_boards"] = keys
        part = diag.get("component")
        if isinstance(part, dict) and isinstance(part.get("main_board"), str):
            main = _convert(part["main_board"], category, source, old_to_new)
            changed |= main != part["main_board"]
            part["main_board"] = main
        values = {}
        if new_board != board:
            values["board"] = new_board
        if changed:
            values["diagnostics_json"] = json.dumps(diag, sort_keys=True)
        if values:
            conn.execute(snapshots.update().where(snapshots.c.id == sid).values(**values))


def upgrade() -> None:
    with op.batch_alter_table("snapshots") as batch_op:
        batch_op.alter_column(
            "board",
            existing_type=sa.String(length=600),
            type_=sa.String(length=1600),
            existing_nullable=False,
        )
    _rewrite(old_to_new=True)


def downgrade() -> None:
    _rewrite(old_to_new=False)
    with op.batch_alter_table("snapshots") as batch_op:
        batch_op.alter_column(
            "board",
            existing_type=sa.String(length=1600),
            type_=sa.String(length=600),
            existing_nullable=False,
        )
