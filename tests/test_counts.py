"""The count table: kept exact by every ingest path, rebuilt by ``arena db recount``, and
a rebuild from it gives the same snapshot as a rebuild from the battles (both engines)."""

from __future__ import annotations

import json
import random

import pytest
from alembic import command
from sqlalchemy import create_engine, select, text

from arena.db.session import alembic_config
from tests.helpers.db import counts, leaderboards, recounted
from tests.helpers.files import csv_rows, weighted_jsonl, write_csv


def assert_same_snapshots(run_cli) -> None:
    from_counts = leaderboards(run_cli, "counts")
    from_battles = leaderboards(run_cli, "battles")
    assert len(from_counts) >= 3  # overall and categories
    assert from_counts == from_battles


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_counts_follow_every_ingest_and_rebuilds_agree(db_url, run_cli, tmp_path):
    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    run_cli("ingest", write_csv(tmp_path / "a.csv", header, csv_rows(1, 300, "a")))
    kept = counts(db_url)
    assert sum(n for k, n in kept.items() if k[0] == 0) == 300
    assert any(not k[5] for k in kept)  # self-play kept, not rated
    assert recounted(run_cli, db_url) == kept
    assert_same_snapshots(run_cli)

    # a second ingest (row path, weights, a new category), and a re-ingest of
    # overlapping ids: duplicates must not be counted twice
    run_cli("ingest", weighted_jsonl(tmp_path / "b.jsonl", 2, 200, "b"))
    more = csv_rows(1, 300, "a")[:50] + csv_rows(4, 100, "c")
    run_cli("ingest", write_csv(tmp_path / "c.csv", header, more))
    kept = counts(db_url)
    assert sum(n for k, n in kept.items() if k[0] == 0) == 300 + 200 + 100
    assert recounted(run_cli, db_url) == kept
    assert_same_snapshots(run_cli)

    # battles deleted outside arena (no arena command deletes battles): recount repairs
    eng = create_engine(db_url)
    with eng.begin() as conn:
        conn.execute(
            text(
                "DELETE FROM battle_categories WHERE battle_id IN (SELECT id FROM battles "
                "WHERE external_id LIKE 'b%')"
            )
        )
        conn.execute(text("DELETE FROM battles WHERE external_id LIKE 'b%'"))
    eng.dispose()
    repaired = recounted(run_cli, db_url)
    assert sum(n for k, n in repaired.items() if k[0] == 0) == 400
    assert_same_snapshots(run_cli)


def test_bulk_load_keeps_counts(db_url, run_cli, tmp_path, monkeypatch):
    import arena.ingest.bulk as bulk

    monkeypatch.setattr(bulk, "BULK_MIN_ROWS", 1)
    monkeypatch.setattr(bulk, "BULK_RATIO", 0.0)
    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    out = run_cli("ingest", write_csv(tmp_path / "a.csv", header, csv_rows(5, 400, "a"))).output
    assert "400 inserted" in out
    kept = counts(db_url)
    assert sum(n for k, n in kept.items() if k[0] == 0) == 400
    assert recounted(run_cli, db_url) == kept


def test_counts_exact_across_the_switch_to_numpy(db_url, run_cli, tmp_path, monkeypatch):
    """Small chunks and thresholds: each ingest counts its first battles in a Counter,
    moves them into numpy mid-file and compacts several times (tags, self-play,
    weights, duplicates) and merges a few cells a statement; the table still
    equals a recount."""
    import arena.ingest.counts as counts_mod
    import arena.ingest.dialects as dialects
    import arena.ingest.loader as loader

    monkeypatch.setattr(loader, "CHUNK_ROWS", 40)
    monkeypatch.setattr(dialects, "_MERGE_ROWS", 7)  # SQLite: full statements and a rest
    monkeypatch.setattr(counts_mod, "_NUMPY_AT", 100)
    monkeypatch.setattr(counts_mod, "_COMPACT_AT", 50)
    switched = []
    to_numpy = counts_mod.CountAccumulator._to_numpy

    def spy(self):
        switched.append(sum(map(len, self.tallies.values())))
        to_numpy(self)

    monkeypatch.setattr(counts_mod.CountAccumulator, "_to_numpy", spy)
    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    # without the loader's size estimate (which would switch at the start)
    with monkeypatch.context() as m:
        m.setattr(counts_mod.CountAccumulator, "expect", lambda self, rows: None)
        run_cli("ingest", write_csv(tmp_path / "a.csv", header, csv_rows(21, 300, "a")))
        run_cli("ingest", weighted_jsonl(tmp_path / "b.jsonl", 22, 250, "b"))
    assert len(switched) == 2 and all(cells > 0 for cells in switched)
    more = csv_rows(23, 150, "c") + csv_rows(21, 300, "a")[:120]
    run_cli("ingest", write_csv(tmp_path / "c.csv", header, more))
    kept = counts(db_url)
    assert sum(n for k, n in kept.items() if k[0] == 0) == 300 + 250 + 150
    assert {k[4] for k in kept} == {0.5, 1.0, 2.0}
    assert any(not k[5] for k in kept)
    assert recounted(run_cli, db_url) == kept


def test_counter_and_numpy_modes_count_alike():
    """The same chunks counted in a Counter and, told the file is large, in numpy from
    the start: the same groups, cell for cell."""
    from arena.ingest.counts import CountAccumulator

    rng = random.Random(5)
    counter, arrays = CountAccumulator(), CountAccumulator()
    arrays.expect(10**7)
    assert arrays.np is not None and counter.np is None
    for _ in range(4):
        n = 500
        a = [rng.randrange(1, 40) for _ in range(n)]
        b = [rng.randrange(1, 40) for _ in range(n)]
        chunk = dict(
            not_rated=[i for i in range(n) if a[i] == b[i]],
            weights=[rng.choice([1.0, 0.5, 3.0]) for _ in range(n)],
            stored=[rng.random() < 0.9 for _ in range(n)],
            tags=[(7, sorted(rng.sample(range(n), 120))), (9, list(range(0, n, 3)))],
        )
        outcomes = [rng.choice(["a_wins", "b_wins", "tie", "tie_both_bad"]) for _ in range(n)]
        for acc in (counter, arrays):
            acc.add(a, b, outcomes, **chunk)
    assert counter.np is None  # 2,000 battles stay under the threshold
    got = counter.groups()
    assert sorted(got) == sorted(arrays.groups())
    assert {(g[0], g[1], g[2]) for g in got} >= {(0, 0.5, True), (7, 3.0, True), (0, 1.0, False)}


def test_rebuild_reads_battles_when_counts_cannot_answer(db_url, run_cli, tmp_path):
    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    run_cli(
        "ingest", write_csv(tmp_path / "a.csv", header, csv_rows(6, 200, "a")), "--source", "web"
    )
    out = run_cli("rebuild", "--rounds", "20", "--source", "web", "-q").output
    assert "(read: battles)" in out
    assert "(read: counts)" in run_cli("rebuild", "--rounds", "20", "-q").output
    bad = run_cli("rebuild", "--rounds", "20", "--read", "counts", "--cluster", "judge", ok=False)
    assert bad.exit_code == 1 and "--read counts: --cluster judge" in bad.output
    eng = create_engine(db_url)
    with eng.connect() as conn:
        reads = [
            json.loads(d)["read"]
            for d in conn.exec_driver_sql(
                "SELECT diagnostics_json FROM snapshots ORDER BY id"
            ).scalars()
        ]
    eng.dispose()
    assert reads[0] == "battles" and reads[-1] == "counts"


def test_migration_fills_counts_from_stored_battles(db_url, run_cli, tmp_path):
    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    run_cli("ingest", write_csv(tmp_path / "a.csv", header, csv_rows(7, 250, "a")))
    run_cli("ingest", weighted_jsonl(tmp_path / "b.jsonl", 8, 100, "b"))
    kept = counts(db_url)
    cfg = alembic_config(db_url)
    command.downgrade(cfg, "0008")
    command.upgrade(cfg, "head")
    assert counts(db_url) == kept


def test_rebuild_reads_one_consistent_state(db_url, run_cli, tmp_path, monkeypatch):
    """An ingest committed after the rebuild's first read is not in its counts."""
    import arena.jobs.rebuild as rebuild_mod
    from arena.db.models import Battle

    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    run_cli("ingest", write_csv(tmp_path / "a.csv", header, csv_rows(9, 100, "a")))
    late = write_csv(tmp_path / "b.csv", header, csv_rows(10, 100, "b"))
    real = rebuild_mod.read_count_boards
    fired = []

    def ingest_meanwhile(conn, *args, **kwargs):
        conn.execute(select(Battle.id).limit(1)).all()  # the transaction's first read
        fired.append(run_cli("ingest", late, "-q"))  # commits 100 more battles
        return real(conn, *args, **kwargs)

    monkeypatch.setattr(rebuild_mod, "read_count_boards", ingest_meanwhile)
    out = run_cli("rebuild", "--rounds", "20", "-q").output
    assert fired and "up to battle 100 " in out, out
    eng = create_engine(db_url)
    with eng.connect() as conn:
        n = conn.exec_driver_sql("SELECT n_battles + n_excluded FROM snapshots").scalar()
        stored = conn.exec_driver_sql("SELECT count(*) FROM battles").scalar()
    eng.dispose()
    assert n == 100 and stored == 200


def test_counts_fall_back_to_sql_when_cells_cannot_be_packed(
    db_url, run_cli, tmp_path, monkeypatch
):
    """Model ids beyond the packed key's range: the ingest aggregates its rows in SQL."""
    import arena.ingest.counts as counts_mod

    monkeypatch.setattr(counts_mod, "_ID_LIMIT", 3)  # models 3.. do not fit
    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    run_cli("ingest", write_csv(tmp_path / "a.csv", header, csv_rows(13, 200, "a")))
    run_cli("ingest", weighted_jsonl(tmp_path / "b.jsonl", 14, 100, "b"))
    kept = counts(db_url)
    assert sum(n for k, n in kept.items() if k[0] == 0) == 300
    assert recounted(run_cli, db_url) == kept
