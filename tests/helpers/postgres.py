"""A fresh PostgreSQL schema per test, so runs (and parallel workers) never collide.

PostgreSQL comes from ARENA_TEST_POSTGRES_URL (default: the local server of
these machines). ARENA_TEST_SKIP_POSTGRES=1 skips the PostgreSQL half (never on CI).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from sqlalchemy import create_engine, text

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def pg_url() -> str:
    """The URL of the test database (not of a schema in it)."""
    return os.environ.get("ARENA_TEST_POSTGRES_URL", DEFAULT_PG)


def pg_schema(*, role: bool = False) -> Iterator[str]:
    """A fresh PostgreSQL schema for one test: yields its URL, drops it after.

    With ``role``, the schema belongs to a new NOSUPERUSER role and the URL logs
    in as that role (what an application usually runs as).
    """
    if os.environ.get("ARENA_TEST_SKIP_POSTGRES") == "1":
        pytest.skip("ARENA_TEST_SKIP_POSTGRES=1: PostgreSQL half skipped on request")
    base = pg_url()
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
