"""Server-side inline SVG charts: the page needs no JavaScript to show uncertainty.

Every function returns :class:`markupsafe.Markup` that the templates insert as
is, so *every* piece of text that goes into the SVG is escaped here with
:func:`markupsafe.escape` (model names are untrusted input). Numbers are
written with fixed formats so that the same snapshot gives byte-identical
output. Colours of lines and marks come from CSS classes (``style.css``) so that
the charts follow the light/dark theme; heatmap cells carry their own fill and
a text colour chosen for contrast against it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape


def _n(x: float) -> str:
    """Compact fixed-precision coordinate (one decimal, no ``-0``)."""
    s = f"{x:.1f}"
    if s.endswith(".0"):
        s = s[:-2]
    return "0" if s == "-0" else s


@dataclass(frozen=True)
class Axis:
    """A linear rating axis shared by every interval bar on a page."""

    lo: float
    hi: float

    @classmethod
    def around(cls, lows: Sequence[float], highs: Sequence[float]) -> Axis:
        if not lows:
            return cls(0.0, 1.0)
        lo, hi = min(lows), max(highs)
        pad = max((hi - lo) * 0.03, 1.0)
        return cls(lo - pad, hi + pad)

    def x(self, value: float, width: float, left: float = 0.0) -> float:
        span = self.hi - self.lo or 1.0
        return left + (min(max(value, self.lo), self.hi) - self.lo) / span * width

    def ticks(self, target: int = 5) -> list[float]:
        """Round-number ticks inside the axis (1, 2, 5 x 10^k steps)."""
        span = self.hi - self.lo
        if span <= 0:
            return [self.lo]
        raw = span / max(target, 1)
        mag = 10 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
        first = math.ceil(self.lo / step) * step
        out, t = [], first
        while t <= self.hi + 1e-9:
            out.append(round(t, 6))
            t += step
        return out


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
    """
    x0, x1, xr = (axis.x(v, width - 4, 2) for v in (low, high, rating))
    mid = _n(height / 2)
    return Markup(
        f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'preserveAspectRatio="none" role="img" aria-label="{escape(label)}">'
        f'<line class="ax" x1="0" x2="{width}" y1="{mid}" y2="{mid}"/>'
        f'<line class="ci" x1="{_n(x0)}" x2="{_n(max(x1, x0 + 1))}" y1="{mid}" y2="{mid}"/>'
        f'<line class="tk" x1="{_n(xr)}" x2="{_n(xr)}" y1="1" y2="{height - 1}"/></svg>'
    )


@dataclass(frozen=True)
class IntervalItem:
    label: str
    rating: float
    low: float
    high: float
    band: int  # tier band parity (0/1), -1 for unranked models
    tier: int | None


def interval_chart(
    items: Sequence[IntervalItem], axis: Axis, *, title: str, desc: str, width: int = 760
) -> Markup:
    """All models on one axis, top to bottom in board order, tiers as shaded bands."""
    # Tier names sit in their own right margin so they never cover an interval.
    row, top, left, right = 16, 24, 190, 70
    plot_w = width - left - right
    height = top + row * len(items) + 8
    parts = [
        f'<svg class="chart intervals" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="ic-t ic-d"><title id="ic-t">{escape(title)}</title>'
        f'<desc id="ic-d">{escape(desc)}</desc>'
    ]
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
            parts.append(
                f'<rect class="{cls}" x="0" y="{top + row * start}" width="{width}" '
                f'height="{row * (i - start)}"/>'
            )
            name = f"Tier {items[start].tier}" if items[start].tier is not None else "not ranked"
            parts.append(
                f'<text class="tl" x="{width - 4}" y="{top + row * start + 11}" '
                f'text-anchor="end">{escape(name)}</text>'
            )
            start = i
    for t in axis.ticks(6):
        x = _n(axis.x(t, plot_w, left))
        parts.append(
            f'<line class="grid" x1="{x}" x2="{x}" y1="{top - 4}" y2="{height - 8}"/>'
            f'<text class="tick" x="{x}" y="{top - 8}" text-anchor="middle">{t:.0f}</text>'
        )
    for i, it in enumerate(items):
        y = top + row * i + row / 2
        x0, x1, xr = (axis.x(v, plot_w, left) for v in (it.low, it.high, it.rating))
        parts.append(
            f'<text class="lab" x="{left - 6}" y="{_n(y + 4)}" text-anchor="end">'
            f"{escape(_clip(it.label, 28))}</text>"
            f'<line class="ci" x1="{_n(x0)}" x2="{_n(x1)}" y1="{_n(y)}" y2="{_n(y)}"/>'
            f'<circle class="pt" cx="{_n(xr)}" cy="{_n(y)}" r="3"/>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


# ---------------------------------------------------------------- heatmaps


def _mix(c0: tuple[int, int, int], c1: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    t = min(max(t, 0.0), 1.0)
    return tuple(round(a + (b - a) * t) for a, b in zip(c0, c1, strict=True))  # type: ignore[return-value]


_BLUE, _WHITE, _RED = (33, 102, 172), (247, 247, 247), (178, 24, 43)
_PALE, _DEEP = (239, 243, 255), (8, 69, 148)


def _diverging(p: float) -> tuple[int, int, int]:
    return _mix(_WHITE, _RED, (p - 0.5) * 2) if p >= 0.5 else _mix(_WHITE, _BLUE, (0.5 - p) * 2)


def _sequential(t: float) -> tuple[int, int, int]:
    return _mix(_PALE, _DEEP, t)


def _ink(rgb: tuple[int, int, int]) -> str:
    """Black or white text, whichever contrasts more with the cell (WCAG luminance)."""

    def lin(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    lum = 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2])
    return "#000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#fff"


def heatmap(
    labels: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    kind: str,
    title: str,
    desc: str,
    ident: str,
) -> Markup:
    """A labelled N x N matrix; ``kind`` is ``prob`` (0..1, diverging) or ``count``.

    Cell text is the value (percent for probabilities) so the chart is readable
    without colour; empty cells (no data) are left blank.
    """
    n = len(labels)
    cell, left, top = 30, 170, 150
    # Room on the right for the last rotated column label.
    size_w, size_h = left + cell * n + 90, top + cell * n + 4
    vmax = max((v for r in values for v in r if v is not None), default=1.0) or 1.0
    parts = [
        f'<svg class="chart heat" viewBox="0 0 {size_w} {size_h}" role="img" '
        f'aria-labelledby="{ident}-t {ident}-d"><title id="{ident}-t">{escape(title)}</title>'
        f'<desc id="{ident}-d">{escape(desc)}</desc>'
    ]
    for i, lab in enumerate(labels):
        y = top + cell * i + cell / 2 + 4
        parts.append(
            f'<text class="lab" x="{left - 6}" y="{_n(y)}" text-anchor="end">'
            f"{escape(_clip(lab, 24))}</text>"
        )
        x = left + cell * i + cell / 2 + 4
        parts.append(
            f'<text class="lab" transform="translate({_n(x)} {top - 6}) rotate(-60)">'
            f"{escape(_clip(lab, 24))}</text>"
        )
    for i, r in enumerate(values):
        for j, v in enumerate(r):
            if v is None:
                continue
            rgb = _diverging(v) if kind == "prob" else _sequential(math.sqrt(v / vmax))
            text = f"{v * 100:.0f}" if kind == "prob" else f"{v:.0f}"
            x, y = left + cell * j, top + cell * i
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell - 1}" height="{cell - 1}" '
                f'fill="#{rgb[0]:02x}{rgb[1]:02x}{rgb[2]:02x}"/>'
                f'<text x="{x + cell / 2 - 0.5:g}" y="{y + cell / 2 + 4}" fill="{_ink(rgb)}" '
                f'text-anchor="middle" class="cv">{text}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class HistoryPoint:
    label: str  # the snapshot date
    rating: float
    low: float
    high: float


def history_chart(
    points: Sequence[HistoryPoint], *, title: str, desc: str, width: int = 640, height: int = 220
) -> Markup:
    """Rating with its interval at each snapshot of a board, oldest on the left."""
    left, right, top, bottom = 52, 16, 14, 40
    pw, ph = width - left - right, height - top - bottom
    axis = Axis.around([p.low for p in points], [p.high for p in points])
    n = len(points)

    def xpos(i: int) -> float:
        return left + (pw / 2 if n == 1 else pw * i / (n - 1))

    def ypos(v: float) -> float:
        return top + ph - axis.x(v, ph)

    parts = [
        f'<svg class="chart history" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="hc-t hc-d"><title id="hc-t">{escape(title)}</title>'
        f'<desc id="hc-d">{escape(desc)}</desc>'
    ]
    for t in axis.ticks(4):
        y = _n(ypos(t))
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y}" y2="{y}"/>'
            f'<text class="tick" x="{left - 6}" y="{y}" text-anchor="end" '
            f'dy="4">{t:.0f}</text>'
        )
    if n > 1:
        band = [f"{_n(xpos(i))},{_n(ypos(p.high))}" for i, p in enumerate(points)]
        band += [f"{_n(xpos(i))},{_n(ypos(p.low))}" for i, p in reversed(list(enumerate(points)))]
        parts.append(f'<polygon class="cib" points="{" ".join(band)}"/>')
        line = " ".join(f"{_n(xpos(i))},{_n(ypos(p.rating))}" for i, p in enumerate(points))
        parts.append(f'<polyline class="hl" points="{line}"/>')
    step = max(1, math.ceil(n / 6))
    for i, p in enumerate(points):
        x = _n(xpos(i))
        parts.append(
            f'<line class="ci" x1="{x}" x2="{x}" y1="{_n(ypos(p.low))}" '
            f'y2="{_n(ypos(p.high))}"/><circle class="pt" cx="{x}" '
            f'cy="{_n(ypos(p.rating))}" r="3"/>'
        )
        if i == n - 1 or (i % step == 0 and n - 1 - i >= step):
            # End labels are anchored inwards so the dates are never cut off.
            anchor = (
                "middle" if n == 1 else "start" if i == 0 else "end" if i == n - 1 else "middle"
            )
            parts.append(
                f'<text class="tick" x="{x}" y="{height - bottom + 18}" '
                f'text-anchor="{anchor}">{escape(p.label)}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))
