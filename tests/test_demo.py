"""`arena demo`, the README's main command: bundled data -> ingest -> rebuild -> publish."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from arena.core import resources

pytestmark = pytest.mark.slow  # the whole demo on the bundled 135,634 votes


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.rows = 0

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows += 1

    def handle_data(self, data):
        self.text.append(data)


def test_demo_end_to_end(lmarena_db, tmp_path):
    """On the session's database, where the bundled votes are already ingested."""
    run_cli = lmarena_db.run_cli
    before = len(json.loads(run_cli("snapshots", "--format", "json").output)["snapshots"])
    site = tmp_path / "site"
    out = run_cli("demo", str(site), "--rounds", "50").output
    assert "demo data already ingested" in out
    assert "rebuilt 11 boards" in out  # overall + 10 LMArena category tags
    doc = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    assert doc["snapshot"]["board"] == "overall" and len(doc["rows"]) == 53
    assert doc["snapshot"]["options"]["rounds"] == 50
    page = _Text()
    page.feed((site / "index.html").read_text(encoding="utf-8"))
    text = " ".join(page.text)
    assert "CC-BY-4.0" in text and "LMArena" in text  # attribution of the bundled data
    assert page.rows >= 53
    # Running it again ingests nothing new and adds a snapshot per board.
    again = run_cli("demo", str(site), "--rounds", "50").output
    assert "demo data already ingested" in again
    snaps = json.loads(run_cli("snapshots", "--format", "json").output)["snapshots"]
    assert len(snaps) == before + 22
    assert resources.DEMO_ATTRIBUTION.startswith("Demo data: LMArena")


def test_demo_first_run_ingests(run_cli, tmp_path, monkeypatch):
    """A first run reports what it ingested (a small file stands in for the bundled one)."""
    data = tmp_path / "votes.csv"
    data.write_text(
        "id,model_a,model_b,winner\n"
        + "".join(f"v{k},m{k % 3},m{(k + 1) % 3},model_a\n" for k in range(60))
        + "v60,m1,m1,tie\n"
        + "".join(f"w{k},m{(k + 1) % 3},m{k % 3},model_a\n" for k in range(30)),
        encoding="utf-8",
    )
    monkeypatch.setattr(resources, "demo_data", lambda: data)
    out = run_cli("demo", str(tmp_path / "site"), "--rounds", "20").output
    assert "ingested 91 battles (1 excluded" in out
    assert "rebuilt 1 boards" in out
