"""The nightly job: ingest a drop folder, rebuild the boards it has, publish the site.

One call of :func:`nightly` does what an operator would otherwise chain from
four commands, under a database-wide lock (:mod:`arena.db.lock`) so that two
overlapping runs never interleave. One rejected file does not stop the night;
a failed rebuild or publish leaves the previous snapshots and site untouched.
The outcome is one of the exit codes below, meant for monitoring.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import DataError, IntegrityError, SQLAlchemyError

from arena.core.defaults import (
    DEFAULT_HEATMAP_TOP,
    DEFAULT_MAX_BOARDS,
    DEFAULT_MAX_MODELS,
    DEFAULT_NIGHTLY_BOARDS,
)
from arena.core.errors import ArenaError, OptionError, escape
from arena.db.lock import database_lock
from arena.db.models import Battle, Snapshot
from arena.db.session import take_write_lock
from arena.ingest import IngestError, ingest_file
from arena.ingest.loader import IngestChanged
from arena.ingest.sources import display_path, file_identity
from arena.jobs.kept import kept_runs
from arena.jobs.rebuild import RebuildError, RebuildOptions, RebuildResult, rebuild
from arena.jobs.retention import PruneResult, check_retention, prune_snapshots
from arena.publish.atomic import PublishError
from arena.publish.site import publish_site

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


class NightlyError(ArenaError, ValueError):
    """A configuration the nightly job refuses (before doing anything)."""


class NightlyOptionError(NightlyError, OptionError):
    """A refused folder option, named by its parameter (the CLI names the flag)."""


@dataclass
class FileOutcome:
    """What became of one entry of the drop folder."""

    name: str
    #: "ingested", "seen" (same sha256 already stored), "rejected" (moved to --failed
    #: when given), "changed" (changed while read: left in place for the next night)
    #: or "skipped" (a folder or special file: left alone)
    status: str
    inserted: int = 0
    batch_id: int | None = None
    error: str | None = None
    #: where the file was moved (``done``/``failed`` folder), None if left in place
    moved_to: str | None = None
    #: why the move to --done/--failed failed (the file stays in the drop folder)
    move_error: str | None = None
    #: what the ingest noted (lines skipped as a stored file's content, names
    #: differing only by case)
    warnings: list[str] = field(default_factory=list)

    @property
    def problem(self) -> bool:
        """Whether the operator should look at it (exit code 3)."""
        return self.status in ("rejected", "changed", "skipped") or self.move_error is not None


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
    #: the option whose value made the rebuild or publish fail, if one did, with the
    #: step (the CLI names the option's flag)
    error_option: tuple[str, OptionError] | None = field(default=None, repr=False, compare=False)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: what retention dropped after the good night (None: not asked, or the night failed)
    pruned: PruneResult | None = None

    @property
    def rejected(self) -> list[FileOutcome]:
        return [f for f in self.files if f.status == "rejected"]

    @property
    def problems(self) -> list[FileOutcome]:
        """Entries rejected, changed while read, skipped, or not moved."""
        return [f for f in self.files if f.problem]

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_FAILED
        if self.problems:
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "time": self.started.isoformat(timespec="seconds"),
            "seconds": round(self.seconds, 3),
            "battles_added": self.battles_added,
            "files_ingested": sum(1 for f in self.files if f.status == "ingested"),
            "files_seen": sum(1 for f in self.files if f.status == "seen"),
            "files_rejected": len(self.rejected),
            "files_changed": sum(1 for f in self.files if f.status == "changed"),
            "files_skipped": sum(1 for f in self.files if f.status == "skipped"),
            "moves_failed": sum(1 for f in self.files if f.move_error is not None),
            "rebuilt": self.rebuilt,
            "snapshot_ids": list(self.snapshot_ids),
            "boards": list(self.boards),
            "watermark": self.watermark,
            "published": self.published,
            "error": self.error,
            "warnings": list(self.warnings),
            "files": [asdict(f) for f in self.files],
            "pruned": None if self.pruned is None else self.pruned.to_dict(),
        }

    def summary(self, spell: Callable[[str], str] = str) -> str:
        """The one line ``arena nightly`` prints; ``spell`` names an option that made the
        night fail (the CLI passes its flags)."""
        d = self.to_dict()
        parts = [
            f"nightly {d['outcome']}: {self.battles_added} battles added from "
            f"{d['files_ingested']} file(s)",
            f"{d['files_seen']} already ingested",
            f"{d['files_rejected']} rejected",
        ]
        for key, what in (
            ("files_changed", "changed while read (left for the next night)"),
            ("files_skipped", "skipped (not a regular file)"),
            ("moves_failed", "could not be moved"),
        ):
            if d[key]:
                parts.append(f"{d[key]} {what}")
        if self.rebuilt:
            parts.append(f"{len(self.snapshot_ids)} snapshot(s) up to battle {self.watermark}")
        else:
            parts.append("rebuild skipped" if self.error is None else "nothing rebuilt")
        if self.error is not None:
            error = self.error
            if self.error_option is not None:  # the option spelled as the caller names it
                step, option = self.error_option
                error = f"{step} failed: {option.spelled(spell)}"
            parts.append(f"{error}; previous site kept")
        elif self.published:
            parts.append("site published")
        if self.pruned is not None:
            parts.append(
                f"{len(self.pruned.snapshot_ids)} old snapshot(s) pruned "
                f"(~{self.pruned.bytes_freed} bytes)"
            )
        return ", ".join(parts) + f" in {self.seconds:.1f}s"


def _entries(folder: Path, ignore: set[Path]) -> list[Path]:
    """Every visible entry of the drop folder, by name, but the ``ignore``d folders
    (``--done``/``--failed`` may live inside it)."""
    return sorted(
        p
        for p in folder.iterdir()
        if not p.name.startswith(".") and p.absolute() not in ignore and _real(p) not in ignore
    )


def _real(path: Path) -> Path | None:
    """The path with links resolved; None for a link loop."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return None


def _unusable(path: Path, *, follow_symlinks: bool) -> tuple[str, str] | None:
    """("rejected" or "skipped", why) for an entry that is not a file to ingest."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return "rejected", "removed from the drop folder before it was read"
    if stat.S_ISLNK(st.st_mode):
        if not path.exists():
            return "rejected", "a symbolic link that leads to no file (dangling, or a loop)"
        if not follow_symlinks:
            return "rejected", (
                "a symbolic link (not followed: anyone who can write the drop folder could "
                "make arena read any file; move the file itself in, or follow symbolic links)"
            )
        st = path.stat()
    if stat.S_ISDIR(st.st_mode):
        return "skipped", "a folder (the drop folder is not read recursively)"
    if not stat.S_ISREG(st.st_mode):
        return "skipped", "not a regular file (a pipe, socket or device)"
    return None


def _free_name(folder: Path, name: str) -> Path:
    """``folder/name``, or ``name.1``, ``name.2``, ...: a target that replaces nothing
    (nor the ``.error.txt`` of a former file of that name)."""
    target = folder / name
    n = 0
    while os.path.lexists(target) or os.path.lexists(f"{target}.error.txt"):
        n += 1
        target = folder / f"{name}.{n}"
    return target


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _move(path: Path, folder: Path) -> Path:
    """Move ``path`` into ``folder`` atomically, replacing nothing there.

    On one file system a rename. Across file systems the file is copied to a
    hidden temporary name in ``folder``, flushed to disk and renamed, and only
    then removed from the drop folder: a crash or a full disk never leaves a
    truncated file under the real name, and the original stays until the copy
    is complete. Raises OSError (nothing moved) when that fails.
    """
    folder.mkdir(parents=True, exist_ok=True)
    target = _free_name(folder, path.name)
    try:
        os.rename(path, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    else:
        _fsync_dir(folder)
        return target
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name[:64]}.", suffix=".arena-tmp", dir=folder)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            with open(path, "rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        shutil.copystat(path, tmp)
        os.rename(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(folder)
    path.unlink()
    return target


def _write_atomic(path: Path, text: str) -> None:
    """``path`` with ``text``, written under a temporary name and renamed into place."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name[:64]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _describe_move_error(exc: OSError, folder: Path) -> str:
    what = exc.strerror or str(exc)
    return f"could not move it to {display_path(folder)}: {what}; it stays in the drop folder"


def _ingest_one(engine: Engine, path: Path, name: str) -> FileOutcome:
    """Ingest one file; any failure that belongs to the file is its rejection.

    Only a failure of the database itself (unreachable, disk full, locked)
    stops the night: the next file would fail the same way.
    """
    try:
        before = file_identity(path)
        report = ingest_file(engine, str(path))
    except IngestChanged as exc:
        return FileOutcome(name=name, status="changed", error=f"{exc}; it is read again next time")
    except IngestError as exc:
        return FileOutcome(name=name, status="rejected", error=str(exc))
    except FileNotFoundError:
        return FileOutcome(
            name=name, status="rejected", error=f"{name}: removed from the drop folder"
        )
    except (DataError, IntegrityError) as exc:  # a value the database refused
        first = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        return FileOutcome(name=name, status="rejected", error=f"{name}: refused: {first}")
    except SQLAlchemyError:
        raise
    except Exception as exc:  # noqa: BLE001 - one file must never stop the night
        return FileOutcome(
            name=name,
            status="rejected",
            error=f"{name}: could not be ingested ({type(exc).__name__}: {exc})",
        )
    if report.already_ingested_as is not None:
        out = FileOutcome(name=name, status="seen", batch_id=report.already_ingested_as)
    else:
        out = FileOutcome(
            name=name,
            status="ingested",
            inserted=report.inserted,
            batch_id=report.batch_id,
            warnings=list(report.warnings),
        )
    try:
        after = file_identity(path)
    except OSError:
        after = None
    if after != before:
        # it changed after its battles were stored: leave it for the next night,
        # which skips what is stored (ids; an id-less file that only grew is read
        # from where the stored part ends)
        out.status = "changed"
        out.error = (
            f"{name}: it changed while being read (still being written?); "
            f"{out.inserted} battles of it were stored; it stays in the drop folder "
            "and is read again next time"
        )
    return out


def ingest_folder(
    engine: Engine,
    folder: Path,
    *,
    done: Path | None = None,
    failed: Path | None = None,
    follow_symlinks: bool = False,
    say: Callable[[str], None] = lambda _m: None,
) -> list[FileOutcome]:
    """Ingest every file of ``folder``, one transaction each.

    Whatever goes wrong with one file -- a bad record, an unreadable or
    vanished file, a symbolic link, a value the database refuses -- is that
    file's rejection (moved to ``failed`` with ``NAME.error.txt`` beside it),
    never the night's end. A file that changed while it was read is left in
    place for the next night; folders and special files are reported and
    left alone. A move that fails is reported and the file stays.
    """
    ignore = {p.absolute() for p in (done, failed) if p is not None}
    ignore |= {p.resolve() for p in (done, failed) if p is not None}
    outcomes = []
    for path in _entries(folder, ignore):
        name = display_path(path.name)
        bad = _unusable(path, follow_symlinks=follow_symlinks)
        if bad is not None:
            out = FileOutcome(name=name, status=bad[0], error=f"{name}: {bad[1]}")
        else:
            out = _ingest_one(engine, path, name)
        if out.status in ("ingested", "seen"):
            say(f"{out.status} {name}: {out.inserted} battles")
            target = done
        else:
            say(f"{out.status} {out.error}")
            target = failed if out.status == "rejected" else None
        if target is not None and os.path.lexists(path):
            try:
                moved = _move(path, target)
            except OSError as exc:
                out.move_error = _describe_move_error(exc, target)
                say(f"{name}: {out.move_error}")
            else:
                out.moved_to = display_path(moved)
                if out.status == "rejected":
                    note = Path(f"{moved}.error.txt")
                    try:
                        _write_atomic(note, f"{out.error}\n")
                    except OSError as exc:
                        out.move_error = (
                            f"moved to {out.moved_to}, but {display_path(note)} could not be "
                            f"written: {exc.strerror or exc}"
                        )
                        say(f"{name}: {out.move_error}")
        outcomes.append(out)
    return outcomes


def check_folders(incoming: Path, site: Path, done: Path | None, failed: Path | None) -> None:
    """Refuse folder settings that would make every night redo or undo work."""
    inc = incoming.resolve()
    for option, folder in (("done", done), ("failed", failed), ("site", site)):
        if folder is not None and folder.resolve() == inc:
            raise NightlyOptionError(
                option,
                "{name} is the {incoming} folder ("
                + escape(display_path(incoming))
                + "): every night would read its own output again; give a separate folder",
                also=("incoming",),
            )
    if site.resolve() in {p.resolve() for p in (done, failed) if p is not None}:
        raise NightlyOptionError(
            "site", "{name} must not be the {done} or {failed} folder", also=("done", "failed")
        )


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


def _rebuild(
    engine: Engine,
    opts: RebuildOptions,
    boards: str,
    *,
    progress: Callable[[str], None],
    max_models: int | None,
    max_boards: int | None,
) -> RebuildResult:
    """The night's rebuild: the kept boards' runs again, or ``opts`` over every category."""
    runs: list[tuple[RebuildOptions, bool]] = [(opts, True)]
    unused: list[str] = []
    if boards == "kept":
        with engine.connect() as conn:
            kept = [(k.options, k.all_categories) for k in kept_runs(conn)]
        if kept:
            runs = kept
            plain = RebuildOptions().to_dict()
            # an option given that some kept board was built without (equal ones are used)
            unused = [
                f"{k}={v}"
                for k, v in opts.to_dict().items()
                if plain.get(k) != v and any(r.to_dict().get(k) != v for r, _ in kept)
            ]
    out: RebuildResult | None = None
    for run_opts, all_categories in runs:
        part = rebuild(
            engine,
            run_opts,
            all_categories=all_categories,
            progress=progress,
            max_models=max_models,
            max_boards=max_boards,
        )
        if out is None:
            out = part
            continue
        out.snapshot_ids += part.snapshot_ids
        out.boards += part.boards
        out.warnings += part.warnings
        out.seconds += part.seconds
        out.watermark = max(out.watermark, part.watermark)
    assert out is not None  # at least one run
    if unused:  # said, never silently dropped
        out.warnings.append(
            f"rating options given ({', '.join(unused)}) were not used: the boards were "
            "rebuilt with the options each was built with (boards='given' applies them)"
        )
    return out


def nightly(
    engine: Engine,
    incoming: str | os.PathLike[str],
    site: str | os.PathLike[str],
    opts: RebuildOptions,
    *,
    done: str | os.PathLike[str] | None = None,
    failed: str | os.PathLike[str] | None = None,
    wait: float,
    max_models: int | None = DEFAULT_MAX_MODELS,
    max_boards: int | None = DEFAULT_MAX_BOARDS,
    top: int = DEFAULT_HEATMAP_TOP,
    attribution: str | None = None,
    progress: Callable[[str], None] | None = None,
    prune_keep_days: float | None = None,
    prune_keep_last: int | None = None,
    follow_symlinks: bool = False,
    boards: str = DEFAULT_NIGHTLY_BOARDS,
) -> NightlyResult:
    """Ingest ``incoming``, rebuild the boards and publish ``site``.

    ``boards="kept"`` (the default) rebuilds the boards the database has, each
    with the options its latest snapshot was built with
    (:func:`arena.jobs.kept.kept_runs`: sources apart, style variants,
    categories, excluded judges; ``opts`` is not used); a database without a
    snapshot, or ``boards="given"``, gets the overall board and every category
    with ``opts`` (every source pooled unless ``opts`` selects one).

    The rebuild is skipped when no battle arrived since the last snapshot
    (the site is still republished, so its ``status.json`` shows the run).
    With ``prune_keep_days``/``prune_keep_last``, :func:`arena.jobs.retention.prune_snapshots`
    runs after a good rebuild (or none needed), before the publish, so that the
    published ``status.json`` says what it did; a failed prune is a warning.
    Symbolic links in ``incoming`` are rejected unless ``follow_symlinks``.

    Raises
    ------
    NightlyError
        ``done``, ``failed`` or ``site`` is the drop folder, or a retention
        option is out of range; nothing was done.
    arena.db.lock.LockHeld
        Another run kept the database's nightly lock for more than ``wait`` seconds;
        nothing was done.
    """
    say = progress or (lambda _m: None)
    opts.validate()  # a bad option (an anchor out of range) before any file moves
    check_folders(
        Path(incoming),
        Path(site),
        Path(done) if done is not None else None,
        Path(failed) if failed is not None else None,
    )
    check_retention(keep_days=prune_keep_days, keep_last=prune_keep_last, prefix="prune_")
    started = datetime.now(UTC)
    clock = time.perf_counter()
    result = NightlyResult(started=started)
    with database_lock(engine, wait=wait):
        result.files = ingest_folder(
            engine,
            Path(incoming),
            done=Path(done) if done is not None else None,
            failed=Path(failed) if failed is not None else None,
            follow_symlinks=follow_symlinks,
            say=say,
        )
        result.battles_added = sum(f.inserted for f in result.files)
        top_id, mark, ids, built_boards = _rated_up_to(engine)
        result.watermark, result.snapshot_ids, result.boards = mark, ids, built_boards
        if mark is None or top_id > mark:
            try:
                built = _rebuild(
                    engine, opts, boards, progress=say, max_models=max_models, max_boards=max_boards
                )
            except RebuildError as exc:
                result.error = f"rebuild failed: {exc}"
                result.error_option = ("rebuild", exc) if isinstance(exc, OptionError) else None
            else:
                result.rebuilt = True
                result.snapshot_ids = built.snapshot_ids
                result.boards = built.boards
                result.watermark = built.watermark
                result.warnings = built.warnings
        if result.error is None and (prune_keep_days is not None or prune_keep_last is not None):
            say("pruning old snapshots")
            try:
                with engine.begin() as conn:
                    take_write_lock(conn, "prune snapshots")
                    result.pruned = prune_snapshots(
                        conn, keep_days=prune_keep_days, keep_last=prune_keep_last
                    )
            except SQLAlchemyError as exc:
                result.warnings.append(f"pruning old snapshots failed: {exc}")
        if result.error is None:

            def status() -> bytes:
                # rendered after every page: its seconds include the publish
                result.seconds = time.perf_counter() - clock
                doc = result.to_dict()
                doc["published"] = True  # the file exists only if the publish succeeds
                return json.dumps(doc, indent=2, ensure_ascii=False).encode() + b"\n"

            try:
                publish_site(
                    engine,
                    site,
                    top=top,
                    attribution=attribution,
                    extra_files={STATUS_FILE: status},
                    max_boards=max_boards,
                )
            except (PublishError, OSError) as exc:
                result.error = f"publish failed: {exc}"
                result.error_option = ("publish", exc) if isinstance(exc, OptionError) else None
            else:
                result.published = True
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
    "NightlyError",
    "NightlyResult",
    "ingest_folder",
    "nightly",
]
