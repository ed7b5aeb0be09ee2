"""One vocabulary: the CLI's tables say words in their headers as the site does, and
flags as the site's words (see also test_table_words.py); JSON and CSV keep the stable
machine keys (issue 29)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from arena.cli import (
    agreement_cmd,
    audit_cmd,
    categories_cmd,
    eval_scores,
    leaderboard_cmd,
    models_cmd,
    plan_cmd,
    serve_cmd,
    snapshots_cmd,
)
from arena.core.words import column_word

TABLES = [
    agreement_cmd._PAIR_COLUMNS,
    audit_cmd.COLUMNS,
    audit_cmd.JUDGE_COLUMNS,
    categories_cmd.COLUMNS,
    eval_scores._MODEL_COLUMNS,
    eval_scores._PAIR_COLUMNS,
    leaderboard_cmd.COLUMNS,
    models_cmd.COLUMNS,
    plan_cmd.WEIGHT_COLUMNS,
    plan_cmd.POWER_COLUMNS,
    serve_cmd.KEY_COLUMNS,
    snapshots_cmd.SNAPSHOT_COLUMNS,
    snapshots_cmd.DIFF_COLUMNS,
    snapshots_cmd.PRUNE_COLUMNS,
]


@pytest.mark.parametrize("columns", TABLES)
def test_no_table_header_is_snake_case(columns):
    for key in columns:
        assert "_" not in column_word(key), key
    assert column_word("model_a") == "model A" and column_word("created_at") == "created"


def test_leaderboard_table_says_words_json_and_csv_keep_keys(run_cli, tmp_path):
    path = tmp_path / "undefeated.csv"
    path.write_text("model_a,model_b,winner\nchamp,x,model_a\nchamp,y,model_a\nx,y,tie\n")
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "20", "--min-battles", "0", "-q")
    table = run_cli("leaderboard").output
    (champ,) = [line for line in table.splitlines() if line.split()[2:3] == ["champ"]]
    assert "never lost" in champ and "no finite rating" in champ
    assert "_" not in champ.replace("champ", ""), champ
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    (row,) = [r for r in doc["rows"] if r["model"] == "champ"]
    assert {"never_lost", "no_mle"} <= set(row["flags"])
    rows = list(csv.DictReader(io.StringIO(run_cli("leaderboard", "--format", "csv").output)))
    assert "never_lost" in next(r for r in rows if r["model"] == "champ")["flags"]
    # headers: words in the table, keys in CSV
    snaps = run_cli("snapshots").output.splitlines()[0].split()
    assert "created" in snaps and "created_at" not in snaps
    snap_csv = run_cli("snapshots", "--format", "csv").output.splitlines()[0]
    assert "created_at" in snap_csv.split(",")
    plan = run_cli("plan").output.splitlines()[0]
    assert plan.startswith("model A") and "model_a" not in plan
    assert run_cli("plan", "--format", "csv").output.startswith("model_a,model_b")
