"""Alembic environment for arena.

The URL is never read from alembic.ini: it comes from the caller (arena's CLI
puts it in ``config.attributes["url"]`` or the main option ``sqlalchemy.url``),
else from ARENA_DATABASE_URL, else the embedded default.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine, pool

from arena.db.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    return (
        config.attributes.get("url")
        or config.get_main_option("sqlalchemy.url")
        or os.environ.get("ARENA_DATABASE_URL")
        or "sqlite:///arena.db"
    )


def run_migrations_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        _run(connection)
    engine.dispose()


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
