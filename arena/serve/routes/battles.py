"""``POST /v1/battles``: battle batches from judge pipelines, all of a request or none.

Limits, each checked before anything is written: ``--max-body`` bytes (by the
middleware), ``max_records`` records, and ``max_battles`` battles once the
records are expanded (an aggregated row stands for up to
:data:`arena.ingest.shapes.EXPAND_MAX` battles, so a small body can ask for
millions).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from arena.serve.auth import requires
from arena.serve.bodies import BATTLES_SCHEMA, BatchOut, json_body, request_schema
from arena.serve.errors import ApiError
from arena.serve.keys import KeyInfo
from arena.serve.state import ServeState
from arena.serve.writer import BatchJob, RecordRejected, TooManyBattles, parse_records

__all__ = ["router"]

router = APIRouter(tags=["ingest"])

IngestKey = Annotated[KeyInfo, Depends(requires("ingest"))]


@router.post("/v1/battles", response_model=BatchOut, openapi_extra=request_schema(BATTLES_SCHEMA))
async def battles(request: Request, key: IngestKey) -> dict[str, int]:
    """Store battles with the file ingester's rules: all of the request, or none of it.

    Same id and content as a stored battle: counted as a duplicate; same id,
    other content: 409; an invalid record: 422 naming its index and field;
    more records or battles than the server takes: 413 naming the limit.
    """
    state: ServeState = request.app.state.serve
    config = state.config
    payload = json_body(await request.body(), request.headers.get("content-type"))
    records = payload if isinstance(payload, list) else [payload]
    if len(records) > config.max_records:
        raise ApiError(413, f"{len(records)} records; at most {config.max_records} a request")
    try:
        parsed = await run_in_threadpool(parse_records, records, max_battles=config.max_battles)
    except TooManyBattles as exc:
        raise ApiError(413, str(exc), index=exc.index, field=None) from None
    except RecordRejected as exc:
        raise ApiError(422, exc.message, index=exc.index, field=exc.field) from None
    try:
        result = await state.store(BatchJob(parsed, key.name))
    except RecordRejected as exc:
        raise ApiError(409, exc.message, index=exc.index, field=exc.field) from None
    return {"inserted": result.inserted, "duplicates": result.duplicates}
