"""`arena audit` on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import json

import numpy as np
from sqlalchemy import select

from arena.audit import PROBE_NAMES
from arena.audit.read import load_audit
from arena.db.models import SnapshotAudit
from tests.helpers.files import judged_battles


def test_audit_table_json_and_stored(run_cli, engine, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # the terminal's width (also the default when piped)
    path = tmp_path / "votes.csv"
    judged_battles(path)
    run_cli("ingest", str(path), "-q", "--map", "question=question_id")
    out = run_cli("audit", ok=False)
    assert out.exit_code != 0 and "run `arena rebuild`" in out.output
    run_cli("rebuild", "--rounds", "50")
    table = run_cli("audit", "--rounds", "50").output
    assert "position" in table and "anomaly" in table and "flagged judges: j00" in table
    # the verdicts wrap to the terminal (100 columns when not one): no 300-character lines
    probes = table.split("flagged judges:")[0]
    assert max(len(line) for line in probes.splitlines()) <= 100
    assert table.splitlines()[0].endswith("25 judges")
    doc = json.loads(run_cli("audit", "--rounds", "50", "--format", "json").output)
    assert doc["snapshot"] == 1 and doc["judges"] == 25 and isinstance(doc["votes"], int)
    assert doc["flagged_judges"] == ["j00"]
    names = [p["name"] for p in doc["probes"]]
    assert tuple(names) == PROBE_NAMES
    with engine.connect() as conn:
        stored = load_audit(conn, 1)
        assert conn.execute(select(SnapshotAudit.snapshot_id)).scalars().all() == [1]
    assert stored["flagged_judges"] == ["j00"] and stored["probes"] == doc["probes"]
    partial = json.loads(
        run_cli("audit", "--probe", "coverage", "--format", "json", "--no-store").output
    )
    assert [p["name"] for p in partial["probes"]] == ["coverage"]
    bad = run_cli("audit", "--level", "2", ok=False)
    assert bad.exit_code != 0 and "--level" in bad.output and "Traceback" not in bad.output


def test_position_flag_names_the_judge_in_table_and_json(run_cli, tmp_path, monkeypatch):
    """One judge of 150 always picks the first shown; pooled, the bias is inside the band."""
    monkeypatch.setenv("COLUMNS", "400")  # a wide terminal: each verdict on one line
    rng = np.random.default_rng(5)
    n, models = 30000, 8
    strength = np.linspace(1.2, -1.2, models)
    a = rng.integers(models, size=n)
    b = (a + rng.integers(1, models, size=n)) % models
    judge = rng.integers(150, size=n)
    first = (judge == 0) | (rng.random(n) < 1 / (1 + np.exp(strength[b] - strength[a])))
    path = tmp_path / "votes.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model_a", "model_b", "winner", "judge"])
        for k in range(n):
            w.writerow(
                [f"m{a[k]}", f"m{b[k]}", "model_a" if first[k] else "model_b", f"j{judge[k]:03d}"]
            )
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "20", "-q")
    args = ("audit", "--probe", "position", "--no-store")
    (p,) = json.loads(run_cli(*args, "--format", "json").output)["probes"]
    assert p["flagged"] and -10 <= p["low"] and p["high"] <= 10
    assert p["verdict"].startswith("Flagged: pooled OK; judge j000 flagged.")
    assert p["details"]["flagged_by"] == {"pooled": False, "judges": ["j000"], "categories": []}
    table = run_cli(*args).output
    assert "FLAG  Flagged: pooled OK; judge j000 flagged." in table


def test_audit_page_in_published_site(run_cli, tmp_path):
    path = tmp_path / "votes.csv"
    judged_battles(path, n=900)
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "50")
    run_cli("publish", str(tmp_path / "site0"))
    assert not (tmp_path / "site0" / "audit.html").exists()
    assert "audit.html" not in (tmp_path / "site0" / "index.html").read_text()
    run_cli("audit", "--rounds", "50")
    run_cli("publish", str(tmp_path / "site"))
    page = (tmp_path / "site" / "audit.html").read_text()
    assert '<a href="audit.html">Vote audit</a>' in (tmp_path / "site" / "index.html").read_text()
    for title in ("Position bias", "Tie convention", "Anomalous judges", "Coverage"):
        assert title in page
    assert '<span class="name" title="j00"><bdi>j00</bdi></span>' in page and "position" in page
    # One card per probe, its status in words.
    assert page.count('<li class="probe ') == len(PROBE_NAMES)
    assert '<p class="status flagged">Flagged</p>' in page
    assert "probes flagged" in page and '<meta name="description"' in page
    # every judge with its outcome (issue 40)
    assert "judges checked: 1 flagged, " in page
    assert '<span class="status flagged">Flagged</span>' in page
    assert "Too few votes to tell" in page or "Consistent with the board</span>" in page


def test_rebuild_exclude_flagged(run_cli, engine, tmp_path):
    from arena.boards.snapshots import snapshot_info

    path = tmp_path / "votes.csv"
    judged_battles(path, n=1200)
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "50")
    missing = run_cli("rebuild", "--exclude-flagged", ok=False)
    assert missing.exit_code != 0 and "run `arena audit` first" in missing.output
    run_cli("audit", "--rounds", "50")
    out = run_cli("rebuild", "--rounds", "50", "--exclude-flagged").output
    assert "left out 1 flagged judge(s): j00" in out
    with engine.connect() as conn:
        first, second = snapshot_info(conn, 1), snapshot_info(conn, 2)
    assert second.options["exclude_judges"] == ["j00"]
    assert first.options["exclude_judges"] == []
    with open(path) as fh:
        by_j00 = sum(1 for r in csv.DictReader(fh) if r["judge"] == "j00")
    assert second.n_battles == first.n_battles - by_j00 and by_j00 >= 200
    doc = json.loads(run_cli("audit", "--rounds", "50", "--format", "json").output)
    assert doc["snapshot"] == 2 and doc["judges"] == 24 and doc["flagged_judges"] == []


def test_audit_opens_with_the_judges_per_outcome(run_cli, tmp_path, monkeypatch):
    """Issue 40: the counts per outcome come first, then what the unchecked judges need."""
    monkeypatch.setenv("COLUMNS", "400")  # a wide terminal: each sentence on one line
    path = tmp_path / "votes.csv"
    judged_battles(path)
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "50", "-q")
    lines = run_cli("audit", "--rounds", "50", "--no-store").output.splitlines()
    assert lines[0].startswith("audit of snapshot 1")
    assert lines[1].startswith("25 judges checked: 1 flagged, ")
    assert lines[1].endswith("too few votes to tell")
    if "0 too few votes" not in lines[1]:
        assert "would need" in lines[2] and "votes each for 80% power" in lines[2]
    assert any(line.startswith("(material: agreeing with the board's") for line in lines[2:4])
    doc = json.loads(run_cli("audit", "--rounds", "50", "--format", "json", "--no-store").output)
    counts = doc["judge_outcomes"]
    assert sum(counts.values()) == 25 and counts["flagged"] == 1
    judges = next(p for p in doc["probes"] if p["name"] == "anomaly")["details"]["judges"]
    assert {r["outcome"] for r in judges} <= {"flagged", "consistent", "too few votes"}
    assert all("power" in r and "votes_needed" in r for r in judges)


def test_publish_shows_each_boards_latest_stored_audit(run_cli, tmp_path):
    """Issue 39 item 6: the latest audit of a board is published even when a newer
    snapshot was rebuilt since (the page names both); a board without one is not
    linked to an audit page at all."""
    path = tmp_path / "votes.csv"
    judged_battles(path, n=900)
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "50")
    run_cli("audit", "--rounds", "50")
    run_cli("rebuild", "--rounds", "50")  # snapshot 2, not audited
    run_cli("publish", str(tmp_path / "site"))
    index = (tmp_path / "site" / "index.html").read_text()
    page = (tmp_path / "site" / "audit.html").read_text()
    assert '<a href="audit.html">Vote audit</a>' in index
    assert "<h1>Vote audit: Overall</h1>" in page and "Snapshot 1 · 900 votes" in page
    assert "This audit is of snapshot 1, the latest one audited; the board shows snapshot 2." in (
        page
    )
    assert "<code>arena audit</code>" in page and "`" not in page


def test_audit_page_without_an_audit_says_so_in_plain_words():
    from arena.publish.audit_page import audit_page
    from arena.publish.render import render

    view = audit_page(None, board_label="Overall", nav=(), attribution=None, snapshot_id=3)
    html = render("audit.html", page=view)
    assert not view.audited and not view.older
    assert "No vote audit has been run on this board yet." in html
    assert "<code>arena audit</code>" in html and "`" not in html
    assert "<h1>Sources&#39; agreement: Overall</h1>" in html
