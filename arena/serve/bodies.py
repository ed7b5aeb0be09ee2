"""Request bodies: JSON as ``arena ingest`` reads it, and the schemas ``/docs`` shows.

Both POST routes read their body here, so they agree on what they accept:
``Content-Type`` may be absent or a JSON media type (``application/json``,
``application/*+json``); anything else is 415.  An object naming one key twice
is refused with 422 naming the key, as ``arena ingest`` refuses the same record
(a JSON parser would silently keep the last value).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from arena.ingest.json_lines import DuplicateKey, unique_keys
from arena.serve.errors import ApiError, invalid_body

__all__ = [
    "BatchOut",
    "PairOut",
    "VoteIn",
    "VoteOut",
    "json_body",
    "request_schema",
    "vote_body",
]


class VoteIn(BaseModel):
    """The body of ``POST /v1/votes``."""

    battle: str = Field(description="The token GET /v1/pair returned.")
    winner: Literal["model_a", "model_b", "tie", "both_bad"] = Field(
        description="model_a and model_b as the pair named them (the order shown)."
    )
    voter: str | None = Field(default=None, description="Opaque id of who voted (stored as judge).")
    conv_metadata: dict[str, Any] | None = Field(
        default=None, description="LMArena's style metadata of the two answers (optional)."
    )


class PairOut(BaseModel):
    battle: str
    model_a: str
    model_b: str
    expires_at: str


class VoteOut(BaseModel):
    stored: bool
    id: str


class BatchOut(BaseModel):
    inserted: int
    duplicates: int


#: The body of ``POST /v1/battles`` as /docs shows it.
BATTLES_SCHEMA: dict[str, Any] = {
    "description": "One battle record or a list, in any shape `arena ingest` reads as JSON.",
    "oneOf": [{"type": "object"}, {"type": "array", "items": {"type": "object"}}],
}


def request_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` of a route reading its own JSON body: the body's schema."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": schema}},
        }
    }


#: One decoder for every body (json.loads with a hook builds a new one per call).
_DECODER = json.JSONDecoder(object_pairs_hook=unique_keys)


def _check_content_type(content_type: str | None) -> None:
    if content_type is None:
        return
    media = content_type.partition(";")[0].strip().lower()
    if media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    ):
        return
    raise ApiError(415, f"Content-Type {media!r} is not JSON; send application/json")


def json_body(body: bytes, content_type: str | None) -> Any:
    """The JSON document of a request body.

    Raises :class:`ApiError`: 415 a non-JSON ``Content-Type``, 422 text that is
    not JSON or an object with a repeated key (``field`` names the key).
    """
    _check_content_type(content_type)
    try:
        return _DECODER.decode(body.decode("utf-8"))
    except DuplicateKey as exc:
        raise ApiError(422, str(exc), index=None, field=exc.key) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8
        raise ApiError(422, f"the body is not JSON: {exc}", index=None, field=None) from None


def vote_body(body: bytes, content_type: str | None) -> VoteIn:
    """The vote of a ``POST /v1/votes`` body; 422 naming the first invalid field."""
    doc = json_body(body, content_type)
    try:
        return VoteIn.model_validate(doc)
    except ValidationError as exc:
        raise invalid_body(exc.errors()) from None
