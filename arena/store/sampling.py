"""The sampling ledger: who got how many battles, and how the pairs were drawn.

"The Leaderboard Illusion" (Singh et al., 2025) asks every arena how many
battles each model and each organisation got, how pairs were sampled, and which
models were tested and kept off the board. The store can answer exactly:

* **battles** per model: its rated battles in the store, every source (as
  ``arena models``), and its **share** of all battle appearances (each battle
  has two models, so the shares add up to 1);
* **served**: the pairs ``arena serve`` showed with the model
  (``served_pairs``, counted by the server), and by which part of the pair
  rule (``plan``, ``uniform``, ``new``): the rule's mix as it ran;
* **first / last battle**: when its first and latest battles were stored (the
  ingest time of their batch; for live votes, the time of the vote's commit);
* **hidden**: kept off the published page (tested, not shown); its battles
  still count in everyone's ratings.

Per organisation the same sums (``(unknown)`` where no organisation is set).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, func, select, union_all

from arena.core.formats import iso_utc
from arena.db.models import Battle, IngestBatch, Model, ServedPair
from arena.store.records import model_records, of_source, record_sources

__all__ = ["UNKNOWN_ORGANISATION", "LedgerRow", "SamplingLedger", "sampling_ledger"]

#: The organisation of models without one.
UNKNOWN_ORGANISATION = "(unknown)"


@dataclass(frozen=True)
class LedgerRow:
    """One model's (or one organisation's) battles and pairs served."""

    name: str
    battles: int
    share: float
    served: int
    first_battle: datetime | None
    last_battle: datetime | None
    #: a model: its organisation; an organisation: None
    organisation: str | None = None
    #: a model: kept off the page; an organisation: how many of its models are
    hidden: bool | int = False
    #: an organisation: its models (a model: 1)
    models: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "organisation": self.organisation,
            "models": self.models,
            "battles": self.battles,
            "share": self.share,
            "served": self.served,
            "first_battle": None if self.first_battle is None else iso_utc(self.first_battle),
            "last_battle": None if self.last_battle is None else iso_utc(self.last_battle),
            "hidden": self.hidden,
        }


@dataclass(frozen=True)
class SamplingLedger:
    """Every model and organisation, most battles first, and the pair rule's mix."""

    models: tuple[LedgerRow, ...]
    organisations: tuple[LedgerRow, ...]
    battles: int
    served: int
    #: pairs served by how the rule drew them: ``{"plan": n, "uniform": n, "new": n}``
    drawn_by: dict[str, int]
    first_served: str | None
    last_served: str | None
    #: the one source counted, or None for every source (a human board and a judge's
    #: verdicts are different questions: ``sources`` lists what the store holds)
    source: str | None = None
    sources: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "sources": list(self.sources),
            "battles": self.battles,
            "served": self.served,
            "drawn_by": dict(self.drawn_by),
            "first_served": self.first_served,
            "last_served": self.last_served,
            "organisations": [r.to_dict() for r in self.organisations],
            "models": [r.to_dict() for r in self.models],
            "definitions": dict(DEFINITIONS),
        }


DEFINITIONS = {
    "battles": "rated battles in the store with the model, of the source counted, or every "
    "source (as `arena models`)",
    "share": "the model's battles over all battle appearances (two per battle): shares add up to 1",
    "served": "pairs `arena serve` showed with the model (GET /v1/pair), counted by the server "
    "on every board",
    "drawn_by": "plan: the planner's weights; uniform: a uniform pair; new: a model with few battles",
    "first_battle/last_battle": "when the model's first and latest battles were stored (UTC)",
    "hidden": "kept off the published page; its battles still count in every rating",
}


def _served(conn: Connection) -> tuple[dict[int, int], dict[str, int], str | None, str | None]:
    """Pairs served per model id (either side), per draw kind, and the first and last day."""
    per: dict[int, int] = defaultdict(int)
    sides = union_all(
        select(ServedPair.model_a_id.label("m"), ServedPair.served),
        select(ServedPair.model_b_id.label("m"), ServedPair.served),
    ).subquery()
    for m, n in conn.execute(select(sides.c.m, func.sum(sides.c.served)).group_by(sides.c.m)):
        per[int(m)] += int(n)
    kinds = {k: 0 for k in ("plan", "uniform", "new")}
    for kind, n in conn.execute(
        select(ServedPair.drawn_by, func.sum(ServedPair.served)).group_by(ServedPair.drawn_by)
    ):
        kinds[kind] = int(n)
    first, last = conn.execute(select(func.min(ServedPair.day), func.max(ServedPair.day))).one()
    return (
        per,
        kinds,
        (None if first is None else str(first)),
        (None if last is None else str(last)),
    )


def _stored_times(conn: Connection, source: str | None) -> dict[int, tuple[datetime, datetime]]:
    """Per model id: the ingest time of its first and latest battles' batches."""
    where: list[ColumnElement[bool]] = [Battle.excluded_reason.is_(None)]
    if source is not None:
        where.append(of_source(source))
    sides = union_all(
        select(Battle.model_a_id.label("m"), Battle.batch_id).where(*where),
        select(Battle.model_b_id.label("m"), Battle.batch_id).where(*where),
    ).subquery()
    first, last = func.min(sides.c.batch_id), func.max(sides.c.batch_id)
    spans = conn.execute(select(sides.c.m, first, last).group_by(sides.c.m)).all()
    batch_ids = {int(b) for _, lo, hi in spans for b in (lo, hi)}
    started: dict[int, datetime] = {}
    ordered = sorted(batch_ids)
    for i in range(0, len(ordered), 500):
        chunk = ordered[i : i + 500]
        query = select(IngestBatch.id, IngestBatch.started_at).where(IngestBatch.id.in_(chunk))
        started.update({bid: at for bid, at in conn.execute(query)})
    return {int(m): (started[int(lo)], started[int(hi)]) for m, lo, hi in spans}


def sampling_ledger(
    conn: Connection, *, source: str | None = None, sources: Sequence[str] | None = None
) -> SamplingLedger:
    """The ledger of the whole store, or of one source's battles (see the module doc).

    ``sources``: the store's sources (:func:`arena.store.records.record_sources`) when
    the caller has listed them already; each listing scans the battles.

    Raises
    ------
    OptionError
        ``source`` is no source of the store.
    """
    sources = record_sources(conn) if sources is None else sources
    records = model_records(conn, source=source, sources=sources)
    ids = {name: mid for name, mid in conn.execute(select(Model.name, Model.id))}
    served, kinds, first_day, last_day = _served(conn)
    times = _stored_times(conn, source)
    appearances = sum(r.battles for r in records)
    rows = []
    for r in records:
        mid = ids[r.model]
        first, last = times.get(mid, (None, None))
        rows.append(
            LedgerRow(
                name=r.model,
                battles=int(r.battles),
                share=r.battles / appearances if appearances else 0.0,
                served=served.get(mid, 0),
                first_battle=first,
                last_battle=last,
                organisation=r.organisation,
                hidden=r.hidden,
            )
        )
    rows.sort(key=lambda x: (-x.battles, -x.served, x.name))
    orgs: dict[str, list[LedgerRow]] = defaultdict(list)
    for row in rows:
        orgs[row.organisation or UNKNOWN_ORGANISATION].append(row)
    org_rows = []
    for name, members in orgs.items():
        firsts = [m.first_battle for m in members if m.first_battle is not None]
        lasts = [m.last_battle for m in members if m.last_battle is not None]
        battles = sum(m.battles for m in members)
        org_rows.append(
            LedgerRow(
                name=name,
                battles=battles,
                share=battles / appearances if appearances else 0.0,
                served=sum(m.served for m in members),
                first_battle=min(firsts) if firsts else None,
                last_battle=max(lasts) if lasts else None,
                organisation=None,
                hidden=sum(1 for m in members if m.hidden),
                models=len(members),
            )
        )
    org_rows.sort(key=lambda x: (-x.battles, -x.served, x.name))
    return SamplingLedger(
        models=tuple(rows),
        organisations=tuple(org_rows),
        battles=appearances // 2,
        served=sum(kinds.values()),
        drawn_by=kinds,
        first_served=first_day,
        last_served=last_day,
        source=source,
        sources=tuple(sources),
    )
