"""arena: Bradley-Terry leaderboards with honest intervals, from a battle store to a static page.

``import arena`` is enough: :func:`open` returns an :class:`Arena` whose methods
are the ``arena`` commands, with the same options and defaults, each returning
a frozen result whose ``to_dict()`` is the command's ``--format json``::

    import arena

    db = arena.open("sqlite:///arena.db")  # --db, else $ARENA_DATABASE_URL, else this
    db.ingest("battles.csv")
    db.rebuild(rounds=1000, seed=20240501)
    print(db.leaderboard().to_dict()["rows"][0])
    print(db.compare("model-a", "model-b").verdict)

Exports
-------
open
    Open an arena database (:func:`arena.api.open_arena`).
Arena
    The database object; methods ``ingest``, ``rebuild``, ``leaderboard``,
    ``compare``, ``diff``, ``snapshots``, ``prune_snapshots``, ``audit``,
    ``plan``, ``plan_power``, ``publish``, ``nightly``, ``models``,
    ``annotate``, ``alias``, ``unalias``, ``aliases``, ``sampling``, ``categories``,
    ``label_category``.
demo_data
    The bundled LMArena votes (135,634 battles, CC-BY-4.0).
evaluate, FileEvaluation
    ``arena eval`` on per-item result files (no database):
    :func:`arena.evals.files.evaluate_files`.
irt_fit, IrtFit, irt_select, IrtSelection, irt_adapt, IrtAdaptive
    ``arena irt fit / select / adapt``: :func:`arena.evals.irt_files.irt_fit`,
    :func:`~arena.evals.irt_files.irt_select`, :func:`~arena.evals.irt_files.irt_adapt`.
ArenaError, OptionError
    The root of every error a user can cause (catch this one), and its
    subclass for a bad option value, named by its parameter.
bootstrap_ci, paired_bootstrap, significant
    The seed design's per-item accuracy intervals, with its signatures
    (``n_boot=2000``, positional ``rng``): :mod:`arena.evals.bootstrap`.
Ingested, Rebuilt, Leaderboard, Comparison, DiffResult, Snapshots, Pruned,
Agreement, AuditResult, PlanWeights, PlanDraws, PlanPower, Published, NightResult, Models,
Annotated, Aliased, Aliases, Categories, Labelled, Sampling
    The methods' results (:mod:`arena.api.results`).
__version__
    The package version.

The names are loaded on first use, so ``import arena`` stays cheap (the
command line's ``--help`` needs no database driver).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.core.version import __version__

if TYPE_CHECKING:
    from arena.api import (
        Agreement,
        Aliased,
        Aliases,
        Annotated,
        Arena,
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
        Sampling,
        Snapshots,
    )
    from arena.api import open_arena as open  # noqa: A004 -- arena.open, as sqlite-utils
    from arena.core.errors import ArenaError, OptionError
    from arena.core.resources import demo_data
    from arena.evals.bootstrap import bootstrap_ci, paired_bootstrap, significant
    from arena.evals.files import FileEvaluation
    from arena.evals.files import evaluate_files as evaluate
    from arena.evals.irt_files import (
        IrtAdaptive,
        IrtFit,
        IrtSelection,
        irt_adapt,
        irt_fit,
        irt_select,
    )

_API = (
    "Agreement",
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
)

__all__ = [
    "Agreement",
    "Aliased",
    "Aliases",
    "Annotated",
    "Arena",
    "ArenaError",
    "AuditResult",
    "Categories",
    "Comparison",
    "DiffResult",
    "FileEvaluation",
    "Ingested",
    "IrtAdaptive",
    "IrtFit",
    "IrtSelection",
    "Labelled",
    "Leaderboard",
    "Models",
    "NightResult",
    "OptionError",
    "PlanDraws",
    "PlanPower",
    "PlanWeights",
    "Published",
    "Pruned",
    "Rebuilt",
    "Sampling",
    "Snapshots",
    "__version__",
    "bootstrap_ci",
    "demo_data",
    "evaluate",
    "irt_adapt",
    "irt_fit",
    "irt_select",
    "open",
    "paired_bootstrap",
    "significant",
]


def __getattr__(name: str) -> Any:
    if name == "open":
        from arena.api import open_arena

        return open_arena
    if name in ("ArenaError", "OptionError"):
        import arena.core.errors

        return getattr(arena.core.errors, name)
    if name in ("bootstrap_ci", "paired_bootstrap", "significant"):
        import arena.evals.bootstrap

        return getattr(arena.evals.bootstrap, name)
    if name == "demo_data":
        from arena.core.resources import demo_data

        return demo_data
    if name in ("irt_fit", "IrtFit", "irt_select", "IrtSelection", "irt_adapt", "IrtAdaptive"):
        import arena.evals.irt_files

        return getattr(arena.evals.irt_files, name)
    if name in ("evaluate", "FileEvaluation"):
        import arena.evals.files

        return getattr(arena.evals.files, "evaluate_files" if name == "evaluate" else name)
    if name in _API:
        import arena.api

        return getattr(arena.api, name)
    raise AttributeError(f"module 'arena' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
