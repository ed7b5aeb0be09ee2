"""Shared fixtures: every database test runs on SQLite and on PostgreSQL.

PostgreSQL comes from ARENA_TEST_POSTGRES_URL (default: the local server of
these machines). Each test gets its own schema, so runs never collide. When the
server cannot be reached the PostgreSQL half fails loudly, unless
ARENA_TEST_SKIP_POSTGRES=1 is set (never on CI).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def shared_path(*parts: str) -> Path:
    """A file under ../shared; the test is skipped loudly if it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"SHARED DATA MISSING: {path} (CI provides ../shared beside the repo)")
    return path


def _pg_url() -> str:
    return os.environ.get("ARENA_TEST_POSTGRES_URL", DEFAULT_PG)


def pg_schema(*, role: bool = False):
    """A fresh PostgreSQL schema for one test: yields its URL, drops it after.

    With ``role``, the schema belongs to a new NOSUPERUSER role and the URL logs
    in as that role (what an application usually runs as).
    """
    if os.environ.get("ARENA_TEST_SKIP_POSTGRES") == "1":
        pytest.skip("ARENA_TEST_SKIP_POSTGRES=1: PostgreSQL half skipped on request")
    base = _pg_url()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if role:
            conn.execute(text(f'CREATE ROLE "{schema}" LOGIN NOSUPERUSER'))
            conn.execute(text(f'CREATE SCHEMA "{schema}" AUTHORIZATION "{schema}"'))
        else:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    if role:
        parts = urlsplit(base)
        netloc = f"{schema}@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        base = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            if role:
                conn.execute(text(f'DROP OWNED BY "{schema}"'))
                conn.execute(text(f'DROP ROLE "{schema}"'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A URL for an empty database of each engine."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    yield from pg_schema()


@pytest.fixture
def engine(db_url):
    from arena.db.session import open_engine

    eng = open_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def run_cli(db_url):
    """Invoke the CLI against the test database; returns the click Result."""
    from arena.cli import cli

    runner = CliRunner()

    def run(*args: str, input: str | bytes | None = None, ok: bool = True):
        result = runner.invoke(cli, ["--db", db_url, *args], input=input, catch_exceptions=False)
        if ok and result.exit_code != 0:
            raise AssertionError(
                f"arena {' '.join(args)} exited {result.exit_code}:\n{result.output}"
            )
        return result

    return run
