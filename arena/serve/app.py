"""The ASGI application of ``arena serve`` (FastAPI on uvicorn; ``pip install 'arena[serve]'``).

Routes (every one but ``/healthz`` and ``/metrics`` needs ``Authorization:
Bearer TOKEN`` of a key whose scope allows it; ``admin`` keys may use all):

* ``GET  /v1/pair``        (vote)   the next pair to show, as a signed battle token;
* ``POST /v1/votes``       (vote)   a vote on that token, acknowledged once committed;
* ``POST /v1/battles``     (ingest) one record or a list, all stored or none;
* ``GET  /v1/leaderboard`` (read)   ``arena leaderboard --format json``, with an ETag
  (``?provisional=true``: the provisional board, :mod:`arena.serve.provisional`);
* ``GET  /v1/leaderboard/events`` (read) server-sent events, one per new provisional board;
* ``GET  /v1/models``      (read)   ``arena models --format json``;
* ``GET  /v1/sampling``    (read)   ``arena sampling --format json``: battles and pairs
  served per model and organisation (``?source=``);
* ``GET  /healthz``, ``GET /metrics`` (Prometheus), OpenAPI at ``/docs``.

This module only assembles: the worker's state (:mod:`arena.serve.state`, on
``app.state.serve``), the body-limit and metrics middleware, the one error
shape (:mod:`arena.serve.errors`) and one router per job
(:mod:`arena.serve.routes`).  See ``docs/serve.md``.
"""

from __future__ import annotations

import os

from fastapi import FastAPI
from fastapi.routing import APIRoute

from arena.core.version import __version__
from arena.serve.config import ServeConfig
from arena.serve.errors import install_error_handlers
from arena.serve.middleware import BodyLimitsAndMetrics, HotRoute
from arena.serve.routes import battles, boards, operations, sampling, votes
from arena.serve.state import lifespan
from arena.serve.workers import end_with_parent

__all__ = ["PARENT_ENV", "create_app", "create_app_from_env"]

#: The routers, one per job.
ROUTERS = (operations, votes, battles, boards, sampling)
#: Endpoints called by the middleware without FastAPI's routing (see
#: arena.serve.middleware): the vote, the one request of every voter.
HOT_ENDPOINTS = (votes.vote,)

#: Environment variable naming the supervisor of ``--workers N`` (workers end with it).
PARENT_ENV = "ARENA_SERVE_PARENT"


def create_app(config: ServeConfig) -> FastAPI:
    """The application for one arena database (its state is built at start-up)."""
    app = FastAPI(
        title="arena serve",
        version=__version__,
        description="Pairs out, votes in, leaderboards with honest intervals.",
        lifespan=lifespan,
    )
    app.state.config = config
    install_error_handlers(app)
    for module in ROUTERS:
        app.include_router(module.router)
    hot = {
        (method, route.path): HotRoute(route, route.endpoint)
        for module in ROUTERS
        for route in module.router.routes  # included without a prefix: the same paths
        if isinstance(route, APIRoute) and route.endpoint in HOT_ENDPOINTS
        for method in route.methods or ()  # an APIRoute always has its set
    }
    app.add_middleware(BodyLimitsAndMetrics, max_body=config.max_body, hot=hot)
    return app


def create_app_from_env() -> FastAPI:
    """uvicorn's factory in each worker process (``arena serve``, any ``--workers``)."""
    parent = os.environ.get(PARENT_ENV)
    if parent is not None and int(parent) != os.getpid():
        end_with_parent(int(parent))
    return create_app(ServeConfig.from_env())
