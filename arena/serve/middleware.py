"""Body size rules and request metrics, before anything else a request meets.

A plain ASGI middleware: Starlette's ``@app.middleware("http")`` runs every
request in an extra task with memory streams, which was a large share of a
vote's CPU (``benchmarks/bench_serve.py``).  Header limits come earlier still,
in the HTTP protocol (:mod:`arena.serve.protocol`).
"""

from __future__ import annotations

import time
from typing import Any

from arena.serve.errors import ApiError, error_response

__all__ = ["BodyLimitsAndMetrics"]

#: Methods whose requests carry a body, which must announce its length.
_WITH_BODY = ("POST", "PUT", "PATCH")


class BodyLimitsAndMetrics:
    """411 without ``Content-Length``, 413 over ``max_body``; every answer counted."""

    def __init__(self, app: Any, *, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    def _refusal(self, method: str, length: bytes | None) -> ApiError | None:
        if length is None:
            if method in _WITH_BODY:
                return ApiError(411, "Content-Length is required")
            return None
        if not length.isdigit() or int(length) > self.max_body:
            return ApiError(413, f"request body over {self.max_body} bytes")
        return None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        method = scope["method"]
        length = None
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = value
                break
        status = 500

        async def send_status(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            refusal = self._refusal(method, length)
            if refusal is not None:
                await error_response(refusal)(scope, receive, send_status)
            else:
                await self.app(scope, receive, send_status)
        finally:
            state = getattr(scope.get("app"), "state", None)
            serve = getattr(state, "serve", None) if state is not None else None
            if serve is not None:
                path = getattr(scope.get("route"), "path", "other")
                serve.metrics.requests.labels(path, method, str(status)).inc()
                serve.metrics.latency.labels(path).observe(time.perf_counter() - start)
