"""Locks belong to one arena (database and schema), not to the PostgreSQL server.

Two arenas in two schemas of one database never wait for each other's locks
(the nightly lock, the battle-id lock of ingest, the migration lock), while
two commands of one arena still do. On SQLite every database file has its own
locks; the same tests hold for two files.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine

from arena.db.advisory import LOCK_NAMES, advisory_key, arena_identity
from arena.db.lock import LockHeld, database_lock
from arena.db.session import open_engine
from arena.ingest.dialects import hold_battle_ids
from tests.helpers.cli import cli_for
from tests.helpers.files import synth_battles
from tests.helpers.postgres import pg_schema


@pytest.fixture(params=["sqlite", "postgresql"])
def two_arenas(request, tmp_path):
    """URLs of two empty arenas: two schemas of one PostgreSQL database, or two files."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
        return
    first, second = pg_schema(), pg_schema()
    yield next(first), next(second)
    next(first, None)
    next(second, None)


def test_a_held_nightly_lock_blocks_its_own_arena_only(two_arenas, tmp_path):
    url_a, url_b = two_arenas
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "b.csv", n=300, models=5, seed=1)
    a, b = open_engine(url_a), open_engine(url_b)
    try:
        with database_lock(a, wait=0):
            # the same arena: refused at once
            with pytest.raises(LockHeld, match="holds the lock"), database_lock(a, wait=0):
                pass
            # the other arena: its own lock, free
            with database_lock(b, wait=0):
                pass
            # arena nightly in the other arena (it takes its own nightly lock) runs
            # while this one's is held, with --wait 0
            out = cli_for(url_b)(
                "--wait",
                "0",
                "nightly",
                "--incoming",
                str(incoming),
                "--site",
                str(tmp_path / "site"),
                "--done",
                str(tmp_path / "done"),
                "--rounds",
                "20",
                "--format",
                "json",
            )
            assert json.loads(out.output)["snapshot_ids"], out.output
    finally:
        a.dispose()
        b.dispose()


def test_an_ingest_in_another_arena_does_not_wait_for_this_ones_battle_ids(two_arenas, tmp_path):
    """PostgreSQL: an open ingest transaction holds the battle-id lock to its commit."""
    url_a, url_b = two_arenas
    synth_battles(tmp_path / "b.csv", n=300, models=5, seed=2)
    a = open_engine(url_a)
    try:
        with a.connect() as conn, conn.begin():
            if conn.dialect.name == "postgresql":
                hold_battle_ids(conn)
            run_b = cli_for(url_b)
            run_b("--wait", "1", "ingest", str(tmp_path / "b.csv"), "-q")
            out = run_b("models", "--format", "json")
            assert out.exit_code == 0 and '"battles": ' in out.output
    finally:
        a.dispose()


def _pg_pair():
    first, second = pg_schema(), pg_schema()
    return first, second, next(first), next(second)


def test_lock_keys_differ_between_schemas_and_agree_within_one():
    first, second, url_a, url_b = _pg_pair()
    engines = [create_engine(url) for url in (url_a, url_a, url_b)]
    try:
        keys = []
        for eng in engines:
            with eng.connect() as conn:
                keys.append({name: advisory_key(conn, name) for name in LOCK_NAMES})
                ident = arena_identity(conn)
                assert ident[1] == eng.url.query["options"].split("=", 1)[1]
        same_a, again_a, other = keys
        assert same_a == again_a  # two connections of one arena share every lock
        assert all(same_a[n] != other[n] for n in LOCK_NAMES)  # another arena shares none
        assert len(set(same_a.values())) == len(LOCK_NAMES)  # nor do two locks of one arena
        with engines[0].connect() as conn:
            assert advisory_key(conn, "file", "ab") != advisory_key(conn, "file", "ac")
            with pytest.raises(ValueError, match="unknown lock"):
                advisory_key(conn, "nightly-typo")
    finally:
        for eng in engines:
            eng.dispose()
        next(first, None)
        next(second, None)


def test_a_migration_in_one_schema_does_not_wait_for_another_schemas_migration():
    """The migration lock is taken per arena: with one schema's lock held (as by a
    migration in progress) a new arena in another schema is created at once."""
    first, second, url_a, url_b = _pg_pair()
    a = create_engine(url_a)
    try:
        with a.connect() as conn, conn.begin():
            key = advisory_key(conn, "migrate")
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%(key)s)", {"key": key})
            b = open_engine(url_b, wait=1)  # creates the schema of arena b
            b.dispose()
            # arena a itself would wait for the held lock, up to its lock_timeout
            with pytest.raises(Exception, match="lock timeout"):
                open_engine(url_a, wait=0.5).dispose()
    finally:
        a.dispose()
        next(first, None)
        next(second, None)
