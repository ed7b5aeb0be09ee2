"""Snapshot pairs written without per-row foreign-key triggers keep the foreign keys' guarantee."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from arena.db import bulk
from arena.db.bulk import lock_references, may_skip_triggers, write_numbers
from arena.db.session import open_engine
from tests.helpers.cli import cli_for
from tests.helpers.files import synth_battles
from tests.helpers.postgres import pg_schema

PAIR_COLUMNS = ("snapshot_id", "model_a_id", "model_b_id", "a_wins", "b_wins", "ties")


@pytest.fixture(autouse=True)
def skip_triggers_for_any_size(monkeypatch):
    """These boards have a few pairs; the bulk path starts at thousands of rows."""
    monkeypatch.setattr(bulk, "TRIGGERS_WORTH_SKIPPING", 1)


def _rebuilt(url: str, tmp_path) -> None:
    run = cli_for(url)
    path = tmp_path / "battles.csv"
    synth_battles(path, n=600, models=6)
    run("ingest", str(path), "-q")
    run("rebuild", "--rounds", "20", "-q")


def _rewrite_pairs(conn, **kwargs) -> tuple[int, int]:
    """Delete the latest snapshot's pairs and write them again; (snapshot id, rows)."""
    sid = conn.execute(text("SELECT max(id) FROM snapshots")).scalar_one()
    pairs = conn.execute(
        text(
            "SELECT model_a_id, model_b_id, a_wins, b_wins, ties FROM snapshot_pairs "
            "WHERE snapshot_id = :s ORDER BY model_a_id, model_b_id"
        ),
        {"s": sid},
    ).all()
    conn.execute(text("DELETE FROM snapshot_pairs WHERE snapshot_id = :s"), {"s": sid})
    write_numbers(conn, "snapshot_pairs", PAIR_COLUMNS, [tuple(p) for p in pairs], sid, **kwargs)
    return sid, len(pairs)


def _pair_count(conn, sid: int) -> int:
    return conn.execute(
        text("SELECT count(*) FROM snapshot_pairs WHERE snapshot_id = :s"), {"s": sid}
    ).scalar_one()


def test_pairs_written_with_references_are_the_same_rows(db_url, tmp_path):
    _rebuilt(db_url, tmp_path)
    engine = open_engine(db_url)
    with engine.begin() as conn:
        ids = conn.execute(text("SELECT id FROM models")).scalars().all()
        sid = conn.execute(text("SELECT max(id) FROM snapshots")).scalar_one()
        before = _pair_count(conn, sid)
        sid, n = _rewrite_pairs(conn, references=[("snapshots", [sid]), ("models", ids)])
        assert n == before > 0
        assert _pair_count(conn, sid) == n
        if conn.dialect.name == "postgresql":
            assert may_skip_triggers(conn)  # the tests' server role is a superuser
            role = conn.execute(text("SELECT current_setting('session_replication_role')"))
            assert role.scalar_one() == "origin"  # triggers are back on for the rest
    engine.dispose()


def test_a_missing_parent_is_refused_before_anything_is_written(tmp_path):
    """PostgreSQL (SQLite's executemany path checks each row with its own foreign keys)."""
    for url in pg_schema():
        _rebuilt(url, tmp_path)
        engine = open_engine(url)
        with engine.connect() as conn:
            conn.begin()
            missing = 10_000_000
            with pytest.raises(LookupError, match=f"models has no row with id {missing}"):
                lock_references(conn, [("models", [1, missing])])
            conn.rollback()
            conn.begin()
            sid = conn.execute(text("SELECT max(id) FROM snapshots")).scalar_one()
            with pytest.raises(LookupError, match="no row"):
                _rewrite_pairs(conn, references=[("models", [missing])])
            # the pairs were deleted by the rewrite and nothing was written after the refusal
            assert _pair_count(conn, sid) == 0
            conn.rollback()
        engine.dispose()


def test_a_role_without_the_privilege_keeps_the_triggers(tmp_path):
    """A non-superuser role writes through the per-row triggers, with the same rows."""
    for url in pg_schema(role=True):
        _rebuilt(url, tmp_path)
        engine = open_engine(url)
        with engine.begin() as conn:
            assert not may_skip_triggers(conn)
            ids = conn.execute(text("SELECT id FROM models")).scalars().all()
            sid, n = _rewrite_pairs(conn, references=[("models", ids)])
            assert _pair_count(conn, sid) == n > 0
        engine.dispose()
