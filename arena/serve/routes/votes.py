"""``GET /v1/pair`` and ``POST /v1/votes``: pairs out, votes in.

The vote route is the one vote path, and the hot one (``benchmarks/bench_serve.py``):
it takes the bare request, checks the key without dependency solving, reads the
body with :func:`arena.serve.bodies.vote_body` and answers with a ready
``Response`` (no response-model validation), so the middleware can call it
without FastAPI's routing (:class:`arena.serve.middleware.HotRoute`).  ``/docs``
shows its body and answer schemas (``openapi_extra``, ``responses``).
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from arena.boards.snapshots import SnapshotError
from arena.serve.auth import client_address, requires
from arena.serve.boards import UnknownBoard
from arena.serve.bodies import PairOut, VoteIn, VoteOut, request_schema, vote_body
from arena.serve.errors import ApiError
from arena.serve.keys import KeyInfo
from arena.serve.pairs import NoPair
from arena.serve.state import ServeState
from arena.serve.tokens import TokenError, ticket_id
from arena.serve.writer import RecordRejected, VoteJob, parse_records

__all__ = ["router"]

router = APIRouter(tags=["vote"])

VoteKey = Annotated[KeyInfo, Depends(requires("vote"))]
Category = Annotated[str | None, Query(description="Board: a category key or label.")]
Source = Annotated[str | None, Query(description="Board: a source that has a board.")]


def _draw(
    state: ServeState, category: str | None, source: str | None
) -> tuple[str | None, str, str]:
    """(the category's key, model a, model b) of the next pair of that board."""
    try:
        key = state.names.category(category) if category is not None else None
        if source is not None:
            state.names.source(source)
        model_a, model_b = state.picker.pick(category=key, source=source)
    except (UnknownBoard, SnapshotError) as exc:
        raise ApiError(404, str(exc)) from None
    except NoPair as exc:
        raise ApiError(409, str(exc)) from None
    return key, model_a, model_b


@router.get("/v1/pair", response_model=PairOut)
async def pair(
    request: Request, key: VoteKey, category: Category = None, source: Source = None
) -> dict[str, str]:
    """The next pair to show, drawn by the planner's rule (``docs/serve.md``), sides at random.

    ``category`` is a key or a label (as ``arena leaderboard --category``); the
    vote is stored under the key.  404: no such category, or no board for it.
    """
    state: ServeState = request.app.state.serve
    category_key, model_a, model_b = await state.database(_draw, state, category, source)
    token, ticket = state.signer.issue(
        model_a, model_b, key_id=key.id, category=category_key, source=source
    )
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ticket.expires_at))
    return {"battle": token, "model_a": model_a, "model_b": model_b, "expires_at": expires}


async def _record(state: ServeState, key: KeyInfo, vote: VoteIn) -> dict[str, Any]:
    """The battle record a vote stands for (the pair its token names)."""
    try:
        ticket = state.signer.verify(vote.battle)
    except TokenError as exc:
        raise ApiError(403 if exc.kind == "forged" else 410, str(exc)) from None
    if ticket.key_id != key.id:
        raise ApiError(403, "this battle token was issued to another key")
    record: dict[str, Any] = {
        "id": ticket_id(ticket),
        "model_a": ticket.model_a,
        "model_b": ticket.model_b,
        "winner": vote.winner,
    }
    if vote.voter is not None:
        record["judge"] = vote.voter
    if ticket.category is not None:
        names = state.names
        record["category"] = (
            names.stored_categories(ticket.category)
            if names.rules_fresh()  # the usual case: no hop to the thread pool
            else await state.database(names.stored_categories, ticket.category)
        )
    if vote.conv_metadata is not None:
        record["conv_metadata"] = vote.conv_metadata
    return record


@router.post(
    "/v1/votes",
    status_code=201,
    response_model=None,
    responses={201: {"model": VoteOut, "description": "Stored and committed."}},
    openapi_extra=request_schema(VoteIn.model_json_schema()),
)
async def vote(request: Request) -> Response:
    """Store a vote on a pair from ``GET /v1/pair``; answered once it is committed.

    Needs a ``vote`` key.  409: the token was used already; 410: it expired;
    403: it is forged or was issued to another key.  Nothing is stored in any
    of those cases.
    """
    state: ServeState = request.app.state.serve
    key = await state.auth.key(
        request.headers.get("authorization", ""), client_address(request), "vote"
    )
    body = vote_body(await request.body(), request.headers.get("content-type"))
    record = await _record(state, key, body)
    try:
        [battles] = parse_records([record])
    except RecordRejected as exc:
        raise ApiError(422, exc.message, index=None, field=exc.field) from None
    if await state.store(VoteJob(battles[0], key.name)) == "used":
        raise ApiError(409, "this battle token was used already; nothing was stored")
    out = json.dumps({"stored": True, "id": record["id"]})
    return Response(out, status_code=201, media_type="application/json")
