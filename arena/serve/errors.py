"""Every error answer of ``arena serve`` in one shape: ``{"error": {"message": ...}}``.

Refusals the routes raise (:class:`ApiError`), Starlette's own (404 unknown
route, 405 wrong method, 400), FastAPI's 422 for a bad query, database
failures (503: lock not granted within ``--wait``, connection lost) and bugs
(500, logged, no traceback in the answer) all leave through
:func:`install_error_handlers`, so a client reads one shape whatever went wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException

__all__ = [
    "ApiError",
    "answer_for",
    "database_failure",
    "error_response",
    "install_error_handlers",
    "invalid_body",
]

log = logging.getLogger("arena.serve")

#: Seconds a client is told to wait after a 503 (busy database, full queue).
RETRY_AFTER_BUSY = "1"

#: Fragments (lower case) of driver messages saying a lock was not granted in time.
_LOCK_NOT_GRANTED = ("database is locked", "lock timeout", "database table is locked")
#: Fragments (lower case) of driver messages saying the connection is gone.
_CONNECTION_LOST = (
    "terminating connection",
    "server closed the connection",
    "connection is lost",
    "consuming input failed",
    "the connection is closed",
)


class ApiError(Exception):
    """A refusal: its status, the message and any more fields of the error body."""

    def __init__(
        self, status: int, message: str, *, headers: dict[str, str] | None = None, **more: Any
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"message": message, **more}
        self.headers = headers or {}


def error_response(error: ApiError) -> JSONResponse:
    """The answer of a refusal, in the one error shape."""
    return JSONResponse({"error": error.body}, status_code=error.status, headers=error.headers)


def invalid_body(errors: Sequence[Any]) -> ApiError:
    """422 naming the first invalid field of a request body (pydantic's errors)."""
    first = errors[0] if errors else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query")]
    return ApiError(
        422, first.get("msg", "invalid request"), index=None, field=".".join(loc) or None
    )


def database_failure(exc: BaseException) -> ApiError | None:
    """503 for a database that is busy beyond ``--wait`` or whose connection was lost.

    None for anything else (a bug: the caller answers 500).
    """
    if not isinstance(exc, DBAPIError):
        return None
    text = str(exc.orig).lower()
    if any(fragment in text for fragment in _LOCK_NOT_GRANTED):
        return ApiError(
            503,
            "the database is busy: its write lock was not granted within the server's --wait; "
            "retry shortly (nothing was stored)",
            headers={"Retry-After": RETRY_AFTER_BUSY},
        )
    if exc.connection_invalidated or any(fragment in text for fragment in _CONNECTION_LOST):
        return ApiError(
            503,
            "lost the connection to the database; retry (nothing was stored)",
            headers={"Retry-After": RETRY_AFTER_BUSY},
        )
    return None


def _count(request: Request, status: int) -> None:
    state = getattr(request.app.state, "serve", None)
    if state is not None:
        state.metrics.rejects.labels(str(status)).inc()


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` in the one shape, counting it by status."""

    @app.exception_handler(ApiError)
    async def _refused(request: Request, exc: ApiError) -> JSONResponse:
        return answer_for(request, exc)

    @app.exception_handler(HTTPException)
    async def _starlette(request: Request, exc: HTTPException) -> JSONResponse:
        # 404 no such route, 405 method not allowed, 400 from Starlette's parsers
        _count(request, exc.status_code)
        headers = None if exc.headers is None else dict(exc.headers)
        return error_response(ApiError(exc.status_code, str(exc.detail), headers=headers))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        _count(request, 422)
        return error_response(invalid_body(list(exc.errors())))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        return answer_for(request, exc)


def answer_for(request: Request, exc: Exception) -> JSONResponse:
    """The answer of any exception a route raised, counted: a refusal as itself, a
    database failure as 503, anything else as 500 (logged with its traceback)."""
    if isinstance(exc, ApiError):
        _count(request, exc.status)
        return error_response(exc)
    failure = database_failure(exc)
    if failure is not None:
        log.warning("%s %s: %s", request.method, request.url.path, failure.body["message"])
        _count(request, failure.status)
        return error_response(failure)
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    _count(request, 500)
    return error_response(
        ApiError(500, f"internal error ({type(exc).__name__}); see the server log")
    )
