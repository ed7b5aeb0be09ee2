"""The link-preview card as a PNG (1200 x 630): what chat apps and social sites show.

Link previews ignore SVG, so the site also writes ``og.png``: the board's name,
the date and the top eight models with their intervals on the board's axis,
drawn into a pixel buffer and written with :mod:`zlib` and :mod:`struct` (no
imaging library). Text uses a built-in 5 x 7 pixel font, upper case, scaled
up; characters it does not know are drawn as a small box. Same board, same bytes.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from arena.publish.og import OgRow
from arena.publish.svgkit import Axis

PNG_FILE = "og.png"
WIDTH, HEIGHT = 1200, 630

_BG = (255, 255, 255)
_FG = (17, 24, 39)
_MUTED = (75, 85, 99)
_GRID = (209, 213, 219)
_CI = (31, 95, 168)
_BAND = (238, 243, 251)

# 5 x 7 glyphs, one row a string of 5 bits (1 = ink), top to bottom.
_GLYPHS: dict[str, tuple[str, ...]] = {
    "A": ("01110", "10001", "10001", "11111", "10001", "10001", "10001"),
    "B": ("11110", "10001", "10001", "11110", "10001", "10001", "11110"),
    "C": ("01110", "10001", "10000", "10000", "10000", "10001", "01110"),
    "D": ("11110", "10001", "10001", "10001", "10001", "10001", "11110"),
    "E": ("11111", "10000", "10000", "11110", "10000", "10000", "11111"),
    "F": ("11111", "10000", "10000", "11110", "10000", "10000", "10000"),
    "G": ("01110", "10001", "10000", "10111", "10001", "10001", "01111"),
    "H": ("10001", "10001", "10001", "11111", "10001", "10001", "10001"),
    "I": ("01110", "00100", "00100", "00100", "00100", "00100", "01110"),
    "J": ("00111", "00010", "00010", "00010", "00010", "10010", "01100"),
    "K": ("10001", "10010", "10100", "11000", "10100", "10010", "10001"),
    "L": ("10000", "10000", "10000", "10000", "10000", "10000", "11111"),
    "M": ("10001", "11011", "10101", "10101", "10001", "10001", "10001"),
    "N": ("10001", "10001", "11001", "10101", "10011", "10001", "10001"),
    "O": ("01110", "10001", "10001", "10001", "10001", "10001", "01110"),
    "P": ("11110", "10001", "10001", "11110", "10000", "10000", "10000"),
    "Q": ("01110", "10001", "10001", "10001", "10101", "10010", "01101"),
    "R": ("11110", "10001", "10001", "11110", "10100", "10010", "10001"),
    "S": ("01111", "10000", "10000", "01110", "00001", "00001", "11110"),
    "T": ("11111", "00100", "00100", "00100", "00100", "00100", "00100"),
    "U": ("10001", "10001", "10001", "10001", "10001", "10001", "01110"),
    "V": ("10001", "10001", "10001", "10001", "10001", "01010", "00100"),
    "W": ("10001", "10001", "10001", "10101", "10101", "10101", "01010"),
    "X": ("10001", "10001", "01010", "00100", "01010", "10001", "10001"),
    "Y": ("10001", "10001", "01010", "00100", "00100", "00100", "00100"),
    "Z": ("11111", "00001", "00010", "00100", "01000", "10000", "11111"),
    "0": ("01110", "10001", "10011", "10101", "11001", "10001", "01110"),
    "1": ("00100", "01100", "00100", "00100", "00100", "00100", "01110"),
    "2": ("01110", "10001", "00001", "00010", "00100", "01000", "11111"),
    "3": ("11111", "00010", "00100", "00010", "00001", "10001", "01110"),
    "4": ("00010", "00110", "01010", "10010", "11111", "00010", "00010"),
    "5": ("11111", "10000", "11110", "00001", "00001", "10001", "01110"),
    "6": ("00110", "01000", "10000", "11110", "10001", "10001", "01110"),
    "7": ("11111", "00001", "00010", "00100", "01000", "01000", "01000"),
    "8": ("01110", "10001", "10001", "01110", "10001", "10001", "01110"),
    "9": ("01110", "10001", "10001", "01111", "00001", "00010", "01100"),
    " ": ("00000",) * 7,
    ".": ("00000", "00000", "00000", "00000", "00000", "01100", "01100"),
    ",": ("00000", "00000", "00000", "00000", "01100", "00100", "01000"),
    ":": ("00000", "01100", "01100", "00000", "01100", "01100", "00000"),
    "-": ("00000", "00000", "00000", "11111", "00000", "00000", "00000"),
    "\u2013": ("00000", "00000", "00000", "11111", "00000", "00000", "00000"),
    "+": ("00000", "00100", "00100", "11111", "00100", "00100", "00000"),
    "/": ("00001", "00010", "00010", "00100", "01000", "01000", "10000"),
    "(": ("00010", "00100", "01000", "01000", "01000", "00100", "00010"),
    ")": ("01000", "00100", "00010", "00010", "00010", "00100", "01000"),
    "%": ("11001", "11010", "00010", "00100", "01000", "01011", "10011"),
    "_": ("00000", "00000", "00000", "00000", "00000", "00000", "11111"),
    "'": ("00100", "00100", "01000", "00000", "00000", "00000", "00000"),
    "&": ("01100", "10010", "10100", "01000", "10101", "10010", "01101"),
    "\u00b7": ("00000", "00000", "00000", "01100", "01100", "00000", "00000"),
}
_UNKNOWN = ("11111", "10001", "10001", "10001", "10001", "10001", "11111")


class _Canvas:
    def __init__(self, width: int, height: int, bg: tuple[int, int, int]) -> None:
        self.w, self.h = width, height
        self.rows = [bytearray(bytes(bg) * width) for _ in range(height)]

    def rect(self, x: int, y: int, w: int, h: int, colour: tuple[int, int, int]) -> None:
        x0, x1 = max(0, x), min(self.w, x + w)
        if x1 <= x0:
            return
        run = bytes(colour) * (x1 - x0)
        for yy in range(max(0, y), min(self.h, y + h)):
            self.rows[yy][3 * x0 : 3 * x1] = run

    def text(
        self,
        x: int,
        y: int,
        s: str,
        scale: int,
        colour: tuple[int, int, int],
        max_width: int | None = None,
    ) -> int:
        """Draw ``s`` (upper-cased) from (x, y); returns the x after it. Cut with ".."
        to ``max_width`` pixels."""
        step = 6 * scale
        s = s.upper()
        if max_width is not None and len(s) * step > max_width:
            keep = max(0, max_width // step - 2)
            s = s[:keep] + ".."
        for ch in s:
            glyph = _GLYPHS.get(ch, _UNKNOWN)
            for gy, bits in enumerate(glyph):
                for gx, bit in enumerate(bits):
                    if bit == "1":
                        self.rect(x + gx * scale, y + gy * scale, scale, scale, colour)
            x += step
        return x

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(r) for r in self.rows)

        def chunk(kind: bytes, data: bytes) -> bytes:
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        header = struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )


def og_png(title: str, date: str, rows: Sequence[OgRow], *, site_title: str = "") -> bytes:
    """The card as PNG bytes: title, date, the rows' ranks, names and intervals."""
    c = _Canvas(WIDTH, HEIGHT, _BG)
    c.text(60, 40, site_title or "Arena leaderboard", 3, _MUTED, max_width=1080)
    c.text(60, 80, title, 6, _FG, max_width=1080)
    c.text(60, 140, date, 3, _MUTED)
    if not rows:
        c.text(60, 300, "No ranked model yet", 4, _MUTED)
        return c.png()
    axis = Axis.around([r.low for r in rows], [r.high for r in rows])
    left, right = 640, 1140
    top, row_h = 190, 52
    for t in axis.ticks(5):
        x = round(axis.x(t, right - left, left))
        c.rect(x, top - 6, 1, row_h * len(rows) + 6, _GRID)
        label = f"{t:.0f}" if float(t).is_integer() else f"{t:g}"
        c.text(x - len(label) * 6, top + row_h * len(rows) + 8, label, 2, _MUTED)
    for i, r in enumerate(rows):
        y = top + i * row_h
        if i % 2 == 0:
            c.rect(40, y, 1120, row_h, _BAND)
        c.text(60, y + 15, r.rank, 3, _FG)
        c.text(160, y + 15, r.name, 3, _FG, max_width=460)
        x0, x1, xr = (round(axis.x(v, right - left, left)) for v in (r.low, r.high, r.rating))
        c.rect(x0, y + 22, max(2, x1 - x0), 8, _CI)
        c.rect(xr - 2, y + 14, 4, 24, _FG)
    return c.png()
