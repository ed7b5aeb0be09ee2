"""Every surface tells the same story (issue 39) on demo-like data.

One rank: every rank a page or a command shows or compares is the board's
simultaneous rank set (``rank_low``..``rank_high``). One count: ``arena models``
per source equals the battles of that source's board.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.core import resources
from tests.helpers.cli import cli_for
from tests.helpers.demo_slices import demo_slices
from tests.helpers.html import Node, parse

DASH = "\u2013"
HUMAN, JUDGE = (s for s, _ in resources.DEMO_SOURCES)


pytestmark = pytest.mark.slow  # arena demo on slices of both bundled files (~15 s)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``arena demo`` on the first rows of both bundled files: (run_cli, site folder)."""
    tmp = tmp_path_factory.mktemp("story")
    with pytest.MonkeyPatch.context() as mp:
        demo_slices(tmp, mp)
        run = cli_for(f"sqlite:///{tmp / 'arena.db'}")
        run("demo", str(tmp / "site"), "--rounds", "20", "-q")
    return run, tmp / "site"


def _set(low, high, dash=DASH) -> str:
    if low is None:
        return dash
    return str(low) if low == high else f"{low}{dash}{high}"


def _sets(rows) -> dict[str, tuple[int, int] | None]:
    return {
        r["model"]: None if r["rank_low"] is None else (r["rank_low"], r["rank_high"]) for r in rows
    }


def _body_rows(table: Node):
    for tb in table.find_all("tbody"):
        for tr in tb.find_all("tr"):
            if "tier-head" not in tr.classes() and tr.find("span", "rk") is not None:
                yield tr


def _name(tr: Node) -> str:
    th = tr.find("th")
    bdi = th.find("bdi")
    return (bdi if bdi is not None else th).text().strip()


def _page_docs(site: Path) -> dict[str, tuple[Path, dict]]:
    """Board page name -> (page, its JSON download)."""
    out = {"index.html": (site / "index.html", json.loads((site / "leaderboard.json").read_text()))}
    for page in site.glob("board-*.html"):
        out[page.name] = (page, json.loads(page.with_suffix(".json").read_text()))
    return out


def test_every_page_shows_and_compares_the_rank_set(demo):
    _, site = demo
    docs = _page_docs(site)
    assert len(docs) >= 4
    by_board = {doc["snapshot"]["board"]: doc for _, doc in docs.values()}
    checked = marks = 0
    for name, (page, doc) in docs.items():
        want = {r.get("display_name") or r["model"]: r for r in doc["rows"]}
        table = parse(page).find("table", "board")
        paired = doc["snapshot"].get("paired_board")
        raw = _sets(by_board[paired]["rows"]) if doc["snapshot"]["style_controlled"] else None
        for tr in _body_rows(table):
            row = want[_name(tr)]
            shown = tr.find("span", "rk").text().strip()
            assert shown == _set(row["rank_low"], row["rank_high"]), (name, row["model"])
            checked += 1
            cell = tr.find("td", "style-change")
            chg = cell.find("span", "chg") if cell is not None else None
            if raw is None or chg is None or row["rank_low"] is None:
                continue
            before = raw.get(row["model"])
            if before is None:
                continue
            # "vs raw": the raw board's rank set against this one, named in words
            title = chg.attrs["title"]
            now = _set(row["rank_low"], row["rank_high"])
            if before == (row["rank_low"], row["rank_high"]):
                assert chg.text() == "=" and f"rank {now} unchanged" in title
            else:
                assert f"from rank {_set(*before)} to {now} " in title, (name, title)
            marks += 1
    assert checked > 50 and marks >= 3
    # model pages: each board's rank cell is that board's rank set
    cells = 0
    for page in sorted((site / "models").glob("*.html"))[:20]:
        root = parse(page)
        label = root.find("h1").text().strip()
        for tr in root.iter("tr"):
            link = tr.find("a")
            tds = [c for c in tr.children if isinstance(c, Node) and c.tag == "td"]
            if link is None or not tds or "board-" not in link.attrs.get("href", ""):
                continue
            board_page = Path(link.attrs["href"]).name
            rows = {r.get("display_name") or r["model"]: r for r in docs[board_page][1]["rows"]}
            row = rows.get(label)
            if row is None:
                continue
            assert tds[0].text().strip() == _set(row["rank_low"], row["rank_high"]), page.name
            cells += 1
    assert cells > 0


def test_every_command_shows_and_compares_the_rank_set(demo):
    run, _ = demo
    boards = {}
    for args in ([], ["--source", JUDGE], ["--source", JUDGE, "--style-control"]):
        doc = json.loads(run("leaderboard", *args, "--format", "json").stdout)
        boards[tuple(args)] = doc
        table = run("leaderboard", *args).stdout.splitlines()
        for r in doc["rows"]:
            line = next(ln for ln in table if re.search(rf"\s{re.escape(r['model'])}\s", ln))
            assert line.split()[0] == _set(r["rank_low"], r["rank_high"], "-"), line
    raw, style = boards[("--source", JUDGE)], boards[("--source", JUDGE, "--style-control")]
    # arena diff: new = the style board, old = the raw board, both as the leaderboard
    diff = json.loads(run("diff", "--source", JUDGE, "--style-control", "--format", "json").stdout)
    new, old = _sets(style["rows"]), _sets(raw["rows"])
    for r in diff["rows"]:
        got = None if r["rank_low"] is None else (r["rank_low"], r["rank_high"])
        got_old = None if r["old_rank_low"] is None else (r["old_rank_low"], r["old_rank_high"])
        assert got == new.get(r["model"]) and got_old == old.get(r["model"]), r
        assert r["status"] and (r["note"] is None) == (None not in (got, got_old))
    text = run("diff", "--source", JUDGE, "--style-control").stdout.splitlines()
    assert f"snapshot {raw['snapshot']['id']} " in text[0]
    assert f"snapshot {style['snapshot']['id']} " in text[0]
    assert re.split(r"\s{2,}", text[1])[:4] == ["model", "status", "rank", "old rank"]
    # arena compare: the rank sets on the board are the leaderboard's
    top = [r for r in boards[()]["rows"] if r["rank_low"] is not None][:2]
    out = run("compare", top[0]["model"], top[1]["model"]).stdout
    sets = ", ".join(f"{r['model']} {_set(r['rank_low'], r['rank_high'], '-')}" for r in top)
    assert f"rank sets on the board (all models at once): {sets}" in out


def test_models_per_source_equal_the_boards(demo):
    run, _ = demo
    everything = json.loads(run("models", "--format", "json").stdout)
    assert everything["sources"] == sorted([HUMAN, JUDGE])
    for m in everything["models"]:
        assert sum(m["by_source"].values()) == m["battles"]
    # the overall board is the human votes (the judge left out), the judge has its own
    for source, args in ((HUMAN, []), (JUDGE, ["--source", JUDGE])):
        board = json.loads(run("leaderboard", *args, "--format", "json").stdout)["rows"]
        doc = json.loads(run("models", "--source", source, "--format", "json").stdout)
        counts = {m["model"]: m["battles"] for m in doc["models"]}
        assert {r["model"]: r["battles"] for r in board} == counts, source
    table = run("models").stdout.splitlines()[0]
    assert f"source:{HUMAN}" in table and f"source:{JUDGE}" in table
    bad = run("models", "--source", "nope", ok=False)
    assert bad.exit_code != 0 and "--source 'nope' is no source" in bad.output
