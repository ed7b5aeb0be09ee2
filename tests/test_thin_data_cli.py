"""Split graphs and thin data through the CLI: ranks only where comparable, honest
intervals, counted warnings and clear words (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from arena.boards.snapshots import load_board, load_samples
from arena.db.models import SnapshotRow

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
BUNDLED = ROOT / "arena" / "data" / "lmarena-140k-battles.csv.gz"
ROUNDS = "60"
QWEN = "qwen3-coder-480b-a35b-instruct"


def _shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"SHARED DATA MISSING: {path} -- the two-component checks did NOT run")
    return path


def _json(run_cli, *args):
    return json.loads(run_cli(*args, "--format", "json").stdout)


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_two_components_rank_only_the_comparable_set(run_cli, engine, db_url, tmp_path):
    crowd = _shared("llmfao", "crowd-comparisons.csv")
    mtbench = _shared("mt-bench-human", "human_judgments_turn1.jsonl")
    run_cli("ingest", str(crowd), "--source", "crowd")
    run_cli("ingest", str(mtbench), "--source", "mtbench")
    out = run_cli("rebuild", "--rounds", ROUNDS, "--cluster", "judge").output
    # models named by name, not by internal id
    assert "models alpaca-13b, " in out and "[" not in out.split("comparable set")[0]
    doc = _json(run_cli, "leaderboard")
    rows = {r["model"]: r for r in doc["rows"]}
    gpt4 = rows["gpt-4"]
    assert gpt4["rating"] is None and gpt4["rank_ub"] is None and gpt4["tier"] is None
    assert gpt4["flags"] == ["disconnected"] and "never met" in gpt4["unranked_reason"]
    assert doc["snapshot"]["components"]["comparable_models"] == 59
    ranked = [r for r in doc["rows"] if r["rank_ub"] is not None]
    assert len(ranked) == 59 and all(r["rank_ub"] <= r["rank_lb"] for r in ranked)
    # compare across components: never met, no verdict
    cmp = _json(run_cli, "compare", "gpt-4", "GPT 4")
    assert cmp["significant"] is False and cmp["difference"] is None
    assert cmp["verdict"].startswith("no verdict") and cmp["met_through_others"] is False
    text = run_cli("compare", "gpt-4", "GPT 4").output
    assert "never met, directly or through other models" in text and "better" not in text

    # The crowd board alone (same seed): byte-identical ratings, intervals, tiers, samples.
    from arena.db.session import open_engine

    other_url = f"sqlite:///{tmp_path / 'crowd_only.db'}"
    from click.testing import CliRunner

    from arena.cli import cli

    runner = CliRunner()
    for args in (
        ["db", "upgrade"],
        ["ingest", str(crowd), "--source", "crowd"],
        ["rebuild", "--rounds", ROUNDS, "--cluster", "judge"],
    ):
        result = runner.invoke(cli, ["--db", other_url, *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    alone_engine = open_engine(other_url)
    with engine.connect() as conn, alone_engine.connect() as other:
        both, alone = load_board(conn, 1), load_board(other, 1)
        s_both, s_alone = load_samples(conn, 1), load_samples(other, 1)
    alone_engine.dispose()
    key = lambda r: (r.model, r.rating, r.ci_low, r.ci_high, r.rank_ub, r.rank_lb, r.tier)  # noqa: E731
    assert [key(r) for r in both.rows if r.ranked] == [key(r) for r in alone.rows]
    cols_both = [r.position for r in both.rows if r.ranked]
    cols_alone = [r.position for r in alone.rows]
    assert s_both[:, cols_both].tobytes() == s_alone[:, cols_alone].tobytes()


@pytest.fixture
def lmarena(run_cli):
    run_cli("ingest", str(BUNDLED))
    return run_cli


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_two_battle_model_gets_no_verdict_and_an_honest_interval(lmarena, engine):
    run_cli = lmarena
    run_cli("rebuild", "--rounds", ROUNDS)
    rows = {r["model"]: r for r in _json(run_cli, "leaderboard")["rows"]}
    qwen, top = rows[QWEN], rows["gemini-2.5-pro"]
    assert qwen["battles"] == 2 and qwen["rank_ub"] is None
    assert "has only 2 battles" in qwen["unranked_reason"]
    # wider than any model with 500+ battles (it was about -20/+13 Elo before)
    width = qwen["ci_high"] - qwen["ci_low"]
    assert width > 400
    assert all(width > r["ci_high"] - r["ci_low"] for r in rows.values() if r["battles"] >= 500)
    cmp = _json(run_cli, "compare", "gemini-2.5-pro", QWEN)
    assert cmp["significant"] is False and "2 battles" in cmp["reason"]
    text = run_cli("compare", "gemini-2.5-pro", QWEN).output
    assert "P=1.000" not in text and "is better" not in text and "direct record: never met" in text
    assert top["rank_ub"] == 1
    # "did you mean" for an unknown model
    miss = run_cli("compare", "gemini-2.5-pro", "o3", ok=False)
    assert miss.exit_code == 1 and "did you mean o3-2025-04-16" in miss.output
    # the empty judge column: an error that says so, and nothing written
    empty = run_cli("rebuild", "--rounds", ROUNDS, "--cluster", "judge", ok=False)
    assert empty.exit_code == 1 and "none of the" in empty.output and "has a judge" in empty.output
    with engine.connect() as conn:
        ids = set(conn.execute(select(SnapshotRow.snapshot_id)).scalars())
    assert ids == {1}


def test_some_judges_missing_is_a_counted_warning(run_cli, tmp_path):
    path = tmp_path / "judged.csv"
    lines = ["model_a,model_b,winner,judge"]
    for i in range(60):
        judge = f"j{i % 6}" if i % 5 else ""
        lines.append(f"a,b,{'model_a' if i % 3 else 'model_b'},{judge}")
        lines.append(f"b,c,{'model_a' if i % 4 else 'model_b'},{judge}")
        lines.append(f"c,a,{'model_a' if i % 2 else 'tie'},{judge}")
    path.write_text("\n".join(lines) + "\n")
    run_cli("ingest", str(path))
    out = run_cli("rebuild", "--rounds", ROUNDS, "--cluster", "judge").output
    assert "resampling by judge: 36 of 180 battles have no judge" in out
    assert "own cluster" in out


def test_unknown_category_lists_the_known_ones(run_cli, tmp_path):
    path = tmp_path / "cats.csv"
    path.write_text(
        "model_a,model_b,winner,math\n"
        + "".join(f"a,b,{w},True\nb,a,{w},False\n" for w in ("model_a", "model_b", "tie") * 5)
    )
    run_cli("ingest", str(path))
    run_cli("rebuild", "--rounds", ROUNDS, "--all-categories")
    bad = run_cli("leaderboard", "--category", "maths", ok=False)
    assert bad.exit_code == 1
    assert "unknown category 'maths'; did you mean math?; known: math" in bad.output
    # overall (snapshot 1) against category:math (snapshot 2): not one scale, refused
    refused = run_cli("diff", "1", "2", ok=False)
    assert refused.exit_code == 1 and "different boards" in refused.output


def test_davidson_parameter_and_options_are_shown(lmarena):
    run_cli = lmarena
    run_cli("rebuild", "--rounds", ROUNDS, "--ties", "davidson")
    doc = _json(run_cli, "leaderboard")
    model = doc["snapshot"]["model"]
    assert model["ties"] == "davidson" and 0 < model["tie_param"] < 5 and model["tie_param_se"] > 0
    table = run_cli("leaderboard").output
    assert "Davidson tie parameter nu = " in table and "options: ties=davidson" in table
    snaps = run_cli("snapshots").output
    assert "ties=davidson cluster=battle ci=sandwich level=0.95 prior=none" in snaps
    assert "min-battles=50" in snaps
    run_cli("rebuild", "--rounds", ROUNDS)
    result = run_cli("diff", "1", "2")
    assert "WARNING" in result.stderr and "ties: davidson vs half" in result.stderr
