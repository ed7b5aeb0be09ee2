"""Shared fixtures: every database test runs on SQLite and on PostgreSQL.

PostgreSQL comes from ARENA_TEST_POSTGRES_URL (default: the local server of
these machines). Each test gets its own schema, so runs never collide. When the
server cannot be reached the PostgreSQL half fails loudly, unless
ARENA_TEST_SKIP_POSTGRES=1 is set (never on CI).

Plain helpers (paths, schemas, CLI runners, data files) live in :mod:`tests.helpers`;
this file holds fixtures only.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.helpers.cli import cli_for
from tests.helpers.paths import bundled_lmarena
from tests.helpers.postgres import pg_schema

#: Session fixtures that load real data: under pytest-xdist (``-n auto --dist loadgroup``)
#: every test using one runs on the same worker, so each is built once per run.
SHARED_LOADS = ("lmarena_db",)


def pytest_collection_modifyitems(config, items):
    for item in items:
        for name in SHARED_LOADS:
            if name in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(name))
                item.add_marker(pytest.mark.slow)  # real data: left out by -m "not slow"


@pytest.fixture(scope="session", autouse=True)
def _schema_by_replay():
    """New databases get the migrated schema by replaying recorded SQL (the first one
    of each test process is migrated for real): see :mod:`tests.helpers.schema_replay`."""
    from tests.helpers.schema_replay import install

    restore = install()
    yield
    restore()


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
