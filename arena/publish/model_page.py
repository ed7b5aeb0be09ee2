"""A model's page: its standing on every board, its record against each opponent, its history."""

from __future__ import annotations

from collections.abc import Sequence

from arena.boards.snapshots import BoardRow
from arena.core.words import flag_legend, flag_word
from arena.publish import svg
from arena.publish.fmt import (
    display,
    fmt_count,
    fmt_date,
    fmt_interval,
    fmt_rating,
    model_href,
    predicted,
    rank_text,
    safe_link,
)
from arena.publish.views import BoardSummary, HistoryRow, Link, ModelPage, OpponentView, SiteBoard

#: The history chart's width in CSS pixels: a 390 px phone shows it whole at
#: 11 px text; a desktop draws it at most 4/3 larger (``.chart.history``).
HISTORY_WIDTH = 360


def _alone(site: SiteBoard, r: BoardRow) -> str:
    got = site.rank_alone.get(r.model) if r.ranked else None
    if got is None:
        return ""
    return str(got[0]) if got[0] == got[1] else f"{got[0]}\u2013{got[1]}"


def _summary(site: SiteBoard, r: BoardRow) -> BoardSummary:
    return BoardSummary(
        board_label=site.label,
        href=f"../{site.file}",
        rank=rank_text(r),
        tier=str(r.tier) if r.tier is not None else "not ranked",
        rating=fmt_rating(r.rating),
        interval=fmt_interval(r.rating, r.ci_low, r.ci_high),
        battles=fmt_count(r.battles),
        rank_alone=_alone(site, r),
    )


def _opponents(
    name: str, row: BoardRow, primary: SiteBoard, linked: set[str]
) -> tuple[list[OpponentView], float]:
    """The record against each shown opponent (by rating), and battles against hidden ones."""
    by_name = primary.rows_by_name
    found, hidden_battles = [], 0.0
    for p in primary.pairs_by_model.get(name, ()):
        mine_a = p.model_a == name
        other = p.model_b if mine_a else p.model_a
        w, lo = (p.a_wins, p.b_wins) if mine_a else (p.b_wins, p.a_wins)
        n = w + lo + p.ties
        orow = by_name.get(other)
        if orow is None or orow.hidden:
            hidden_battles += n
            continue
        found.append(
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
    found.sort(key=lambda t: (t[0], t[1]))
    return [o for _, _, o in found], hidden_battles


def model_page(
    name: str,
    sites: Sequence[SiteBoard],
    *,
    nav: tuple[Link, ...],
    attribution: str | None,
    linked: set[str],
    og_image: str | None = None,
) -> ModelPage:
    """``sites`` in navigation order; the first board that lists the model gives the
    record against each opponent and the history."""
    present = [(s, s.rows_by_name[name]) for s in sites if name in s.rows_by_name]
    primary, row = present[0]
    summaries = tuple(_summary(s, r) for s, r in present)
    opponents, hidden_battles = _opponents(name, row, primary, linked)
    hist = primary.history.get(name, [])
    history = tuple(
        HistoryRow(sid, fmt_date(at), fmt_rating(r), fmt_interval(r, lo, hi))
        for sid, at, r, lo, hi in hist
    )
    label = display(row)
    chart = None
    points = [
        svg.HistoryPoint(fmt_date(at)[:10], r, lo, hi, at)
        for _, at, r, lo, hi in hist
        if r is not None and lo is not None and hi is not None
    ]
    note = ""
    if len(points) == 1:
        (p,) = points
        note = (
            f"One snapshot so far ({p.label}): rating {fmt_rating(p.rating)}, interval "
            f"{fmt_rating(p.low)} to {fmt_rating(p.high)}. The chart appears with the second."
        )
    elif points:
        chart = svg.history_chart(
            points,
            # drawn for a phone's width (390 px): 11 px text, nothing past the edge
            width=HISTORY_WIDTH,
            title=f"Rating history of {label} ({primary.label})",
            desc=f"Rating and interval at each of {len(hist)} snapshots, oldest first; "
            "the same numbers are in the table below.",
        )
    head = summaries[0]
    standing = (
        f"rank {head.rank}, rating {head.rating} ({head.interval})"
        if row.ranked
        else f"not ranked, {head.battles} battles"
    )
    return ModelPage(
        title=f"{label}: {primary.label} rating and record",
        description=f"{label} on the {primary.label} leaderboard: {standing}; "
        f"record against {len(opponents)} opponents and rating history.",
        model=name,
        label=label,
        organisation=row.organisation,
        licence=row.licence,
        link=safe_link(row.link),
        flags=tuple(flag_word(f) for f in row.flags),
        legend=flag_legend(row.flags),
        headline=head,
        boards=summaries,
        record_board=primary.label,
        opponents=tuple(opponents),
        hidden_battles=fmt_count(hidden_battles) if hidden_battles else None,
        history_chart=chart,
        history=history,
        history_note=note,
        nav=nav,
        attribution=attribution,
        og_image=og_image,
    )
