"""Per-key rate limits: a token bucket per key and worker process.

A key may make ``rate`` requests per second on average, ``2 x rate`` in a
burst.  Buckets live in the worker's memory: with N workers behind a load
balancer a key gets up to N times its rate (documented in ``docs/serve.md``;
the limit protects the server, it is not a billing meter).
"""

from __future__ import annotations

import math
import threading
import time

__all__ = ["RateLimiter"]


class RateLimiter:
    def __init__(self, *, burst_seconds: float = 2.0) -> None:
        self.burst_seconds = burst_seconds
        self._buckets: dict[int, tuple[float, float]] = {}  # key id -> (tokens, last time)
        self._lock = threading.Lock()

    def take(self, key_id: int, rate: float, *, now: float | None = None) -> float:
        """0 if a request may go now, else the seconds until it may (Retry-After).

        ``rate`` <= 0 means unlimited.
        """
        if rate <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        capacity = max(1.0, rate * self.burst_seconds)
        with self._lock:
            tokens, last = self._buckets.get(key_id, (capacity, now))
            tokens = min(capacity, tokens + (now - last) * rate)
            if tokens >= 1.0:
                self._buckets[key_id] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key_id] = (tokens, now)
            return (1.0 - tokens) / rate


def retry_after_header(seconds: float) -> str:
    """Retry-After is whole seconds (RFC 9110), at least 1."""
    return str(max(1, math.ceil(seconds)))
