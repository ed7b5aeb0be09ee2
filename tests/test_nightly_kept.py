"""``arena nightly`` rebuilds what was published (issue 39 item 2), on both engines.

After ``arena demo`` (human votes on the overall board, the judge's verdicts on
their own boards), a night with new battles writes the same boards again with
the options each was built with: the overall board stays the human board.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from arena.core import resources
from arena.db.models import Battle
from arena.db.session import open_engine
from tests.helpers.demo_slices import demo_slices


def _latest(run_cli) -> dict[str, dict]:
    snaps = json.loads(run_cli("snapshots", "--format", "json").output)["snapshots"]
    return {s["board"]: s for s in snaps}  # oldest first: the last of each board wins


def _human_battles(url: str) -> int:
    engine = open_engine(url, migrate_new=False)
    human, _ = resources.DEMO_SOURCES[0]
    try:
        with engine.connect() as conn:
            return conn.execute(
                select(func.count())
                .select_from(Battle)
                .where(Battle.excluded_reason.is_(None))
                .where((Battle.source == human) | Battle.source.is_(None))
            ).scalar()
    finally:
        engine.dispose()


@pytest.mark.slow  # two demos and two nights, ~10 s each engine
def test_nightly_rebuilds_the_demo_boards_with_their_options(
    run_cli, db_url, tmp_path, monkeypatch
):
    demo_slices(tmp_path, monkeypatch)
    site = tmp_path / "site"
    run_cli("demo", str(site), "--rounds", "20", "-q")
    before = _latest(run_cli)
    drop = tmp_path / "drop"
    drop.mkdir()
    # a new human vote (no source, no judge), between two models the votes know
    rows = json.loads(run_cli("leaderboard", "--format", "json").output)["rows"]
    a, b = rows[0]["model"], rows[1]["model"]
    (drop / "night.csv").write_text(f"model_a,model_b,winner\n{a},{b},model_a\n")
    night = run_cli(
        "nightly", "--incoming", str(drop), "--site", str(site), "--rounds", "30",
        "--format", "json",
    )  # fmt: skip
    doc = json.loads(night.stdout)
    # a rating option given to a kept night is not silently dropped
    assert "rating options given (rounds=30) were not used" in night.stderr
    assert doc["outcome"] == "ok" and doc["battles_added"] == 1
    # no pooling: the mixing warning of a board of votes and verdicts is never said
    assert "pools sources" not in night.stderr
    after = _latest(run_cli)
    assert set(after) == set(before)  # the same boards, style variants and categories
    rebuilt = {b for b in after if after[b]["id"] != before[b]["id"]}
    assert rebuilt == set(after)
    for board, snap in after.items():
        old = before[board]["options"]
        # each with the options it was built with (rounds, excluded judges, source)
        assert snap["options"] == old, board
    overall = after["overall"]
    assert overall["battles"] == _human_battles(db_url)
    assert overall["battles"] == before["overall"]["battles"] + 1
    judge, _ = resources.DEMO_SOURCES[1]
    assert after[f"source:{judge}"]["battles"] == before[f"source:{judge}"]["battles"]


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_nightly_boards_given_pools_as_asked(run_cli, tmp_path, monkeypatch):
    demo_slices(tmp_path, monkeypatch, rows=500)
    site = tmp_path / "site"
    run_cli("demo", str(site), "--rounds", "20", "-q")
    before = _latest(run_cli)["overall"]["battles"]
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "night.csv").write_text("model_a,model_b,winner\nx-model,y-model,tie\n")
    night = run_cli(
        "nightly", "--incoming", str(drop), "--site", str(site), "--boards", "given",
        "--rounds", "20", "--format", "json",
    )  # fmt: skip
    assert json.loads(night.stdout)["outcome"] == "ok"
    assert "pools sources" in night.stderr  # asked for, and said
    assert _latest(run_cli)["overall"]["battles"] > before + 1
