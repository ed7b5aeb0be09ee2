"""The ASGI application of ``arena serve`` (FastAPI on uvicorn; ``pip install 'arena[serve]'``).

Routes (every one but ``/healthz`` and ``/metrics`` needs ``Authorization:
Bearer TOKEN`` of a key whose scope allows it; ``admin`` keys may use all):

* ``GET  /v1/pair``        (vote)   the next pair to show, as a signed battle token;
* ``POST /v1/votes``       (vote)   a vote on that token, acknowledged once committed;
* ``POST /v1/battles``     (ingest) one record or a list, all stored or none;
* ``GET  /v1/leaderboard`` (read)   ``arena leaderboard --format json``, with an ETag;
* ``GET  /v1/models``      (read)   ``arena models --format json``;
* ``GET  /healthz``, ``GET /metrics`` (Prometheus), OpenAPI at ``/docs``.

Every error is ``{"error": {...}}`` JSON with a ``message``.  The server keeps
nothing that the database does not hold except caches (keys for
:data:`KEY_CACHE_SECONDS`, plans and leaderboards until a newer snapshot) and
per-worker rate-limit buckets, so workers and machines can be added freely on
PostgreSQL.  See ``docs/serve.md``.
"""

# No `from __future__ import annotations`: FastAPI reads the route annotations at
# runtime, and the Annotated dependencies are local to create_app.

import asyncio
import hashlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal

from fastapi import Body, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from arena import __version__
from arena.api import open_arena
from arena.boards.snapshots import SnapshotError
from arena.core.defaults import DEFAULT_SEED
from arena.core.formats import to_json
from arena.db.session import current_revision, head_revision
from arena.serve.keys import KeyInfo, authenticate, hash_token
from arena.serve.limits import RateLimiter, retry_after_header
from arena.serve.pairs import NoPair, PairPicker, PairRule
from arena.serve.tokens import TokenError, TokenSigner, load_secret, ticket_id
from arena.serve.writer import (
    BatchJob,
    GroupWriter,
    QueueFull,
    RecordRejected,
    VoteJob,
    parse_records,
)

__all__ = ["ServeConfig", "create_app", "create_app_from_env"]

log = logging.getLogger("arena.serve")

#: How long a key lookup is trusted: a revoked key stops working within this.
KEY_CACHE_SECONDS = 2.0
#: Environment variable carrying the configuration to uvicorn's worker processes.
CONFIG_ENV = "ARENA_SERVE_CONFIG"

ROUTE_SCOPES = {"vote": {"vote", "admin"}, "ingest": {"ingest", "admin"}, "read": {"read", "admin"}}


@dataclass(frozen=True)
class ServeConfig:
    """Everything a worker needs; the CLI flags of ``arena serve``."""

    url: str
    #: requests per second per key unless the key has its own rate (0: unlimited)
    rate: float = 20.0
    #: seconds a battle token stays valid
    battle_ttl: float = 3600.0
    #: largest request body in bytes
    max_body: int = 8 * 1024 * 1024
    #: most records one POST /v1/battles may carry
    max_records: int = 10_000
    #: jobs waiting for the writer before requests get 503
    max_queue: int = 10_000
    seed: int | None = DEFAULT_SEED
    #: mix the process id into the seed (several workers must not draw alike)
    per_worker_seed: bool = False
    new_share: float = 0.25
    uniform_share: float = 0.1
    min_battles: int = 50

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> "ServeConfig":
        return cls(**json.loads(os.environ[CONFIG_ENV]))


class ApiError(Exception):
    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None, **more):
        super().__init__(message)
        self.status = status
        self.body = {"message": message, **more}
        self.headers = headers or {}


# -- request bodies (they give /docs its schemas) --------------------------------
class VoteIn(BaseModel):
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


class _Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "arena_requests",
            "HTTP requests by route, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "arena_request_seconds",
            "Request latency by route",
            ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=self.registry,
        )
        self.votes = Counter("arena_votes_stored", "Votes committed", registry=self.registry)
        self.battles = Counter(
            "arena_battles_stored", "Battles committed (votes included)", registry=self.registry
        )
        self.rejects = Counter(
            "arena_rejects", "Requests refused, by reason", ["reason"], registry=self.registry
        )
        self.queue = Gauge(
            "arena_write_queue", "Writes waiting for a commit", registry=self.registry
        )


class _State:
    """What one worker holds: the engine, caches, the writer thread."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        #: the front door: leaderboards and models come from the same calls as the CLI
        self.arena = open_arena(config.url)
        self.engine = self.arena.engine()
        self.signer = TokenSigner(load_secret(self.engine), ttl=config.battle_ttl)
        self.metrics = _Metrics()
        self.limiter = RateLimiter()
        self.picker = PairPicker(
            self.engine,
            rule=PairRule(
                new_share=config.new_share,
                uniform_share=config.uniform_share,
                min_battles=config.min_battles,
            ),
            seed=(
                [config.seed, os.getpid()]
                if config.per_worker_seed and config.seed is not None
                else config.seed
            ),
        )
        self.writer = GroupWriter(
            self.engine, max_queue=config.max_queue, on_commit=self._committed
        )
        self.keys: dict[str, tuple[KeyInfo | None, float]] = {}
        self.boards: dict[tuple, tuple[float, bytes, str]] = {}

    def _committed(self, votes: int, battles: int) -> None:
        self.metrics.votes.inc(votes)
        self.metrics.battles.inc(battles)

    def key_for(self, token: str) -> KeyInfo | None:
        digest = hash_token(token)
        hit = self.keys.get(digest)
        now = time.monotonic()
        if hit is not None and now - hit[1] < KEY_CACHE_SECONDS:
            return hit[0]
        with self.engine.connect() as conn:
            info = authenticate(conn, token)
        self.keys[digest] = (info, now)
        return info

    def close(self) -> None:
        self.writer.close()
        self.arena.close()


def _invalid_body(errors: list) -> ApiError:
    """422 naming the first invalid field of a request body (pydantic's errors)."""
    first = errors[0] if errors else {}
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    return ApiError(
        422, first.get("msg", "invalid request"), index=None, field=".".join(loc) or None
    )


def _error(status: int, body: dict, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def create_app(config: ServeConfig) -> FastAPI:
    """The application for one arena database (one :class:`_State` per worker process)."""
    state_box: dict[str, _State] = {}

    async def lifespan(app: FastAPI):
        state_box["s"] = await run_in_threadpool(_State, config)
        try:
            yield
        finally:
            # uvicorn has drained in-flight requests; store what is still queued
            await run_in_threadpool(state_box["s"].close)

    app = FastAPI(
        title="arena serve",
        version=__version__,
        description="Pairs out, votes in, leaderboards with honest intervals.",
        lifespan=lifespan,
    )

    def state() -> _State:
        return state_box["s"]

    # -- errors as {"error": ...} JSON ---------------------------------------------
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        state().metrics.rejects.labels(str(exc.status)).inc()
        return _error(exc.status, exc.body, exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        state().metrics.rejects.labels("500").inc()
        return _error(
            500, {"message": f"internal error ({type(exc).__name__}); see the server log"}
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        error = _invalid_body(list(exc.errors()))
        state().metrics.rejects.labels("422").inc()
        return _error(422, error.body)

    #: POST routes answered by plain ASGI handlers before routing (see vote_asgi)
    fast_routes: dict[str, Any] = {}

    # -- body size and metrics, before anything else ---------------------------------
    # A plain ASGI middleware: Starlette's @app.middleware("http") runs every request
    # in an extra task with memory streams, a large share of a vote's CPU.
    class LimitsAndMetrics:
        def __init__(self, app) -> None:
            self.app = app

        async def __call__(self, scope, receive, send) -> None:
            if scope["type"] != "http":
                await self.app(scope, receive, send)
                return
            start = time.perf_counter()
            method = scope["method"]
            length = None
            for name, value in scope["headers"]:
                if name == b"content-length":
                    length = value.decode("latin-1")
                    break
            status = 500
            path: str | None = None

            async def send_status(message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = message["status"]
                await send(message)

            try:
                if length is not None and (not length.isdigit() or int(length) > config.max_body):
                    response = _error(
                        413, {"message": f"request body over {config.max_body} bytes"}
                    )
                    await response(scope, receive, send_status)
                elif length is None and method in ("POST", "PUT", "PATCH"):
                    response = _error(411, {"message": "Content-Length is required"})
                    await response(scope, receive, send_status)
                elif method == "POST" and scope["path"] in fast_routes:
                    path = scope["path"]
                    await fast_routes[path](scope, receive, send_status)
                else:
                    await self.app(scope, receive, send_status)
            finally:
                if path is None:
                    path = getattr(scope.get("route"), "path", "other")
                s = state_box.get("s")
                if s is not None:
                    s.metrics.requests.labels(path, method, str(status)).inc()
                    s.metrics.latency.labels(path).observe(time.perf_counter() - start)

    app.add_middleware(LimitsAndMetrics)

    # -- auth ------------------------------------------------------------------------
    def requires(scope: str):
        allowed = ROUTE_SCOPES[scope]

        async def check(request: Request) -> KeyInfo:
            header = request.headers.get("authorization", "")
            kind, _, token = header.partition(" ")
            if kind.lower() != "bearer" or not token:
                raise ApiError(
                    401,
                    "missing bearer token (Authorization: Bearer TOKEN; `arena keys create`)",
                    headers={"WWW-Authenticate": "Bearer"},
                )
            s = state()
            info = s.key_for(token.strip())
            if info is None:
                raise ApiError(
                    401, "unknown or revoked token", headers={"WWW-Authenticate": "Bearer"}
                )
            if info.scope not in allowed:
                raise ApiError(
                    403, f"key {info.name!r} has scope {info.scope!r}; this route needs {scope!r}"
                )
            rate = config.rate if info.rate is None else info.rate
            wait = s.limiter.take(info.id, rate)
            if wait > 0:
                raise ApiError(
                    429,
                    f"key {info.name!r} is over its rate of {rate:g} requests per second",
                    headers={"Retry-After": retry_after_header(wait)},
                )
            return info

        return check

    VoteKey = Annotated[KeyInfo, Depends(requires("vote"))]
    IngestKey = Annotated[KeyInfo, Depends(requires("ingest"))]
    ReadKey = Annotated[KeyInfo, Depends(requires("read"))]
    Category = Annotated[str | None, Query(description="Board: a category key.")]
    Source = Annotated[str | None, Query(description="Board: a source.")]
    Records = Annotated[
        dict[str, Any] | list[Any],
        Body(description="One battle record or a list, in any shape `arena ingest` reads as JSON."),
    ]

    async def _stored(job) -> Any:
        s = state()
        try:
            future = s.writer.submit(job)
        except QueueFull as exc:
            raise ApiError(503, str(exc), headers={"Retry-After": "1"}) from None
        s.metrics.queue.set(s.writer.depth())
        return await asyncio.wrap_future(future)

    # -- routes ------------------------------------------------------------------------
    @app.get("/healthz", tags=["operations"])
    async def healthz():
        """200 when the database answers and its schema is this arena's; 503 otherwise."""

        def probe() -> tuple[bool, str | None]:
            with state().engine.connect() as conn:
                conn.execute(text("SELECT 1"))
                return True, current_revision(conn)

        try:
            _, revision = await run_in_threadpool(probe)
        except Exception as exc:  # any database failure is "not healthy"
            return _error(503, {"message": f"database unreachable: {type(exc).__name__}"})
        if revision != head_revision():
            return _error(
                503, {"message": f"schema at {revision}, this arena needs {head_revision()}"}
            )
        return {"status": "ok", "revision": revision, "version": __version__}

    @app.get("/metrics", tags=["operations"], include_in_schema=False)
    async def metrics():
        s = state()
        s.metrics.queue.set(s.writer.depth())
        return Response(generate_latest(s.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/v1/pair", response_model=PairOut, tags=["vote"])
    async def pair(key: VoteKey, category: Category = None, source: Source = None):
        """The next pair to show, drawn by the planner's rule (``docs/serve.md``), sides at random."""
        s = state()
        try:
            model_a, model_b = await run_in_threadpool(
                s.picker.pick, category=category, source=source
            )
        except SnapshotError as exc:
            raise ApiError(404, str(exc)) from None
        except NoPair as exc:
            raise ApiError(409, str(exc)) from None
        token, ticket = s.signer.issue(
            model_a, model_b, key_id=key.id, category=category, source=source
        )
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ticket.expires_at))
        return {"battle": token, "model_a": model_a, "model_b": model_b, "expires_at": expires}

    async def _vote(key: KeyInfo, battle: str, winner: str, voter, conv_metadata) -> dict:
        s = state()
        try:
            ticket = s.signer.verify(battle)
        except TokenError as exc:
            raise ApiError(403 if exc.kind == "forged" else 410, str(exc)) from None
        if ticket.key_id != key.id:
            raise ApiError(403, "this battle token was issued to another key")
        record: dict[str, Any] = {
            "id": ticket_id(ticket),
            "model_a": ticket.model_a,
            "model_b": ticket.model_b,
            "winner": winner,
        }
        if voter is not None:
            record["judge"] = voter
        if ticket.category is not None:
            record["category"] = ticket.category
        if conv_metadata is not None:
            record["conv_metadata"] = conv_metadata
        try:
            [battles] = parse_records([record])
        except RecordRejected as exc:
            raise ApiError(422, exc.message, index=None, field=exc.field) from None
        outcome = await _stored(VoteJob(battles[0], key.name))
        if outcome == "used":
            raise ApiError(409, "this battle token was used already; nothing was stored")
        return {"stored": True, "id": record["id"]}

    @app.post("/v1/votes", response_model=VoteOut, status_code=201, tags=["vote"])
    async def vote(body: VoteIn, key: VoteKey):
        """Store a vote on a pair from ``GET /v1/pair``; answered once it is committed.

        409: the token was used already; 410: it expired; 403: it is forged or was
        issued to another key.  Nothing is stored in any of those cases.
        """
        return await _vote(key, body.battle, body.winner, body.voter, body.conv_metadata)

    # POST /v1/votes is answered by this plain ASGI handler, called by the middleware
    # before routing (the FastAPI route above stays for the OpenAPI schema at /docs):
    # the same key check, the same VoteIn schema and the same answers, without
    # FastAPI's routing, dependency solving, exception middleware and response
    # validation, which were a large share of a vote's CPU (benchmarks/bench_serve.py).
    vote_key = requires("vote")

    async def vote_asgi(scope, receive, send) -> None:
        request = Request(scope, receive)
        try:
            key = await vote_key(request)
            try:  # the documented schema, checked by pydantic's JSON parser
                body = VoteIn.model_validate_json(await request.body())
            except ValidationError as exc:
                raise _invalid_body(exc.errors()) from None
            out = await _vote(key, body.battle, body.winner, body.voter, body.conv_metadata)
            response: Response = Response(
                json.dumps(out), status_code=201, media_type="application/json"
            )
        except ApiError as exc:
            state().metrics.rejects.labels(str(exc.status)).inc()
            response = _error(exc.status, exc.body, exc.headers)
        await response(scope, receive, send)

    fast_routes["/v1/votes"] = vote_asgi

    @app.post("/v1/battles", response_model=BatchOut, tags=["ingest"])
    async def battles(payload: Records, key: IngestKey):
        """Store battles with the file ingester's rules: all of the request, or none of it.

        Same id and content as a stored battle: counted as a duplicate; same id,
        other content: 409; an invalid record: 422 naming its index and field.
        """
        records = payload if isinstance(payload, list) else [payload]
        if len(records) > config.max_records:
            raise ApiError(413, f"{len(records)} records; at most {config.max_records} a request")
        try:
            parsed = await run_in_threadpool(parse_records, records)
        except RecordRejected as exc:
            raise ApiError(422, exc.message, index=exc.index, field=exc.field) from None
        try:
            result = await _stored(BatchJob(parsed, key.name))
        except RecordRejected as exc:
            raise ApiError(409, exc.message, index=exc.index, field=exc.field) from None
        return {"inserted": result.inserted, "duplicates": result.duplicates}

    @app.get("/v1/leaderboard", tags=["read"])
    async def leaderboard(
        request: Request,
        key: ReadKey,
        category: Category = None,
        source: Source = None,
        style_control: bool = False,
    ):
        """The document of ``arena leaderboard --format json`` for that board (ETag, 304)."""
        s = state()
        cache_key = (category, source, style_control)
        hit = s.boards.get(cache_key)
        if hit is None or time.monotonic() - hit[0] > s.picker.rule.refresh:

            def build() -> tuple[float, bytes, str]:
                doc = s.arena.leaderboard(
                    category=category, source=source, style_control=style_control
                ).to_dict()
                body = to_json(doc).encode()
                etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
                return time.monotonic(), body, etag

            try:
                hit = await run_in_threadpool(build)
            except SnapshotError as exc:
                raise ApiError(404, str(exc)) from None
            s.boards[cache_key] = hit
        _, body, etag = hit
        headers = {"ETag": etag, "Cache-Control": "no-cache"}
        match = request.headers.get("if-none-match", "")
        if etag in [t.strip() for t in match.split(",")] or match.strip() == "*":
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    @app.get("/v1/models", tags=["read"])
    async def models(key: ReadKey):
        """The document of ``arena models --format json``."""
        return await run_in_threadpool(lambda: state().arena.models().to_dict())

    return app


def create_app_from_env() -> FastAPI:
    """uvicorn's factory in each worker process (``arena serve --workers N``)."""
    return create_app(ServeConfig.from_env())
