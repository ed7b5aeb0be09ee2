"""The leaderboard page of one board: rows grouped in tier bands, charts, switch and words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from markupsafe import Markup

from arena.boards.components import same_set
from arena.boards.diff import rank_move, rank_set
from arena.boards.snapshots import BoardRow, StyleCoefficient
from arena.core.defaults import DEFAULT_LEVEL
from arena.core.words import flag_legend, flag_word
from arena.publish import svg
from arena.publish.baseline import baseline_chart, baseline_design
from arena.publish.fmt import (
    display,
    fmt_count,
    fmt_date,
    fmt_interval,
    fmt_rating,
    interval_words,
    model_href,
    rank_text,
    safe_link,
)
from arena.publish.heatmaps import board_heatmaps
from arena.publish.views import (
    Chart,
    CoefficientView,
    LeaderboardPage,
    Link,
    RowView,
    SiteBoard,
    TierGroup,
)
from arena.publish.words import (
    coefficient_meaning,
    describe_method,
    level_text,
    tier_line,
    unranked_reason,
)

#: A rank set's move as a mark: the words say from which set to which.
_MARKS = {"up": "\u25b2", "down": "\u25bc", "moved": "\u2195", "unchanged": "="}

Ranks = tuple[int, int] | None


def _set_text(ranks: tuple[int, int]) -> str:
    low, high = ranks
    return str(low) if low == high else f"{low}\u2013{high}"


def _delta(before: tuple[int, int], now: tuple[int, int], since: str) -> tuple[str, str]:
    """(mark, words) for a rank set's move: the board's simultaneous rank set, as shown."""
    move = rank_move(now, before)
    if move == "unchanged":
        return "=", f"rank {_set_text(now)} unchanged {since}"
    verb = {"up": "up", "down": "down", "moved": "changed"}[move]
    return _MARKS[move], f"{verb} from rank {_set_text(before)} to {_set_text(now)} {since}"


def _rank_change(row: BoardRow, previous: Mapping[str, Ranks] | None) -> tuple[str, str, bool]:
    """(mark, words, new) against the previous snapshot; ``previous`` maps name to rank set.

    Unchanged ranks show no mark (an "=" on every row is noise); a model absent
    from the previous snapshot is "new". Without a previous snapshot nothing is shown.
    """
    if previous is None:
        return "", "", False
    if row.model not in previous:
        return "", "new since the previous snapshot", True
    before, now = previous[row.model], rank_set(row)
    if now[0] is None or before is None:
        return "", "", False
    mark, words = _delta(before, now, "since the previous snapshot")  # type: ignore[arg-type]
    return ("" if mark == "=" else mark), words, False


def style_change_of(row: BoardRow, raw: Mapping[str, Ranks]) -> tuple[str, str]:
    """Rank set under style control against the raw board's; ``raw`` maps name to rank set.

    An unranked model on either board gets no change: there is no rank to compare.
    """
    before, now = raw.get(row.model), rank_set(row)
    if now[0] is None:
        return "\u2013", "not ranked under style control"
    if row.model not in raw:
        return "new", "not on the raw board"
    if before is None:
        return "\u2013", "not ranked on the raw board"
    return _delta(before, now, "against the raw board")  # type: ignore[arg-type]


def rank_sets(rows: Sequence[BoardRow]) -> dict[str, Ranks]:
    """Name to simultaneous rank set (``None`` if unranked) of a board's rows."""
    out: dict[str, Ranks] = {}
    for r in rows:
        low, high = rank_set(r)
        out[r.model] = None if low is None or high is None else (low, high)
    return out


def coefficient_view(c: StyleCoefficient) -> CoefficientView:
    return CoefficientView(
        feature=c.feature,
        estimate=f"{c.estimate + 0.0:.3f}",
        interval=f"{c.ci_low + 0.0:.3f} to {c.ci_high + 0.0:.3f}",
        meaning=coefficient_meaning(c),
    )


def _find_text(row: BoardRow) -> str:
    """The name filter's words for a row beyond its shown name (``RowView.find``)."""
    words = [w for w in (row.model, row.organisation) if w and w != display(row)]
    # one per line: a query (one line) never matches across two of them
    return "\n".join([display(row), *words]).lower() if words else ""


def _row_view(
    row: BoardRow,
    axis: svg.Axis,
    previous: Mapping[str, Ranks] | None,
    root: str,
    linked: bool,
) -> RowView:
    change, change_text, new = _rank_change(row, previous)
    words = interval_words(row.ci_low, row.ci_high)
    bar = Markup("")
    if row.rating is not None and row.ci_low is not None and row.ci_high is not None:
        bar = svg.interval_bar(row.rating, row.ci_low, row.ci_high, axis, label=words)
    return RowView(
        model=row.model,
        label=display(row),
        href=model_href(row.model, root) if linked else None,
        organisation=row.organisation,
        licence=row.licence,
        link=safe_link(row.link),
        rank=rank_text(row),
        change=change,
        change_text=change_text,
        new=new,
        rating=fmt_rating(row.rating),
        interval=fmt_interval(row.rating, row.ci_low, row.ci_high),
        interval_words=words,
        battles=fmt_count(row.battles),
        wins=fmt_count(row.wins),
        losses=fmt_count(row.losses),
        ties=fmt_count(row.ties),
        flags=tuple(flag_word(f) for f in row.flags),
        tier=f"tier {row.tier}" if row.ranked and row.tier is not None else "",
        find=_find_text(row),
        bar=bar,
    )


def _battles_without_style(
    rows: Sequence[BoardRow], views: list[RowView], raw: Mapping[str, BoardRow]
) -> list[RowView]:
    """A style-controlled row with no battle in the fit says how many the model has
    on the raw board ("0 of 1,000"): its battles carry no style metadata, and a bare
    "0, 0/0/0" would read as a model that never played."""
    out = []
    for r, v in zip(rows, views, strict=True):
        other = raw.get(r.model)
        if not r.battles and other is not None and other.battles:
            v = replace(v, battles=f"0 of {fmt_count(other.battles)}", wins="–", losses="–", ties="–")  # fmt: skip
        out.append(v)
    return out


def _groups(rows: Sequence[BoardRow], views: Sequence[RowView]) -> tuple[TierGroup, ...]:
    groups: list[TierGroup] = []
    current: list[tuple[BoardRow, RowView]] = []
    key: object = object()
    for row, view in zip(rows, views, strict=True):
        k = row.tier if row.ranked else None
        if current and k != key:
            groups.append(_group(key, current, len(groups)))
            current = []
        key = k
        current.append((row, view))
    if current:
        groups.append(_group(key, current, len(groups)))
    return tuple(groups)


def _group(tier: object, rows: list[tuple[BoardRow, RowView]], index: int) -> TierGroup:
    n = len(rows)
    plural = "model" if n == 1 else "models"
    views = tuple(v for _, v in rows)
    if tier is None:
        reason = unranked_reason({f for r, _ in rows for f in r.flags})
        return TierGroup(f"Not ranked ({n} {plural}: {reason})", "bandu", views)
    return TierGroup(f"Tier {tier} ({n} {plural})", f"band{index % 2}", views)


def _tick(x: float) -> str:
    """An axis end: ``1100`` for the round ends the axis has, one decimal otherwise."""
    return f"{x:.0f}" if float(x).is_integer() else fmt_rating(x)


def board_switch(site: SiteBoard, root: str = "") -> tuple[Link, ...]:
    """Links "Raw" / "Style-controlled" between a board's two pages, the current one marked."""
    if site.paired is None:
        return ()
    style, raw = (site, site.paired) if site.board.style_controlled else (site.paired, site)
    return (
        Link("Raw", root + raw.file, raw is site),
        Link("Style-controlled", root + style.file, style is site),
    )


def _interval_chart(rows: Sequence[BoardRow], axis: svg.Axis, label: str, lvl: str) -> Chart:
    # no interval to draw for a row without one (an open bound is stored as none)
    drawn = [
        (r, r.rating, r.ci_low, r.ci_high)
        for r in rows
        if r.rating is not None and r.ci_low is not None and r.ci_high is not None
    ]
    bands = svg.tier_bands([(r.ranked, r.tier) for r, *_ in drawn])
    items = [
        svg.IntervalItem(display(r), rating, low, high, band, r.tier)
        for (r, rating, low, high), band in zip(drawn, bands, strict=True)
    ]
    return Chart(
        "Ratings and intervals, all models",
        svg.interval_chart(
            items,
            axis,
            title=f"{label}: ratings with {lvl}confidence intervals",
            desc=f"{len(rows)} models from top to bottom in board order; each line is a "
            f"model's interval, the dot its rating; shaded bands are tiers.",
        ),
    )


def _heatmaps(site: SiteBoard, top: int) -> list[Chart]:
    """The three head-to-head matrices of the top ``top`` models (:mod:`arena.publish.heatmaps`),
    or, on a baseline design, every model's score against the baseline (:mod:`arena.publish.baseline`)."""
    found = baseline_design(site.pairs)
    if found is not None:
        level = float(site.board.snapshot.options.get("level", DEFAULT_LEVEL))
        chart = baseline_chart(site.board, site.pairs, found, level)
        return [Chart(chart.heading, chart.svg, chart.note)]
    charts = board_heatmaps(site.board, site.pairs, top=top)
    if not charts:
        return []
    n = min(top, sum(1 for r in site.board.visible_rows() if r.ranked))
    shown = f"top {n} by rating shown"
    return [Chart(h.heading, h.svg, f"{h.note.rstrip('.')}; {shown}.") for h in charts]


def leaderboard_page(
    site: SiteBoard,
    *,
    nav: tuple[Link, ...],
    top: int,
    attribution: str | None,
    linked: set[str],
    og_image: str | None = None,
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
    # ends on a finer step than the ticks: the bars use the width (a 500-point step
    # put a board of ratings 400-1600 on 0-2000)
    axis = svg.Axis.around(lows, highs, ticks=12)
    # Rank changes only against the same comparable set: a set's board (N >= 2) is
    # renumbered by each rebuild, so its previous snapshot may hold other models.
    previous = site.previous
    other_set = previous is not None and not same_set(previous, board)
    if other_set:
        previous = None
    before = rank_sets(previous.rows) if previous is not None else None
    views = [_row_view(r, axis, before, "", r.model in linked) for r in rows]
    has_style_change = board.style_controlled and site.paired is not None
    if has_style_change and site.paired is not None:
        raw = rank_sets(site.paired.board.rows)
        views = [
            replace(v, style_change=c, style_change_text=t)
            for v, (c, t) in zip(views, (style_change_of(r, raw) for r in rows), strict=True)
        ]
    if board.style_controlled and site.paired is not None:
        views = _battles_without_style(rows, views, site.paired.rows_by_name)
    label = site.label
    date = fmt_date(info.created_at)[:10]
    notes = [site.rule] if site.rule else []
    if board.style_controlled:
        notes.append(
            "Style-controlled: ratings adjusted for answer length and markdown, "
            "as on LMArena's default view."
            + (" The raw ratings are one click away." if site.paired is not None else "")
        )
    elif site.paired is None:
        why = (
            "these battles carry no style metadata"
            if info.options.get("style_control", True)
            else "the rebuild ran with style control off"
        )
        notes.append(f"Raw ratings, not adjusted for answer style ({why}).")
    charts = [_interval_chart(rows, axis, label, level_text(info)), *_heatmaps(site, top)]
    top_names = ", ".join(display(r) for r in rows[:3] if r.ranked)
    return LeaderboardPage(
        title=f"{label} LLM leaderboard: {len(rows)} models, {date}",
        description=f"{label} leaderboard of {len(rows)} models from "
        f"{fmt_count(info.n_battles)} battles (snapshot {info.id}, {date}): ratings with "
        f"{level_text(info)}confidence intervals, rank ranges and tiers."
        + (f" Top: {top_names}." if top_names else ""),
        heading=f"{label} leaderboard",
        board=info.board,
        board_label=label,
        snapshot_id=info.id,
        created=fmt_date(info.created_at),
        nav=nav,
        tier_line=tier_line(info),
        caption=tuple(describe_method(info)),
        groups=_groups(rows, views),
        n_visible=len(rows),
        hidden_count=sum(1 for r in board.rows if r.hidden),
        axis_ticks=(_tick(axis.lo), _tick(axis.hi)),
        has_change=previous is not None,
        no_change=(
            "the previous snapshot of this board holds another comparable set, so no rank changes"
            if other_set
            else "the first snapshot of this board, so no rank changes yet"
        ),
        legend=flag_legend(f for r in rows for f in r.flags),
        charts=tuple(charts),
        downloads=(
            Link(f"{label} leaderboard, JSON", site.downloads[0]),
            Link(f"{label} leaderboard, CSV", site.downloads[1]),
        ),
        attribution=attribution,
        og_image=og_image,
        switch=board_switch(site),
        style_controlled=board.style_controlled,
        has_style_change=has_style_change,
        coefficients=tuple(coefficient_view(c) for c in board.style_coefficients),
        notes=tuple(notes),
    )
