"""API keys of ``arena serve``: a name, a scope, a hash of the token, a rate.

A token is shown once, when it is created (``arena keys create``); the
database keeps only its SHA-256, so a stolen database cannot be replayed as
keys.  Scopes are ordered only by ``admin``, which may do everything; the
others allow their own routes (``vote``: pairs and votes, ``ingest``: battle
batches, ``read``: leaderboards and models).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Row, insert, select, update

from arena.core.errors import ArenaError
from arena.db.models import ApiKey
from arena.db.session import take_write_lock
from arena.db.tables import utcnow

__all__ = [
    "SCOPES",
    "KeyRefused",
    "KeyInfo",
    "NewKey",
    "authenticate",
    "create_key",
    "hash_token",
    "list_keys",
    "revoke_key",
]

SCOPES = ("vote", "ingest", "read", "admin")
#: What a token looks like: a prefix people recognise in logs and leak scanners.
TOKEN_PREFIX = "arena_"


class KeyRefused(ArenaError, ValueError):
    """A key operation the store refuses (unknown name, name taken, bad scope)."""


@dataclass(frozen=True)
class KeyInfo:
    """A stored key, without its token."""

    id: int
    name: str
    scope: str
    rate: float | None
    created_at: datetime
    revoked_at: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "scope": self.scope,
            "rate": self.rate,
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


@dataclass(frozen=True)
class NewKey:
    """A key just created: ``token`` is shown once and never stored."""

    info: KeyInfo
    token: str


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


_COLUMNS = (ApiKey.id, ApiKey.name, ApiKey.scope, ApiKey.rate, ApiKey.created_at, ApiKey.revoked_at)


def _info(row: Row[int, str, str, float | None, datetime, datetime | None]) -> KeyInfo:
    return KeyInfo(row.id, row.name, row.scope, row.rate, row.created_at, row.revoked_at)


def _check_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 255 or not name.isprintable():
        raise KeyRefused(f"key name {name!r} must be 1 to 255 printable characters")
    return name


def create_key(engine: Engine, name: str, *, scope: str, rate: float | None = None) -> NewKey:
    """Create key ``name`` with ``scope``; returns it with its token (shown once).

    ``rate``: requests per second this key may make (burst: twice that); ``None``
    for the server's default, ``0`` for no limit.
    """
    name = _check_name(name)
    if scope not in SCOPES:
        raise KeyRefused(f"scope {scope!r} is not one of {', '.join(SCOPES)}")
    if rate is not None and not (rate >= 0 and rate < 1e9):
        raise KeyRefused(f"rate {rate!r} must be a number of requests per second >= 0")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with engine.connect() as conn, conn.begin():
        take_write_lock(conn, f"keys create {name}")
        if conn.execute(select(ApiKey.id).where(ApiKey.name == name)).first() is not None:
            raise KeyRefused(f"a key named {name!r} exists; revoke it or choose another name")
        created = utcnow()
        new_id = conn.execute(
            insert(ApiKey)
            .values(
                name=name,
                scope=scope,
                token_sha256=hash_token(token),
                rate=rate,
                created_at=created,
            )
            .returning(ApiKey.id)
        ).scalar_one()
    info = KeyInfo(new_id, name, scope, rate, created, None)
    return NewKey(info, token)


def list_keys(conn: Connection) -> list[KeyInfo]:
    """Every key, revoked ones included, oldest first."""
    rows = conn.execute(select(*_COLUMNS).order_by(ApiKey.id))
    return [_info(r) for r in rows]


def revoke_key(engine: Engine, name: str) -> KeyInfo:
    """Revoke key ``name`` (its token stops working at once; the row stays for the record)."""
    with engine.connect() as conn, conn.begin():
        take_write_lock(conn, f"keys revoke {name}")
        row = conn.execute(select(*_COLUMNS).where(ApiKey.name == name)).one_or_none()
        if row is None:
            from arena.core.words import unknown

            names = conn.execute(select(ApiKey.name)).scalars().all()
            raise KeyRefused(unknown("key", name, names))
        if row.revoked_at is None:
            conn.execute(update(ApiKey).where(ApiKey.id == row.id).values(revoked_at=utcnow()))
        row = conn.execute(select(*_COLUMNS).where(ApiKey.id == row.id)).one()
        return _info(row)


def authenticate(conn: Connection, token: str) -> KeyInfo | None:
    """The live key whose token this is, or None (unknown or revoked)."""
    row = conn.execute(
        select(*_COLUMNS).where(ApiKey.token_sha256 == hash_token(token))
    ).one_or_none()
    if row is None or row.revoked_at is not None:
        return None
    return _info(row)
