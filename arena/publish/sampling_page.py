"""``sampling.html``: who got how many battles, per source, organisation and model.

The sampling ledger (:mod:`arena.store.sampling`) of each source apart (a human
board's votes and a judge's verdicts answer different questions), as two
tables per source: organisations, then models. It answers "The Leaderboard
Illusion" (Singh et al., 2025): how many battles each provider got, and which
models were tested and kept off the page.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from arena.publish.fmt import fmt_count
from arena.publish.views import Link
from arena.store.records import record_sources
from arena.store.sampling import LedgerRow, SamplingLedger, sampling_ledger

__all__ = ["SAMPLING_FILE", "LedgerLine", "SamplingPage", "SourceLedger", "sampling_page"]

#: The page's file in the site.
SAMPLING_FILE = "sampling.html"


@dataclass(frozen=True)
class LedgerLine:
    name: str
    organisation: str
    models: str
    battles: str
    share: str
    served: str
    first: str
    last: str
    hidden: str


@dataclass(frozen=True)
class SourceLedger:
    source: str
    battles: str
    #: the first and latest battle stored of the source ("" when none)
    first: str
    last: str
    served: str
    mix: str
    organisations: tuple[LedgerLine, ...]
    models: tuple[LedgerLine, ...]


@dataclass(frozen=True)
class SamplingPage:
    title: str
    description: str
    sources: tuple[SourceLedger, ...]
    nav: tuple[Link, ...]
    attribution: str | None
    root: str = ""


def _line(r: LedgerRow) -> LedgerLine:
    hidden = r.hidden if isinstance(r.hidden, int) and not isinstance(r.hidden, bool) else None
    return LedgerLine(
        name=r.name,
        organisation=r.organisation or "",
        models=str(r.models),
        battles=fmt_count(r.battles),
        share=f"{100 * r.share:.1f}%",
        served=fmt_count(r.served),
        first="" if r.first_battle is None else r.first_battle.strftime("%Y-%m-%d"),
        last="" if r.last_battle is None else r.last_battle.strftime("%Y-%m-%d"),
        hidden=(str(hidden) if hidden else "")
        if hidden is not None
        else ("hidden" if r.hidden else ""),  # fmt: skip
    )


def _source(name: str, ledger: SamplingLedger) -> SourceLedger:
    mix = ""
    if ledger.served:
        mix = ", ".join(f"{k} {100 * n / ledger.served:.0f}%" for k, n in ledger.drawn_by.items())
    firsts = [r.first_battle for r in ledger.models if r.first_battle is not None]
    lasts = [r.last_battle for r in ledger.models if r.last_battle is not None]
    return SourceLedger(
        source=name,
        battles=fmt_count(ledger.battles),
        first=min(firsts).strftime("%Y-%m-%d") if firsts else "",
        last=max(lasts).strftime("%Y-%m-%d") if lasts else "",
        served=fmt_count(ledger.served),
        mix=mix,
        organisations=tuple(_line(r) for r in ledger.organisations),
        models=tuple(_line(r) for r in ledger.models),
    )


def sampling_page(
    conn: Connection, *, nav: tuple[Link, ...], attribution: str | None
) -> SamplingPage:
    """The page's context: one ledger per source of the store."""
    # the source with the most battles first (an arena's own votes, usually)
    names = record_sources(conn)
    ledgers = [(s, sampling_ledger(conn, source=s, sources=names)) for s in names]
    ledgers.sort(key=lambda sl: (-sl[1].battles, sl[0]))
    sources = tuple(_source(s, ledger) for s, ledger in ledgers)
    return SamplingPage(
        title="Who got how many battles",
        description="Battles, share of battles and pairs served per organisation and model, "
        "per source: the sampling ledger of this arena.",
        sources=sources,
        nav=nav,
        attribution=attribution,
    )
