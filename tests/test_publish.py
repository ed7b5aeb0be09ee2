"""arena publish: page structure and numbers against the snapshot, escaping of hostile
names, safe file names, atomic replace and determinism, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from sqlalchemy import update

from arena.boards.diff import rank_set
from arena.boards.snapshots import ROW_FIELDS, load_board, load_pairs
from arena.core.formats import render_csv, tidy, to_json
from arena.db.models import Model
from arena.publish import PublishError, publish_site
from arena.publish.context import slug
from arena.store.categories import label_for
from tests.helpers.html import Node, parse
from tests.publish_fixtures import EVIL_NAMES, build_site_db


def files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def site(engine, tmp_path):
    ids = build_site_db(engine)
    out = tmp_path / "site"
    report = publish_site(engine, out)
    with engine.connect() as conn:
        board = load_board(conn, ids["overall"][-1])
        previous = load_board(conn, ids["overall"][-2])
        pairs = load_pairs(conn, board.snapshot.id)
    return {
        "engine": engine,
        "ids": ids,
        "out": out,
        "report": report,
        "board": board,
        "previous": previous,
        "pairs": pairs,
    }


def f1(x: float) -> str:
    return f"{x + 0.0:.1f}"


def count(x: float) -> str:
    return f"{x:.0f}"


# ---------------------------------------------------------------- structure and numbers


def model_name(th: Node) -> str:
    """The model's name in a board row's header cell (the cell also holds its sub line)."""
    bdi = th.find("bdi")
    return bdi.text() if bdi is not None else th.text()


def board_rows(table: Node) -> list[Node]:
    return [
        tr
        for tb in table.find_all("tbody")
        for tr in tb.find_all("tr")
        if "tier-head" not in tr.classes()
    ]


def test_index_table_matches_snapshot(site):
    board, out = site["board"], site["out"]
    doc = parse(out / "index.html")
    table = doc.find("table", "board")
    assert table is not None and table.find("caption") is not None
    heads = [th for th in table.find("thead").iter("th")]
    assert heads and all(th.attrs.get("scope") == "col" for th in heads)
    titles = [th.text().strip() for th in heads]
    assert titles[:3] == ["Rank", "Model", "Rating"] and "Battles" in titles
    # The key columns only: flags and metadata sit in the model cell's second line.
    assert not any(t in titles for t in ("Flags", "Organisation", "Tier", "Change"))
    assert [th.attrs.get("data-sort") for th in heads if th.attrs.get("data-sort")] == [
        "rank",
        "name",
        "rating",
        "battles",
    ]

    visible = board.visible_rows()
    body_rows = board_rows(table)
    assert len(body_rows) == len(visible) == 13
    # one rank: the simultaneous rank set, shown and compared (never the overlap rank)
    prev_rank = {r.model: rank_set(r) if r.ranked else None for r in site["previous"].rows}
    for row, tr in zip(visible, body_rows, strict=True):
        th = tr.find("th")
        assert th.attrs.get("scope") == "row"
        assert model_name(th) == row.model  # no display names set: the raw name, as text
        name = th.find("a", "name")
        assert name.attrs["title"] == row.model  # full name for the CSS ellipsis
        rank = tr.find("span", "rk").text()
        rating = tr.find("td", "rating")
        assert rating.find("span", "rt").text() == f1(row.rating)
        assert rating.find("span", "ci-txt").text() == (
            f"+{f1(row.ci_high - row.rating)}/\u2212{f1(row.rating - row.ci_low)}"
        )
        assert tr.find("td", "battles").text() == count(row.battles)
        assert tr.find("td", "opt").text() == (
            f"{count(row.wins)}/{count(row.losses)}/{count(row.ties)}"
        )
        chg = tr.find("span", "chg")
        new = tr.find("span", "badge-new")
        if row.ranked:
            now = rank_set(row)  # the set; the overlap rank only on pre-0013 snapshots
            want = str(now[0]) if now[0] == now[1] else f"{now[0]}\u2013{now[1]}"
            assert None not in now and rank == want
            before = prev_rank.get(row.model, "absent")
            if before == "absent":
                assert new is not None and new.text() == "new" and chg is None
            elif before is None or before == now:
                assert chg is None and new is None  # unchanged: no mark at all
            elif now[0] <= before[0] and now[1] <= before[1]:
                assert chg.text() == "\u25b2" and "up" in chg.classes()
                assert f"to {want}" in chg.attrs["title"]
            elif now[0] >= before[0] and now[1] >= before[1]:
                assert chg.text() == "\u25bc" and "down" in chg.classes()
            else:
                assert chg.text() == "\u2195" and "moved" in chg.classes()
        else:
            assert rank == "\u2013"
            flags = [f.text() for f in th.find_all("span", "flag")]
            assert flags == ["few battles", "low data"]  # words, not raw tokens
        # One interval bar per row, with a text alternative carrying the numbers.
        bar = tr.find("svg")
        assert bar is not None and bar.attrs["role"] == "img"
        assert bar.find("title").text() == f"interval {f1(row.ci_low)} to {f1(row.ci_high)}"
    # the fixture's intervals overlap: some ranks are ranges, as on a real board
    assert any("\u2013" in tr.find("span", "rk").text() for tr in body_rows)
    hidden = [r.model for r in board.rows if r.hidden]
    assert hidden == ["model-012"]
    assert "model-012" not in (out / "index.html").read_text(encoding="utf-8")
    # The model new in this snapshot shows as new.
    news = [model_name(tr.find("th")) for tr in body_rows if tr.find("span", "badge-new")]
    assert news == ["model-011"]
    # The legend explains every flag word shown.
    legend = {
        dt.text().strip(): dd.text()
        for dt, dd in zip(
            doc.find("dl", "legend").iter("dt"), doc.find("dl", "legend").iter("dd"), strict=True
        )
    }
    assert set(legend) == {"few battles", "low data"} and "too few battles" in legend["few battles"]


def test_tier_bands_and_caption(site):
    board, out = site["board"], site["out"]
    doc = parse(out / "index.html")
    bodies = list(doc.find("table", "board").find_all("tbody"))
    ranked = [r for r in board.visible_rows() if r.ranked]
    tiers = sorted({r.tier for r in ranked})
    assert len(bodies) == len(tiers) + 1  # one band per tier plus "not ranked"
    for k, (tbody, tier) in enumerate(zip(bodies, tiers, strict=False)):
        n = sum(1 for r in ranked if r.tier == tier)
        head = tbody.find("tr", "tier-head").find("th")
        assert head.attrs.get("scope") == "rowgroup"
        assert head.text() == f"Tier {tier} ({n} model{'s' if n != 1 else ''})"
        assert tbody.classes() == [f"band{k % 2}"]
    assert bodies[-1].classes() == ["bandu"]

    tier_line = doc.find("p", "tier-line").text()
    assert "tier" in tier_line and "not significant" in tier_line
    details = doc.find("details", "claims")
    assert details.find("summary").text() == "How to read this board"
    assert details.attrs.get("open") is None  # closed: the table comes first
    claims = details.text()
    info = board.snapshot
    assert f"{info.n_battles:,.0f} battles between {info.n_models} models" in claims
    assert "95% confidence intervals from a bootstrap over battles with 64 rounds" in claims
    assert "computed 2026-01-19 12:00 UTC" in claims  # the snapshot's date, not now
    assert "not ranked against each other" in claims
    assert "1 hidden model is not shown" in claims
    assert "fewer than 50 battles" in claims
    # Charts: all-model interval chart plus the three top-N matrices, each with title/desc.
    charts = list(doc.find_all("svg", "chart"))
    assert len(charts) == 4
    for svg in charts:
        assert svg.find("title").text() and svg.find("desc").text()
    assert "CC-BY-4.0" in doc.find("footer").text()


def test_links_resolve_and_no_remote_resources(site):
    out = site["out"]
    pages = sorted(out.rglob("*.html"))
    assert (out / "index.html") in pages and len(list((out / "models").iterdir())) == 13
    for page in pages:
        doc = parse(page)
        assert all("src" not in sc.attrs for sc in doc.iter("script"))  # inline only
        for node in doc.iter():
            for attr in ("href", "src"):
                url = node.attrs.get(attr)
                if url is None or url.startswith("#"):
                    continue
                assert not re.match(r"^[a-z]+:|^//", url), f"{page.name}: remote {url}"
                target = (page.parent / url).resolve()
                assert target.is_file(), f"{page.name}: broken link {url}"
                assert out.resolve() in target.parents
    # Navigation: index links to the category page and marks itself current.
    nav = parse(out / "index.html").find("nav")
    links = {a.text(): a.attrs for a in nav.iter("a")}
    assert links["Overall"].get("aria-current") == "page"
    cat = out / links["Math"]["href"]
    assert parse(cat).find("h1").text() == "Math leaderboard"


def test_model_page_record_and_history(site):
    board, out, pairs = site["board"], site["out"], site["pairs"]
    row = next(r for r in board.rows if r.model == "model-000")
    doc = parse(out / "models" / f"{slug('model-000')}.html")
    record = doc.find("table", "record")
    rows = list(record.find("tbody").find_all("tr"))
    mine = [p for p in pairs if "model-000" in (p.model_a, p.model_b)]
    visible_opp = [p for p in mine if "model-012" not in (p.model_a, p.model_b)]
    assert len(rows) == len(visible_opp)
    total = sum(int(tr.find_all("td").__next__().text()) for tr in rows)
    hidden_n = sum(p.a_wins + p.b_wins + p.ties for p in mine if p not in visible_opp)
    assert total + hidden_n == row.battles
    assert f"Plus {hidden_n:.0f} battles against hidden models" in doc.text()
    history = [
        t for t in doc.find_all("table") if "Rating at each snapshot" in t.find("caption").text()
    ]
    assert len(list(history[0].find("tbody").find_all("tr"))) == 3
    # A model that appeared only in the latest snapshot has one history point.
    new = parse(out / "models" / f"{slug('model-011')}.html")
    assert "Rating history" in new.text()
    # ... told in words, not drawn as a lone dot (issue 39 item 8)
    assert new.find("svg", "history") is None
    assert (
        "One snapshot so far (" in new.text() and "The chart appears with the second." in new.text()
    )
    assert doc.find("svg", "history").find("title").text().startswith("Rating history of model-000")


# ---------------------------------------------------------------- untrusted names


def test_hostile_names_render_as_text_everywhere(site):
    out, board = site["out"], site["board"]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    doc = parse(out / "index.html")
    names = [
        model_name(th)
        for th in doc.find("table", "board").find_all("th")
        if th.attrs.get("scope") == "row"
    ]
    for evil in EVIL_NAMES:
        assert evil in names
    for node in doc.iter():
        assert not any(a.startswith("on") for a in node.attrs), (node.tag, node.attrs)
    # Every inline SVG is well-formed XML whose labels keep the names as text.
    labels = set()
    for m in re.finditer(r"<svg\b.*?</svg>", html, flags=re.S):
        el = ET.fromstring(m.group(0))
        labels.update("".join(t.itertext()) for t in el.iter("{*}text") if True)
        labels.update("".join(t.itertext()) for t in el.iter("text"))
    assert "<script>alert(1)</script>" in labels
    assert "../../etc/passwd" in labels
    # Model pages show the name in the heading, as text.
    page = out / "models" / f"{slug('<script>alert(1)</script>')}.html"
    assert parse(page).find("h1").text() == "<script>alert(1)</script>"

    # JSON: exactly the `arena leaderboard --format json` document (floats rounded alike).
    raw = (out / "leaderboard.json").read_text(encoding="utf-8")
    want = board.to_dict()
    want["snapshot"] = {**want["snapshot"], "board_label": "Overall"}
    assert raw == to_json(tidy(want)) + "\n"
    doc_json = json.loads(raw)
    assert {r["model"] for r in doc_json["rows"]} >= set(EVIL_NAMES)
    assert doc_json["snapshot"]["hidden_models"] == 1

    # CSV: same as `--format csv`; formula-looking cells neutralised.
    raw_csv = (out / "leaderboard.csv").read_text(encoding="utf-8")
    assert raw_csv == render_csv([tidy(r.to_dict()) for r in board.visible_rows()], ROW_FIELDS)
    rows = list(csv.DictReader(io.StringIO(raw_csv)))
    assert tuple(rows[0]) == ROW_FIELDS
    models = {r["model"] for r in rows}
    assert '\'=HYPERLINK("http://x")' in models and "'-2+3" in models and "'@sum(a1)" in models
    assert "<script>alert(1)</script>" in models
    assert not any(m.startswith(("=", "+", "-", "@")) for m in models)
    unranked = next(r for r in rows if r["model"] == "model-013")
    assert unranked["flags"] == "few_battles,low_data" and unranked["rank_ub"] == ""
    assert "rank" not in rows[0]  # no ordinal rank in the downloads


def test_file_names_stay_inside_out_dir(site, tmp_path):
    out = site["out"]
    for rel in files(out):
        assert re.fullmatch(r"(models/)?[a-z0-9.-]+", rel), rel
        assert out.resolve() in (out / rel).resolve().parents
    for p in (out / "models").iterdir():
        assert re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{8}\.html", p.name), p.name
    # Nothing was written beside the site (no "etc/passwd", no leftovers).
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("arena.db")] == ["site"]
    assert slug("../../etc/passwd") == "etc-passwd-" + slug("../../etc/passwd")[-8:]
    assert slug("a/b") != slug("a-b")
    assert slug("\u202e").startswith("x-")


# ---------------------------------------------------------------- atomic, deterministic


def test_publish_twice_is_byte_identical(site, tmp_path):
    again = tmp_path / "again"
    publish_site(site["engine"], again)
    assert files(again) == files(site["out"])
    publish_site(site["engine"], site["out"])  # replace in place: same bytes, no debris
    assert files(again) == files(site["out"])
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_crash_mid_write_keeps_old_site(site, tmp_path, monkeypatch):
    out = site["out"]
    before = files(out)
    import arena.publish.site as site_mod

    real = site_mod.render

    def flaky(template, **ctx):
        if template == "model.html":  # index.html is already in the temp dir by now
            raise RuntimeError("disk on fire")
        return real(template, **ctx)

    with site["engine"].begin() as conn:  # a change the failed publish would have shown
        conn.execute(update(Model).where(Model.name == "model-000").values(organisation="NewOrg"))
    monkeypatch.setattr(site_mod, "render", flaky)
    with pytest.raises(RuntimeError, match="disk on fire"):
        publish_site(site["engine"], out)
    assert files(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    monkeypatch.setattr(site_mod, "render", real)
    publish_site(site["engine"], out)
    assert "NewOrg" in (out / "index.html").read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_older_snapshot_and_hidden_and_links(site, run_cli, tmp_path):
    ids = site["ids"]
    out = tmp_path / "old"
    run_cli("publish", str(out), "--snapshot", str(ids["overall"][0]), "-q")
    doc = parse(out / "index.html")
    assert f"snapshot {ids['overall'][0]} " in doc.find("p", "lede").text()
    # The first snapshot: no previous one, so no change marks and nobody is "new".
    assert "the first snapshot of this board" in doc.find("p", "lede").text()
    table = doc.find("table", "board")
    assert doc.find("td") is not None and "new" not in table.text()
    assert table.find("span", "chg") is None and table.find("span", "badge-new") is None
    page = parse(out / "models" / f"{slug('model-000')}.html")
    hist = [
        t for t in page.find_all("table") if "Rating at each snapshot" in t.find("caption").text()
    ]
    assert len(list(hist[0].find("tbody").find_all("tr"))) == 1  # later snapshots not shown

    run_cli(
        "models",
        "annotate",
        "model-000",
        "--display-name",
        "Model Zero",
        "--organisation",
        "Acme <Labs>",
        "--licence",
        "=cmd|' /C calc'!A0",
        "--link",
        "https://example.org/zero",
    )
    run_cli("models", "annotate", "model-008", "--hide")
    # annotate refuses such links; a row written some other way must still not become one.
    with site["engine"].begin() as conn:
        conn.execute(
            update(Model).where(Model.name == "model-009").values(link="javascript:alert(1)")
        )
    res = run_cli("publish", str(out), "--attribution", "Data <b>CC-BY</b> 4.0")
    assert "published snapshot" in res.output
    html = (out / "index.html").read_text(encoding="utf-8")
    doc = parse(out / "index.html")
    assert "javascript:" not in html and "model-008" not in html
    assert "2 hidden models are not shown" in doc.find("details", "claims").text()
    zero = next(th for th in doc.find_all("th", "model") if model_name(th) == "Model Zero")
    tr = zero.parent
    assert "Acme <Labs>" in tr.text()
    ext = next(a for a in tr.iter("a") if "ext" in a.classes())
    assert ext.attrs["href"] == "https://example.org/zero" and "noopener" in ext.attrs["rel"]
    assert "Data <b>CC-BY</b> 4.0" in doc.find("footer").text()
    nine = next(th for th in doc.find_all("th", "model") if model_name(th) == "model-009").parent
    assert not any("ext" in a.classes() for a in nine.iter("a"))
    # The CSV still carries the raw model name and the display name stays out of it.
    assert "Model Zero" not in (out / "leaderboard.csv").read_text(encoding="utf-8")


def test_cli_errors(run_cli, engine, tmp_path):
    res = run_cli("publish", str(tmp_path / "x"), ok=False)
    assert res.exit_code == 1 and "no snapshot yet" in res.output
    assert not (tmp_path / "x").exists()
    build_site_db(engine, n_models=6, history=1, category=False, hidden=())
    res = run_cli("publish", str(tmp_path / "x"), "--snapshot", "999", ok=False)
    assert res.exit_code == 1 and "snapshot 999 does not exist" in res.output
    a_file = tmp_path / "file.txt"
    a_file.write_text("keep me")
    res = run_cli("publish", str(a_file), ok=False)
    assert res.exit_code == 1 and "is not a directory" in res.output
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    res = run_cli("publish", str(foreign), ok=False)
    assert res.exit_code == 1 and "refusing to replace it" in res.output
    assert (foreign / "thesis.tex").read_text() == "precious"
    res = run_cli("publish", str(tmp_path / "x"), "--heatmap-top", "1", ok=False)
    assert res.exit_code == 1 and "Error: --heatmap-top must be at least 2" in res.output
    res = run_cli("publish", str(tmp_path / "x"), "--top", "1", ok=False)  # the old spelling
    assert res.exit_code == 1 and "Error: --top must be at least 2" in res.output
    link = tmp_path / "link"
    link.symlink_to(foreign)
    res = run_cli("publish", str(link), ok=False)
    assert res.exit_code == 1 and "is a symbolic link" in res.output
    empty = tmp_path / "empty"
    empty.mkdir()
    run_cli("publish", str(empty), "-q")
    assert (empty / "index.html").is_file()


def test_publish_error_on_category_only(engine, tmp_path):
    from datetime import UTC, datetime

    import numpy as np

    from tests.publish_fixtures import add_snapshot

    with engine.begin() as conn:
        # Options from some other writer: almost nothing the caption would like to say.
        add_snapshot(
            conn,
            names=["a", "b", "c"],
            strength=np.array([1100.0, 1000, 900]),
            when=datetime(2026, 2, 1, tzinfo=UTC),
            board="category:code",
            category="code",
            rng=np.random.default_rng(1),
            unranked=0,
            options={"ci": "sandwich", "cluster": "battle"},
        )
    with pytest.raises(PublishError, match="no overall snapshot"):
        publish_site(engine, tmp_path / "s")
    rep = publish_site(engine, tmp_path / "s", snapshot_id=1)
    assert rep.board == "category:code" and rep.boards == ("category:code",)
    doc = parse(tmp_path / "s" / "index.html")
    assert doc.find("nav") is None  # a single board needs no navigation
    claims = doc.find("details", "claims").text()
    assert "hidden" not in claims and "cluster" not in claims
    assert "Intervals are confidence intervals from sandwich (robust) standard errors" in claims
    assert "tier method" not in claims and "Ties are" not in claims


def test_hostile_category_and_all_hidden(engine, tmp_path):
    from datetime import UTC, datetime

    import numpy as np

    from tests.publish_fixtures import add_snapshot

    evil_cat = '../../<img src=x onerror="alert(1)">'
    with engine.begin() as conn:
        add_snapshot(
            conn,
            names=["a", "b", "c"],
            strength=np.array([1100.0, 1000, 900]),
            when=datetime(2026, 2, 1, tzinfo=UTC),
            rng=np.random.default_rng(2),
            unranked=0,
        )
        add_snapshot(
            conn,
            names=["a", "b"],
            strength=np.array([1000.0, 990]),
            when=datetime(2026, 2, 2, tzinfo=UTC),
            board=f"category:{evil_cat}",
            category=evil_cat,
            rng=np.random.default_rng(3),
            unranked=0,
        )
    out = tmp_path / "s"
    report = publish_site(engine, out)
    assert len(report.boards) == 2
    names = sorted(files(out))
    cat_pages = [n for n in names if n.startswith("board-")]
    assert all(re.fullmatch(r"board-[a-z0-9-]+-[0-9a-f]{8}\.(html|json|csv)", n) for n in cat_pages)
    doc = parse(out / "index.html")
    labels = [a.text() for a in doc.find("nav").iter("a")]
    assert label_for(evil_cat) in labels and "<img" in label_for(evil_cat)  # as text
    for page in out.glob("*.html"):
        for node in parse(page).iter():
            assert node.tag != "img" and not any(a.startswith("on") for a in node.attrs)

    # Every model hidden: the page still renders, says so, and lists nobody.
    with engine.begin() as conn:
        conn.execute(update(Model).values(hidden=True))
    report = publish_site(engine, out)
    assert report.visible_models == 0 and report.model_pages == 0
    doc = parse(out / "index.html")
    assert "3 hidden models are not shown" in doc.find("details", "claims").text()
    assert not (out / "models").exists()
    assert json.loads((out / "leaderboard.json").read_text())["rows"] == []


def _contrast(a: str, b: str) -> float:
    def lum(hexcol: str) -> float:
        h = hexcol.lstrip("#")
        if len(h) == 3:
            h = "".join(c * 2 for c in h)
        rgb = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_theme_colours_have_sufficient_contrast():
    """WCAG AA (4.5:1) for every text colour on every background, light and dark."""
    from arena.core.resources import templates_dir

    css = (templates_dir() / "style.css").read_text(encoding="utf-8")
    light = dict(re.findall(r"--([a-z0-9]+):\s*(#[0-9a-f]{3,6})", css.split("@media")[0]))
    dark_block = css[css.index("prefers-color-scheme: dark") :]
    dark = dict(
        re.findall(r"--([a-z0-9]+):\s*(#[0-9a-f]{3,6})", dark_block[: dark_block.index("}\n}")])
    )
    for theme in (light, dark):
        for text in ("fg", "muted", "link", "flag"):
            for bg in ("bg", "band0", "band1", "bandu", "head"):
                ratio = _contrast(theme[text], theme[bg])
                assert ratio >= 4.5, f"{text} on {bg}: {ratio:.2f}"


# ---------------------------------------------------------------- words, labels, SEO


def _meta(doc: Node, **attr: str) -> str | None:
    key, value = next(iter(attr.items()))
    node = next((m for m in doc.iter("meta") if m.attrs.get(key) == value), None)
    return node.attrs.get("content") if node is not None else None


def test_category_labels_name_pages_titles_and_downloads(site, run_cli, tmp_path):
    from arena.db.models import Category

    out = tmp_path / "labelled"
    with site["engine"].begin() as conn:  # the fixture's snapshots bypass ingest
        conn.execute(Category.__table__.insert().values(name="math"))
    run_cli("categories", "label", "math", "Maths & <proofs>")
    run_cli("publish", str(out), "-q")
    doc = parse(out / "index.html")
    nav = {a.text(): a.attrs["href"] for a in doc.find("nav").iter("a")}
    assert "Maths & <proofs>" in nav and "math" not in nav
    page = out / nav["Maths & <proofs>"]
    cat = parse(page)
    assert cat.find("h1").text() == "Maths & <proofs> leaderboard"
    assert cat.find("title").text().startswith("Maths & <proofs> LLM leaderboard: ")
    meta = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))["snapshot"]
    assert meta["board_label"] == "Maths & <proofs>" and meta["board"] == "category:math"
    assert "Maths &amp; &lt;proofs&gt;" in page.read_text(encoding="utf-8")  # escaped
    links = [a.text() for a in cat.find("p", "downloads").iter("a")]
    assert links == ["Maths & <proofs> leaderboard, JSON", "Maths & <proofs> leaderboard, CSV"]
    model = parse(out / "models" / f"{slug('model-000')}.html")
    boards = [a.text() for a in model.find("table", "standings").iter("a")]
    assert boards == ["Overall", "Maths & <proofs>"]


def test_title_and_description_say_what_the_page_is(site):
    out, board = site["out"], site["board"]
    doc = parse(out / "index.html")
    n = len(board.visible_rows())
    date = board.snapshot.created_at.strftime("%Y-%m-%d")
    assert doc.find("title").text() == f"Overall LLM leaderboard: {n} models, {date}"
    desc = _meta(doc, name="description")
    assert f"Overall leaderboard of {n} models" in desc and date in desc
    assert f"{board.snapshot.n_battles:,.0f} battles" in desc
    assert _meta(doc, property="og:title") == doc.find("title").text()
    model = parse(out / "models" / f"{slug('model-000')}.html")
    assert model.find("title").text() == "model-000: Overall rating and record"
    assert "model-000 on the Overall leaderboard: rank" in _meta(model, name="description")
    # every page has its own title
    titles = [parse(p).find("title").text() for p in sorted(out.rglob("*.html"))]
    assert len(set(titles)) == len(titles)


def test_heatmaps_show_the_top_n_and_say_so(engine, tmp_path):
    build_site_db(engine, n_models=10, history=1, category=False, hidden=())
    publish_site(engine, tmp_path / "s", top=4)
    doc = parse(tmp_path / "s" / "index.html")
    boxes = list(doc.find_all("section", "chart-box"))
    heat = [b for b in boxes if b.find("svg", "heat") is not None]
    assert len(heat) == 3
    for box in heat:
        assert "top 4" in box.find("h2").text()
        assert "top 4 by rating shown" in box.find("p", "note").text()
        assert "top 4" in box.find("svg").find("title").text()
    with pytest.raises(PublishError, match="^heatmap_top must be at least 2"):
        publish_site(engine, tmp_path / "t", top=1)


def test_model_page_shows_no_admin_command_and_no_unknown(site, run_cli):
    out = site["out"]
    page = out / "models" / f"{slug('model-010')}.html"
    doc = parse(page)
    # missing metadata is simply absent: no "unknown", no site owner's command
    assert "unknown" not in doc.find("main").text()
    assert "arena models annotate" not in page.read_text(encoding="utf-8")
    assert doc.find("p", "hint") is None
    # the headline shows rating and interval the same way as the board
    row = next(r for r in site["board"].rows if r.model == "model-010")
    stats = doc.find("dl", "stats").text()
    assert f1(row.rating) in stats
    assert f"+{f1(row.ci_high - row.rating)}/\u2212{f1(row.rating - row.ci_low)}" in stats
    run_cli("models", "annotate", "model-010", "--organisation", "Acme", "--licence", "MIT")
    run_cli("publish", str(out), "-q")
    doc = parse(page)
    assert doc.find("p", "hint") is None
    assert "Acme · MIT" in doc.find("p", "lede").text()
    board = parse(out / "index.html")
    th = next(t for t in board.find_all("th", "model") if model_name(t) == "model-010")
    assert th.find("div", "sub").text().startswith("Acme · MIT")


def test_inline_script_is_small_local_and_optional(site, tmp_path):
    import shutil
    import subprocess

    out = site["out"]
    doc = parse(out / "index.html")
    scripts = list(doc.iter("script"))
    assert len(scripts) == 1 and "src" not in scripts[0].attrs
    code = scripts[0].text()
    assert 1000 < len(code.encode("utf-8")) < 6000  # a few KB
    for word in ("fetch", "XMLHttpRequest", "http:", "https:", "import(", "eval(", "innerHTML"):
        assert word not in code, word
    # Without JavaScript: the tools are hidden and the table is complete and in rank order.
    assert "hidden" in doc.find("div", "tools").attrs
    heads = {
        th.attrs["data-sort"]: th for th in doc.find("thead").iter("th") if "data-sort" in th.attrs
    }
    assert heads["rank"].attrs.get("aria-sort") == "ascending"
    assert all(th.attrs.get("aria-sort") is None for k, th in heads.items() if k != "rank")
    label = next(lb for lb in doc.iter("label") if lb.find("input") is not None)
    assert label.find("span", "sr").text()  # the filter has a name for screen readers
    # Model pages carry no script at all.
    assert parse(out / "models" / f"{slug('model-000')}.html").find("script") is None
    node = shutil.which("node")
    assert node, "node is needed to check the page script's syntax (CI installs it)"
    (tmp_path / "board.js").write_text(code, encoding="utf-8")
    res = subprocess.run(
        [node, "--check", str(tmp_path / "board.js")], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr


def test_open_graph_image_is_written_and_linked(site):
    out = site["out"]
    card = ET.fromstring((out / "og.svg").read_text(encoding="utf-8"))
    assert card.tag.endswith("svg") and "Overall leaderboard" in "".join(card.itertext())
    # link previews ignore SVG: pages point at the PNG card (tests/test_publish_menu.py)
    doc = parse(out / "index.html")
    assert _meta(doc, property="og:image") == "og.png"
    model = parse(out / "models" / f"{slug('model-000')}.html")
    assert _meta(model, property="og:image") == "../og.png"
    assert {"og.svg", "og.png"} <= set(site["report"].files)


def test_rank_text_never_shows_a_firm_rank_without_its_worst_bound():
    from types import SimpleNamespace as Row

    from arena.publish.fmt import rank_text

    assert rank_text(Row(rank_ub=3, rank_lb=3)) == "3"
    assert rank_text(Row(rank_ub=3, rank_lb=7)) == "3\u20137"
    assert rank_text(Row(rank_ub=3, rank_lb=None)) == "3\u2013?"  # written before 0007
    assert rank_text(Row(rank_ub=None, rank_lb=None)) == "\u2013"


def test_counts_names_and_one_snapshot_history_issue_39():
    """Issue 39 item 8: thousands separators, dates in names kept whole (a name breaks
    at its other hyphens), and one snapshot told in words rather than a lone dot."""
    from arena.publish.fmt import fmt_count
    from arena.publish.render import name_parts

    assert (
        fmt_count(135624) == "135,624"
        and fmt_count(999) == "999"
        and fmt_count(1234.5) == "1,234.5"
    )
    assert name_parts("grok-3-preview-02-24") == 'grok-3-preview-<span class="nb">02-24</span>'
    assert name_parts("gpt-4.1-2025-04-14").endswith('<span class="nb">2025-04-14</span>')
    assert name_parts("claude-3-7-sonnet-20250219") == "claude-3-7-sonnet-20250219"
    assert name_parts("<b>-12-34") == '&lt;b&gt;-<span class="nb">12-34</span>'
