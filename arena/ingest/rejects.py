"""The ``--rejects`` file: written under a temporary name, moved into place at the end.

The target is checked before anything is read: it must not be an input file,
the database, or an existing file that is not an earlier rejects file (a typo
in ``--rejects`` once truncated the database to 33 bytes).
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from arena.core.errors import OptionError, escape
from arena.core.text import shown
from arena.ingest.errors import RowError

#: First row of a rejects file (``--rejects`` refuses to replace a file without it).
REJECTS_HEADER = ("file", "location", "field", "error", "record")


@dataclass
class RejectSink:
    """Where ``--skip-invalid`` puts rejected records: a CSV with the reason."""

    stream: IO[str]
    _writer: Any = field(init=False)

    def __post_init__(self) -> None:
        self._writer = csv.writer(self.stream, lineterminator="\n")
        self._writer.writerow(REJECTS_HEADER)

    def add(self, file: str, location: str, error: RowError | str, record: Any) -> None:
        fld = error.field if isinstance(error, RowError) else ""
        self._writer.writerow(
            [file, location, fld, str(error), json.dumps(record, ensure_ascii=False)]
        )


class RejectsTargetError(OptionError):
    """The ``--rejects`` path would overwrite something that is not a rejects file."""


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_rejects_target(
    path: str | os.PathLike[str], *, inputs: Iterable[str], database: str | None
) -> Path:
    """The rejects path, after refusing any target it must not replace.

    Parameters
    ----------
    path
        The ``--rejects`` argument.
    inputs
        The files being ingested (``-`` for stdin is ignored).
    database
        The SQLite database file, if the store is one (with its ``-wal``,
        ``-shm`` and ``-journal`` companions).
    """
    target = Path(path)

    def refuse(reason: str) -> RejectsTargetError:
        return RejectsTargetError(
            "rejects", "{name} " + escape(f"{shown(str(path))}: refusing to overwrite {reason}")
        )

    if target.is_dir():
        raise refuse("a directory")
    if database:
        for suffix in ("", "-wal", "-shm", "-journal"):
            db = Path(database + suffix)
            if _same(target, db) or target.resolve() == db.resolve():
                raise refuse("the database")
    for name in inputs:
        if name != "-" and _same(target, Path(name)):
            raise refuse("an input file")
    if target.exists():
        try:
            with open(target, encoding="utf-8", errors="replace", newline="") as fh:
                first = fh.readline().rstrip("\r\n")
        except OSError as exc:
            raise refuse(f"a file that cannot be read ({exc.strerror})") from None
        if first != ",".join(REJECTS_HEADER):
            raise refuse("a file that is not an arena rejects file (first line differs)")
    return target


@contextmanager
def rejects_file(target: Path) -> Iterator[tuple[RejectSink, list[bool]]]:
    """A :class:`RejectSink` writing to a temporary file beside ``target``.

    Yields the sink and a one-element flag list: set ``keep[0] = True`` once a
    file has been stored, so that its rejects reach ``target`` even if a later
    file fails. Otherwise a failure leaves ``target`` as it was.
    """
    parent = target.parent if str(target.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    tmp = Path(tmp_name)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; the rejects file is not
    keep = [False]
    ok = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as fh:
            try:
                yield RejectSink(fh), keep
                ok = True
            finally:
                fh.flush()
                os.fsync(fh.fileno())
        if ok or keep[0]:
            os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
