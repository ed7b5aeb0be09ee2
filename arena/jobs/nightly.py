"""The nightly job: ingest a drop folder, rebuild every board, publish the site.

One call of :func:`nightly` does what an operator would otherwise chain from
four commands, under a database-wide lock (:mod:`arena.db.lock`) so that two
overlapping runs never interleave. One rejected file does not stop the night;
a failed rebuild or publish leaves the previous snapshots and site untouched.
The outcome is one of the exit codes below, meant for monitoring.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, func, select

from arena.db.lock import database_lock
from arena.db.models import Battle, Snapshot
from arena.db.session import take_write_lock
from arena.ingest import IngestError, ingest_file
from arena.jobs.rebuild import RebuildError, RebuildOptions, rebuild
from arena.jobs.retention import PruneResult, prune_snapshots
from arena.publish.site import PublishError, publish_site

#: Exit codes of ``arena nightly`` (1 and 2 keep click's meaning: error, usage).
EXIT_OK = 0
#: Some input files were rejected; the rest was ingested, rebuilt and published.
EXIT_REJECTED = 3
#: No new battles since the last rebuild: the rebuild was skipped, the site refreshed.
EXIT_NOTHING_NEW = 4
#: The rebuild or the publish failed; the previous snapshots and site are kept.
EXIT_FAILED = 5
#: Another run held the database's nightly lock for longer than --wait.
EXIT_LOCKED = 6

#: Name of the status file written into the published site.
STATUS_FILE = "status.json"


@dataclass
class FileOutcome:
    """What became of one file of the drop folder."""

    name: str
    #: "ingested", "seen" (same sha256 already stored) or "rejected"
    status: str
    inserted: int = 0
    batch_id: int | None = None
    error: str | None = None
    #: where the file was moved (``done``/``failed`` folder), None if left in place
    moved_to: str | None = None


@dataclass
class NightlyResult:
    started: datetime
    files: list[FileOutcome] = field(default_factory=list)
    battles_added: int = 0
    rebuilt: bool = False
    snapshot_ids: list[int] = field(default_factory=list)
    boards: list[str] = field(default_factory=list)
    watermark: int | None = None
    published: bool = False
    #: why the rebuild or publish failed (the previous site is kept)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: what retention dropped after the good night (None: not asked, or the night failed)
    pruned: PruneResult | None = None

    @property
    def rejected(self) -> list[FileOutcome]:
        return [f for f in self.files if f.status == "rejected"]

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_FAILED
        if self.rejected:
            return EXIT_REJECTED
        if not self.rebuilt:
            return EXIT_NOTHING_NEW
        return EXIT_OK

    @property
    def outcome(self) -> str:
        return {
            EXIT_OK: "ok",
            EXIT_REJECTED: "rejected",
            EXIT_NOTHING_NEW: "nothing new",
            EXIT_FAILED: "failed",
        }[self.exit_code]

    def as_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "time": self.started.isoformat(timespec="seconds"),
            "seconds": round(self.seconds, 3),
            "battles_added": self.battles_added,
            "files_ingested": sum(1 for f in self.files if f.status == "ingested"),
            "files_seen": sum(1 for f in self.files if f.status == "seen"),
            "files_rejected": len(self.rejected),
            "rebuilt": self.rebuilt,
            "snapshot_ids": list(self.snapshot_ids),
            "boards": list(self.boards),
            "watermark": self.watermark,
            "published": self.published,
            "error": self.error,
            "warnings": list(self.warnings),
            "files": [asdict(f) for f in self.files],
            "pruned": None if self.pruned is None else self.pruned.as_dict(),
        }

    def summary(self) -> str:
        """The one line ``arena nightly`` prints."""
        d = self.as_dict()
        parts = [
            f"nightly {d['outcome']}: {self.battles_added} battles added from "
            f"{d['files_ingested']} file(s)",
            f"{d['files_seen']} already ingested",
            f"{d['files_rejected']} rejected",
        ]
        if self.rebuilt:
            parts.append(f"{len(self.snapshot_ids)} snapshot(s) up to battle {self.watermark}")
        else:
            parts.append("rebuild skipped" if self.error is None else "nothing rebuilt")
        if self.error is not None:
            parts.append(f"{self.error}; previous site kept")
        elif self.published:
            parts.append("site published")
        if self.pruned is not None:
            parts.append(
                f"{len(self.pruned.snapshot_ids)} old snapshot(s) pruned "
                f"(~{self.pruned.bytes_freed} bytes)"
            )
        return ", ".join(parts) + f" in {self.seconds:.1f}s"


def incoming_files(folder: Path) -> list[Path]:
    """The files of the drop folder, by name.

    Hidden files (``.name``) are left alone: a copy in progress is usually
    written under a hidden or temporary name and renamed when complete.
    """
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def _move(path: Path, folder: Path) -> Path:
    """Move ``path`` into ``folder`` without replacing a file of the same name there."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / path.name
    n = 0
    while target.exists():
        n += 1
        target = folder / f"{path.name}.{n}"
    shutil.move(str(path), target)
    return target


def ingest_folder(
    engine: Engine,
    folder: Path,
    *,
    done: Path | None = None,
    failed: Path | None = None,
    say: Callable[[str], None] = lambda _m: None,
) -> list[FileOutcome]:
    """Ingest every file of ``folder``, one transaction each; a rejected file is reported
    (and moved to ``failed`` with ``NAME.error.txt`` beside it), never fatal."""
    outcomes = []
    for path in incoming_files(folder):
        try:
            report = ingest_file(engine, str(path))
        except IngestError as exc:
            out = FileOutcome(name=path.name, status="rejected", error=str(exc))
            say(f"rejected {path.name}: {exc}")
            if failed is not None:
                moved = _move(path, failed)
                Path(f"{moved}.error.txt").write_text(f"{exc}\n", encoding="utf-8")
                out.moved_to = str(moved)
        else:
            if report.already_ingested_as is not None:
                out = FileOutcome(
                    name=path.name, status="seen", batch_id=report.already_ingested_as
                )
            else:
                out = FileOutcome(
                    name=path.name,
                    status="ingested",
                    inserted=report.inserted,
                    batch_id=report.batch_id,
                )
            say(f"{out.status} {path.name}: {out.inserted} battles")
            if done is not None:
                out.moved_to = str(_move(path, done))
        outcomes.append(out)
    return outcomes


def _rated_up_to(engine: Engine) -> tuple[int, int | None, list[int], list[str]]:
    """(largest battle id, watermark, snapshot ids, boards) of the latest rebuild run."""
    with engine.connect() as conn:
        top = conn.execute(select(func.max(Battle.id))).scalar() or 0
        last = conn.execute(select(Snapshot.run_id).order_by(Snapshot.id.desc()).limit(1)).scalar()
        rows = conn.execute(
            select(Snapshot.id, Snapshot.board, Snapshot.watermark)
            .where(Snapshot.run_id == last)
            .order_by(Snapshot.id)
        ).all()
    mark = max((r.watermark for r in rows), default=None)
    return top, mark, [r.id for r in rows], [r.board for r in rows]


def nightly(
    engine: Engine,
    incoming: str | os.PathLike,
    site: str | os.PathLike,
    opts: RebuildOptions,
    *,
    done: str | os.PathLike | None = None,
    failed: str | os.PathLike | None = None,
    wait: float,
    max_models: int | None = None,
    top: int = 20,
    attribution: str | None = None,
    progress: Callable[[str], None] | None = None,
    prune_keep_days: float | None = None,
    prune_keep_last: int | None = None,
) -> NightlyResult:
    """Ingest ``incoming``, rebuild every board (all categories) and publish ``site``.

    The rebuild is skipped when no battle arrived since the last snapshot
    (the site is still republished, so its ``status.json`` shows the run).
    With ``prune_keep_days``/``prune_keep_last``, :func:`arena.jobs.retention.prune_snapshots`
    runs after a good night only (rebuild and publish succeeded), inside the lock.

    Raises
    ------
    arena.db.lock.LockHeld
        Another run kept the database's nightly lock for more than ``wait`` seconds;
        nothing was done.
    """
    say = progress or (lambda _m: None)
    started = datetime.now(UTC)
    clock = time.perf_counter()
    result = NightlyResult(started=started)
    with database_lock(engine, wait=wait):
        result.files = ingest_folder(
            engine,
            Path(incoming),
            done=Path(done) if done is not None else None,
            failed=Path(failed) if failed is not None else None,
            say=say,
        )
        result.battles_added = sum(f.inserted for f in result.files)
        top_id, mark, ids, boards = _rated_up_to(engine)
        result.watermark, result.snapshot_ids, result.boards = mark, ids, boards
        if mark is None or top_id > mark:
            try:
                built = rebuild(
                    engine, opts, all_categories=True, progress=say, max_models=max_models
                )
            except RebuildError as exc:
                result.error = f"rebuild failed: {exc}"
            else:
                result.rebuilt = True
                result.snapshot_ids = built.snapshot_ids
                result.boards = built.boards
                result.watermark = built.watermark
                result.warnings = built.warnings
        if result.error is None:

            def status() -> bytes:
                # rendered after every page: its seconds include the publish
                result.seconds = time.perf_counter() - clock
                doc = result.as_dict()
                doc["published"] = True  # the file exists only if the publish succeeds
                return json.dumps(doc, indent=2, ensure_ascii=False).encode() + b"\n"

            try:
                publish_site(
                    engine,
                    site,
                    top=top,
                    attribution=attribution,
                    extra_files={STATUS_FILE: status},
                )
            except (PublishError, OSError) as exc:
                result.error = f"publish failed: {exc}"
            else:
                result.published = True
        if result.published and (prune_keep_days is not None or prune_keep_last is not None):
            say("pruning old snapshots")
            with engine.begin() as conn:
                take_write_lock(conn, "prune snapshots")
                result.pruned = prune_snapshots(
                    conn, keep_days=prune_keep_days, keep_last=prune_keep_last
                )
    result.seconds = time.perf_counter() - clock
    return result


__all__ = [
    "EXIT_FAILED",
    "EXIT_LOCKED",
    "EXIT_NOTHING_NEW",
    "EXIT_OK",
    "EXIT_REJECTED",
    "STATUS_FILE",
    "FileOutcome",
    "NightlyResult",
    "ingest_folder",
    "nightly",
]
