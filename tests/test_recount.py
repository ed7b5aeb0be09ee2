"""``arena db recount`` writes only what differs, repairs the battle keys, and on
PostgreSQL leaves no dead rows behind (both engines)."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import create_engine, text

from tests.helpers.db import counts, recounted
from tests.helpers.files import weighted_jsonl, write_csv

HEADER = ["id", "model_a", "model_b", "winner", "math", "creative"]
MODELS = [f"m{i:02d}" for i in range(30)]


def many_cells(seed: int, n: int, prefix: str) -> list[list[str]]:
    """Tagged battles among 30 models: a count table of a few thousand cells (many pages)."""
    rng = random.Random(seed)
    return [
        [
            f"{prefix}{i}",
            *rng.sample(MODELS, 2),
            rng.choice(["model_a", "model_b", "tie"]),
            str(rng.random() < 0.5),
            str(rng.random() < 0.3),
        ]
        for i in range(n)
    ]


def table_pages(url: str) -> dict[str, int]:
    """Pages of the count table and the key table (PostgreSQL), or of the file (SQLite)."""
    eng = create_engine(url)
    with eng.connect() as conn:
        if eng.dialect.name == "sqlite":
            found = {"file": conn.exec_driver_sql("PRAGMA page_count").scalar()}
        else:
            found = {
                t: conn.exec_driver_sql(f"SELECT pg_relation_size('{t}') / 8192").scalar()
                for t in ("battle_counts", "battle_keys")
            }
    eng.dispose()
    return found


def test_recount_of_a_store_in_step_writes_nothing(db_url, run_cli, tmp_path):
    """Nothing to repair: no row is rewritten, so the tables do not grow. (Deleting and
    inserting every cell doubled the count table on PostgreSQL: a dead copy of each row.)"""
    run_cli("ingest", write_csv(tmp_path / "a.csv", HEADER, many_cells(1, 4000, "a")))
    run_cli("ingest", weighted_jsonl(tmp_path / "b.jsonl", 2, 300, "b"))
    kept, before = counts(db_url), table_pages(db_url)
    assert len(kept) > 2000
    out = run_cli("db", "recount", "-q").output
    assert f"{len(kept)} rows, 0 changed" in out and "0 of deleted battles dropped, 0 added" in out
    assert counts(db_url) == kept
    assert table_pages(db_url) == before


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_recount_repairs_counts_and_keys_after_battles_deleted_by_hand(db_url, run_cli, tmp_path):
    path = write_csv(tmp_path / "a.csv", HEADER, many_cells(1, 4000, "a"))
    run_cli("ingest", path)
    kept = counts(db_url)
    eng = create_engine(db_url)
    with eng.begin() as conn:
        # battles 'a0'..'a999' (and their links) removed outside arena
        doomed = "SELECT id FROM battles WHERE length(external_id) <= 4"
        conn.execute(text(f"DELETE FROM battle_categories WHERE battle_id IN ({doomed})"))
        gone = conn.execute(text(f"DELETE FROM battles WHERE id IN ({doomed})")).rowcount
        # and one battle with an external id inserted by hand, without its key
        conn.execute(
            text(
                "INSERT INTO battles (id, external_id, model_a_id, model_b_id, outcome, weight, "
                "batch_id) SELECT 100000, 'by-hand', model_a_id, model_b_id, outcome, weight, "
                "batch_id FROM battles WHERE external_id = 'a3999'"
            )
        )
    eng.dispose()
    assert gone == 1000
    # a stored key whose battle is gone: a re-ingest is refused, naming the line and recount
    again = write_csv(tmp_path / "again.csv", HEADER, many_cells(1, 4000, "a")[:5])
    refused = run_cli("ingest", again, ok=False).output
    assert "line 2" in refused and "'a0' is the key of a deleted battle (arena db recount)" in (
        refused
    )
    out = run_cli("db", "recount", "-q").output
    assert "1000 of deleted battles dropped, 1 added" in out, out
    repaired = recounted(run_cli, db_url)  # a second recount finds nothing to do
    assert sum(n for k, n in repaired.items() if k[0] == 0) == 3001
    # the deleted battles go in again; the rest are duplicates, as before the deletion
    copy = write_csv(tmp_path / "copy.csv", HEADER, many_cells(1, 4000, "a")[::-1])
    out = run_cli("ingest", copy).output
    assert "1000 inserted" in out and "3000 duplicates" in out, out
    by_hand = _cell(db_url, "by-hand")
    assert counts(db_url) == {k: n + (k == by_hand) for k, n in kept.items()}


def test_recount_vacuums_on_postgresql(db_url, run_cli, tmp_path):
    """After its commit, recount runs VACUUM (ANALYZE) on the tables it wrote (PostgreSQL;
    n_dead_tup is not asserted: it lags, and other sessions' snapshots can keep rows)."""
    run_cli("ingest", write_csv(tmp_path / "a.csv", HEADER, many_cells(1, 500, "a")))
    run_cli("db", "recount", "-q")
    eng = create_engine(db_url)
    with eng.connect() as conn:
        if eng.dialect.name == "sqlite":  # nothing to vacuum: the file did not grow
            assert conn.exec_driver_sql("PRAGMA freelist_count").scalar() == 0
        else:
            done = conn.exec_driver_sql(
                "SELECT relname, last_vacuum IS NOT NULL AND last_analyze IS NOT NULL "
                "FROM pg_stat_user_tables WHERE schemaname = current_schema() "
                "AND relname IN ('battle_counts', 'battle_keys') ORDER BY 1"
            ).all()
            assert done == [("battle_counts", True), ("battle_keys", True)]
    eng.dispose()


def _cell(url: str, ext: str) -> tuple:
    """The all-battles count-table key of the battle with external id ``ext``."""
    eng = create_engine(url)
    with eng.connect() as conn:
        row = conn.execute(
            text(
                "SELECT model_a_id, model_b_id, outcome, weight, excluded_reason IS NULL "
                "FROM battles WHERE external_id = :e"
            ),
            {"e": ext},
        ).one()
    eng.dispose()
    return (0, *row[:4], bool(row[4]))
