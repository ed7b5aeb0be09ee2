"""The front door: :func:`open_arena` (``arena.open``), :class:`Arena` and its results.

See :mod:`arena.api.arena`; ``import arena`` exports the same names.
"""

from __future__ import annotations

from arena.api.arena import Arena, database_url, open_arena, rebuild_options
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

__all__ = [
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
    "Snapshots",
    "database_url",
    "open_arena",
    "rebuild_options",
]
