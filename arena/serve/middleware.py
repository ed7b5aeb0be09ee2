"""Body size rules, request metrics and hot routes, before anything else a request meets.

A plain ASGI middleware: Starlette's ``@app.middleware("http")`` runs every
request in an extra task with memory streams, which was a large share of a
vote's CPU (``benchmarks/bench_serve.py``).  Header limits come earlier still,
in the HTTP protocol (:mod:`arena.serve.protocol`).

Hot routes are routes of the application (declared, documented in ``/docs``
and implemented once, in their router) whose endpoint takes the bare request
and returns a ready response: this middleware calls that endpoint itself,
skipping FastAPI's route matching, dependency solving and exception
middleware, which cost more CPU than the whole vote (bench_serve.py: 410 us
against 170-240 us a vote through the app).  Their errors get the same answers
as any route's (:func:`arena.serve.errors.answer_for`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import Message, Receive, Scope, Send

from arena.serve.errors import ApiError, answer_for, error_response

__all__ = ["BodyLimitsAndMetrics", "HotRoute"]

#: An endpoint of a hot route: the request in, a ready response out.
HotEndpoint = Callable[[Request], Awaitable[Response]]


class HotRoute:
    """A route of the app whose endpoint the middleware calls directly."""

    def __init__(self, route: BaseRoute, endpoint: HotEndpoint) -> None:
        self.route = route
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["route"] = self.route  # what the metrics and the error log name
        request = Request(scope, receive)
        try:
            response = await self.endpoint(request)
        except Exception as exc:  # every route's answers: refusals, 503, 500
            response = answer_for(request, exc)
        await response(scope, receive, send)


#: Methods whose requests carry a body, which must announce its length.
_WITH_BODY = ("POST", "PUT", "PATCH")


class BodyLimitsAndMetrics:
    """411 without ``Content-Length``, 413 over ``max_body``; every answer counted.

    ``hot``: (method, path) -> the hot route answering it (see the module doc).
    """

    def __init__(
        self, app: Any, *, max_body: int, hot: dict[tuple[str, str], HotRoute] | None = None
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.hot = hot or {}

    def _refusal(self, method: str, length: bytes | None) -> ApiError | None:
        if length is None:
            if method in _WITH_BODY:
                return ApiError(411, "Content-Length is required")
            return None
        if not length.isdigit() or int(length) > self.max_body:
            return ApiError(413, f"request body over {self.max_body} bytes")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            refusal = self._refusal(method, length)
            hot = self.hot.get((method, scope["path"]))
            if refusal is not None:
                serve = getattr(getattr(scope.get("app"), "state", None), "serve", None)
                if serve is not None:
                    serve.metrics.rejects.labels(str(refusal.status)).inc()
                await error_response(refusal)(scope, receive, send_status)
            elif hot is not None:
                await hot(scope, receive, send_status)
            else:
                await self.app(scope, receive, send_status)
        finally:
            state = getattr(scope.get("app"), "state", None)
            serve = getattr(state, "serve", None) if state is not None else None
            if serve is not None:
                path = getattr(scope.get("route"), "path", "other")
                serve.metrics.requests.labels(path, method, str(status)).inc()
                serve.metrics.latency.labels(path).observe(time.perf_counter() - start)
