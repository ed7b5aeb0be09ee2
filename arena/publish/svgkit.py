"""Small shared pieces of every chart: number format, round axes, clipped labels, tooltips.

Every chart module (:mod:`svg`, :mod:`heatmaps`, :mod:`og`) builds its SVG from
these, so coordinates, ticks and tooltips read the same everywhere. Text that
goes into SVG is escaped here or by the caller with :func:`markupsafe.escape`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import escape

ELLIPSIS = "\u2026"


def num(x: float) -> str:
    """Compact fixed-precision coordinate (one decimal, no ``-0``)."""
    s = f"{x:.1f}"
    if s.endswith(".0"):
        s = s[:-2]
    return "0" if s == "-0" else s


def nice_step(span: float, target: int) -> float:
    """The 1-2-5 x 10^k step that cuts ``span`` into at most about ``target`` parts."""
    raw = span / max(target, 1)
    if not math.isfinite(raw) or raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    # an int for a whole step (10 ** k, k >= 0), as the tick labels expect
    step: float = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-9))
    return step


@dataclass(frozen=True)
class Axis:
    """A linear rating axis shared by every interval bar on a page.

    Built by :meth:`around`, its ends are multiples of a round step (1, 2, 5 x
    10^k), so the ticks read 850, 900, ..., 1150 rather than 850.8 ... 1138.7.
    """

    lo: float
    hi: float
    step: float | None = None

    @classmethod
    def around(
        cls, lows: Sequence[float | None], highs: Sequence[float | None], *, ticks: int = 6
    ) -> Axis:
        # Only finite values place the axis (an unrated model may carry NaN).
        finite_lows = [v for v in lows if v is not None and math.isfinite(v)]
        finite_highs = [v for v in highs if v is not None and math.isfinite(v)]
        if not finite_lows or not finite_highs:
            return cls(0.0, 1.0)
        lo, hi = min(finite_lows), max(finite_highs)
        if hi - lo < 1e-6 * max(abs(lo), 1.0):
            lo, hi = lo - 0.5, hi + 0.5
        step = nice_step(hi - lo, ticks)
        return cls(math.floor(lo / step) * step, math.ceil(hi / step) * step, step)

    def x(self, value: float, width: float, left: float = 0.0) -> float:
        span = self.hi - self.lo or 1.0
        return left + (min(max(value, self.lo), self.hi) - self.lo) / span * width

    def ticks(self, target: int = 5) -> list[float]:
        """Round-number ticks inside the axis (1, 2, 5 x 10^k steps)."""
        span = self.hi - self.lo
        if span <= 0:
            return [self.lo]
        step = self.step if self.step and span / self.step <= target * 1.5 else None
        step = step or nice_step(span, target)
        first = math.ceil(self.lo / step - 1e-9) * step
        out, k = [], 0
        while first + k * step <= self.hi + 1e-9 * step:
            out.append(round(first + k * step, 6))
            k += 1
        return out


def tick_text(value: float) -> str:
    """A tick label: integers without decimals, others with as few as needed."""
    return f"{value:.0f}" if value == round(value) else f"{value:g}"


def clip(text: str, n: int) -> str:
    """At most ``n`` characters; long names keep their head and their tail.

    Versions live at the end of model names (``...-preview-05-06``), so cutting
    in the middle keeps two similar names apart where a cut end would not.
    """
    if len(text) <= n:
        return text
    tail = max((n - 1) // 3, 1)
    head = n - 1 - tail
    return text[:head] + ELLIPSIS + text[-tail:]


def clip_all(texts: Sequence[str], n: int) -> list[str]:
    """:func:`clip` each text; names that would read the same show where they differ.

    ``gemini-2.5-pro-preview-05-06-experimental`` and ``...-03-25-experimental``
    become ``gemini-2.5…05-06-experi…`` and ``gemini-2.5…03-25-experi…``.
    """
    out = [clip(t, n) for t in texts]
    groups: dict[str, list[int]] = {}
    for i, short in enumerate(out):
        groups.setdefault(short, []).append(i)
    for idxs in groups.values():
        full = [texts[i] for i in idxs]
        if len(idxs) < 2 or len(set(full)) < len(full):
            continue
        same = len(os.path.commonprefix(full))
        head = max((n - 2) // 2, 1)
        mid = n - 2 - head
        start = max(same - mid // 3, head)
        for i in idxs:
            t = texts[i]
            end = ELLIPSIS if start + mid < len(t) else ""
            out[i] = t[:head] + ELLIPSIS + t[start : start + mid] + end
    return out


def title(text: str) -> str:
    """An SVG ``<title>`` child: the browser's tooltip and the mark's accessible name."""
    return f"<title>{escape(text)}</title>"


def label(text: str, short: str, attrs: str) -> str:
    """A ``<text>`` showing ``short`` (``text`` clipped); a clipped one is wrapped in a
    group whose ``<title>`` carries the full name (a tooltip on hover)."""
    node = f"<text {attrs}>{escape(short)}</text>"
    return node if short == text else f"<g>{title(text)}{node}</g>"


def rgb_hex(rgb: tuple[int, int, int]) -> str:
    """``#rrggbb``, or ``#rgb`` when that is the same colour (black and white digits)."""
    if all(c % 17 == 0 for c in rgb):
        return "#" + "".join(f"{c // 17:x}" for c in rgb)
    return f"#{rgb[0]:02x}{rgb[1]:02x}{rgb[2]:02x}"
