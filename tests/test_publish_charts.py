"""The charts of the published site, read as SVG (xml.etree), not as strings.

Contrast is computed here from the colours written in the SVG with the WCAG 2
formula (implemented again in this file, not imported from the code under
test); text outside the cells is checked against the page's colour tokens in
``templates/style.css`` for the light and the dark theme.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from arena.boards.snapshots import Board, BoardRow, PairRecord, SnapshotInfo
from arena.publish.heatmaps import HATCH_OPACITY, board_heatmaps, heatmap, top_rows
from arena.publish.svg import Axis, HistoryPoint, IntervalItem, history_chart, interval_chart

ROOT = Path(__file__).resolve().parents[1]
NS = "{http://www.w3.org/2000/svg}"
LONG = "gemini-2.5-pro-preview-05-06-experimental"
LONG2 = "gemini-2.5-pro-preview-03-25-experimental"

# ---------------------------------------------------------------- WCAG, independently


def _rgb(text: str) -> tuple[float, float, float]:
    text = text.strip().lstrip("#")
    if len(text) == 3:
        text = "".join(c * 2 for c in text)
    assert re.fullmatch(r"[0-9a-fA-F]{6}", text), text
    return tuple(int(text[i : i + 2], 16) / 255 for i in (0, 2, 4))


def _lum(rgb) -> float:
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def ratio(a, b) -> float:
    hi, lo = sorted((_lum(a), _lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _over(rgb, line, alpha: float):
    return tuple(c * (1 - alpha) + d * alpha for c, d in zip(rgb, line, strict=True))


def _hatch_line(root: ET.Element, url: str) -> tuple[tuple[float, float, float], float]:
    """Colour and opacity of the lines of the pattern that ``url(#id)`` names."""
    ident = re.fullmatch(r"url\(#([\w-]+)\)", url).group(1)
    (pattern,) = [p for p in _all(root, "pattern") if p.get("id") == ident]
    (line,) = _all(pattern, "line")
    return _rgb(_style(line, "stroke")), float(_style(line, "stroke-opacity"))


def _style(node: ET.Element, prop: str) -> str | None:
    for decl in (node.get("style") or "").split(";"):
        k, _, v = decl.partition(":")
        if k.strip() == prop:
            return v.strip()
    return None


def _svg(markup) -> ET.Element:
    root = ET.fromstring(str(markup))
    assert root.tag in ("svg", NS + "svg")
    return root


def _tag(node: ET.Element) -> str:
    return node.tag.rpartition("}")[2]


def _children(node: ET.Element, tag: str) -> list[ET.Element]:
    return [c for c in node if _tag(c) == tag]


def _all(node: ET.Element, tag: str) -> list[ET.Element]:
    return [c for c in node.iter() if _tag(c) == tag]


def _text(node: ET.Element) -> str:
    return "".join(node.itertext())


# ---------------------------------------------------------------- a board in memory


def _board(n: int = 8, *, names: list[str] | None = None) -> Board:
    names = names or [f"m{i}" for i in range(n)]
    info = SnapshotInfo(
        1, datetime(2026, 1, 5, tzinfo=UTC), "overall", None, None, "r", {}, 0, "v", 0,
        1000.0, 0, len(names), {},
    )  # fmt: skip
    rows = []
    for i, name in enumerate(names):
        rating = 1200.0 - 37.3 * i
        rows.append(
            BoardRow(
                name,
                i + 1,
                i,
                rating,
                rating - 20.4,
                rating + 19.7,
                i + 1,
                i + 1,
                i + 1,
                100.0,
                50.0,
                40.0,
                10.0,
                (),
                True,
                False,
                None,
                None,
                None,
                None,
            )  # fmt: skip
        )
    return Board(info, tuple(rows))


def _cells(root: ET.Element) -> list[ET.Element]:
    """The cells with a value (never-met pairs are outlines without digits)."""
    (group,) = [g for g in _all(root, "g") if g.get("class") == "cells"]
    return [g for g in _children(group, "g") if _children(g, "path")[0].get("class") != "nm"]


def test_never_met_cells_differ_from_the_diagonal_and_the_palette_is_blue_orange():
    from arena.publish import colours

    vals = [[None, 0.7, None], [0.3, None, 0.5], [None, 0.5, None]]
    root = _svg(heatmap(["a", "b", "c"], vals, kind="prob", title="t", desc="d", ident="h"))
    (group,) = [g for g in _all(root, "g") if g.get("class") == "cells"]
    classes = [p.get("class") for p in _all(group, "path")]
    assert classes.count("dg") == 3  # the diagonal: flat cells
    assert classes.count("nm") == 2  # a-c and c-a never met: outlined, with a tooltip
    tips = [t.text for t in _all(group, "title")]
    assert "a vs c: never met" in tips and "c vs a: never met" in tips
    # the row model winning is blue, losing orange: no red side
    win, lose = colours.diverging(1.0), colours.diverging(0.0)
    assert win[2] > win[0] and lose[0] > lose[2] and lose[1] > 60


# ---------------------------------------------------------------- 1. contrast


def _check_cells(root: ET.Element) -> int:
    """Digits against their cell, and against the cell under a line of its hatch, in
    the light page's colours (``fill``) and the dark page's (``--dk``)."""
    checked = 0
    for g in _cells(root):
        paths = _children(g, "path")
        (text,) = _children(g, "text")
        # Inline style: no page stylesheet (light or dark) can repaint the digits.
        assert text.get("fill") is None
        for prop in ("fill", "--dk"):
            fill = _rgb(_style(paths[0], prop))
            ink = _style(text, prop)
            assert ink is not None, prop
            behind = [fill]
            if len(paths) > 1:  # the hatch darkens part of the cell
                colour, alpha = _hatch_line(root, _style(paths[1], prop))
                assert alpha >= HATCH_OPACITY * 0.5  # a hatch one can see
                behind.append(_over(fill, colour, alpha))
            for bg in behind:
                assert ratio(_rgb(ink), bg) >= 4.5, (prop, _text(text), ink, bg)
        checked += 1
    return checked


def test_dark_page_cells_are_calm_and_the_diagonal_stands_apart():
    """On the dark page no cell is pale (the light palette's middle glared there), the
    middle is a dark grey near the page, and the diagonal differs from it in both themes."""
    vals = np.linspace(0, 1, 144).reshape(12, 12)
    values = [[None if i == j else float(vals[i, j]) for j in range(12)] for i in range(12)]
    labels = [f"m{i}" for i in range(12)]
    css = (ROOT / "templates" / "style.css").read_text(encoding="utf-8")
    light, dark = _themes(css)
    assert re.search(
        r'prefers-color-scheme: dark\)\s*\{\s*svg\.heat \.cells \[style\*="--dk"\]'
        r"\s*\{\s*fill:\s*var\(--dk\)\s*!important",
        css,
    )
    for kind, vs in (
        ("prob", values),
        ("count", [[None if v is None else v * 900 + 1 for v in r] for r in values]),
    ):
        root = _svg(heatmap(labels, vs, kind=kind, title="t", desc="d", ident="hc"))
        darks = [_rgb(_style(_children(g, "path")[0], "--dk")) for g in _cells(root)]
        lights = [_rgb(_style(_children(g, "path")[0], "fill")) for g in _cells(root)]
        page = _rgb(dark["--bg"])
        # calm: no dark-page cell is brighter than the page's text by far, none glares
        assert max(_lum(c) for c in darks) < 0.2, kind
        assert max(ratio(c, page) for c in darks) < 5, kind
        assert max(_lum(c) for c in lights) > 0.7  # the light page keeps its pale middle
    mid_light, mid_dark = _rgb("f2f2f2"), _rgb("2c3036")
    assert ratio(_rgb(light["--diag"]), mid_light) >= 1.4
    assert ratio(_rgb(dark["--diag"]), mid_dark) >= 1.4
    # never met: an outline (no fill) with a dot, unlike the filled diagonal
    assert re.search(r"svg \.nm \{ fill: none;", css) and re.search(
        r"svg \.dg \{ fill: var\(--diag\)", css
    )


@pytest.mark.parametrize("kind", ["prob", "count"])
def test_every_cell_text_reaches_wcag_contrast(kind):
    rng = np.random.default_rng(3)
    n = 12
    if kind == "prob":
        # Every shade from 0 to 1, plus the exact ends.
        vals = np.linspace(0, 1, n * n).reshape(n, n)
    else:
        vals = rng.integers(1, 5000, size=(n, n)).astype(float)
    values = [[None if i == j else float(vals[i, j]) for j in range(n)] for i in range(n)]
    counts = [[None if i == j else float(1 + (i * n + j) % 30) for j in range(n)] for i in range(n)]
    labels = [f"model-{i}" for i in range(n)]
    root = _svg(heatmap(labels, values, kind=kind, title="t", desc="d", ident="hx", counts=counts))
    assert _check_cells(root) == n * n - n


def test_published_page_charts_contrast_and_labels_follow_the_theme(tmp_path):
    """Every chart on a published board: cell digits against their cells, and text
    outside cells takes its colour from the page's tokens, in light and dark."""
    from arena.db.session import open_engine
    from arena.publish import publish_site
    from tests.publish_fixtures import build_site_db

    engine = open_engine(f"sqlite:///{tmp_path}/s.db")
    build_site_db(engine, n_models=24, history=2, rounds=40, evil=True, pair_density=0.5)
    publish_site(engine, tmp_path / "site", top=12)
    engine.dispose()
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    charts = [
        _svg(m.group(0)) for m in re.finditer(r'<svg class="chart\b.*?</svg>', html, flags=re.S)
    ]
    assert len(charts) == 4
    # Never squeezed below their own size: 11 px text stays 11 px on a phone
    # (the chart scrolls sideways in its scroller instead).
    for chart in charts:
        width = float(chart.get("viewBox").split()[2])
        least = re.search(r"min-width:(\d+)px", chart.get("style", ""))
        assert least and float(least.group(1)) >= width - 1, chart.get("class")
    assert sum(_check_cells(c) for c in charts if c.get("class") == "chart heat") > 0
    for chart in charts:
        for t in _all(chart, "text"):
            if t.get("style") is None:  # outside cells: no colour of its own
                assert t.get("fill") is None, t.attrib
    css = (ROOT / "templates" / "style.css").read_text(encoding="utf-8")
    light, dark = _themes(css)
    for var in _svg_text_vars(css):
        for theme in (light, dark):
            for bg in ("--bg", "--band0", "--band1", "--bandu"):
                if bg in theme:
                    assert ratio(_rgb(theme[var]), _rgb(theme[bg])) >= 4.5, (var, bg, theme)


def _themes(css: str) -> tuple[dict[str, str], dict[str, str]]:
    dark_at = css.find("prefers-color-scheme: dark")
    assert dark_at > 0, "style.css has no dark theme"
    tokens = re.compile(r"(--[\w-]+)\s*:\s*(#[0-9a-fA-F]{3,6})\b")
    light = dict(tokens.findall(css[:dark_at]))
    end = css.find("}\n}", dark_at)
    dark = {**light, **dict(tokens.findall(css[dark_at:end]))}
    return light, dark


def _svg_text_vars(css: str) -> set[str]:
    """The tokens that colour SVG text (``svg text ... { fill: var(--x) }``)."""
    found = set(re.findall(r"svg[^{}]*\btext\b[^{}]*\{[^}]*?fill:\s*var\((--[\w-]+)\)", css))
    assert "--fg" in found or found, "no rule colours SVG text from a token"
    return found


# ---------------------------------------------------------------- 2. tooltips


def test_every_heatmap_cell_and_clipped_label_has_a_full_tooltip():
    names = [LONG, LONG2, "claude-3", "gpt-4o"]
    board = _board(names=names)
    pairs = [
        PairRecord(LONG, "gpt-4o", 140.0, 90.0, 10.0),
        PairRecord(LONG2, "claude-3", 1.0, 0.0, 0.0),
    ]
    predicted, observed, counts = (_svg(h.svg) for h in board_heatmaps(board, pairs, top=None))
    for root in (predicted, observed, counts):
        for g in _cells(root):
            tip = _text(_children(g, "title")[0])
            assert " vs " in tip or " beats " in tip
            assert any(tip.startswith(n) for n in names)
        # Clipped names carry the full name in a <title>; the two similar names stay apart.
        titled = {
            _text(_children(g, "title")[0]): _text(_children(g, "text")[0])
            for g in _all(root, "g")
            if _children(g, "title") and _children(g, "text") and g.get("class") is None
        }
        short, short2 = titled[LONG], titled[LONG2]
        assert "\u2026" in short and short != short2 and len(short) <= 24
        shown = [_text(t) for t in _all(root, "text") if t.get("class") == "lab"]
        assert shown.count(short) == shown.count(short2) == 2  # row and column labels
        assert shown.count("gpt-4o") == 2 and "gpt-4o" not in titled
    tips = {_text(_children(g, "title")[0]) for g in _cells(observed)}
    assert f"{LONG} vs gpt-4o: 60% of 240 battles" in tips  # (140 + 5) / 240
    assert f"gpt-4o vs {LONG}: 40% of 240 battles" in tips
    tips = {_text(_children(g, "title")[0]) for g in _cells(counts)}
    assert f"{LONG} vs gpt-4o: 240 battles" in tips
    tips = [_text(_children(g, "title")[0]) for g in _cells(predicted)]
    assert len(tips) == 12 and all("predicted" in t for t in tips)


def test_interval_and_history_marks_have_tooltips():
    items = [
        IntervalItem(LONG, 1100.25, 1080.0, 1120.5, 0, 1),
        IntervalItem("b", 1000, 990, 1010, -1, None),
    ]
    root = _svg(
        interval_chart(items, Axis.around([1080, 990], [1120.5, 1010]), title="t", desc="d")
    )
    marks = [g for g in _all(root, "g") if _children(g, "circle")]
    assert [_text(_children(g, "title")[0]) for g in marks] == [
        f"{LONG}: rating 1100.2, interval 1080.0 to 1120.5, tier 1",
        "b: rating 1000.0, interval 990.0 to 1010.0, not ranked",
    ]
    pts = [HistoryPoint(f"2026-01-0{i + 1}", 1000 + i, 990 + i, 1010 + i) for i in range(3)]
    root = _svg(history_chart(pts, title="t", desc="d"))
    marks = [g for g in _all(root, "g") if _children(g, "circle")]
    assert [_text(_children(g, "title")[0]) for g in marks] == [
        f"2026-01-0{i + 1}: rating {1000 + i}.0, interval {990 + i}.0 to {1010 + i}.0"
        for i in range(3)
    ]


def _label_boxes(root: ET.Element) -> list[tuple[str, float, float, float, float]]:
    """(name, x0, x1, y0, y1) of each model name, at 6.2 px a character, 11 px text."""
    boxes = []
    for g in _all(root, "g"):
        for t in _children(g, "text"):
            if t.get("class") == "tick":
                continue
            x, y, w = float(t.get("x")), float(t.get("y")), len(_text(t)) * 6.2
            x0 = x if t.get("text-anchor") == "start" else x - w
            boxes.append((_text(t), x0, x0 + w, y - 9, y + 3))  # ascent 9, descent 3
    return boxes


def test_interval_chart_names_never_overlap():
    """A name left of its interval at the left edge, then an interval too wide for its
    name on either side (its name goes above its line): the two names must not touch."""
    items = [
        IntervalItem("gemini-2.5-pro-preview-05-06", 1200, 1190, 1210, 0, 1),
        IntervalItem("amazon-nova-experimental-chat-05-14", 1140, 1120, 1165, 0, 1),
        IntervalItem("qwen3-235b-a22b-no-thinking", 1110, 960, 1290, 1, 2),
        IntervalItem("o3-2025-04-16", 1100, 1090, 1110, 1, 2),
    ]
    root = _svg(interval_chart(items, Axis.around([950], [1300]), title="t", desc="d"))
    boxes = _label_boxes(root)
    assert len(boxes) == 4
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = a[2] <= b[1] or b[2] <= a[1] or a[4] <= b[3] or b[4] <= a[3]
            assert apart, f"{a[0]!r} overlaps {b[0]!r}"
    # the wide interval's name sits above its line, inside the chart
    (wide,) = [b for b in boxes if b[0].startswith("qwen3")]
    line_y = float(_all(root, "path")[2].get("d").split()[1].split("H")[0])  # "Mx0 yHx1"
    assert wide[4] < line_y
    assert float(root.get("viewBox").split()[3]) >= max(b[4] for b in boxes)


# ---------------------------------------------------------------- 3. round ticks


def _is_round_step(step: float) -> bool:
    mant = step / 10 ** math.floor(math.log10(step))
    return any(abs(mant - m) < 1e-9 for m in (1, 2, 5, 10))


@pytest.mark.parametrize(
    "lo,hi", [(850.8, 1138.7), (999.2, 1000.9), (1213.37, 1213.38), (-40.5, 2900.1), (0.3, 0.9)]
)
def test_axis_ends_and_ticks_are_round(lo, hi):
    axis = Axis.around([lo], [hi])
    assert axis.lo <= lo and axis.hi >= hi
    ticks = axis.ticks(6)
    assert ticks[0] == pytest.approx(axis.lo) and ticks[-1] == pytest.approx(axis.hi)
    steps = np.diff(ticks)
    assert np.allclose(steps, steps[0]) and _is_round_step(steps[0])
    assert 3 <= len(ticks) <= 10


def test_axis_ignores_values_that_are_not_finite():
    axis = Axis.around([float("nan"), 990.0, float("-inf")], [1010.0, float("nan")])
    assert (axis.lo, axis.hi) == (990.0, 1010.0)
    assert Axis.around([float("nan")], [float("nan")]) == Axis(0.0, 1.0)


def test_interval_and_history_charts_write_round_ticks():
    items = [IntervalItem("a", 1000, 850.8, 1138.7, 0, 1)]
    root = _svg(interval_chart(items, Axis.around([850.8], [1138.7]), title="t", desc="d"))
    ticks = [float(_text(t)) for t in _all(root, "text") if t.get("class") == "tick"]
    assert ticks == [850, 900, 950, 1000, 1050, 1100, 1150]
    pts = [
        HistoryPoint(f"d{i}", 1000 + 13.3 * i, 977.7 + 13 * i, 1021.1 + 14 * i) for i in range(5)
    ]
    root = _svg(history_chart(pts, title="t", desc="d"))
    ticks = [_text(t) for t in _all(root, "text") if t.get("class") == "tick"]
    values = [float(t) for t in ticks if not t.startswith("d")]
    assert len(values) >= 3 and _is_round_step(values[1] - values[0])
    assert all(v == round(v) for v in values)


# ---------------------------------------------------------------- 4. few battles


def test_cells_from_few_battles_are_hatched_and_faded():
    board = _board(names=["a", "b", "c"])
    pairs = [
        PairRecord("a", "b", 1.0, 0.0, 0.0),  # 100% / 0% from one battle
        PairRecord("a", "c", 30.0, 0.0, 0.0),  # 100% from 30 battles
        PairRecord("b", "c", 5.0, 4.0, 0.0),
    ]
    _, observed, counts = (_svg(h.svg) for h in board_heatmaps(board, pairs, top=None))
    cells = {_text(_children(g, "title")[0]).split(":")[0]: g for g in _cells(observed)}
    one, many = cells["a vs b"], cells["a vs c"]
    assert len(_children(one, "path")) == 2 and len(_children(many, "path")) == 1
    assert "fewer than 10" in _text(_children(one, "title")[0])
    assert "fewer than" not in _text(_children(many, "title")[0])
    assert _text(_children(one, "text")[0]) == "100"  # the number stays the observed one
    sat = _rgb(_style(_children(many, "path")[0], "fill"))
    faded = _rgb(_style(_children(one, "path")[0], "fill"))
    grey = _rgb(_style(_children(cells["b vs c"], "path")[0], "fill"))  # 56% from 9

    def chroma(c):
        return max(c) - min(c)

    assert chroma(faded) < 0.2 * chroma(sat)
    assert chroma(grey) < chroma(sat)
    # Each hatch pattern is defined once in the chart (dark lines for the light page's
    # pale cells, light lines under the dark page's white digits); the count map hatches too.
    patterns = [p.get("id") for p in _all(observed, "pattern")]
    assert patterns == ["ho-few0", "ho-few1"]
    assert sum(len(_children(g, "path")) == 2 for g in _cells(counts)) == 4
    # min_battles is a keyword option.
    _, observed, _ = (_svg(h.svg) for h in board_heatmaps(board, pairs, top=None, min_battles=1))
    assert all(len(_children(g, "path")) == 1 for g in _cells(observed))
    assert _all(observed, "pattern") == []


# ---------------------------------------------------------------- 5. history


def test_one_snapshot_says_so_instead_of_a_lone_line():
    root = _svg(history_chart([HistoryPoint("2026-01-05", 1000, 980, 1020)], title="t", desc="d"))
    assert "One snapshot so far" in _text(root)
    assert _all(root, "polyline") == [] and _all(root, "polygon") == []
    for line in _all(root, "line"):
        if line.get("class") == "ci":
            assert line.get("y1") == line.get("y2")  # horizontal, not a vertical stroke


def test_history_line_and_date_labels():
    pts = [
        HistoryPoint(f"2026-01-{1 + i // 2:02d}", 1000 + i, 990 + i, 1010 + i) for i in range(20)
    ]
    root = _svg(history_chart(pts, title="t", desc="d"))
    (line,) = _all(root, "polyline")
    assert len(line.get("points").split()) == 20
    dates = [_text(t) for t in _all(root, "text") if _text(t).startswith("2026")]
    assert 2 <= len(dates) <= 7 and len(set(dates)) == len(dates) and dates[-1] == "2026-01-10"
    assert "One snapshot" not in _text(root)


def test_history_spaces_snapshots_by_time():
    """Snapshots on days 0, 70, 84 and 90 sit at 0, 70/90, 84/90 and 1 of the width;
    the dates under them never overlap (84 and 90 are closer than a label is wide)."""
    start = datetime(2026, 9, 1, 10, tzinfo=UTC)
    days = [0, 70, 84, 90]
    pts = [
        HistoryPoint(f"d{d:02d}-2026", 1000 + d / 10, 990, 1020, start + timedelta(days=d))
        for d in days
    ]
    root = _svg(history_chart(pts, title="t", desc="d"))
    xs = [float(c.get("cx")) for c in _all(root, "circle")]
    share = [(x - xs[0]) / (xs[-1] - xs[0]) for x in xs]
    assert share == pytest.approx([d / 90 for d in days], abs=0.002)
    dates = [t for t in _all(root, "text") if _text(t).startswith("d")]
    assert [_text(t) for t in dates][-1] == "d90-2026" and len(dates) >= 2
    spans = []
    for t in dates:
        x, w = float(t.get("x")), len(_text(t)) * 6.2
        anchor = t.get("text-anchor")
        x0 = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
        spans.append((x0, x0 + w))
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    # naive datetimes (SQLite) are UTC, in snapshot order; no times: evenly, as before
    naive = [replace(p, at=p.at.replace(tzinfo=None)) for p in pts]
    assert _all(_svg(history_chart(naive, title="t", desc="d")), "circle")[1].get("cx") == (
        _all(root, "circle")[1].get("cx")
    )
    even = _svg(history_chart([replace(p, at=None) for p in pts], title="t", desc="d"))
    xs = [float(c.get("cx")) for c in _all(even, "circle")]
    assert np.allclose(np.diff(xs), np.diff(xs)[0], atol=0.11)  # written to 0.1


# ---------------------------------------------------------------- 7. top N


def test_heatmaps_of_the_top_n_by_rating():
    board = _board(9)
    # Board order and rating order disagree: the top is chosen by rating.
    rows = list(board.rows)
    rows[0], rows[5] = rows[5], rows[0]
    board = Board(board.snapshot, tuple(rows))
    assert [r.model for r in top_rows(board, 3)] == ["m0", "m1", "m2"]
    assert len(top_rows(board, None)) == 9
    charts = board_heatmaps(board, [], top=4)
    assert len(charts) == 3
    root = _svg(charts[0].svg)
    labels = [_text(t) for t in _all(root, "text") if t.get("class") == "lab"]
    assert labels[:4] == ["m0", "m1", "m2", "m3"] and len(labels) == 8
    assert len(_cells(root)) == 12
    assert board_heatmaps(board, [], top=1) == []


# ---------------------------------------------------------------- 6. Open Graph card


def test_open_graph_card():
    from arena.publish.og import OG_FILE, og_for_board, og_image, og_rows

    names = ['<b>"x"&</b>', LONG, LONG2] + [f"m{i}" for i in range(9)]
    board = _board(names=names)
    text = og_for_board(board, "Overall leaderboard", "2026-01-05", site_title="arena")
    assert OG_FILE == "og.svg" and text.startswith("<?xml")
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == NS + "svg"  # a standalone document, with its namespace
    assert (root.get("width"), root.get("height")) == ("1200", "630")
    texts = [_text(t) for t in _all(root, "text")]
    assert "Overall leaderboard" in texts and "arena" in texts
    assert any("2026-01-05" in t and "95%" not in t for t in texts)  # no level in options
    assert '<b>"x"&</b>' in texts  # escaped in the file, the same text once parsed
    # Eight models, similar long names kept apart, ranks and ratings written.
    rows = og_rows(board)
    assert [r.name for r in rows] == names[:8]
    shown = [t for t in texts if t.startswith("gemini")]
    assert len(shown) == 2 and shown[0] != shown[1]
    assert "1200" in texts and "1163" in texts  # 1200.0, 1162.7 rounded
    # Every text is dark on the white card.
    bg = _rgb(next(r for r in _all(root, "rect")).get("fill"))
    for t in _all(root, "text"):
        colour = t.get("fill") or next(g.get("fill") for g in _all(root, "g") if g.get("fill"))
        assert ratio(_rgb(colour), bg) >= 4.5
    # Round ticks under the bars.
    ticks = [float(t) for t in texts if re.fullmatch(r"\d+", t) and float(t) % 10 == 0]
    assert len(ticks) >= 3 and _is_round_step(ticks[1] - ticks[0])
    empty = ET.fromstring(og_image("Math", "2026-01-05", []).encode("utf-8"))
    assert "No ranked models yet." in _text(empty)


def test_interval_chart_leaves_out_a_rated_model_without_both_bounds():
    """A rating with an open bound (stored as none) has no interval to draw: it is
    left out of the chart, as its table row has no bar, instead of failing the page."""
    from arena.publish.board_page import _interval_chart

    board = _board(3)
    open_row = replace(board.rows[2], ranked=False, tier=None, rank=None, ci_high=None)
    rows = [*board.rows[:2], open_row]
    axis = Axis.around([r.ci_low for r in rows], [r.ci_high for r in rows])
    chart = _interval_chart(rows, axis, "overall", "95% ")
    tips = [t.text or "" for t in _all(_svg(chart.svg), "title")]
    assert any(t.startswith("m0:") for t in tips) and any(t.startswith("m1:") for t in tips)
    assert not any(t.startswith("m2:") for t in tips)
