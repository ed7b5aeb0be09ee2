"""``GET /v1/sampling``: the sampling ledger (``arena sampling --format json``).

Who got how many battles and pairs, per model and organisation, and how the
pair rule drew the pairs this server handed out. The document is rebuilt at
most every :data:`LEDGER_SECONDS` per source: it scans the battles, and a
ledger a few seconds old answers the question as well.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from arena.core.errors import OptionError
from arena.serve.auth import requires
from arena.serve.errors import ApiError
from arena.serve.keys import KeyInfo
from arena.serve.state import ServeState

__all__ = ["LEDGER_SECONDS", "router"]

router = APIRouter(tags=["read"])

ReadKey = Annotated[KeyInfo, Depends(requires("read"))]
Source = Annotated[
    str | None, Query(description="Count only this source's battles (every source if absent).")
]

#: Seconds a ledger document is served from the worker's cache.
LEDGER_SECONDS = 10.0


@router.get("/v1/sampling", response_model=None)
async def sampling(request: Request, key: ReadKey, source: Source = None) -> dict[str, Any]:
    """Battles, share of battles and pairs served per model and organisation (404: no such source).

    Pairs this server counted in the last few seconds reach the ledger at the
    workers' next flush (every 5 s).
    """
    state: ServeState = request.app.state.serve
    cached = state.ledgers.get(source)
    now = time.monotonic()
    if cached is not None and now - cached[0] < LEDGER_SECONDS:
        return cached[1]
    try:
        doc = await state.database(lambda: state.arena.sampling(source=source).to_dict())
    except OptionError as exc:
        raise ApiError(404, str(exc)) from None
    state.ledgers[source] = (now, doc)
    return doc
