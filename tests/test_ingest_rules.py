"""Record-level rules of issue 16 (items 5, 6, 8), on SQLite and PostgreSQL.

Timestamps are stored as UTC instants on both engines; weights are bounded;
an aggregated-count row expands to at most --max-expand battles; --map to a
column that is not there is an error naming it and the columns present.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from arena.db.models import Battle
from tests.helpers.db import count
from tests.helpers.files import write_csv

WINDOW_ROWS = [
    # 10:00 at +05:00 is 05:00 UTC: before a --since of 06:00 UTC
    *[["a", "b", "model_a", "2026-01-01T10:00:00+05:00"]] * 3,
    *[["b", "c", "model_b", "2026-01-01T07:00:00Z"]] * 4,
    *[["a", "c", "tie", "1767250800"]] * 2,  # Unix seconds: 2026-01-01T07:00:00Z
]


def test_timestamps_are_stored_as_utc(run_cli, engine, tmp_path):
    path = write_csv(tmp_path / "t.csv", ["model_a", "model_b", "winner", "tstamp"], WINDOW_ROWS)
    run_cli("ingest", path)
    with engine.connect() as conn:
        stamps = sorted(set(conn.execute(select(Battle.occurred_at)).scalars()))
    assert stamps == [
        datetime(2026, 1, 1, 5, tzinfo=UTC),
        datetime(2026, 1, 1, 7, tzinfo=UTC),
    ]


@pytest.mark.parametrize("since", ["2026-01-01T06:00:00+00:00", "2026-01-01T11:00:00+05:00"])
def test_same_since_gives_the_same_board_on_both_engines(run_cli, tmp_path, since):
    path = write_csv(tmp_path / "t.csv", ["model_a", "model_b", "winner", "tstamp"], WINDOW_ROWS)
    run_cli("ingest", path)
    run_cli("rebuild", "--since", since, "--rounds", "10", "--min-battles", "0", "--ci", "fisher")
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    # the three battles at 05:00 UTC are before the window on every engine
    assert sum(r["battles"] for r in doc["rows"]) == 2 * 6


@pytest.mark.parametrize(
    ("value", "ok"),
    [("0.5", True), ("1000000", True), ("1e6", True), ("1000000.5", False), ("1e30", False),
     ("1e308", False), ("inf", False), ("0", False), ("-2", False), ("nan", False)],
)  # fmt: skip
def test_weights_are_bounded(run_cli, engine, tmp_path, value, ok):
    path = write_csv(
        tmp_path / "w.csv",
        ["model_a", "model_b", "winner", "weight"],
        [["a", "b", "tie", "2"], ["a", "b", "model_a", value]],
    )
    result = run_cli("ingest", path, ok=ok)
    if ok:
        assert count(engine, Battle) == 2
    else:
        assert result.exit_code == 1 and "w.csv: line 3: field 'weight'" in result.output
        assert "0 < weight <= 1e+06" in result.output and count(engine, Battle) == 0


def test_aggregated_rows_expand_to_at_most_max_expand(run_cli, engine, tmp_path):
    header = ["home.team", "away.team", "home.wins", "away.wins"]
    path = write_csv(
        tmp_path / "agg.csv", header, [["x", "y", "3", "4"], ["x", "y", "1999999", "1"]]
    )
    result = run_cli("ingest", path, ok=False)
    assert result.exit_code == 1
    assert "agg.csv: line 3: field 'home.wins'" in result.output
    assert "2000000 battles, more than max_expand=10000 allows" in result.output
    assert count(engine, Battle) == 0
    small = write_csv(
        tmp_path / "small.csv", header, [["x", "y", "3", "4"], ["x", "y", "12000", "1"]]
    )
    run_cli("ingest", small, ok=False)
    run_cli("ingest", small, "--max-expand", "20000")
    assert count(engine, Battle) == 3 + 4 + 12001
    neg = write_csv(tmp_path / "neg.csv", header, [["x", "y", "-1", "4"]])
    assert "must not be negative" in run_cli("ingest", neg, ok=False).output


@pytest.mark.parametrize("fld", ["id", "winner", "judge"])
def test_map_to_a_missing_column_is_an_error(run_cli, engine, tmp_path, fld):
    path = write_csv(
        tmp_path / "m.csv", ["id", "model_a", "model_b", "winner"], [["1", "a", "b", "tie"]]
    )
    result = run_cli("ingest", path, "--map", f"{fld}=nosuch", ok=False)
    assert result.exit_code == 1
    assert "m.csv: line 1:" in result.output and "no column nosuch" in result.output
    assert "(columns: id, model_a, model_b, winner)" in result.output
    assert count(engine, Battle) == 0


def test_map_to_a_missing_key_in_json_names_the_record(run_cli, engine, tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"model_a": "a", "model_b": "b", "winner": "tie"}) + "\n")
    result = run_cli("ingest", str(path), "--map", "id=uid", ok=False)
    assert "m.jsonl: line 1: field 'id': no column uid to map it to" in result.output
    assert count(engine, Battle) == 0
