"""The sources battles were ingested with, and what kind of measurement each is.

Human votes and an LLM judge's verdicts are different measurements: a board
that pools them rates neither. A source's *kind* is read from its battles:
``judge`` when its battles name a judge (``arena ingest`` of judge verdicts:
arena-hard's ``judge`` field, LLMFAO's ``worker``), ``vote`` when none does
(LMArena's anonymous human votes), ``mixed`` when some do. A rebuild of a
board over several sources of different kinds warns (:func:`mixing_warning`);
``arena rebuild --all-sources`` rates each source on its own board.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, func, or_, select

from arena.db.models import Battle


@dataclass(frozen=True)
class SourceInfo:
    #: ``None``: battles ingested without ``--source``
    source: str | None
    battles: int
    #: battles that name a judge
    judged: int

    @property
    def kind(self) -> str:
        if self.judged == 0:
            return "vote"
        return "judge" if self.judged == self.battles else "mixed"

    @property
    def name(self) -> str:
        return self.source if self.source is not None else "(no source)"


def source_infos(
    conn: Connection, *, watermark: int | None = None, exclude_judges: tuple[str, ...] = ()
) -> list[SourceInfo]:
    """Rated battles per source (up to ``watermark``), judged ones counted apart."""
    conds: list[ColumnElement[bool]] = [Battle.excluded_reason.is_(None)]
    if watermark is not None:
        conds.append(Battle.id <= watermark)
    if exclude_judges:
        conds.append(or_(Battle.judge.is_(None), Battle.judge.not_in(exclude_judges)))
    rows = conn.execute(
        select(Battle.source, func.count(), func.count(Battle.judge))
        .where(*conds)
        .group_by(Battle.source)
    ).all()
    out = [SourceInfo(s, int(n), int(j)) for s, n, j in rows]
    return sorted(out, key=lambda i: (i.source is None, i.source or ""))


def sources(conn: Connection) -> list[str]:
    """The named sources, sorted (what ``--all-sources`` rates one by one)."""
    found = conn.execute(select(Battle.source).where(Battle.source.is_not(None)).distinct())
    return sorted(s for s in found.scalars() if s is not None)


def mixing_warning(infos: list[SourceInfo], board: str) -> str | None:
    """A warning when ``board`` pools sources of different kinds, else None."""
    kinds = {i.kind for i in infos if i.battles}
    if len([i for i in infos if i.battles]) < 2 or len(kinds) < 2:
        return None
    what = {"vote": "no judge named", "judge": "judge verdicts", "mixed": "some judged"}
    parts = ", ".join(f"{i.name} ({i.battles:,} battles, {what[i.kind]})" for i in infos)
    return (
        f"board {board!r} pools sources of different kinds: {parts}; votes and judge "
        "verdicts measure different things: rate them apart, one source or every source "
        "on its own board"
    )
