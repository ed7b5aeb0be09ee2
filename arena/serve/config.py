"""What ``arena serve`` is configured with: one frozen value, the CLI's flags.

The CLI builds it; uvicorn's worker processes read it back from the
environment (:data:`CONFIG_ENV`), so every worker runs with the same settings.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

from arena.core.defaults import (
    DEFAULT_ANONYMOUS_RATE,
    DEFAULT_BATTLE_TTL,
    DEFAULT_MAX_BATTLES,
    DEFAULT_MAX_BODY,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_SUBSCRIBERS,
    DEFAULT_MIN_BATTLES,
    DEFAULT_PROVISIONAL_METHOD,
    DEFAULT_RATE,
    DEFAULT_REFIT_EVERY,
    DEFAULT_SEED,
)
from arena.db.session import DEFAULT_WAIT

__all__ = ["CONFIG_ENV", "ServeConfig"]

#: Environment variable carrying the configuration to uvicorn's worker processes.
CONFIG_ENV = "ARENA_SERVE_CONFIG"


@dataclass(frozen=True)
class ServeConfig:
    """Everything a worker needs; the flags of ``arena serve`` (``docs/serve.md``).

    Attributes
    ----------
    url
        The arena database.
    rate
        Requests per second per key unless the key has its own rate (0: unlimited).
    anonymous_rate
        Requests per second per client address that carry no valid key: missing,
        malformed, unknown or revoked tokens (0: unlimited).  Checked before any
        database work, so failing authentication stays cheap.
    battle_ttl
        Seconds a battle token stays valid.
    max_body
        Largest request body in bytes.
    max_records
        Most records one ``POST /v1/battles`` may carry.
    max_battles
        Most battles one ``POST /v1/battles`` may expand to (aggregated rows
        stand for many battles each).
    max_header_bytes
        Largest request line plus headers in bytes (431 beyond).
    max_headers
        Most header fields one request may carry (431 beyond).
    key_cache_size
        Known keys a worker remembers (least recently used dropped first).
    max_queue
        Jobs waiting for the writer before requests get 503.
    wait
        Seconds a request waits for the database's write lock (``--wait``), then 503.
    seed
        Seed of the pair draws.
    per_worker_seed
        Mix the process id into the seed (several workers must not draw alike).
    refit_every
        Seconds between two looks for new votes to refit the provisional board
        (one process per arena refits; 0: none).
    provisional_method
        Analytic intervals of the provisional board (sandwich or fisher).
    max_subscribers
        Most open ``/v1/leaderboard/events`` streams per worker (503 beyond).
    heartbeat
        Seconds between two heartbeat comments on an idle event stream.
    """

    url: str
    rate: float = DEFAULT_RATE
    anonymous_rate: float = DEFAULT_ANONYMOUS_RATE
    battle_ttl: float = DEFAULT_BATTLE_TTL
    max_body: int = DEFAULT_MAX_BODY
    max_records: int = 10_000
    max_battles: int = DEFAULT_MAX_BATTLES
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    max_headers: int = 100
    key_cache_size: int = 10_000
    max_queue: int = 10_000
    wait: float = DEFAULT_WAIT
    seed: int | None = DEFAULT_SEED
    per_worker_seed: bool = False
    new_share: float = 0.25
    uniform_share: float = 0.1
    min_battles: int = DEFAULT_MIN_BATTLES
    refit_every: float = DEFAULT_REFIT_EVERY
    provisional_method: str = DEFAULT_PROVISIONAL_METHOD
    max_subscribers: int = DEFAULT_MAX_SUBSCRIBERS
    heartbeat: float = 15.0

    def to_env(self) -> str:
        """The configuration as the text of :data:`CONFIG_ENV`."""
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServeConfig:
        """The configuration the CLI left in :data:`CONFIG_ENV`."""
        return cls(**json.loads(os.environ[CONFIG_ENV]))
