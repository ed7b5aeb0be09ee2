"""Databases whose bookkeeping was damaged by hand or by another tool.

Each gets a one-line refusal naming what is wrong and how to repair it, from the
command line and from ``arena.open``, never a traceback, and nothing is written.
"""

from __future__ import annotations

import os
import re

import pytest
from sqlalchemy import create_engine, text

import arena
from arena.db.lock import lock_file_path
from tests.helpers.cli import cli_for
from tests.helpers.files import synth_battles
from tests.helpers.postgres import pg_url


@pytest.fixture
def stored(db_url, tmp_path):
    """A database holding a few battles."""
    synth_battles(tmp_path / "a.csv", n=30, models=3, seed=1)
    cli_for(db_url)("ingest", str(tmp_path / "a.csv"), "-q")
    return db_url


def _sql(url: str, statement: str) -> None:
    eng = create_engine(url)
    with eng.begin() as conn:
        conn.execute(text(statement))
    eng.dispose()


def _refused(url: str, needle: str) -> None:
    res = cli_for(url)("models", ok=False)
    assert res.exit_code == 1 and needle in res.output, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
    with pytest.raises(arena.ArenaError, match=re.escape(needle)):
        arena.open(url).models()


def test_two_revision_rows_are_refused(stored):
    _sql(stored, "INSERT INTO alembic_version (version_num) VALUES ('0003')")
    _refused(stored, "(alembic_version) holds 2 rows")


def test_a_dropped_table_is_named(stored):
    _sql(stored, "DROP TABLE battle_keys")
    _refused(stored, "missing arena's table(s) battle_keys")


def test_a_file_that_is_not_a_database_is_one_arena_error(tmp_path):
    (tmp_path / "notes.db").write_text("hello, not a database\n" * 100)
    _refused(f"sqlite:///{tmp_path / 'notes.db'}", "not an SQLite database")


def test_a_search_path_naming_no_schema_is_refused_and_nothing_created():
    url = pg_url() + "?options=-csearch_path%3Dno_such_schema_here"
    res = cli_for(url)("ingest", "-", input="model_a,model_b,winner\na,b,model_a\n", ok=False)
    assert res.exit_code == 1 and "no schema of its search_path" in res.output, res.output
    assert "Traceback" not in res.output
    eng = create_engine(pg_url())
    with eng.connect() as conn:
        public = conn.execute(
            text(
                "SELECT count(*) FROM pg_tables WHERE tablename = 'alembic_version' AND schemaname = 'public'"
            )
        ).scalar()
    eng.dispose()
    assert public == 0


def test_one_file_reached_by_two_paths_has_one_lock(tmp_path):
    real = tmp_path / "real" / "arena.db"
    real.parent.mkdir()
    synth_battles(tmp_path / "a.csv", n=10, models=3, seed=2)
    cli_for(f"sqlite:///{real}")("ingest", str(tmp_path / "a.csv"), "-q")
    os.symlink(real.parent, tmp_path / "link")
    by_link = create_engine(f"sqlite:///{tmp_path / 'link' / 'arena.db'}")
    by_file = create_engine(f"sqlite:///{real}")
    assert lock_file_path(by_link) == lock_file_path(by_file)


def test_a_read_only_database_is_one_arena_error_from_python_too(tmp_path):
    """Root may write any file, so the database is opened read-only by its URI."""
    synth_battles(tmp_path / "a.csv", n=10, models=3, seed=3)
    cli_for(f"sqlite:///{tmp_path / 'arena.db'}")("ingest", str(tmp_path / "a.csv"), "-q")
    url = f"sqlite:///file:{tmp_path / 'arena.db'}?mode=ro&uri=true"
    with pytest.raises(arena.ArenaError, match="read-only: cannot write to it"):
        arena.open(url).annotate("model-0", organisation="Acme")
    res = cli_for(url)("models", "annotate", "model-0", "--organisation", "Acme", ok=False)
    assert res.exit_code == 1 and "read-only" in res.output and "Traceback" not in res.output
