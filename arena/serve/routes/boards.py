"""``GET /v1/leaderboard`` (``?provisional=true``), ``GET /v1/leaderboard/events`` and
``GET /v1/models``: the CLI's JSON documents, read-only, and provisional-board events.

Leaderboards are cached per board until a newer snapshot can have appeared
(the picker's refresh period; a provisional board also as soon as this
worker's watcher has seen a newer one) and answered with a strong ``ETag``; a client's
``If-None-Match`` is compared as RFC 9110 section 13.1.2 says (weak comparison,
a list of tags, ``*``).  The event stream is :mod:`arena.serve.provisional`'s.
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse

from arena.boards.snapshots import SnapshotError
from arena.core.errors import OptionError
from arena.core.formats import to_json
from arena.serve.auth import requires
from arena.serve.boards import UnknownBoard
from arena.serve.errors import ApiError
from arena.serve.keys import KeyInfo
from arena.serve.state import ServeState

__all__ = ["none_match", "router"]

router = APIRouter(tags=["read"])

ReadKey = Annotated[KeyInfo, Depends(requires("read"))]
Category = Annotated[str | None, Query(description="Board: a category key or label.")]
Source = Annotated[str | None, Query(description="Board: a source that has a board.")]
Provisional = Annotated[
    bool,
    Query(
        description="The provisional board `arena serve` keeps current (the latest snapshot "
        "refitted on the votes since, analytic intervals), with `provisional` in the document."
    ),
]

#: One entity-tag of an If-None-Match list: optional W/, then a quoted opaque tag
#: (which may hold commas, so the list is not split on them).
_ENTITY_TAG = re.compile(r'\s*(?:W/)?("[^"]*")\s*(?:,|$)')


def none_match(header: str, etag: str) -> bool:
    """Whether ``If-None-Match: header`` matches ``etag`` (then the answer is 304).

    Weak comparison: ``W/"x"`` matches ``"x"``; ``*`` matches any current
    representation; a malformed header matches nothing.
    """
    header = header.strip()
    if header == "*":
        return True
    opaque = etag.removeprefix("W/")
    pos = 0
    while pos < len(header):
        found = _ENTITY_TAG.match(header, pos)
        if found is None:
            return False
        if found.group(1) == opaque:
            return True
        pos = found.end()
    return False


def _document(
    state: ServeState, category: str | None, source: str | None, style: bool, provisional: bool
) -> tuple[float, bytes, str]:
    """(built at, body, etag) of a board's leaderboard (built at: before it was read)."""
    started = time.monotonic()
    if source is not None:
        state.names.source(source)
    doc = state.arena.leaderboard(
        category=category, source=source, style_control=style, provisional=provisional
    )
    body = to_json(doc.to_dict()).encode()
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    return started, body, etag


@router.get("/v1/leaderboard")
async def leaderboard(
    request: Request,
    key: ReadKey,
    category: Category = None,
    source: Source = None,
    style_control: bool = False,
    provisional: Provisional = False,
) -> Response:
    """The document of ``arena leaderboard --format json`` for that board (ETag, 304);
    with ``provisional=true`` that of ``arena leaderboard --provisional``."""
    state: ServeState = request.app.state.serve
    cache_key = (category, source, style_control, provisional)
    hit = state.boards.get(cache_key)
    # a provisional document is old once the watcher has seen a newer board
    fresh = hit is not None and (not provisional or hit[0] >= state.hub.seen_at)
    if hit is None or not fresh or time.monotonic() - hit[0] > state.picker.rule.refresh:
        try:
            hit = await state.database(
                _document, state, category, source, style_control, provisional
            )
        except (SnapshotError, UnknownBoard) as exc:
            raise ApiError(404, str(exc)) from None
        except OptionError as exc:
            raise ApiError(400, str(exc)) from None
        if len(state.boards) >= 1024:  # bounded: any text may be asked for
            state.boards.clear()
        state.boards[cache_key] = hit
    _, body, etag = hit
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if none_match(request.headers.get("if-none-match", ""), etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


@router.get("/v1/leaderboard/events", response_class=StreamingResponse)
async def leaderboard_events(request: Request, key: ReadKey) -> StreamingResponse:
    """Server-sent events: ``event: provisional`` with a small JSON message (id, board,
    since_snapshot, watermark, battles_since, computed_at, method) each time a new
    provisional board (of any board) is stored; ``: heartbeat`` comments while idle;
    ``event: close`` when the server shuts down. 503 beyond the worker's subscribers."""
    state: ServeState = request.app.state.serve
    queue = state.hub.subscribe()
    return StreamingResponse(
        state.hub.stream(queue),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/v1/models", response_model=None)
async def models(request: Request, key: ReadKey) -> dict[str, Any]:
    """The document of ``arena models --format json``."""
    state: ServeState = request.app.state.serve
    return await state.database(lambda: state.arena.models().to_dict())
