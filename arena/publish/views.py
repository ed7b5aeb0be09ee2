"""The typed contexts the templates lay out: one dataclass per page and per page piece.

Every field is already formatted text (or SVG :class:`~markupsafe.Markup`), every
link already relative to its page; the builders live in
:mod:`arena.publish.board_page` and :mod:`arena.publish.model_page`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from markupsafe import Markup

from arena.boards.snapshots import Board, BoardRow, PairRecord


@dataclass(frozen=True)
class Link:
    label: str
    href: str
    current: bool = False


@dataclass(frozen=True)
class RowView:
    model: str
    label: str
    href: str | None
    organisation: str | None
    licence: str | None
    link: str | None
    rank: str
    change: str  # rank set "▲" up, "▼" down, "↕" wider/narrower, "" (unchanged or none)
    change_text: str  # the change in words, for screen readers
    new: bool  # first appearance on this board (only when a previous snapshot exists)
    rating: str
    interval: str  # "+6.8/−5.9"
    interval_words: str  # "interval 1072.5 to 1085.9"
    battles: str
    wins: str
    losses: str
    ties: str
    flags: tuple[str, ...]  # short words ("few battles")
    bar: Markup
    # Style-controlled pages only: rank (UB) change against the paired raw board.
    style_change: str = ""
    style_change_text: str = ""
    #: "tier 2", "" when unranked: shown under the rank only when the script sorts
    #: the board by another column (the tier bands are gone then)
    tier: str = ""
    #: What the name filter matches besides the shown name, lowercase, one per line:
    #: the model's key when a display name is shown, its organisation ("" if none)
    find: str = ""


@dataclass(frozen=True)
class CoefficientView:
    """One style coefficient of a style-controlled board, with its meaning in words."""

    feature: str
    estimate: str
    interval: str
    meaning: str


@dataclass(frozen=True)
class TierGroup:
    title: str
    band: str  # CSS class: band0 / band1 alternate, bandu for unranked
    rows: tuple[RowView, ...]


@dataclass(frozen=True)
class Chart:
    heading: str
    svg: Markup
    note: str = ""


@dataclass(frozen=True)
class LeaderboardPage:
    """index.html and each per-board page."""

    title: str  # the <title>: board, model count, date
    description: str  # <meta name="description">
    heading: str
    board: str
    board_label: str
    snapshot_id: int
    created: str
    nav: tuple[Link, ...]
    tier_line: str
    caption: tuple[str, ...]  # "How to read this board"
    groups: tuple[TierGroup, ...]
    n_visible: int
    hidden_count: int
    axis_ticks: tuple[str, str]
    #: the Change column: only when a previous snapshot of the board exists (of the
    #: same comparable set)
    has_change: bool
    legend: tuple[tuple[str, str], ...]  # (flag word, meaning) of the flags shown
    charts: tuple[Chart, ...]
    downloads: tuple[Link, ...]
    attribution: str | None
    root: str = ""
    og_image: str | None = None
    #: the page's absolute address (``arena publish --base-url``), else None
    og_url: str | None = None
    # Raw / style-controlled switch (empty when the board has no paired page).
    switch: tuple[Link, ...] = ()
    style_controlled: bool = False
    # The rank-change column against the raw board (a style page whose raw page exists).
    has_style_change: bool = False
    coefficients: tuple[CoefficientView, ...] = ()
    #: what the board's battles are: a derived category's rule, "raw: no style metadata"
    notes: tuple[str, ...] = ()
    #: why there are no rank changes (facts line), when ``has_change`` is false
    no_change: str = ""


@dataclass(slots=True)  # not frozen: built ~30k times per publish, frozen init is slower
class OpponentView:
    label: str
    href: str | None
    battles: str
    wins: str
    losses: str
    ties: str
    observed: str  # score rate (wins + half ties) in percent
    expected: str  # Bradley-Terry prediction in percent


@dataclass(frozen=True)
class BoardsPage:
    """``boards.html``: every published board, grouped; the one full board menu."""

    title: str
    description: str
    groups: tuple[tuple[str, tuple[Link, ...]], ...]
    nav: tuple[Link, ...]
    attribution: str | None
    root: str = ""


@dataclass(frozen=True)
class BoardSummary:
    board_label: str
    href: str
    rank: str
    tier: str
    rating: str
    interval: str
    battles: str
    #: the model's rank set when it alone is asked about ("" when not computed)
    rank_alone: str = ""


@dataclass(frozen=True)
class HistoryRow:
    snapshot_id: int
    date: str
    rating: str
    interval: str


@dataclass(frozen=True)
class ModelPage:
    title: str
    description: str
    model: str
    label: str
    organisation: str | None
    licence: str | None
    link: str | None
    flags: tuple[str, ...]
    legend: tuple[tuple[str, str], ...]
    headline: BoardSummary  # the first board that lists the model
    boards: tuple[BoardSummary, ...]
    record_board: str
    opponents: tuple[OpponentView, ...]
    hidden_battles: str | None  # battles against hidden opponents, if any
    history_chart: Markup | None
    history: tuple[HistoryRow, ...]
    nav: tuple[Link, ...]
    attribution: str | None
    root: str = "../"
    og_image: str | None = None
    #: the page's absolute address (``arena publish --base-url``), else None
    og_url: str | None = None
    #: one snapshot is not a history: a sentence instead of a chart with a lone dot
    history_note: str = ""


@dataclass
class SiteBoard:
    """What the site writer knows about one board while building pages."""

    board: Board
    file: str  # page file name relative to OUT_DIR
    downloads: tuple[str, str]  # json, csv file names
    previous: Board | None = None
    #: The paired raw / style-controlled board's page, when it is published from the same run.
    paired: SiteBoard | None = None
    pairs: list[PairRecord] = field(default_factory=list)
    history: Mapping[str, list[tuple[int, datetime, float | None, float | None, float | None]]] = (
        field(default_factory=dict)
    )
    label: str = ""  # the board's name as shown (category labels applied)
    #: per ranked model, its marginal rank set (asked about alone); empty on big boards
    rank_alone: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: a derived category's rule and where it comes from, in words ("" otherwise)
    rule: str = ""
    #: "main" (the header menu), "source" or "more" (the all-boards page only)
    group: str = "main"

    # Indexes built once: a 300-model board has ~45k pairs, and each model page
    # would otherwise scan all of them.
    @cached_property
    def rows_by_name(self) -> dict[str, BoardRow]:
        return {r.model: r for r in self.board.rows}

    @cached_property
    def pairs_by_model(self) -> dict[str, list[PairRecord]]:
        out: dict[str, list[PairRecord]] = {}
        for p in self.pairs:
            out.setdefault(p.model_a, []).append(p)
            out.setdefault(p.model_b, []).append(p)
        return out
