"""The front door's ``demo``: the bundled data ingested, rated and published in one call.

:class:`DemoMethods` is part of :class:`arena.api.Arena` (``arena demo``). Two
sources, never pooled: LMArena's human votes (the overall board, its categories
and the derived Hard Prompts category, and their source board ``source:lmarena-140k``)
and ko-arena-hard's LLM-judge verdicts (their own boards, raw and style-controlled).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from arena.api.results import Ingested, Published
    from arena.ingest.loader import IngestReport

__all__ = ["DemoMethods", "DemoResult"]


@dataclass(frozen=True)
class DemoResult:
    """``arena demo``: what each bundled file added, the snapshots and the site."""

    files: tuple[tuple[str, IngestReport], ...]
    #: a line when the demo defined (or re-linked) the Hard Prompts category, else None
    derived: str | None
    snapshot_ids: tuple[int, ...]
    seconds: float
    published: Published

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": [
                {
                    "file": name,
                    "inserted": r.inserted,
                    "excluded": r.excluded,
                    "already_ingested_as": r.already_ingested_as,
                }
                for name, r in self.files
            ],
            "derived": self.derived,
            "snapshot_ids": list(self.snapshot_ids),
            "seconds": self.seconds,
            "site": self.published.to_dict(),
        }


class DemoMethods:
    """``demo`` of :class:`arena.api.Arena` (mixed into it)."""

    def engine(self, *, create: bool = False) -> Engine:  # pragma: no cover - Arena's
        raise NotImplementedError

    def ingest(self, *args: Any, **kwargs: Any) -> Ingested:  # pragma: no cover - Arena's
        raise NotImplementedError

    def publish(self, *args: Any, **kwargs: Any) -> Published:  # pragma: no cover - Arena's
        raise NotImplementedError

    def demo(
        self,
        out_dir: str | PathLike[str],
        *,
        rounds: int | None = None,
        progress: Callable[[str], None] | None = None,
        file_progress: Callable[[str, int, int], None] | None = None,
    ) -> DemoResult:
        """Ingest the bundled data, rebuild every demo board and publish the site.

        Running it again ingests nothing new and adds snapshots. ``progress``
        hears each phase, ``file_progress`` each file's bytes read (as
        :meth:`ingest`'s ``progress``).
        """
        from arena.core import resources
        from arena.db.session import take_write_lock
        from arena.ingest.derived import define
        from arena.jobs.rebuild import RebuildError, RebuildOptions, rebuild
        from arena.store.derived import HARD_PROMPTS, load_rules

        say = progress or (lambda _m: None)
        engine = self.engine(create=True)
        # LMArena's Hard Prompts (>= 6 of the 7 criteria), defined before the ingest
        # links it, and re-linked on a database where it is missing or differs.
        derived = None
        with engine.begin() as conn:
            take_write_lock(conn, "derive a category")
            if HARD_PROMPTS not in load_rules(conn):
                derived = f"categories: {HARD_PROMPTS.key} = {HARD_PROMPTS.describe()}"
                say(derived)
                define(conn, HARD_PROMPTS)
        files = []
        for source, path in resources.DEMO_SOURCES:
            data = path()
            (report,) = self.ingest(data, source=source, progress=file_progress).files
            files.append((data.name, report))
        self._annotate_demo_models(engine, resources.demo_models())
        # One model spelled two ways by the two sources: matched by `arena agreement`.
        self._alias_demo_models(engine, resources.demo_aliases())
        # The human votes on the overall board and its categories; the judge's verdicts
        # (the only battles that name a judge) on their own source boards.
        runs = [(RebuildOptions(rounds=rounds, exclude_judges=(resources.DEMO_JUDGE,)), True)]
        # Every source on its own board too (`source:NAME`): the human votes' board holds
        # the overall board's battles, so that `arena agreement --reference
        # source=lmarena-140k --candidate source=ko-arena-hard` compares two sources.
        runs += [
            (RebuildOptions(rounds=rounds, source=source), False)
            for source, _ in resources.DEMO_SOURCES
        ]
        ids: list[int] = []
        seconds = 0.0
        for opts, all_categories in runs:
            try:
                result = rebuild(engine, opts, all_categories=all_categories, progress=say)
            except RebuildError as exc:
                raise RebuildError(f"{exc}; no snapshot was written") from None
            ids += result.snapshot_ids
            seconds += result.seconds
        published = self.publish(out_dir, attribution=resources.DEMO_ATTRIBUTION, progress=say)
        return DemoResult(
            files=tuple(files),
            derived=derived,
            snapshot_ids=tuple(ids),
            seconds=seconds,
            published=published,
        )

    @staticmethod
    def _annotate_demo_models(engine: Engine, path: PathLike[str]) -> None:
        """Organisation, licence and link of the demo's models (those in the database)."""
        from sqlalchemy import select

        from arena.db.models import Model
        from arena.store.annotate import annotate, read_annotations

        with engine.begin() as conn:
            known = set(conn.execute(select(Model.name)).scalars())
            annotate(conn, [a for a in read_annotations(path) if a.model in known])

    @staticmethod
    def _alias_demo_models(engine: Engine, path: PathLike[str]) -> None:
        """The bundled aliases whose two models are in the database."""
        from sqlalchemy import select

        from arena.db.models import Model
        from arena.db.session import take_write_lock
        from arena.store.aliases import define_aliases, read_aliases

        with engine.begin() as conn:
            take_write_lock(conn, "alias models")
            known = set(conn.execute(select(Model.name)).scalars())
            define_aliases(conn, [a for a in read_aliases(path) if {a.alias, a.canonical} <= known])
