"""Retention (issue 18) on both engines: prune keeps history and diff, db stats adds up."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from arena.boards.keys import OVERALL, BoardKey
from arena.boards.snapshots import rating_history
from arena.db.models import Snapshot, SnapshotPair, SnapshotSamples
from arena.db.session import open_engine
from arena.jobs.nightly import EXIT_FAILED, EXIT_OK
from arena.jobs.retention import prune_snapshots
from tests.helpers.cli import nightly_args
from tests.helpers.files import synth_battles

FAST = ("--rounds", "30", "-q")


def detail_counts(url: str) -> dict[int, tuple[int, int]]:
    """Per snapshot id: (sample rows, pair rows)."""
    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            ids = conn.execute(select(Snapshot.id)).scalars().all()
            out = {}
            for sid in ids:
                s = conn.execute(
                    select(func.count()).where(SnapshotSamples.snapshot_id == sid)
                ).scalar()
                p = conn.execute(
                    select(func.count()).where(SnapshotPair.snapshot_id == sid)
                ).scalar()
                out[sid] = (s, p)
            return out
    finally:
        engine.dispose()


def history_lengths(url: str, board: BoardKey = OVERALL) -> dict[str, int]:
    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            return {m: len(h) for m, h in rating_history(conn, board).items()}
    finally:
        engine.dispose()


def four_rebuilds(run_cli, tmp_path) -> list[int]:
    """Four rebuilds of the overall board, each after new battles; returns snapshot ids."""
    ids = []
    for k in range(4):
        path = tmp_path / f"b{k}.csv"
        synth_battles(path, n=300, models=5, seed=k, extra_id=1000 * k)
        run_cli("ingest", str(path), "-q")
        run_cli("rebuild", *FAST)
        snaps = json.loads(run_cli("snapshots", "--format", "json").output)["snapshots"]
        ids.append(snaps[-1]["id"])
    return ids


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_prune_keeps_history_diff_and_latest(run_cli, db_url, tmp_path):
    ids = four_rebuilds(run_cli, tmp_path)
    before_hist = history_lengths(db_url)
    before = detail_counts(db_url)
    assert all(s == 1 and p > 0 for s, p in before.values())

    dry = json.loads(
        run_cli("snapshots", "prune", "--keep-last", "2", "--dry-run", "--format", "json").output
    )
    assert dry["pruned"] == 2 and dry["dry_run"] is True
    assert detail_counts(db_url) == before  # dry run deletes nothing

    # keep-days 1: every snapshot is from today, so nothing is old enough
    none = json.loads(
        run_cli(
            "snapshots", "prune", "--keep-days", "1", "--keep-last", "2", "--format", "json"
        ).output
    )
    assert none["pruned"] == 0 and detail_counts(db_url) == before

    out = json.loads(run_cli("snapshots", "prune", "--keep-last", "2", "--format", "json").output)
    assert out["snapshot_ids"] == ids[:2]
    assert out["sample_rows"] == 2
    assert out["pair_rows"] == before[ids[0]][1] + before[ids[1]][1]
    assert out["bytes_freed"] > out["pair_rows"]  # the sample blobs dominate
    after = detail_counts(db_url)
    assert after[ids[0]] == (0, 0) and after[ids[1]] == (0, 0)
    assert after[ids[2]] == before[ids[2]] and after[ids[3]] == before[ids[3]]
    assert history_lengths(db_url) == before_hist

    # diff between a pruned and a newer snapshot still works
    diff = json.loads(run_cli("diff", str(ids[0]), str(ids[3]), "--format", "json").output)["rows"]
    assert {r["model"] for r in diff} == {f"model-{k}" for k in range(5)}
    assert all(r["rating"] is not None and r["d_rating"] is not None for r in diff)

    # compare on a pruned snapshot: one clear line, no traceback
    res = run_cli("compare", "model-0", "model-1", "--snapshot", str(ids[0]), ok=False)
    assert res.exit_code == 1
    assert "samples were pruned" in res.output and "Traceback" not in res.output
    run_cli("compare", "model-0", "model-1", "--snapshot", str(ids[3]))
    # plan reads the pair counts and samples too: refused, not planned from zeros
    res = run_cli("plan", "--snapshot", str(ids[0]), ok=False)
    assert res.exit_code == 1 and "samples were pruned" in res.output
    assert "Traceback" not in res.output

    # pruning everything possible still keeps the latest snapshot's detail
    engine = open_engine(db_url, migrate_new=False)
    try:
        with engine.begin() as conn:
            res2 = prune_snapshots(
                conn, keep_days=0, keep_last=1, now=datetime.now(UTC) + timedelta(days=1)
            )
    finally:
        engine.dispose()
    assert ids[3] not in res2.snapshot_ids
    assert detail_counts(db_url)[ids[3]] == before[ids[3]]


def test_prune_needs_an_option(run_cli):
    res = run_cli("snapshots", "prune", ok=False)
    assert res.exit_code == 2 and "--keep-days" in res.output


def test_nightly_prunes_only_after_a_good_night(run_cli, db_url, tmp_path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    args = nightly_args(tmp_path, incoming, "--prune-keep-last", "1")
    synth_battles(incoming / "a.csv", n=300, models=5, seed=1)
    first = json.loads(run_cli(*args, "--format", "json").output)
    assert first["exit_code"] == EXIT_OK and first["pruned"]["pruned"] == 0
    before = detail_counts(db_url)

    # a failed rebuild: nothing is pruned (the previous snapshots keep their samples)
    synth_battles(incoming / "b.csv", n=300, models=5, seed=2, extra_id=1000)
    res = run_cli(*args, "--max-models", "2", "--format", "json", ok=False)
    assert res.exit_code == EXIT_FAILED
    assert json.loads(res.output)["pruned"] is None
    assert detail_counts(db_url) == before

    synth_battles(incoming / "c.csv", n=300, models=5, seed=3, extra_id=2000)
    good = json.loads(run_cli(*args, "--format", "json").stdout)  # warnings go to stderr
    assert good["exit_code"] == EXIT_OK
    assert sorted(good["pruned"]["snapshot_ids"]) == sorted(before)  # the first night's boards
    after = detail_counts(db_url)
    assert all(after[sid] == (0, 0) for sid in before)
    assert all(after[sid][0] == 1 for sid in good["snapshot_ids"])
    assert history_lengths(db_url)["model-0"] == 2


def test_db_stats_integers_that_add_up(run_cli, db_url, tmp_path):
    four_rebuilds(run_cli, tmp_path)
    doc = json.loads(run_cli("db", "stats", "--format", "json").output)
    tables = {t["table"]: t for t in doc["tables"]}
    for t in doc["tables"]:
        assert isinstance(t["rows"], int) and isinstance(t["bytes"], int) and t["bytes"] >= 0
    assert doc["total_rows"] == sum(t["rows"] for t in doc["tables"])
    assert doc["total_bytes"] == sum(t["bytes"] for t in doc["tables"])
    assert tables["snapshots"]["rows"] == 4 and tables["snapshot_samples"]["rows"] == 4
    assert tables["battles"]["rows"] == 1200
    assert doc["method"] in ("pg_total_relation_size", "dbstat", "estimate")
    assert isinstance(doc["bytes_per_night"], int)
    # one run of four: a night is a part of the snapshot tables, not all of them
    snap_bytes = sum(
        t["bytes"] for n, t in tables.items() if n == "snapshots" or n.startswith("snapshot_")
    )
    assert 0 < doc["bytes_per_night"] < snap_bytes
    assert doc["run_snapshots"] == 1
    table = run_cli("db", "stats").output
    assert "snapshot_samples" in table and "bytes per night" in table
