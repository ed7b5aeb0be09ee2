"""Shared fixtures: every database test runs on SQLite and on PostgreSQL.

PostgreSQL comes from ARENA_TEST_POSTGRES_URL (default: the local server of
these machines). Each test gets its own schema, so runs never collide. When the
server cannot be reached the PostgreSQL half fails loudly, unless
ARENA_TEST_SKIP_POSTGRES=1 is set (never on CI).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def shared_path(*parts: str) -> Path:
    """A file under ../shared.

    Skipped loudly when the ../shared directory is absent (a bare clone); a
    missing file inside a present ../shared is a failure, not a skip. Tests of
    the LMArena 140k export use the bundled copy (:func:`bundled_lmarena`)
    instead, so they run without ../shared.
    """
    if not SHARED.is_dir():
        pytest.skip(f"SHARED DATA MISSING: {SHARED} (CI provides ../shared beside the repo)")
    path = SHARED.joinpath(*parts)
    assert path.exists(), f"expected shared data file {path}"
    return path


def bundled_lmarena() -> Path:
    """The bundled LMArena 140k export (byte-identical to
    ../shared/data/lmarena-140k/battles_with_category_tags.csv.gz)."""
    from arena.core import resources

    return resources.demo_data()


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


def run_file_command(args, *, ok=True):
    """Run an ``arena`` command that reads files, not a database (eval, irt)."""
    from arena.cli import cli

    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def cli_for(url: str):
    """``run(*args)``: invoke the CLI against ``url``; returns the click Result."""
    from arena.cli import cli

    runner = CliRunner()

    def run(*args: str, input: str | bytes | None = None, ok: bool = True):
        result = runner.invoke(cli, ["--db", url, *args], input=input, catch_exceptions=False)
        if ok and result.exit_code != 0:
            raise AssertionError(
                f"arena {' '.join(args)} exited {result.exit_code}:\n{result.output}"
            )
        return result

    return run


@pytest.fixture
def run_cli(db_url):
    """Invoke the CLI against the test database; returns the click Result."""
    return cli_for(db_url)


@dataclass(frozen=True)
class LoadedDatabase:
    """A database holding the LMArena 140k export, shared by the tests of one session."""

    url: str
    ingest_output: str

    def run_cli(self, *args: str, **kwargs):
        return cli_for(self.url)(*args, **kwargs)


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def lmarena_db(request, tmp_path_factory):
    """The bundled 135,634 votes ingested once per engine and session (``arena ingest``).

    Shared: tests may add snapshots but must not add or change battles.
    """
    if request.param == "sqlite":
        urls = iter([f"sqlite:///{tmp_path_factory.mktemp('lmarena') / 'arena.db'}"])
    else:
        urls = pg_schema()
    url = next(urls)
    out = cli_for(url)("ingest", str(bundled_lmarena()), "-q").output
    yield LoadedDatabase(url, out)
    next(urls, None)  # drops the PostgreSQL schema
