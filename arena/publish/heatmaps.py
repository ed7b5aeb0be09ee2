"""Head-to-head heatmaps of the top models: predicted, observed, battle counts.

Cells carry their own colour in an inline ``style`` (no page stylesheet can
repaint them), and their digits are black or white against that colour (WCAG
contrast >= 4.5:1). The dark page's colours ride along as ``--dk`` in the same
``style``; one rule of ``style.css`` under ``prefers-color-scheme: dark`` paints
them, so the dark page gets calm cells (a dark grey middle) with their own digits. Labels outside the
cells inherit the page's text colour. Every cell has a ``<title>`` tooltip with
both full model names and its numbers. A cell that rests on fewer than
``min_battles`` direct battles is hatched, says so in its tooltip, and an
observed rate there is drawn faded towards one half: 0 % or 100 % from a single
battle must not look like a certain result.

:func:`board_heatmaps` picks the top ``top`` models by rating (``None``: all
ranked models; a site with thousands of models wants a small ``top``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from markupsafe import Markup, escape

from arena.boards.snapshots import Board, BoardRow, PairRecord
from arena.engine.scale import win_probability
from arena.publish import colours
from arena.publish.svgkit import clip_all, label, num, rgb_hex

#: Below this many direct battles a cell is hatched (and an observed rate faded).
MIN_BATTLES = 10
#: The hatch: thin lines at this opacity over the cell (the contrast test checks the
#: digits against the cell both with and without it).
HATCH_OPACITY = 0.3


@dataclass(frozen=True)
class HeatmapChart:
    """The same three fields as :class:`arena.publish.context.Chart`."""

    heading: str
    svg: Markup
    note: str = ""


def _hatch(ident: str, used: set[str]) -> str:
    """Hatch patterns: ``-few0`` black lines, ``-few1`` white lines (see :func:`_hatch_key`)."""
    out = []
    for key, line in (("0", "#000"), ("1", "#fff")):
        if key in used:
            out.append(
                f'<pattern id="{ident}-few{key}" width="6" height="6" '
                f'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
                f'<line x1="0" y1="0" x2="0" y2="6" style="stroke:{line};'
                f'stroke-opacity:{HATCH_OPACITY};stroke-width:2"/></pattern>'
            )
    return f"<defs>{''.join(out)}</defs>" if out else ""


def _hatch_key(cell: colours.RGB, text: colours.RGB) -> str:
    """Lines in the digits' colour where that keeps them readable (a visible hatch on
    the pale cells that few battles give), else in the opposite colour."""
    line = colours.mix(cell, text, HATCH_OPACITY)
    same = colours.contrast(line, text) >= 4.5
    return "0" if (text == colours.BLACK) == same else "1"


def _cell_text(kind: str, v: float) -> str:
    return f"{v * 100:.0f}" if kind == "prob" else f"{v:.0f}"


def _tip(kind: str, a: str, b: str, v: float, n: float | None, predicted: bool) -> str:
    if kind == "count":
        return f"{a} vs {b}: {v:.0f} battle{'s' if v != 1 else ''}"
    pct = f"{v * 100:.0f}%"
    if predicted:
        return f"{a} beats {b}: {pct} predicted"
    if n is None:
        return f"{a} vs {b}: {pct}"
    return f"{a} vs {b}: {pct} of {n:.0f} battle{'s' if n != 1 else ''}"


def heatmap(
    labels: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    kind: str,
    title: str,
    desc: str,
    ident: str,
    counts: Sequence[Sequence[float | None]] | None = None,
    min_battles: int = MIN_BATTLES,
    predicted: bool = False,
) -> Markup:
    """A labelled N x N matrix; ``kind`` is ``prob`` (0..1, diverging) or ``count``.

    Cell text is the value (percent for probabilities) so the chart is readable
    without colour; empty cells (no data) are left blank. ``counts`` (battles
    per cell, same shape) marks the cells with fewer than ``min_battles``.
    """
    n = len(labels)
    cell, left, top = 30, 170, 150
    # Room on the right for the last rotated column label.
    size_w, size_h = left + cell * n + 90, top + cell * n + 4
    vmax = max((v for r in values for v in r if v is not None), default=1.0) or 1.0
    hatches: set[str] = set()
    body: list[str] = []
    for i, r in enumerate(values):
        for j, v in enumerate(r):
            if v is None:
                x, y = left + cell * j, top + cell * i
                square = f"M{x} {y}h{cell - 1}v{cell - 1}h-{cell - 1}z"
                if i == j:  # a model against itself: a plain filled cell
                    body.append(f'<path class="dg" d="{square}"/>')
                else:  # never met: an outlined cell with a dot, said in its tooltip
                    tip = f"{labels[i]} vs {labels[j]}: never met"
                    body.append(
                        f'<g><title>{escape(tip)}</title><path class="nm" d="{square}"/>'
                        f'<circle class="nm-dot" cx="{num(x + cell / 2 - 0.5)}" '
                        f'cy="{num(y + cell / 2 - 0.5)}" r="1.5"/></g>'
                    )
                continue
            k = counts[i][j] if counts is not None else None
            few = k is not None and k < min_battles
            if kind == "prob":
                shown = 0.5 + (v - 0.5) * (k / min_battles) if few and k is not None else v
                rgb, rgb_d = colours.diverging(shown), colours.diverging(shown, dark=True)
            else:
                t = math.sqrt(v / vmax)
                rgb, rgb_d = colours.sequential(t), colours.sequential(t, dark=True)
            tip = _tip(kind, labels[i], labels[j], v, k, predicted)
            text_rgb, text_d = colours.ink(rgb), colours.ink(rgb_d)
            hatch = ""
            if few:
                hatch, hatch_d = _hatch_key(rgb, text_rgb), _hatch_key(rgb_d, text_d)
                hatches.update((hatch, hatch_d))
                tip += f" (fewer than {min_battles}: hatched"
                tip += ", colour faded)" if kind == "prob" else ")"
            x, y = left + cell * j, top + cell * i
            square = f"M{x} {y}h{cell - 1}v{cell - 1}h-{cell - 1}z"
            body.append(
                f'<g><title>{escape(tip)}</title><path d="{square}" '
                f'style="fill:{rgb_hex(rgb)};--dk:{rgb_hex(rgb_d)}"/>'
                + (
                    f'<path d="{square}" style="fill:url(#{ident}-few{hatch});'
                    f'--dk:url(#{ident}-few{hatch_d})"/>'
                    if few
                    else ""
                )
                + f'<text x="{num(x + cell / 2 - 0.5)}" y="{y + cell / 2 + 4}" '
                f'style="fill:{rgb_hex(text_rgb)};--dk:{rgb_hex(text_d)}">{_cell_text(kind, v)}</text></g>'
            )
    parts = [
        # Never drawn narrower than its viewBox (phones scroll it sideways): the
        # digits stay at the page's chart font size instead of shrinking to ~7 px.
        f'<svg class="chart heat" viewBox="0 0 {size_w} {size_h}" style="min-width:{size_w}px" '
        'role="img" '
        f'aria-labelledby="{ident}-t {ident}-d"><title id="{ident}-t">{escape(title)}</title>'
        f'<desc id="{ident}-d">{escape(desc)}</desc>',
        _hatch(ident, hatches),
        '<g text-anchor="end">',
    ]
    shorts = clip_all(labels, 24)
    for i, lab in enumerate(labels):
        ly = top + cell * i + cell / 2 + 4
        parts.append(label(lab, shorts[i], f'class="lab" x="{left - 6}" y="{num(ly)}"'))
    parts.append("</g>")
    for i, lab in enumerate(labels):
        lx = left + cell * i + cell / 2 + 4
        parts.append(
            label(
                lab,
                shorts[i],
                f'class="lab" transform="translate({num(lx)} {top - 6}) rotate(-60)"',
            )
        )
    parts.append('<g class="cells" text-anchor="middle">')
    parts.extend(body)
    parts.append("</g></svg>")
    return Markup("".join(parts))


# ---------------------------------------------------------------- from a board


def top_rows(board: Board, top: int | None) -> list[BoardRow]:
    """The ``top`` visible ranked models by rating (all of them for ``None``)."""
    ranked = [r for r in board.visible_rows() if r.ranked and r.rating is not None]
    ranked.sort(key=lambda r: (-(r.rating or 0.0), r.model))  # every rating is set here
    return ranked if top is None else ranked[:top]


#: a square matrix of the top models, None on the diagonal and for pairs that never met
Grid = list[list[float | None]]


def _matrices(rows: Sequence[BoardRow], pairs: Sequence[PairRecord]) -> tuple[Grid, Grid, Grid]:
    index = {r.model: i for i, r in enumerate(rows)}
    n = len(rows)
    ratings = np.array([r.rating for r in rows], dtype=float)
    pred = win_probability(ratings[:, None] - ratings[None, :])
    score, count = np.zeros((n, n)), np.zeros((n, n))
    for p in pairs:
        i, j = index.get(p.model_a), index.get(p.model_b)
        if i is None or j is None:
            continue
        tot = p.a_wins + p.b_wins + p.ties
        count[i, j] = count[j, i] = tot
        score[i, j] = p.a_wins + p.ties / 2
        score[j, i] = p.b_wins + p.ties / 2

    def grid(f: Callable[[int, int], float | None]) -> Grid:
        return [[None if i == j else f(i, j) for j in range(n)] for i in range(n)]

    predicted = grid(lambda i, j: float(pred[i, j]))
    observed = grid(lambda i, j: float(score[i, j] / count[i, j]) if count[i, j] else None)
    counts = grid(lambda i, j: float(count[i, j]) if count[i, j] else None)
    return predicted, observed, counts


def board_heatmaps(
    board: Board,
    pairs: Sequence[PairRecord],
    *,
    top: int | None = 20,
    min_battles: int = MIN_BATTLES,
) -> list[HeatmapChart]:
    """The three matrices of the top ``top`` models by rating; none for fewer than two."""
    rows = top_rows(board, top)
    if len(rows) < 2:
        return []
    names = [r.display_name or r.model for r in rows]
    pred, observed, counts = _matrices(rows, pairs)
    n = len(names)
    few = f"hatched: fewer than {min_battles} direct battles"
    return [
        HeatmapChart(
            f"Predicted win probability, top {n}",
            heatmap(
                names,
                pred,
                kind="prob",
                ident="hp",
                predicted=True,
                title=f"Predicted probability (percent) that the row model beats the "
                f"column model, top {n}",
                desc="From the Bradley-Terry ratings, ignoring ties. Blue: row model "
                "favoured; orange: column model favoured.",
            ),
            "Percent chance that the row model beats the column model, from the ratings.",
        ),
        HeatmapChart(
            f"Observed win rate, top {n}",
            heatmap(
                names,
                observed,
                kind="prob",
                ident="ho",
                counts=counts,
                min_battles=min_battles,
                title=f"Observed score rate (percent) of the row model against the "
                f"column model, top {n}",
                desc="Wins plus half of the ties over battles, in direct battles "
                f"only; a dotted outline where the two never met; {few}, colour faded towards 50.",
            ),
            "Row model's wins plus half its ties, per direct battle; dotted outline: never met; "
            f"{few} (colour faded).",
        ),
        HeatmapChart(
            f"Battles between the top {n}",
            heatmap(
                names,
                counts,
                kind="count",
                ident="hn",
                counts=counts,
                min_battles=min_battles,
                title=f"Number of direct battles between each pair, top {n}",
                desc=f"Darker cells mean more battles; a dotted outline where the two never met; {few}.",
            ),
            f"Direct battles per pair: how much data each observed rate rests on; {few}.",
        ),
    ]
