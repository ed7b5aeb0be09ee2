"""arena publish with style control: the raw / style-controlled switch, the rank change
against the raw board and the style coefficients, checked against the boards' JSON
downloads, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.html import Node, parse

SLICE = Path(__file__).parent / "data" / "ko-arena-hard-slice.jsonl.gz"
ROUNDS = 20  # intervals are not under test here, only what the page shows of them


@pytest.fixture
def style_site(run_cli, tmp_path):
    run_cli("db", "upgrade")
    run_cli("ingest", str(SLICE))
    run_cli("rebuild", "--rounds", str(ROUNDS))
    out = tmp_path / "site"
    run_cli("publish", str(out), "-q")
    docs = {}
    for page in out.glob("*.json"):
        doc = json.loads(page.read_text(encoding="utf-8"))
        html = out / "index.html" if page.name == "leaderboard.json" else page.with_suffix(".html")
        docs[doc["snapshot"]["board"]] = (html, doc)
    return out, docs


def _switch(root: Node) -> dict[str, tuple[str, bool]]:
    nav = next(
        n for n in root.iter("nav") if n.attrs.get("aria-label") == "Raw or style-controlled"
    )
    return {
        a.text(): (a.attrs["href"], a.attrs.get("aria-current") == "page") for a in nav.iter("a")
    }


def test_raw_and_style_pages_link_each_other(style_site):
    out, docs = style_site
    raw_page, _ = docs["overall"]
    style_page, style_doc = docs["overall|style"]
    assert style_doc["snapshot"]["style_controlled"]
    raw_sw, style_sw = _switch(parse(raw_page)), _switch(parse(style_page))
    # the site opens on the style-controlled board (as LMArena does), raw one click away
    assert style_page.name == "index.html" and raw_page.name.startswith("board-overall-")
    assert raw_sw == {"Raw": (raw_page.name, True), "Style-controlled": ("index.html", False)}
    assert style_sw == {"Raw": (raw_page.name, False), "Style-controlled": ("index.html", True)}
    # every board with a published pair has the switch; the links resolve to real files
    for board, (page, doc) in docs.items():
        if doc["snapshot"]["paired_board"] in docs:
            sw = _switch(parse(page))
            assert all((out / href).is_file() for href, _ in sw.values()), board


def _cells(row: Node) -> list[Node]:
    return [c for c in row.children if isinstance(c, Node) and c.tag in ("td", "th")]


def test_rank_change_column_is_the_rank_set_move(style_site):
    _, docs = style_site
    _, raw_doc = docs["overall"]
    style_page, style_doc = docs["overall|style"]
    root = parse(style_page)
    board = next(root.find_all("table", "board"))
    heads = [th.text().strip() for th in board.find("thead").iter("th")]
    col, model = heads.index("vs raw"), heads.index("Model")
    raw_rank = {
        r["model"]: None if r["rank_low"] is None else (r["rank_low"], r["rank_high"])
        for r in raw_doc["rows"]
    }
    shown = {}
    for body in board.iter("tbody"):
        for tr in body.iter("tr"):
            cells = _cells(tr)
            if len(cells) == len(heads):
                chg = cells[col].find("span", "chg")
                name = cells[model].find("bdi").text()
                shown[name] = chg.text() if chg is not None else ""
    want = {}
    for r in style_doc["rows"]:
        name = r.get("display_name") or r["model"]
        before = raw_rank.get(r["model"])
        now = None if r["rank_low"] is None else (r["rank_low"], r["rank_high"])
        if now is None or before is None:
            want[name] = "\u2013" if r["model"] in raw_rank or now is None else "new"
        else:
            # the leaderboard's rank set, the one Rank column: never the overlap rank
            up = now[0] <= before[0] and now[1] <= before[1]
            down = now[0] >= before[0] and now[1] >= before[1]
            want[name] = (
                "=" if now == before else "\u25b2" if up else "\u25bc" if down else "\u2195"
            )
    assert shown == want and len(shown) == len(style_doc["rows"]) > 1
    # the raw page has no such column
    raw_heads = [th.text().strip() for th in parse(docs["overall"][0]).find("thead").iter("th")]
    assert "vs raw" not in raw_heads


def test_coefficient_table_has_every_stored_coefficient(style_site):
    _, docs = style_site
    style_page, style_doc = docs["overall|style"]
    table = next(parse(style_page).find_all("table", "coef"))
    rows = [_cells(tr) for tr in table.find("tbody").iter("tr")]
    coefs = style_doc["snapshot"]["style_coefficients"]
    assert len(rows) == len(coefs) > 0
    for cells, c in zip(rows, coefs, strict=True):
        feature, est, interval, meaning = (x.text().strip() for x in cells)
        assert feature == c["feature"]
        assert float(est) == pytest.approx(c["estimate"], abs=5e-4)
        lo, hi = (float(x) for x in interval.split(" to "))
        assert lo == pytest.approx(c["ci_low"], abs=5e-4)
        assert hi == pytest.approx(c["ci_high"], abs=5e-4)
        if c["ci_low"] > 0:
            assert meaning.startswith("Positive:")
        elif c["ci_high"] < 0:
            assert meaning.startswith("Negative:")
        else:
            assert "cannot tell" in meaning
    raw_page = docs["overall"][0]
    assert next(parse(raw_page).find_all("table", "coef"), None) is None


def test_style_change_words_never_give_an_unranked_model_a_change():
    from types import SimpleNamespace as Row

    from arena.publish.board_page import style_change_of

    raw = {"up": (4, 6), "down": (1, 2), "same": (2, 3), "wide": (3, 4), "unranked_raw": None}

    def row(model, low, high):
        ranked = low is not None
        return Row(model=model, ranked=ranked, rank_low=low, rank_high=high, rank_ub=99)

    cases = [("up", 2, 5), ("down", 3, 4), ("same", 2, 3), ("wide", 2, 6)]
    cases += [("unranked_raw", 1, 1), ("fresh", 5, 5)]
    got = {m: style_change_of(row(m, lo, hi), raw) for m, lo, hi in cases}
    assert {m: mark for m, (mark, _) in got.items()} == {
        "up": "\u25b2",
        "down": "\u25bc",
        "same": "=",
        "wide": "\u2195",
        "unranked_raw": "\u2013",
        "fresh": "new",
    }
    # the words name both rank sets; the overlap rank (99 here) is never used
    assert got["up"][1] == "up from rank 4\u20136 to 2\u20135 against the raw board"
    assert style_change_of(row("up", None, None), raw)[0] == "\u2013"


def test_a_model_without_style_metadata_shows_its_raw_battles(run_cli, tmp_path):
    """Not ranked under style control because none of its battles carry style
    metadata: the page says "0 of N" (N its battles on the raw board), never a bare
    "0, 0/0/0" that reads as a model that never played (issue 39)."""
    import gzip

    rows = [json.loads(line) for line in gzip.open(SLICE, "rt", encoding="utf-8")]
    for r in rows:
        if "command-a" in (r["model_a"], r["model_b"]):
            r.pop("conv_metadata")
    path = tmp_path / "slice.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run_cli("ingest", str(path))
    run_cli("rebuild", "--rounds", str(ROUNDS))
    run_cli("publish", str(tmp_path / "site"), "-q")
    root = parse(tmp_path / "site" / "index.html")  # the style-controlled board
    board = next(root.find_all("table", "board"))
    heads = [th.text().strip() for th in board.find("thead").iter("th")]
    col = heads.index("Model")
    cells = next(
        _cells(tr)
        for tr in board.iter("tr")
        if len(_cells(tr)) == len(heads)
        and "command-a" == _cells(tr)[col].text().strip().split()[0]
    )
    raw = sum(1 for r in rows if "command-a" in (r["model_a"], r["model_b"]))
    assert cells[heads.index("Battles")].text().strip() == f"0 of {raw}"
    assert cells[heads.index("Battles") + 1].text().strip() == "–/–/–"
