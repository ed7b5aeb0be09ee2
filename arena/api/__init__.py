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


def user_errors() -> tuple[type[Exception], ...]:
    """The exception types whose message is for the user (one line, no traceback).

    Everything the front door raises for bad input or a state the user can fix:
    a bad option (:class:`~arena.core.errors.OptionError`), a malformed file,
    a missing snapshot, a refused publish, ... The command line turns each
    into ``Error: MESSAGE`` and a non-zero exit. Imported on demand (they live
    in modules that load SQLAlchemy).
    """
    from arena.audit.read import AuditError
    from arena.boards.snapshots import SnapshotError
    from arena.core.errors import OptionError
    from arena.db.session import DatabaseError
    from arena.evals.evaluation import EvaluateError
    from arena.evals.irt_files import IrtError
    from arena.evals.itemeval import ScoreError
    from arena.evals.itemfile import ItemFileError
    from arena.ingest.loader import IngestError
    from arena.jobs.rebuild import RebuildError
    from arena.publish.atomic import PublishError
    from arena.store.annotate import AnnotateError
    from arena.store.categories import CategoryError

    return (
        OptionError,
        DatabaseError,
        IngestError,
        RebuildError,
        SnapshotError,
        AuditError,
        PublishError,
        AnnotateError,
        CategoryError,
        ItemFileError,
        EvaluateError,
        ScoreError,
        IrtError,
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
    "user_errors",
]
