"""The front door: :func:`open_arena` (``arena.open``), :class:`Arena` and its results.

See :mod:`arena.api.arena`; ``import arena`` exports the same names.
"""

from __future__ import annotations

from typing import Any

from arena.api.aliases import Aliased, Aliases
from arena.api.arena import Arena, database_url, open_arena
from arena.api.results import (
    Annotated,
    AuditResult,
    Categories,
    Comparison,
    DiffResult,
    Ingested,
    Labelled,
    Leaderboard,
    Models,
    NightResult,
    PlanDraws,
    PlanPower,
    PlanWeights,
    Pruned,
    Published,
    Rebuilt,
    Snapshots,
)
from arena.api.sampling import Sampling


def describe_failure(exc: BaseException) -> str | None:
    """One line for a failure of the environment under a command (disk full, lock
    held too long, server gone, ...), or None when it is not one (a bug)."""
    from arena.db.errors import describe

    return describe(exc)


def __getattr__(name: str) -> Any:
    # errors a caller of the nightly job may want to catch by name, loaded on first use
    if name == "Agreement":  # audit.agreement loads scipy.stats: on first use only
        from arena.audit.agreement import Agreement

        return Agreement
    if name == "LockHeld":
        from arena.db.lock import LockHeld

        return LockHeld
    if name in ("NightlyError", "EXIT_LOCKED"):
        import arena.jobs.nightly

        return getattr(arena.jobs.nightly, name)
    raise AttributeError(f"module 'arena.api' has no attribute {name!r}")


__all__ = [
    "Agreement",
    "EXIT_LOCKED",
    "LockHeld",
    "NightlyError",
    "describe_failure",
    "Aliased",
    "Aliases",
    "Annotated",
    "Arena",
    "AuditResult",
    "Categories",
    "Comparison",
    "DiffResult",
    "Ingested",
    "Labelled",
    "Leaderboard",
    "Models",
    "NightResult",
    "PlanDraws",
    "PlanPower",
    "PlanWeights",
    "Published",
    "Pruned",
    "Rebuilt",
    "Sampling",
    "Snapshots",
    "database_url",
    "open_arena",
]
