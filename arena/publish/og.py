"""The Open Graph image of a board: a 1200 x 630 SVG written at publish time.

A link to the site shared in a chat or a post shows this card: the board's
name, the snapshot date and the top models with their intervals on a round
axis. It is a standalone SVG document (XML declaration, namespace, its own
colours and no stylesheet), so it looks the same wherever it is shown. Some
sites accept only PNG or JPEG cards; turning this file into one needs a
renderer the project does not ship (see ``docs/charts.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import escape

from arena.boards.snapshots import Board
from arena.publish.fmt import rank_text
from arena.publish.svgkit import Axis, clip_all, num, tick_text

#: File name at the site root, next to ``index.html``.
OG_FILE = "og.svg"
WIDTH, HEIGHT = 1200, 630

# Dark text on a white card: contrast well above 4.5:1 (tests/test_publish_charts.py).
_BG, _FG, _MUTED, _GRID, _CI, _BAND = (
    "#ffffff",
    "#111827",
    "#4b5563",
    "#d1d5db",
    "#1f5fa8",
    "#eef3fb",
)


@dataclass(frozen=True)
class OgRow:
    rank: str  # "1" or "2\u20134"
    name: str
    rating: float
    low: float
    high: float


def og_rows(board: Board, n: int = 8) -> list[OgRow]:
    """The first ``n`` ranked, visible models of ``board`` in board order."""
    out: list[OgRow] = []
    for r in board.visible_rows():
        if len(out) == n:
            break
        if not r.ranked or r.rating is None or r.ci_low is None or r.ci_high is None:
            continue
        rank = rank_text(r)
        out.append(OgRow(rank, r.display_name or r.model, r.rating, r.ci_low, r.ci_high))
    return out


def og_image(
    board_label: str,
    date: str,
    rows: Sequence[OgRow],
    *,
    site_title: str | None = None,
    note: str | None = None,
) -> str:
    """The card as SVG text; ``note`` follows the date under the title."""
    e = escape
    sub = f"{date} \u00b7 {note}" if note else date
    top, row_h = 190, min(48, 360 / max(len(rows), 1))
    left, bar_l, bar_r = 70, 650, WIDTH - 70
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="og-t">'
        f'<title id="og-t">{e(board_label)} leaderboard, {e(date)}</title>'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="{_BG}"/>'
        f'<g font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" fill="{_FG}">',
        f'<text x="{left}" y="72" font-size="26" fill="{_MUTED}">{e(site_title or "Leaderboard")}</text>',
        f'<text x="{left}" y="124" font-size="52" font-weight="700">{e(clip_all([board_label], 34)[0])}</text>',
        f'<text x="{left}" y="164" font-size="26" fill="{_MUTED}">{e(sub)}</text>',
    ]
    if not rows:
        parts.append(f'<text x="{left}" y="260" font-size="30">No ranked models yet.</text>')
    else:
        axis = Axis.around([r.low for r in rows], [r.high for r in rows], ticks=4)
        width = bar_r - bar_l
        bottom = top + row_h * len(rows)
        for t in axis.ticks(4):
            x = num(axis.x(t, width, bar_l))
            parts.append(
                f'<line x1="{x}" x2="{x}" y1="{top}" y2="{num(bottom)}" stroke="{_GRID}"/>'
                f'<text x="{x}" y="{num(bottom + 30)}" font-size="20" fill="{_MUTED}" '
                f'text-anchor="middle">{tick_text(t)}</text>'
            )
        names = clip_all([r.name for r in rows], 22)
        for i, r in enumerate(rows):
            y = top + row_h * i
            mid = y + row_h / 2
            x0, x1, xr = (axis.x(v, width, bar_l) for v in (r.low, r.high, r.rating))
            if i % 2 == 0:
                parts.append(
                    f'<rect x="{left - 10}" y="{num(y)}" width="{bar_r - left + 20}" '
                    f'height="{num(row_h)}" fill="{_BAND}"/>'
                )
            parts.append(
                f'<text x="{left}" y="{num(mid + 9)}" font-size="26" fill="{_MUTED}">'
                f"{e(r.rank)}</text>"
                f'<text x="{left + 80}" y="{num(mid + 9)}" font-size="26" font-weight="600">'
                f"{e(names[i])}</text>"
                f'<text x="{bar_l - 24}" y="{num(mid + 9)}" font-size="26" text-anchor="end">'
                f"{r.rating:.0f}</text>"
                f'<line x1="{num(x0)}" x2="{num(max(x1, x0 + 2))}" y1="{num(mid)}" '
                f'y2="{num(mid)}" stroke="{_CI}" stroke-width="8" stroke-linecap="round"/>'
                f'<circle cx="{num(xr)}" cy="{num(mid)}" r="7" fill="{_FG}"/>'
            )
    parts.append("</g></svg>\n")
    return "".join(parts)


def og_for_board(board: Board, label: str, date: str, *, site_title: str | None = None) -> str:
    """The card of ``board``: its top eight models, the interval level in the note."""
    level = (board.snapshot.options or {}).get("level")
    note = (
        f"top models with {float(level) * 100:g}% intervals"
        if isinstance(level, (int, float))
        else "top models with intervals"
    )
    return og_image(label, date, og_rows(board), site_title=site_title, note=note)
