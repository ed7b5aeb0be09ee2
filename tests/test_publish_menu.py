"""The site as an LMArena user expects it: the board menu (one shared boards.html,
pages whose size does not grow with the number of boards), the style-controlled
board by default, a derived category's rule on its page, PNG link previews."""

from __future__ import annotations

import json
import struct
import zlib
from datetime import timedelta

import numpy as np
import pytest

from arena.db.models import DerivedCategory
from arena.publish.site import NAV_MAX, PublishError, publish_site
from arena.store.derived import HARD_PROMPTS
from tests.helpers.html import parse
from tests.publish_fixtures import BASE_TIME, add_snapshot

NAMES = [f"model-{i:02d}" for i in range(8)]


def _board(conn, rng, board, *, day, category=None):
    strength = 1100 - 15.0 * np.arange(len(NAMES))
    add_snapshot(
        conn,
        names=NAMES,
        strength=strength,
        when=BASE_TIME + timedelta(days=day),
        board=board,
        category=category,
        rng=rng,
        unranked=0,
    )


def _site(engine, n_categories: int, *, style=True, hard=True):
    rng = np.random.default_rng(5)
    with engine.begin() as conn:
        _board(conn, rng, "overall", day=0)
        if style:
            _board(conn, rng, "overall|style", day=0)  # same run: paired
        if hard:
            conn.execute(
                DerivedCategory.__table__.insert().values(
                    name="hard_prompts",
                    tags=json.dumps(list(HARD_PROMPTS.tags)),
                    at_least=6,
                    note=HARD_PROMPTS.note,
                )
            )
            _board(conn, rng, "category:hard_prompts", day=1, category="hard_prompts")
            _board(conn, rng, "category:criteria.complexity", day=1, category="criteria.complexity")
        for k in range(n_categories):
            _board(conn, rng, f"category:topic_{k:03d}", day=2, category=f"topic_{k:03d}")


def _menu(page) -> list[str]:
    nav = next(n for n in page.find_all("nav") if "boards-nav" in n.classes())
    return [a.text() for a in nav.find_all("a")]


def test_style_board_by_default_raw_one_click_away(engine, tmp_path):
    _site(engine, 2)
    out = tmp_path / "site"
    publish_site(engine, out)
    index = parse(out / "index.html")
    assert index.find("h1").text() == "Overall, style-controlled leaderboard"
    switch = {a.text(): a.attrs["href"] for a in index.find("ul", "switch").find_all("a")}
    raw = parse(out / switch["Raw"])
    assert raw.find("h1").text() == "Overall leaderboard"
    assert switch["Style-controlled"] == "index.html"
    # the downloads of index.html are the board it shows
    doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert doc["snapshot"]["board"] == "overall|style"
    notes = " ".join(p.text() for p in index.find_all("p", "board-note"))
    assert "Style-controlled" in notes and "one click away" in notes
    # a board without a style-controlled view says plainly that it is raw
    hard = next(a.attrs["href"] for a in index.find_all("a") if a.text() == "Hard Prompts")
    page = parse(out / hard)
    notes = " ".join(p.text() for p in page.find_all("p", "board-note"))
    assert "Raw ratings, not adjusted for answer style" in notes
    # ... and a derived category states its rule and its source
    assert "at least 6 of the 7 criteria.* tags" in notes
    # ... naming the tags as the site does, without the shared "Criterion: "
    assert "(complexity, creativity, domain knowledge, problem solving, real world, " in notes
    assert "Criterion:" not in notes
    assert "Introducing Hard Prompts Category" in notes


def test_menu_keeps_single_criteria_in_more_boards(engine, tmp_path):
    _site(engine, 2)
    out = tmp_path / "site"
    publish_site(engine, out)
    menu = _menu(parse(out / "index.html"))
    assert menu[:2] == ["Overall", "Hard Prompts"]
    assert "Criterion: complexity" not in menu and menu[-1] == "All 5 boards"
    boards = parse(out / "boards.html")
    groups = {
        s.find("h2").text(): [a.text().split(" (")[0] for a in s.find_all("a")]
        for s in boards.find_all("section")
    }
    assert groups["More boards"] == ["Criterion: complexity"]
    assert "Hard Prompts" in groups["Leaderboards"]


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_page_size_does_not_grow_with_the_number_of_boards(engine, tmp_path):
    """Each page names at most NAV_MAX boards; boards.html names them all (issue 26)."""
    _site(engine, 40, style=False, hard=False)
    out = tmp_path / "site"
    publish_site(engine, out)
    index = parse(out / "index.html")
    assert len(_menu(index)) == NAV_MAX + 1 and _menu(index)[-1] == "All 41 boards"
    sizes = [p.stat().st_size for p in out.glob("board-category-topic-*.html")]
    assert len(sizes) == 40
    boards = parse(out / "boards.html")
    assert sum(1 for _ in boards.find("main").find_all("a")) == 41
    model = parse(next((out / "models").glob("*.html")))
    assert len(_menu(model)) == NAV_MAX + 1
    # every topic page carries the same menu: pages differ only by their own numbers
    # (naming all 41 boards would add ~3 KB to each)
    assert max(sizes) - min(sizes) < 0.01 * min(sizes)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n : pos + 12 + n])
        assert zlib.crc32(kind + body) == crc, kind
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + n
    w, h = struct.unpack(">II", chunks[b"IHDR"][:8])
    raw = zlib.decompress(chunks[b"IDAT"])
    assert len(raw) == h * (1 + 3 * w)  # 8-bit RGB, one filter byte a row
    assert len(set(raw)) > 4  # drawn, not a blank card
    return w, h


def test_png_card_and_absolute_urls_only_with_base_url(engine, tmp_path):
    _site(engine, 1)
    out = tmp_path / "site"
    publish_site(engine, out)
    assert _png_size((out / "og.png").read_bytes()) == (1200, 630)
    html = (out / "index.html").read_text(encoding="utf-8")
    assert '<meta property="og:image" content="og.png">' in html
    assert "og:url" not in html and "http" not in html.split("<body")[0]
    publish_site(engine, out, base_url="https://example.org/arena")
    html = (out / "index.html").read_text(encoding="utf-8")
    assert '<meta property="og:image" content="https://example.org/arena/og.png">' in html
    assert '<meta property="og:url" content="https://example.org/arena/index.html">' in html
    model = next((out / "models").glob("*.html")).read_text(encoding="utf-8")
    assert 'content="https://example.org/arena/og.png"' in model
    assert 'og:url" content="https://example.org/arena/models/' in model
    with pytest.raises(PublishError, match="^base_url must be"):
        publish_site(engine, out, base_url="example.org")
