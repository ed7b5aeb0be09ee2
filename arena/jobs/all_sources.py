"""``arena rebuild --all-sources``: the overall board and one board per source.

Each source is rated on its own board (``source:NAME``, with its categories
under ``--all-categories`` and its style-controlled board where its battles
carry style metadata), so votes and judge verdicts ingested with different
``--source`` names are never pooled unless the overall board is read. Each
:func:`arena.jobs.rebuild.rebuild` call writes its boards in one transaction;
a failing source stops the run and leaves the boards already written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sqlalchemy import Engine

from arena.core.defaults import DEFAULT_READ
from arena.jobs.rebuild import (
    RebuildOptionError,
    RebuildOptions,
    RebuildResult,
    rebuild,
)
from arena.store.sources import sources


def rebuild_all_sources(
    engine: Engine,
    opts: RebuildOptions,
    *,
    all_categories: bool = False,
    progress: Callable[[str], None] | None = None,
    max_models: int | None = None,
    read: str = DEFAULT_READ,
    max_boards: int | None = None,
) -> RebuildResult:
    """Rebuild the board of ``opts`` (overall unless it selects a category) and
    the same board of every named source; one result listing every snapshot.

    Raises
    ------
    RebuildError
        ``opts`` already selects a source, no battle has a source, or a rebuild failed.
    """
    if opts.source is not None:
        raise RebuildOptionError(
            "all_sources", "{name} rates every source: give it without {source}", also=("source",)
        )
    with engine.connect() as conn:
        names = sources(conn)
    if not names:
        raise RebuildOptionError(
            "all_sources",
            "{name}: no battle was ingested with a {source} name, so there is one source",
            also=("source",),
        )
    say = progress or (lambda _msg: None)
    kwargs: dict[str, Any] = {
        "all_categories": all_categories,
        "max_models": max_models,
        "read": read,
        "max_boards": max_boards,
    }
    out = rebuild(engine, opts, progress=progress, **kwargs)
    for name in names:
        say(f"source {name}: rating its own board(s)")
        part = rebuild(engine, replace(opts, source=name), progress=progress, **kwargs)
        out.snapshot_ids += part.snapshot_ids
        out.boards += part.boards
        out.warnings += part.warnings
        out.seconds += part.seconds
    return out
