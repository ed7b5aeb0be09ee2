"""Battle tokens: a signed, single-use, expiring ticket for one pair the server chose.

``GET /v1/pair`` hands out ``payload.signature`` (both base64url): the payload
names the pair (in the order shown), the board it was drawn for, the key that
asked, a random id and an expiry; the signature is an HMAC-SHA256 under the
server secret (:class:`arena.db.models.ServeSecret`, shared by every worker
through the database).  A vote carries the token back, so the server stores
exactly the pair it showed, never one a client made up.

Single use costs no table of its own: the token id becomes the stored battle's
external id, and ``battle_keys`` (the store-wide de-duplication every ingest
uses) refuses a second battle with it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import Engine, select

from arena.core.errors import ArenaError
from arena.db.models import ServeSecret
from arena.db.session import take_write_lock

__all__ = ["BattleTicket", "TokenError", "TokenSigner", "load_secret", "ticket_id"]

#: Prefix of a vote's external id, so served votes are recognisable in the store.
ID_PREFIX = "vote:"


class TokenError(ArenaError):
    """A token that is forged, malformed, or expired (``kind`` says which)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "forged" | "expired"


@dataclass(frozen=True)
class BattleTicket:
    """What a valid token says."""

    id: str
    model_a: str
    model_b: str
    key_id: int
    expires_at: float
    category: str | None = None
    source: str | None = None


def ticket_id(ticket: BattleTicket) -> str:
    """The external id a vote on this ticket is stored under."""
    return ID_PREFIX + ticket.id


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def load_secret(engine: Engine) -> bytes:
    """The signing secret, created on first use (one row, shared by every worker)."""
    with engine.connect() as conn:
        secret = conn.execute(select(ServeSecret.secret).order_by(ServeSecret.id)).scalar()
    if secret is not None:
        return bytes(secret)
    with engine.connect() as conn, conn.begin():
        take_write_lock(conn, "serve secret")
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("LOCK TABLE serve_secrets IN EXCLUSIVE MODE")
        secret = conn.execute(select(ServeSecret.secret).order_by(ServeSecret.id)).scalar()
        if secret is None:
            secret = secrets.token_bytes(32)
            conn.execute(ServeSecret.__table__.insert().values(secret=secret))
    return bytes(secret)


class TokenSigner:
    """Issue and verify battle tokens under one secret."""

    def __init__(self, secret: bytes, *, ttl: float) -> None:
        self._secret = secret
        self.ttl = ttl

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def issue(
        self,
        model_a: str,
        model_b: str,
        *,
        key_id: int,
        category: str | None = None,
        source: str | None = None,
        now: float | None = None,
    ) -> tuple[str, BattleTicket]:
        now = time.time() if now is None else now
        ticket = BattleTicket(
            id=secrets.token_hex(16),
            model_a=model_a,
            model_b=model_b,
            key_id=key_id,
            expires_at=round(now + self.ttl, 3),
            category=category,
            source=source,
        )
        body = {
            "i": ticket.id,
            "a": model_a,
            "b": model_b,
            "k": key_id,
            "e": ticket.expires_at,
        }
        if category is not None:
            body["c"] = category
        if source is not None:
            body["s"] = source
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        return f"{_b64(payload)}.{_b64(self._sign(payload))}", ticket

    def verify(self, token: str, *, now: float | None = None) -> BattleTicket:
        """The ticket a token stands for; :class:`TokenError` if forged or expired."""
        try:
            head, sig = token.split(".")
            payload = _unb64(head)
            signature = _unb64(sig)
        except (ValueError, UnicodeEncodeError):
            raise TokenError("forged", "battle token is malformed") from None
        if not hmac.compare_digest(signature, self._sign(payload)):
            raise TokenError("forged", "battle token signature does not match")
        body = json.loads(payload)
        ticket = BattleTicket(
            id=body["i"],
            model_a=body["a"],
            model_b=body["b"],
            key_id=body["k"],
            expires_at=body["e"],
            category=body.get("c"),
            source=body.get("s"),
        )
        if (time.time() if now is None else now) > ticket.expires_at:
            raise TokenError("expired", "battle token expired; ask for a new pair")
        return ticket
