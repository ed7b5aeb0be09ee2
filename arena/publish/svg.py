"""Server-side inline SVG charts: the page needs no JavaScript to show uncertainty.

Every function returns :class:`markupsafe.Markup` that the templates insert as
is, so *every* piece of text that goes into the SVG is escaped here with
:func:`markupsafe.escape` (model names are untrusted input). Numbers are
written with fixed formats so that the same snapshot gives byte-identical
output. Colours of lines and marks come from CSS classes (``style.css``) so that
the charts follow the light/dark theme; text outside cells inherits the page's
text colour. Every mark carries a ``<title>`` (a tooltip with the full name and
the numbers). Heatmaps are in :mod:`arena.publish.heatmaps`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from markupsafe import Markup, escape

from arena.publish.svgkit import Axis, clip_all, num, tick_text
from arena.publish.svgkit import title as tooltip

__all__ = [
    "Axis",
    "HistoryPoint",
    "IntervalItem",
    "history_chart",
    "tier_bands",
    "interval_bar",
    "interval_chart",
]


def _f1(x: float) -> str:
    return f"{x + 0.0:.1f}"


def interval_bar(
    rating: float,
    low: float,
    high: float,
    axis: Axis,
    *,
    label: str,
    width: int = 240,
    height: int = 16,
) -> Markup:
    """One row's interval on the page-wide axis: a thick bar, a tick at the rating.

    CSS narrows the bar on phones (``preserveAspectRatio="none"``); the marks are
    lines with non-scaling strokes, so they keep their thickness when squeezed.
    ``label`` is the ``<title>``: the tooltip and the image's accessible name.
    """
    x0, x1, xr = (axis.x(v, width - 4, 2) for v in (low, high, rating))
    mid = num(height / 2)
    return Markup(
        f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'preserveAspectRatio="none" role="img">{tooltip(label)}'
        f'<line class="ax" x1="0" x2="{width}" y1="{mid}" y2="{mid}"/>'
        f'<line class="ci" x1="{num(x0)}" x2="{num(max(x1, x0 + 1))}" y1="{mid}" y2="{mid}"/>'
        f'<line class="tk" x1="{num(xr)}" x2="{num(xr)}" y1="1" y2="{height - 1}"/></svg>'
    )


@dataclass(frozen=True)
class IntervalItem:
    label: str
    rating: float
    low: float
    high: float
    band: int  # tier band parity (0/1), -1 for unranked models
    tier: int | None


def tier_bands(rows: Sequence[tuple[bool, int | None]]) -> list[int]:
    """The shading band of each (ranked, tier) row in board order: 0 and 1 alternate
    from one tier to the next, so neighbouring tiers are visibly apart; -1 is not ranked."""
    bands = []
    parity, last = 1, object()
    for ranked, tier in rows:
        if ranked and tier != last:
            parity ^= 1
            last = tier
        bands.append(parity if ranked else -1)
    return bands


#: Width of one label character at the charts' 11 px font (a generous average),
#: used to put each name on the side of its interval where it fits.
_CHAR_W = 6.2


def _label_side(x0: float, x1: float, text: str, lo: float, hi: float) -> tuple[float, str, int]:
    """Where a model's name goes: right of its interval if it fits there, else left of
    it; an interval too wide for either gets its name above the line, at the plot's
    left end (its row is then taller: see :data:`_ABOVE`). Returns (x, text-anchor,
    baseline shift)."""
    need = len(text) * _CHAR_W + 6
    if hi - x1 >= need:
        return x1 + 6, "start", 4
    if x0 - lo >= need:
        return x0 - 6, "end", 4
    return lo + 2, "start", -5


#: Extra height of a row whose name sits above its line: without it that name
#: overlaps the name of the row above when that one sits at the left end too.
_ABOVE = 10


def interval_chart(
    items: Sequence[IntervalItem],
    axis: Axis,
    *,
    title: str,
    desc: str,
    width: int = 420,
    ident: str = "ic",
    value: str = "rating",
    unit: str = "",
    mark: float | None = None,
) -> Markup:
    """All models on one axis, top to bottom in board order, tiers as shaded bands.

    Each name sits beside its own interval (the leaders' to the left, the others'
    to the right), so the chart needs no label column and is narrow enough for a
    phone: drawn at 100 % to 120 % of its size (inline style), its text never
    shrinks below 11 px (a phone narrower than 420 px scrolls it a little). A name that fits on neither side gets a line of its own
    above its interval. ``ident`` keeps the ids of two charts on one page apart;
    ``value`` and ``unit`` name the numbers in the tooltips ("rating", "score" in "%");
    ``mark``: a value drawn as a dashed line across the plot (50 % against a baseline).
    """
    # Tier names sit in their own right margin so they never cover an interval.
    row, top, left, right = 16, 24, 16, 52
    plot_w = width - left - right
    shorts = clip_all([it.label for it in items], 25)
    places, tops, y0 = [], [], top
    for it, short in zip(items, shorts, strict=True):
        x0, x1, xr = (axis.x(v, plot_w, left) for v in (it.low, it.high, it.rating))
        place = _label_side(x0, x1, short, left, left + plot_w)
        y0 += _ABOVE if place[2] < 0 else 0
        places.append((x0, x1, xr, place))
        tops.append(y0)  # the top of the row's line
        y0 += row
    tops.append(y0)
    height = y0 + 8
    parts = [
        f'<svg class="chart intervals" viewBox="0 0 {width} {height}" '
        f'style="min-width:{width}px;max-width:{round(width * 1.2)}px" '
        f'role="img" aria-labelledby="{ident}-t {ident}-d"><title id="{ident}-t">{escape(title)}</title>'
        f'<desc id="{ident}-d">{escape(desc)}</desc>'
    ]

    def band_top(i: int) -> float:
        # a row's band includes the line of its name above it
        return tops[i] - (_ABOVE if i < len(items) and places[i][3][2] < 0 else 0)

    # Tier bands first so they sit under the marks.
    start = 0
    for i in range(1, len(items) + 1):
        if (
            i == len(items)
            or items[i].band != items[start].band
            or items[i].tier != items[start].tier
        ):
            band = items[start].band
            cls = "band0" if band == 0 else "band1" if band == 1 else "bandu"
            y_top = top if start == 0 else band_top(start)
            y_end = tops[-1] if i == len(items) else band_top(i)
            parts.append(
                f'<rect class="{cls}" x="0" y="{num(y_top)}" width="{width}" '
                f'height="{num(y_end - y_top)}"/>'
            )
            name = f"Tier {items[start].tier}" if items[start].tier is not None else "not ranked"
            parts.append(
                f'<text class="tl" x="{width - 4}" y="{num(y_top + 11)}" '
                f'text-anchor="end">{escape(name)}</text>'
            )
            start = i
    parts.append('<g text-anchor="middle">')
    for t in axis.ticks(5):
        x = num(axis.x(t, plot_w, left))
        parts.append(
            f'<line class="grid" x1="{x}" x2="{x}" y1="{top - 4}" y2="{height - 8}"/>'
            f'<text class="tick" x="{x}" y="{top - 8}">{tick_text(t)}</text>'
        )
    if mark is not None:
        x = num(axis.x(mark, plot_w, left))
        parts.append(f'<line class="mark" x1="{x}" x2="{x}" y1="{top - 4}" y2="{height - 8}"/>')
    # One group per model: its <title> is the tooltip of the label, line and dot
    # (300 models: ~80 KB of the main page, so each row is written tersely).
    parts.append('</g><g text-anchor="end">')
    for i, it in enumerate(items):
        y = tops[i] + row / 2
        x0, x1, xr, (tx, anchor, dy) = places[i]
        tier = f"tier {it.tier}" if it.tier is not None else "not ranked"
        tip = f"{it.label}: {value} {_f1(it.rating)}{unit}, interval {_f1(it.low)} to {_f1(it.high)}{unit}"  # fmt: skip
        side = ' text-anchor="start"' if anchor == "start" else ""
        parts.append(
            f"<g><title>{escape(tip)}, {tier}</title>"
            f'<text x="{num(tx)}" y="{num(y + dy)}"{side}>{escape(shorts[i])}</text>'
            f'<path class="ci" d="M{num(x0)} {num(y)}H{num(x1)}"/>'
            f'<circle class="pt" cx="{num(xr)}" cy="{num(y)}" r="3"/></g>'
        )
    parts.append("</g></svg>")
    return Markup("".join(parts))


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class HistoryPoint:
    label: str  # the snapshot date
    rating: float
    low: float
    high: float
    #: When the snapshot was computed: the chart spaces snapshots by it (evenly without).
    at: datetime | None = None


def _point_tip(p: HistoryPoint) -> str:
    return f"{p.label}: rating {_f1(p.rating)}, interval {_f1(p.low)} to {_f1(p.high)}"


def _one_snapshot(p: HistoryPoint, *, head: str, width: int) -> Markup:
    """A single snapshot has no history to draw: say so, and show its one interval."""
    left, right, height = 52, 16, 84
    axis = Axis.around([p.low], [p.high], ticks=4)
    pw = width - left - right
    x0, x1, xr = (axis.x(v, pw, left) for v in (p.low, p.high, p.rating))
    parts = [
        head.replace("{h}", str(height)),
        f'<text class="note" x="{left}" y="18">One snapshot so far: rating {_f1(p.rating)}, '
        f"interval {_f1(p.low)} to {_f1(p.high)} ({escape(p.label)}).</text>",
        '<g text-anchor="middle">',
    ]
    for t in axis.ticks(4):
        x = num(axis.x(t, pw, left))
        parts.append(
            f'<line class="grid" x1="{x}" x2="{x}" y1="34" y2="58"/>'
            f'<text class="tick" x="{x}" y="74">{tick_text(t)}</text>'
        )
    parts.append(
        f"</g><g>{tooltip(_point_tip(p))}"
        f'<line class="ci" x1="{num(x0)}" x2="{num(max(x1, x0 + 1))}" y1="46" y2="46"/>'
        f'<circle class="pt" cx="{num(xr)}" cy="46" r="3.5"/></g></svg>'
    )
    return Markup("".join(parts))


#: Width of a date label (``2026-11-24``) at the charts' 11 px font, and the gap kept
#: between two labels.
_DATE_W, _DATE_GAP = 10 * _CHAR_W, 10


def _seconds(at: datetime) -> float:
    # SQLite hands back naive datetimes that were written as UTC
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).timestamp()


def _x_positions(points: Sequence[HistoryPoint], left: float, width: float) -> list[float]:
    """By time when every point has one and they span some; else evenly, in order."""
    n = len(points)
    if all(p.at is not None for p in points):
        t = [_seconds(p.at) for p in points if p.at is not None]  # every one
        span = max(t) - min(t)
        if span > 0:
            return [left + width * (v - min(t)) / span for v in t]
    return [left + width * i / (n - 1) for i in range(n)]


def _date_labels(xs: Sequence[float], labels: Sequence[str], most: int = 6) -> list[int]:
    """Which points get a date under them: the newest, then the oldest, then the others
    newest first, each only where it overlaps no label placed before and is not the
    same date again; at most ``most``. Spaced by time, snapshots a few days apart
    sit closer than a label is wide."""
    n = len(xs)

    def span(i: int) -> tuple[float, float]:
        # end labels are anchored inwards so the dates are never cut off
        if i == n - 1:
            return xs[i] - _DATE_W, xs[i]
        if i == 0:
            return xs[i], xs[i] + _DATE_W
        return xs[i] - _DATE_W / 2, xs[i] + _DATE_W / 2

    placed: list[int] = []
    for i in [n - 1, 0, *range(n - 2, 0, -1)]:
        if len(placed) == most or any(labels[i] == labels[j] for j in placed):
            continue
        lo, hi = span(i)
        if all(hi + _DATE_GAP <= span(j)[0] or span(j)[1] + _DATE_GAP <= lo for j in placed):
            placed.append(i)
    return sorted(placed)


def history_chart(
    points: Sequence[HistoryPoint], *, title: str, desc: str, width: int = 640, height: int = 220
) -> Markup:
    """Rating with its interval at each snapshot of a board, oldest on the left.

    Snapshots are placed by the time they were computed (``HistoryPoint.at``), so a
    week between two reads as a week; points without times are spaced evenly.
    One snapshot is not a history: the chart then says "one snapshot so far"
    and shows that snapshot's interval on a horizontal axis.
    """
    head = (
        # never narrower than its viewBox: 11 px text on a phone (it scrolls sideways)
        f'<svg class="chart history" viewBox="0 0 {width} {{h}}" style="min-width:{width}px" '
        'role="img" '
        f'aria-labelledby="hc-t hc-d"><title id="hc-t">{escape(title)}</title>'
        f'<desc id="hc-d">{escape(desc)}</desc>'
    )
    if len(points) == 1:
        return _one_snapshot(points[0], head=head, width=width)
    left, right, top, bottom = 52, 16, 14, 40
    pw, ph = width - left - right, height - top - bottom
    if all(p.at is not None for p in points):
        # stable: id order on ties (every point has a time here)
        points = sorted(points, key=lambda p: _seconds(p.at) if p.at is not None else 0.0)
    axis = Axis.around([p.low for p in points], [p.high for p in points], ticks=4)
    n = len(points)

    def ypos(v: float) -> float:
        return top + ph - axis.x(v, ph)

    parts = [head.replace("{h}", str(height)), '<g text-anchor="end">']
    for t in axis.ticks(4):
        y = num(ypos(t))
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y}" y2="{y}"/>'
            f'<text class="tick" x="{left - 6}" y="{y}" dy="4">{tick_text(t)}</text>'
        )
    parts.append("</g>")
    # Each coordinate is formatted once (a publish draws ~300 of these charts).
    xs = [num(x) for x in _x_positions(points, left, pw)]
    lo, hi, mid = ([num(ypos(getattr(p, f))) for p in points] for f in ("low", "high", "rating"))
    band = [f"{x},{y}" for x, y in zip(xs, hi, strict=True)]
    band += [f"{x},{y}" for x, y in zip(reversed(xs), reversed(lo), strict=True)]
    parts.append(f'<polygon class="cib" points="{" ".join(band)}"/>')
    line = " ".join(f"{x},{y}" for x, y in zip(xs, mid, strict=True))
    parts.append(f'<polyline class="hl" points="{line}"/>')
    for i, p in enumerate(points):
        x = xs[i]
        parts.append(
            f'<g>{tooltip(_point_tip(p))}<line class="ci" x1="{x}" x2="{x}" '
            f'y1="{lo[i]}" y2="{hi[i]}"/><circle class="pt" cx="{x}" cy="{mid[i]}" r="3"/></g>'
        )
    # Date labels: at most six, never two that touch, never the same date twice.
    for i in _date_labels([float(x) for x in xs], [p.label for p in points]):
        anchor = "start" if i == 0 else "end" if i == n - 1 else "middle"
        parts.append(
            f'<text class="tick" x="{xs[i]}" y="{height - bottom + 18}" '
            f'text-anchor="{anchor}">{escape(points[i].label)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
