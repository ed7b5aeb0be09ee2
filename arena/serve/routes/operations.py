"""``GET /healthz`` and ``GET /metrics``: for load balancers and Prometheus, no key."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from arena.core.version import __version__
from arena.db.session import current_revision, head_revision
from arena.serve.errors import ApiError, error_response
from arena.serve.state import ServeState, with_reconnect

__all__ = ["router"]

router = APIRouter(tags=["operations"])


def _probe(state: ServeState) -> str | None:
    with state.engine.connect() as conn:
        conn.execute(text("SELECT 1"))
        return current_revision(conn)


@router.get("/healthz", response_model=None)
async def healthz(request: Request) -> dict[str, str | None] | JSONResponse:
    """200 when the database answers and its schema is this arena's; 503 otherwise."""
    state: ServeState = request.app.state.serve
    try:
        revision = await run_in_threadpool(with_reconnect, _probe, state)
    except Exception as exc:  # any database failure is "not healthy"
        return error_response(ApiError(503, f"database unreachable: {type(exc).__name__}"))
    if revision != head_revision():
        return error_response(
            ApiError(503, f"schema at {revision}, this arena needs {head_revision()}")
        )
    return {"status": "ok", "revision": revision, "version": __version__}


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """This worker's Prometheus metrics."""
    state: ServeState = request.app.state.serve
    state.metrics.queue.set(state.writer.depth())
    state.metrics.refitter.set(1 if state.refit is not None and state.refit.holding else 0)
    state.metrics.subscribers.set(state.hub.subscribers)
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
