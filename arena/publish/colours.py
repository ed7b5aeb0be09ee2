"""Cell colours of the charts, and text colours that stay readable on them.

Heatmap cells carry their own colour, one for the light page and a calmer one
for the dark page (a dark grey middle, muted ends: no pale cell glares on a dark
page), and the digits on a cell are black or white, whichever contrasts more
with that cell by WCAG 2 relative luminance. The palettes are chosen so that the
better of the two always reaches 4.5:1 (checked cell by cell in
``tests/test_publish_charts.py``).
"""

from __future__ import annotations

RGB = tuple[int, int, int]

BLACK: RGB = (0, 0, 0)
WHITE: RGB = (255, 255, 255)
# Diverging (probabilities): orange below one half (the row model loses), blue above
# (it wins), a light grey at one half. Blue-orange is told apart under every common
# colour-vision deficiency, and neither side is the red that reads as "bad".
_ORANGE, _MID, _BLUE = (179, 88, 6), (242, 242, 242), (33, 102, 172)
# Sequential (counts): pale to deep blue.
_PALE, _DEEP = (235, 241, 250), (8, 69, 148)
# The dark page's: the same hues, muted, around a dark grey; white digits throughout.
_ORANGE_D, _MID_D, _BLUE_D = (160, 82, 20), (44, 48, 54), (40, 100, 165)
_PALE_D, _DEEP_D = (30, 36, 46), (40, 100, 165)


def mix(c0: RGB, c1: RGB, t: float) -> RGB:
    t = min(max(t, 0.0), 1.0)
    return tuple(round(a + (b - a) * t) for a, b in zip(c0, c1, strict=True))  # type: ignore[return-value]


def diverging(p: float, *, dark: bool = False) -> RGB:
    """Colour of a probability ``p`` in [0, 1] (``dark``: on the dark page)."""
    lo, mid, hi = (_ORANGE_D, _MID_D, _BLUE_D) if dark else (_ORANGE, _MID, _BLUE)
    return mix(mid, hi, (p - 0.5) * 2) if p >= 0.5 else mix(mid, lo, (0.5 - p) * 2)


def sequential(t: float, *, dark: bool = False) -> RGB:
    """Colour of a share ``t`` in [0, 1] of the largest value (``dark``: on the dark page)."""
    return mix(_PALE_D, _DEEP_D, t) if dark else mix(_PALE, _DEEP, t)


def luminance(rgb: RGB) -> float:
    """WCAG 2 relative luminance."""

    def lin(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2])


def contrast(a: RGB, b: RGB) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def ink(rgb: RGB) -> RGB:
    """Black or white text, whichever contrasts more with the cell."""
    return BLACK if contrast(rgb, BLACK) >= contrast(rgb, WHITE) else WHITE
