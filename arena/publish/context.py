"""Typed, fully formatted context for each page, built from the snapshot read API.

Templates only lay out what is here: every number is already a string with a
fixed format (so output is deterministic and identical wherever it appears),
every chart is already SVG markup, every link is already relative to the page.
Nothing in this module writes files; :mod:`arena.publish.site` does that.

Longer than ~400 lines on purpose, for now: the formats and plain-words
captions must read the same on every page, and the page redesign (issue 13)
will split this module along its new pages; splitting it before would move
every line twice while others edit the captions.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property, lru_cache

import numpy as np
from markupsafe import Markup

from arena.engine.scale import win_probability
from arena.publish import svg
from arena.snapshots import (
    OVERALL,
    Board,
    BoardRow,
    PairRecord,
    SnapshotInfo,
    StyleCoefficient,
)
from arena.vocabulary import is_web_url

# ---------------------------------------------------------------- names and formats


@lru_cache(maxsize=65536)
def slug(text: str, *, prefix: str = "") -> str:
    """A file-name-safe stem for untrusted ``text``: ASCII slug plus 8 hex of its sha256.

    The hash keeps names unique (``a/b`` and ``a-b`` slug alike) and the slug
    alphabet ``[a-z0-9-]`` cannot express ``..``, ``/`` or a leading dot, so a
    file named after a model always stays inside the output directory.
    """
    ascii_ = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    stem = re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")[:40].strip("-") or "x"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{prefix}{stem}-{digest}"


def board_label(board: str) -> str:
    if board == OVERALL:
        return "Overall"
    parts = []
    for part in board.split("|"):
        kind, _, name = part.partition(":")
        parts.append(f"{kind.capitalize()}: {name}" if name else part)
    return " · ".join(parts)


def nav_label(board: str) -> str:
    """Short label for the navigation bar: the category name alone, "Overall" otherwise."""
    kind, _, name = board.partition(":")
    return name if kind == "category" and "|" not in board else board_label(board)


def fmt_rating(x: float | None) -> str:
    """One decimal; an en dash for no value (no rating on the board's scale, no bound)."""
    return "\u2013" if x is None else f"{x + 0.0:.1f}"


def rank_text(row: BoardRow) -> str:
    """The ranks the data allow: ``3`` when pinned, ``3\u20137`` otherwise, dash if unranked."""
    if row.rank_ub is None:
        return "\u2013"
    if row.rank_lb is None or row.rank_lb == row.rank_ub:
        return str(row.rank_ub)
    return f"{row.rank_ub}\u2013{row.rank_lb}"


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def fmt_count(x: float) -> str:
    i = int(x)
    return str(i) if i == x else f"{x:.1f}"


@lru_cache(maxsize=4096)
def fmt_date(dt: datetime) -> str:
    """Snapshot time in UTC; SQLite hands back naive datetimes that were written as UTC."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%d %H:%M UTC")


def safe_link(url: str | None) -> str | None:
    """Only http(s) links become hrefs; ``javascript:`` and friends stay plain text."""
    return url.strip() if url and is_web_url(url) else None


def predicted(r_i: float, r_j: float) -> float:
    """Bradley-Terry probability that i beats j on the Elo scale (ties ignored)."""
    return float(win_probability(r_i - r_j))


# ---------------------------------------------------------------- page pieces


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
    change: str  # "▲2", "▼1", "=", "new" or "" (no previous snapshot)
    change_text: str  # the same in words, for screen readers
    tier: str
    rating: str
    plus: str
    minus: str
    low: str
    high: str
    battles: str
    wins: str
    losses: str
    ties: str
    flags: tuple[str, ...]
    bar: Markup
    # Style-controlled pages only: rank (UB) change against the paired raw board.
    style_change: str = ""
    style_change_text: str = ""


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

    title: str
    board: str
    board_label: str
    snapshot_id: int
    created: str
    nav: tuple[Link, ...]
    caption: tuple[str, ...]
    groups: tuple[TierGroup, ...]
    n_visible: int
    hidden_count: int
    axis_ticks: tuple[str, str]
    # Columns with nothing in them are left out (a fresh install has no metadata).
    has_meta: bool
    has_flags: bool
    charts: tuple[Chart, ...]
    downloads: tuple[Link, ...]
    attribution: str | None
    root: str = ""
    # Raw / style-controlled switch (empty when the board has no paired page).
    switch: tuple[Link, ...] = ()
    style_controlled: bool = False
    # The rank-change column against the raw board (a style page whose raw page exists).
    has_style_change: bool = False
    coefficients: tuple[CoefficientView, ...] = ()


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
class BoardSummary:
    board_label: str
    href: str
    rank: str
    tier: str
    rating: str
    interval: str
    battles: str


@dataclass(frozen=True)
class HistoryRow:
    snapshot_id: int
    date: str
    rating: str
    interval: str


@dataclass(frozen=True)
class ModelPage:
    title: str
    model: str
    label: str
    organisation: str | None
    licence: str | None
    link: str | None
    flags: tuple[str, ...]
    boards: tuple[BoardSummary, ...]
    record_board: str
    opponents: tuple[OpponentView, ...]
    hidden_battles: str | None  # battles against hidden opponents, if any
    history_chart: Markup | None
    history: tuple[HistoryRow, ...]
    nav: tuple[Link, ...]
    attribution: str | None
    root: str = "../"


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
    history: Mapping[str, list[tuple[int, datetime, float, float, float]]] = field(
        default_factory=dict
    )

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


# ---------------------------------------------------------------- builders


def model_href(name: str, root: str = "") -> str:
    return f"{root}models/{slug(name)}.html"


def _rank_change(row: BoardRow, previous: Mapping[str, int | None] | None) -> tuple[str, str]:
    """``previous`` maps model name to its rank (UB) in the previous snapshot of the board."""
    if previous is None or row.rank_ub is None:
        return "", ""
    if row.model not in previous:
        return "new", "new since the previous snapshot"
    before = previous[row.model]
    if before is None:
        return "new", "ranked for the first time: unranked in the previous snapshot"
    return _delta(before, row.rank_ub, "since the previous snapshot")


def _delta(before: int, now: int, since: str) -> tuple[str, str]:
    delta = before - now
    if delta > 0:
        return f"\u25b2{delta}", f"up {delta} {since}"
    if delta < 0:
        return f"\u25bc{-delta}", f"down {-delta} {since}"
    return "=", f"unchanged {since}"


def _style_change(row: BoardRow, raw: Mapping[str, int | None]) -> tuple[str, str]:
    """Rank (UB) under style control against the raw board; ``raw`` maps name to raw rank UB.

    An unranked model on either board gets no change: there is no rank to compare.
    """
    before = raw.get(row.model)
    if row.rank_ub is None:
        return "\u2013", "not ranked under style control"
    if row.model not in raw:
        return "new", "not on the raw board"
    if before is None:
        return "\u2013", "not ranked on the raw board"
    return _delta(before, row.rank_ub, "against the raw board")


# What a larger value of each built-in feature means for an answer, in words.
_FEATURE_WORDS = {
    "tokens": ("the longer answer", "the shorter answer"),
    "headers": ("the answer with more headers", "the answer with fewer headers"),
    "lists": ("the answer with more list items", "the answer with fewer list items"),
    "bold": ("the answer with more bold text", "the answer with less bold text"),
}


def coefficient_view(c: StyleCoefficient) -> CoefficientView:
    """The coefficient with one plain sentence: what its sign says, if the interval backs it."""
    more, less = _FEATURE_WORDS.get(
        c.feature,
        (f"the answer with the higher {c.feature}", f"the answer with the lower {c.feature}"),
    )
    per = "per standard deviation of the feature, in log-odds of winning"
    if c.ci_low > 0:
        meaning = f"Positive: judges prefer {more}, other things equal ({per})."
    elif c.ci_high < 0:
        meaning = f"Negative: judges prefer {less}, other things equal ({per})."
    else:
        meaning = (
            f"The interval includes zero: the data cannot tell whether judges prefer "
            f"{more} or {less}, other things equal."
        )
    return CoefficientView(
        feature=c.feature,
        estimate=f"{c.estimate + 0.0:.3f}",
        interval=f"{c.ci_low + 0.0:.3f} to {c.ci_high + 0.0:.3f}",
        meaning=meaning,
    )


def display(row: BoardRow) -> str:
    return row.display_name or row.model


# Plain words for the option values `arena rebuild` writes; unknown values are shown as is.
_TIER_WORDS = {
    "maxt": "decided by paired bootstrap tests, corrected for testing many pairs at once "
    "with step-down max-t",
    "holm": "decided by paired bootstrap tests, Holm-corrected for testing many pairs",
    "bh": "decided by paired bootstrap tests, controlling the false discovery rate",
    "overlap": "decided by interval overlap",
}
_RULE_WORDS = {
    "leader": "a new tier starts at the first model separated from the current tier's leader",
    "cut": "tiers are split only where every model above is separated from every model below",
}
_TIE_WORDS = {
    "half": "A tie counts as half a win for each model.",
    "davidson": "Ties are modelled explicitly (Davidson's extension of Bradley\u2013Terry).",
}


def _tier_words(o: Mapping) -> str:
    parts = []
    if o.get("tiers"):
        parts.append(_TIER_WORDS.get(str(o["tiers"]), f"tier method: {o['tiers']}"))
    if o.get("tier_rule") and o.get("tiers") != "overlap":
        parts.append(_RULE_WORDS.get(str(o["tier_rule"]), f"rule: {o['tier_rule']}"))
    return f" ({'; '.join(parts)})" if parts else ""


def _tier_claim(o: Mapping) -> str:
    """What a tier boundary promises; it differs by rule, so the words must too."""
    if o.get("tier_rule") == "cut" and o.get("tiers") != "overlap":
        return (
            "A tier is a group of models; every model in a higher tier is significantly "
            "better than every model in a lower tier at this level"
        )
    return (
        "A tier starts with its leader and holds the models below it that the data cannot "
        "tell apart from that leader at this level; models in neighbouring tiers may still "
        "be within the noise of each other"
    )


def describe_method(info: SnapshotInfo) -> list[str]:
    """The plain-words caption: what the page claims and what it does not."""
    o = info.options or {}
    level = o.get("level")
    level_txt = f"{float(level) * 100:g}% " if isinstance(level, (int, float)) else ""
    ci = str(o.get("ci") or "bootstrap")
    rounds = o.get("rounds")
    how = {
        "bootstrap": "a bootstrap over battles"
        + (f" with {int(rounds)} rounds" if isinstance(rounds, (int, float)) else ""),
        "sandwich": "sandwich (robust) standard errors",
        "fisher": "Fisher-information standard errors",
    }.get(ci, ci)
    # "battle" clusters are single battles: the plain bootstrap, nothing to say.
    if o.get("cluster") and str(o["cluster"]) not in ("battle", "none"):
        how += f", resampling whole clusters of battles by {o['cluster']}"
    joint = (
        "simultaneous: all intervals hold together at this level"
        if o.get("simultaneous")
        else "per model: each interval on its own holds at this level"
    )
    models = info.n_models
    lines = [
        f"Ratings are Bradley\u2013Terry estimates on the Elo scale from "
        f"{fmt_count(info.n_battles)} battles between {models} models "
        f"(snapshot {info.id}, computed {fmt_date(info.created_at)}).",
        f"Intervals are {level_txt}confidence intervals from {how}; they are {joint}.",
        "Rank is the range of ranks the data allow: from one plus the number of models "
        "whose interval lies entirely above this model's (the best), to the number of "
        "models whose interval does not lie entirely below it (the worst).",
        _tier_claim(o)
        + _tier_words(o)
        + ". Models in one tier are not ranked against each other: the order inside a tier "
        "follows the point ratings, but the differences are within the noise and could "
        "reverse with more battles.",
    ]
    if o.get("ties"):
        ties = _TIE_WORDS.get(str(o["ties"]), f"Ties are handled as: {o['ties']}.")
        if o.get("both_bad") == "drop":
            ties += " Battles where both answers were judged bad are left out."
        lines.append(ties)
    nu = (info.diagnostics or {}).get("tie_param")
    if nu is not None:
        se = info.diagnostics.get("tie_param_se")
        lines.append(
            f"Davidson tie parameter \u03bd = {nu:.3f}"
            + (f" (standard error {se:.3f})" if se is not None else "")
            + ": between equal models a tie is \u03bd times as likely as a win by either one."
        )
    comps = (info.diagnostics or {}).get("components")
    if comps and comps.get("outside_models"):
        lines.append(
            f"Ratings are on one scale only within a set of models connected by wins and "
            f"losses both ways; the board ranks the largest such set ({comps['comparable_models']} "
            f"models). {comps['outside_models']} other models never met it, or met it without "
            "losing (or winning): they have no rating on this scale and are listed unranked."
        )
    part = (info.diagnostics or {}).get("component")
    if part:
        lines.append(
            f"This board ranks comparable set {part['number']} of the "
            f"{board_label(part['main_board'])} board: its models are not linked to that "
            "board's models by wins and losses both ways, directly or through others, so "
            "their ratings are on their own scale and not comparable with it."
        )
    if o.get("min_battles"):
        lines.append(
            f"Models with fewer than {o['min_battles']} battles are listed but not ranked."
        )
    return lines


def attribution_for(info: SnapshotInfo, override: str | None) -> str | None:
    if override:
        return override
    for source in (info.options or {}, info.diagnostics or {}):
        text = source.get("attribution") if isinstance(source, Mapping) else None
        if isinstance(text, str) and text.strip():
            return text.strip()
    return None


def _row_view(
    row: BoardRow,
    axis: svg.Axis,
    previous: Mapping[str, int | None] | None,
    root: str,
    linked: bool,
) -> RowView:
    change, change_text = _rank_change(row, previous)
    plus, minus = _minus(row.ci_high, row.rating), _minus(row.rating, row.ci_low)
    label = display(row)
    return RowView(
        model=row.model,
        label=label,
        href=model_href(row.model, root) if linked else None,
        organisation=row.organisation,
        licence=row.licence,
        link=safe_link(row.link),
        rank=rank_text(row),
        change=change,
        change_text=change_text,
        tier=str(row.tier) if row.tier is not None else "\u2013",
        rating=fmt_rating(row.rating),
        plus=fmt_rating(plus),
        minus=fmt_rating(minus),
        low=fmt_rating(row.ci_low),
        high=fmt_rating(row.ci_high),
        battles=fmt_count(row.battles),
        wins=fmt_count(row.wins),
        losses=fmt_count(row.losses),
        ties=fmt_count(row.ties),
        flags=row.flags,
        bar=svg.interval_bar(
            row.rating,
            row.ci_low,
            row.ci_high,
            axis,
            label=f"interval {fmt_rating(row.ci_low)} to {fmt_rating(row.ci_high)}",
        )
        if None not in (row.rating, row.ci_low, row.ci_high)
        else Markup(""),
    )


def _groups(rows: Sequence[BoardRow], views: Sequence[RowView]) -> tuple[TierGroup, ...]:
    groups: list[TierGroup] = []
    current: list[RowView] = []
    key: object = object()
    for row, view in zip(rows, views, strict=True):
        k = row.tier if row.ranked else None
        if current and k != key:
            groups.append(_group(key, current, len(groups)))
            current = []
        key = k
        current.append(view)
    if current:
        groups.append(_group(key, current, len(groups)))
    return tuple(groups)


def _group(tier: object, rows: list[RowView], index: int) -> TierGroup:
    n = len(rows)
    plural = "model" if n == 1 else "models"
    if tier is None:
        flags = {f for r in rows for f in r.flags}
        why = ["too few battles"] if "few_battles" in flags or "no_battles" in flags else []
        if "disconnected" in flags:
            why.append(
                "no battles linking some of them to the ranked models, so no rating on this scale"
            )
        if "no_mle" in flags:
            why.append("records that pin no finite rating (e.g. never lost)")
        reason = "; ".join(why) or "too little data"
        return TierGroup(f"Not ranked ({n} {plural}: {reason})", "bandu", tuple(rows))
    return TierGroup(f"Tier {tier} ({n} {plural})", f"band{index % 2}", tuple(rows))


def _top_matrices(board: Board, pairs: Sequence[PairRecord], top: int):
    top_rows = [r for r in board.visible_rows() if r.ranked][:top]
    names = [r.model for r in top_rows]
    index = {n: i for i, n in enumerate(names)}
    n = len(names)
    pred: list[list[float | None]] = [
        [None if i == j else predicted(top_rows[i].rating, top_rows[j].rating) for j in range(n)]
        for i in range(n)
    ]
    score = np.zeros((n, n))
    count = np.zeros((n, n))
    for p in pairs:
        i, j = index.get(p.model_a), index.get(p.model_b)
        if i is None or j is None:
            continue
        tot = p.a_wins + p.b_wins + p.ties
        count[i, j] = count[j, i] = tot
        score[i, j] = p.a_wins + p.ties / 2
        score[j, i] = p.b_wins + p.ties / 2
    observed = [
        [None if i == j or count[i, j] == 0 else float(score[i, j] / count[i, j]) for j in range(n)]
        for i in range(n)
    ]
    counts = [
        [None if i == j or count[i, j] == 0 else float(count[i, j]) for j in range(n)]
        for i in range(n)
    ]
    return [display(r) for r in top_rows], pred, observed, counts


def board_switch(site: SiteBoard, root: str = "") -> tuple[Link, ...]:
    """Links "Raw" / "Style-controlled" between a board's two pages, the current one marked."""
    if site.paired is None:
        return ()
    style, raw = (site, site.paired) if site.board.style_controlled else (site.paired, site)
    return (
        Link("Raw", root + raw.file, raw is site),
        Link("Style-controlled", root + style.file, style is site),
    )


def leaderboard_page(
    site: SiteBoard, *, nav: tuple[Link, ...], top: int, attribution: str | None, linked: set[str]
) -> LeaderboardPage:
    board = site.board
    info = board.snapshot
    rows = board.visible_rows()
    # The axis spans the ranked models' intervals and every rating: one unranked
    # model with a 600-point interval would otherwise squash every other bar.
    # Its bar is clipped at the edge; the numbers beside it are exact.
    rated = [r for r in rows if r.rating is not None]
    lows = [r.ci_low if r.ranked else r.rating for r in rated]
    highs = [r.ci_high if r.ranked else r.rating for r in rated]
    axis = svg.Axis.around(lows, highs)
    before = {r.model: r.rank_ub for r in site.previous.rows} if site.previous is not None else None
    views = [_row_view(r, axis, before, "", r.model in linked) for r in rows]
    has_style_change = board.style_controlled and site.paired is not None
    if has_style_change:
        raw = {r.model: r.rank_ub for r in site.paired.board.rows}
        views = [
            replace(v, style_change=c, style_change_text=t)
            for v, (c, t) in zip(views, (_style_change(r, raw) for r in rows), strict=True)
        ]
    label = board_label(info.board)
    items = [
        svg.IntervalItem(
            display(r), r.rating, r.ci_low, r.ci_high, -1 if not r.ranked else 0, r.tier
        )
        for r in rated
    ]
    # Alternate band shading per tier so neighbouring tiers are visibly separate.
    banded, parity, last = [], 1, object()
    for it in items:
        if it.band != -1 and it.tier != last:
            parity ^= 1
            last = it.tier
        banded.append(
            svg.IntervalItem(
                it.label, it.rating, it.low, it.high, -1 if it.band == -1 else parity, it.tier
            )
        )
    level = (info.options or {}).get("level")
    lvl = f"{float(level) * 100:g}% " if isinstance(level, (int, float)) else ""
    charts = [
        Chart(
            "Ratings and intervals, all models",
            svg.interval_chart(
                banded,
                axis,
                title=f"{label}: ratings with {lvl}confidence intervals",
                desc=f"{len(rows)} models from top to bottom in board order; each line is a "
                f"model's interval, the dot its rating; shaded bands are tiers.",
            ),
        )
    ]
    names, pred, observed, counts = _top_matrices(board, site.pairs, top)
    if len(names) >= 2:
        n = len(names)
        charts.append(
            Chart(
                f"Predicted win probability, top {n}",
                svg.heatmap(
                    names,
                    pred,
                    kind="prob",
                    ident="hp",
                    title=f"Predicted probability (percent) that the row model beats the "
                    f"column model, top {n}",
                    desc="From the Bradley-Terry ratings, ignoring ties. Red: row model "
                    "favoured; blue: column model favoured.",
                ),
                "Percent chance that the row model beats the column model, from the ratings.",
            )
        )
        charts.append(
            Chart(
                f"Observed win rate, top {n}",
                svg.heatmap(
                    names,
                    observed,
                    kind="prob",
                    ident="ho",
                    title=f"Observed score rate (percent) of the row model against the "
                    f"column model, top {n}",
                    desc="Wins plus half of the ties over battles, in direct battles "
                    "only; blank where the two never met.",
                ),
                "Row model's wins plus half its ties, per direct battle; blank: never met.",
            )
        )
        charts.append(
            Chart(
                f"Battles between the top {n}",
                svg.heatmap(
                    names,
                    counts,
                    kind="count",
                    ident="hn",
                    title=f"Number of direct battles between each pair, top {n}",
                    desc="Darker cells mean more battles; blank where the two never met.",
                ),
                "Direct battles per pair: how much data each observed rate rests on.",
            )
        )
    ticks = (fmt_rating(axis.lo), fmt_rating(axis.hi))
    return LeaderboardPage(
        title=f"{label} leaderboard",
        board=info.board,
        board_label=label,
        snapshot_id=info.id,
        created=fmt_date(info.created_at),
        nav=nav,
        caption=tuple(describe_method(info)),
        groups=_groups(rows, views),
        n_visible=len(rows),
        hidden_count=sum(1 for r in board.rows if r.hidden),
        axis_ticks=ticks,
        charts=tuple(charts),
        has_meta=any(r.organisation or r.licence or safe_link(r.link) for r in rows),
        has_flags=any(r.flags for r in rows),
        downloads=(
            Link("leaderboard JSON", site.downloads[0]),
            Link("leaderboard CSV", site.downloads[1]),
        ),
        attribution=attribution,
        switch=board_switch(site),
        style_controlled=board.style_controlled,
        has_style_change=has_style_change,
        coefficients=tuple(coefficient_view(c) for c in board.style_coefficients),
    )


def model_page(
    name: str,
    sites: Sequence[SiteBoard],
    *,
    nav: tuple[Link, ...],
    attribution: str | None,
    linked: set[str],
) -> ModelPage:
    """``sites`` in navigation order; the first board that lists the model gives the
    record against each opponent and the history."""
    present = [(s, s.rows_by_name[name]) for s in sites if name in s.rows_by_name]
    primary, row = present[0]
    summaries = tuple(
        BoardSummary(
            board_label=nav_label(s.board.snapshot.board),
            href=f"../{s.file}",
            rank=rank_text(r),
            tier=str(r.tier) if r.tier is not None else "not ranked",
            rating=fmt_rating(r.rating),
            interval=f"{fmt_rating(r.ci_low)} to {fmt_rating(r.ci_high)}",
            battles=fmt_count(r.battles),
        )
        for s, r in present
    )
    by_name = primary.rows_by_name
    opponents, hidden_battles = [], 0.0
    for p in primary.pairs_by_model.get(name, ()):
        mine_a = p.model_a == name
        other = p.model_b if mine_a else p.model_a
        w, lo = (p.a_wins, p.b_wins) if mine_a else (p.b_wins, p.a_wins)
        n = w + lo + p.ties
        orow = by_name.get(other)
        if orow is None or orow.hidden:
            hidden_battles += n
            continue
        opponents.append(
            (
                -orow.rating if orow.rating is not None else float("inf"),
                other,
                OpponentView(
                    label=display(orow),
                    href=model_href(other, "../") if other in linked else None,
                    battles=fmt_count(n),
                    wins=fmt_count(w),
                    losses=fmt_count(lo),
                    ties=fmt_count(p.ties),
                    observed=f"{(w + p.ties / 2) / n * 100:.0f}%" if n else "\u2013",
                    expected=f"{predicted(row.rating, orow.rating) * 100:.0f}%"
                    if row.rating is not None and orow.rating is not None
                    else "\u2013",
                ),
            )
        )
    opponents.sort(key=lambda t: (t[0], t[1]))
    hist = primary.history.get(name, [])
    history = tuple(
        HistoryRow(sid, fmt_date(at), fmt_rating(r), f"{fmt_rating(lo)} to {fmt_rating(hi)}")
        for sid, at, r, lo, hi in hist
    )
    label = display(row)
    chart = None
    points = [
        svg.HistoryPoint(fmt_date(at)[:10], r, lo, hi)
        for _, at, r, lo, hi in hist
        if None not in (r, lo, hi)
    ]
    if points:
        chart = svg.history_chart(
            points,
            title=f"Rating history of {label} ({board_label(primary.board.snapshot.board)})",
            desc=f"Rating and interval at each of {len(hist)} snapshots, oldest first; "
            "the same numbers are in the table below.",
        )
    return ModelPage(
        title=f"{label} \u2013 model",
        model=name,
        label=label,
        organisation=row.organisation,
        licence=row.licence,
        link=safe_link(row.link),
        flags=row.flags,
        boards=summaries,
        record_board=board_label(primary.board.snapshot.board),
        opponents=tuple(o for _, _, o in opponents),
        hidden_battles=fmt_count(hidden_battles) if hidden_battles else None,
        history_chart=chart,
        history=history,
        nav=nav,
        attribution=attribution,
    )
