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


def _demo_slices(tmp_path, monkeypatch):
    """The first 4,000 rows of both bundled files stand in for them (same shapes)."""
    import gzip
    from itertools import islice

    out = []
    for (source, path), name in zip(
        resources.DEMO_SOURCES, ("votes.csv", "judge.jsonl"), strict=True
    ):
        with gzip.open(path(), "rt", encoding="utf-8") as f:
            (tmp_path / name).write_text("".join(islice(f, 4001)), encoding="utf-8")
        out.append((source, lambda p=tmp_path / name: p))
    monkeypatch.setattr(resources, "DEMO_SOURCES", tuple(out))


def test_demo_end_to_end(run_cli, tmp_path, monkeypatch):
    """Both sources, never pooled: human votes on overall and its categories (with the
    derived Hard Prompts), the judge's verdicts on their own raw and style boards."""
    _demo_slices(tmp_path, monkeypatch)
    site = tmp_path / "site"
    out = run_cli("demo", str(site), "--rounds", "20").output
    assert "ingested 4000 battles" in out and "from judge.jsonl" in out
    # overall + 10 LMArena tags + Hard Prompts; each source's board (the judge's raw +
    # style-controlled)
    assert "rebuilt 15 boards" in out
    snaps = json.loads(run_cli("snapshots", "--format", "json").output)["snapshots"]
    boards = {s["board"] for s in snaps}
    assert {"category:hard_prompts", "source:ko-arena-hard", "source:ko-arena-hard|style"} <= boards
    assert "overall|style" not in boards  # the human votes carry no style metadata
    doc = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    assert doc["snapshot"]["board"] == "overall"
    assert doc["snapshot"]["options"]["rounds"] == 20
    # no judge battle on the human board: the baseline of every judged game is absent
    assert "claude-3.7-sonnet" not in {r["model"] for r in doc["rows"]}
    hard = json.loads(run_cli("categories", "--format", "json").output)["categories"]
    rule = next(r for r in hard if r["key"] == "hard_prompts")
    assert rule["label"] == "Hard Prompts" and rule["rule"].startswith("at least 6 of the 7")
    models = json.loads(run_cli("models", "--format", "json").output)["models"]
    assert models and all(m.get("organisation") for m in models)
    page = _Text()
    page.feed((site / "index.html").read_text(encoding="utf-8"))
    text = " ".join(page.text)
    assert "CC-BY-4.0" in text and "LMArena" in text and "Apache-2.0" in text
    assert page.rows >= len(doc["rows"])
    # Running it again ingests nothing new and adds a snapshot per board.
    again = run_cli("demo", str(site), "--rounds", "20").output
    assert again.count("already ingested") == 2
    assert len(json.loads(run_cli("snapshots", "--format", "json").output)["snapshots"]) == 30
    assert resources.DEMO_ATTRIBUTION.startswith("Demo data: LMArena")


def test_bundled_models_file_names_every_demo_model():
    """Every model of both bundled files has an organisation, a licence and a link."""
    import csv
    import gzip

    names = set()
    with gzip.open(resources.demo_data(), "rt", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            names |= {row["model_a"], row["model_b"]}
    with gzip.open(resources.demo_judge_data(), "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            names |= {rec["model_a"], rec["model_b"]}
    with open(resources.demo_models(), encoding="utf-8") as f:
        rows = {r["model"]: r for r in csv.DictReader(f)}
    assert names == set(rows)
    assert all(
        r["organisation"] and r["licence"] and r["link"].startswith("https://")
        for r in rows.values()
    )


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
    monkeypatch.setattr(resources, "DEMO_SOURCES", (("lmarena-140k", lambda: data),))
    out = run_cli("demo", str(tmp_path / "site"), "--rounds", "20").output
    assert "ingested 91 battles (1 excluded" in out
    assert "rebuilt 2 boards" in out  # overall and the source's own board
