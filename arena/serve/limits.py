"""Rate limits: a token bucket per key (or per client address) and worker process.

A key may make ``rate`` requests per second on average, ``2 x rate`` in a
burst.  Buckets live in the worker's memory: with N workers behind a load
balancer a key gets up to N times its rate (documented in ``docs/serve.md``;
the limit protects the server, it is not a billing meter).  Requests without
a valid key are limited per client address, before any database work.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable

__all__ = ["RateLimiter", "retry_after_header"]

#: Buckets one limiter keeps; the least recently used is dropped beyond (it
#: starts full again when its client returns), so many addresses cannot grow
#: a worker's memory without bound.
MAX_BUCKETS = 100_000


class RateLimiter:
    """Token buckets by any hashable name (a key id, a client address).

    Parameters
    ----------
    burst_seconds
        A bucket holds ``rate x burst_seconds`` requests (at least one).
    max_buckets
        Buckets kept at most, least recently used dropped first.
    """

    def __init__(self, *, burst_seconds: float = 2.0, max_buckets: int = MAX_BUCKETS) -> None:
        self.burst_seconds = burst_seconds
        self.max_buckets = max_buckets
        #: name -> (tokens, last time), least recently used first
        self._buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, name: Hashable, rate: float, *, now: float | None = None) -> float:
        """0 if a request may go now, else the seconds until it may (Retry-After).

        ``rate`` <= 0 means unlimited.
        """
        if rate <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        capacity = max(1.0, rate * self.burst_seconds)
        buckets = self._buckets
        with self._lock:
            tokens, last = buckets.get(name, (capacity, now))
            tokens = min(capacity, tokens + (now - last) * rate)
            wait = 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate
            buckets[name] = (tokens - 1.0 if wait == 0.0 else tokens, now)
            buckets.move_to_end(name)
            if len(buckets) > self.max_buckets:
                buckets.popitem(last=False)
            return wait

    def refund(self, name: Hashable, rate: float) -> None:
        """Give back the request :meth:`take` took from ``name`` (it turned out not to count)."""
        if rate <= 0:
            return
        capacity = max(1.0, rate * self.burst_seconds)
        with self._lock:
            held = self._buckets.get(name)
            if held is not None:
                self._buckets[name] = (min(capacity, held[0] + 1.0), held[1])

    def __len__(self) -> int:
        return len(self._buckets)


def retry_after_header(seconds: float) -> str:
    """Retry-After is whole seconds (RFC 9110), at least 1."""
    return str(max(1, math.ceil(seconds)))
