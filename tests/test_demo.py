"""`arena demo`, the README's main command: bundled data -> ingest -> rebuild -> publish."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from arena import resources


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


def test_demo_end_to_end(run_cli, tmp_path):
    site = tmp_path / "site"
    out = run_cli("demo", str(site), "--rounds", "50").output
    assert "ingested 135634 battles (10 excluded" in out
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
    snaps = json.loads(run_cli("snapshots", "--format", "json").output)
    assert len(snaps) == 22
    assert resources.DEMO_ATTRIBUTION.startswith("Demo data: LMArena")
