"""Who is asking: bearer tokens to keys, scopes, and rate limits before any database work.

The order is what keeps failing authentication cheap:

1. a token this worker knows (a bounded LRU of live keys, trusted for
   :data:`KEY_CACHE_SECONDS`) is checked in memory, then against its key's
   rate;
2. anything else -- no token, a malformed one, one never seen -- takes a
   request from its client address's allowance (``--anonymous-rate``) before any
   lookup, and is refused with 429 when there is none left; a token that looks
   like one then costs one indexed lookup, and a live key gets the request
   back, so guessing is limited per address while valid keys are not;
3. an unknown or revoked token is never remembered, so sending random tokens
   cannot grow a worker's memory, and sending many is limited per address.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from fastapi import Request

from arena.serve.errors import ApiError
from arena.serve.keys import TOKEN_PREFIX, KeyInfo
from arena.serve.limits import RateLimiter, retry_after_header

__all__ = ["KEY_CACHE_SECONDS", "Authenticator", "KeyCache", "ROUTE_SCOPES", "requires"]

#: How long a key lookup is trusted: a revoked key stops working within this.
KEY_CACHE_SECONDS = 2.0
#: Longest token worth a database lookup (issued tokens are 49 characters).
MAX_TOKEN_LENGTH = 256
#: Scopes allowed on each route group (``admin`` may use all).
ROUTE_SCOPES = {"vote": {"vote", "admin"}, "ingest": {"ingest", "admin"}, "read": {"read", "admin"}}

_BEARER = {"WWW-Authenticate": "Bearer"}


class KeyCache:
    """Live keys by token digest, least recently used dropped beyond ``max_size``.

    An entry older than ``ttl`` is not trusted but kept: refreshing a known
    key's row is not charged to its client address as a stranger's guess is.
    """

    def __init__(self, max_size: int, ttl: float = KEY_CACHE_SECONDS) -> None:
        self.max_size = max(1, max_size)
        self.ttl = ttl
        self._entries: OrderedDict[str, tuple[KeyInfo, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, digest: str, now: float) -> tuple[KeyInfo | None, bool]:
        """(the key, whether it is fresh); (None, False) for a digest never stored."""
        with self._lock:
            hit = self._entries.get(digest)
            if hit is None:
                return None, False
            self._entries.move_to_end(digest)
            return hit[0], now - hit[1] < self.ttl

    def put(self, digest: str, info: KeyInfo, now: float) -> None:
        with self._lock:
            self._entries[digest] = (info, now)
            self._entries.move_to_end(digest)
            while len(self._entries) > self.max_size:
                self._entries.popitem(last=False)

    def drop(self, digest: str) -> None:
        with self._lock:
            self._entries.pop(digest, None)

    def __len__(self) -> int:
        return len(self._entries)


class Authenticator:
    """Turns a request's ``Authorization`` header into a key allowed on a route.

    Parameters
    ----------
    lookup
        Async function: token -> the live key, or None (one database query).
    rate
        Requests per second of a key without its own rate (0: unlimited).
    anonymous_rate
        Requests per second per client address without a valid key (0: unlimited).
    cache_size
        Known keys remembered at most.
    """

    def __init__(
        self,
        lookup: Callable[[str], Awaitable[KeyInfo | None]],
        *,
        rate: float,
        anonymous_rate: float,
        cache_size: int,
    ) -> None:
        self.lookup = lookup
        self.rate = rate
        self.anonymous_rate = anonymous_rate
        self.keys = KeyCache(cache_size)
        self.by_key = RateLimiter()
        self.by_address = RateLimiter()

    def _over(self, address: str, wait: float) -> None:
        if wait > 0:
            raise ApiError(
                429,
                f"too many requests without a valid key from {address} "
                f"(over {self.anonymous_rate:g} a second)",
                headers={"Retry-After": retry_after_header(wait)},
            )

    def _refuse(self, address: str, message: str) -> ApiError:
        """A failed authentication, charged to its address (429 once over its rate)."""
        self._over(address, self.by_address.take(address, self.anonymous_rate))
        return ApiError(401, message, headers=_BEARER)

    async def key(self, authorization: str, address: str, scope: str) -> KeyInfo:
        """The key of ``authorization`` if it may use a route of ``scope`` now.

        Raises :class:`ApiError`: 401 no, unknown or revoked token; 403 a key of
        another scope; 429 over the key's (or, without a key, the address's) rate.
        """
        kind, _, token = authorization.partition(" ")
        token = token.strip()
        if kind.lower() != "bearer" or not token:
            raise self._refuse(
                address, "missing bearer token (Authorization: Bearer TOKEN; `arena keys create`)"
            )
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
        now = time.monotonic()
        info, fresh = self.keys.get(digest, now)
        if not fresh:
            stranger = info is None  # a token this worker never saw: a guess until proven
            if stranger:
                # charged before the lookup, so concurrent guesses cannot all pass
                # the check first; given back below when the token is a live key
                self._over(address, self.by_address.take(address, self.anonymous_rate))
                if not token.startswith(TOKEN_PREFIX) or len(token) > MAX_TOKEN_LENGTH:
                    raise ApiError(401, "unknown or revoked token", headers=_BEARER)
            info = await self.lookup(token)
            if info is None:
                self.keys.drop(digest)
                if stranger:
                    raise ApiError(401, "unknown or revoked token", headers=_BEARER)
                raise self._refuse(address, "unknown or revoked token")  # revoked since
            if stranger:
                self.by_address.refund(address, self.anonymous_rate)
            self.keys.put(digest, info, now)
        assert info is not None, "a fresh cache entry is a stored key"
        if info.scope not in ROUTE_SCOPES[scope]:
            raise ApiError(
                403, f"key {info.name!r} has scope {info.scope!r}; this route needs {scope!r}"
            )
        rate = self.rate if info.rate is None else info.rate
        wait = self.by_key.take(info.id, rate)
        if wait > 0:
            raise ApiError(
                429,
                f"key {info.name!r} is over its rate of {rate:g} requests per second",
                headers={"Retry-After": retry_after_header(wait)},
            )
        return info


def client_address(request: Request) -> str:
    """The peer's address (a proxy's, behind one: see docs/serve.md)."""
    return request.client.host if request.client else "unknown"


def requires(scope: str) -> Callable[[Request], Awaitable[KeyInfo]]:
    """A FastAPI dependency: the request's key, allowed on routes of ``scope``."""

    async def key_of(request: Request) -> KeyInfo:
        auth: Authenticator = request.app.state.serve.auth
        return await auth.key(
            request.headers.get("authorization", ""), client_address(request), scope
        )

    return key_of
