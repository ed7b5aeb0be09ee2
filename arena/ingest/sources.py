"""Opening input files: stdin spooling, gzip, hashing, format detection, bounded lines.

The readers of the records inside (:mod:`arena.ingest.csv_blocks`,
:mod:`arena.ingest.json_lines`) start from the :class:`InputFile` made here.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from arena.core.defaults import INPUT_FORMATS
from arena.core.errors import ArenaError
from arena.core.text import shown
from arena.core.vocabulary import GZIP_MAGIC

#: The input formats a file may be read as (``auto``: guessed from its name or content).
FORMATS = INPUT_FORMATS
_CHUNK = 1 << 20

#: Longest line read (characters of CSV text, bytes of JSON lines): a longer one
#: is refused before it is read whole, so memory stays bounded (a 400 KB gzip can
#: hold one 400 MiB line). Far above any real record; CSV fields have the same bound.
#: The readers import it by name: a test that lowers it patches the module that reads it.
LINE_MAX = 1 << 24

# Beside the bound it applies, so that opening input (which every reader of it
# imports, csv_blocks included) sets it: no csv field can outgrow a line.
csv.field_size_limit(LINE_MAX)


class InputError(ArenaError):
    """A problem with one input file, already phrased for the user."""


@dataclass(frozen=True)
class InputFile:
    """A readable copy of one input: a real path (stdin is spooled to a temp file)."""

    display: str  # what messages call it: the path as given, or "<stdin>"
    path: Path
    sha256: str
    size: int
    compressed: bool
    #: (size, mtime_ns, inode) when it was hashed: a file still being written is
    #: recognised by a change (:func:`changed_since`)
    identity: tuple[int, int, int] | None = None


def display_path(path_arg: str | os.PathLike[str]) -> str:
    """A path as messages, logs, the database and JSON can hold it, on one line.

    A file name that is not UTF-8 arrives with its bytes as lone surrogates
    (``surrogateescape``), which no encoder accepts; those bytes are shown as
    ``\\xNN``. Controls and other invisible characters (a newline that would
    forge a line of the nightly log, a terminal escape) are escaped the same way
    (:func:`arena.core.text.shown`).
    """
    text = os.fspath(path_arg)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = os.fsencode(text).decode("utf-8", "backslashreplace")
    return shown(text)


def file_identity(path: Path) -> tuple[int, int, int]:
    """(size, mtime_ns, inode) of ``path``: what changes when a file is written or replaced."""
    st = path.stat()
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def changed_since(source: InputFile) -> str | None:
    """How ``source`` changed since it was hashed (grew, was rewritten or replaced,
    vanished), or None if it is as it was."""
    if source.identity is None:
        return None
    try:
        now = file_identity(source.path)
    except FileNotFoundError:
        return "it was removed while being read"
    except OSError as exc:
        return f"it can no longer be read ({exc.strerror})"
    size, mtime, inode = source.identity
    if now[2] != inode:
        return "it was replaced by another file while being read"
    if now[0] != size:
        return f"it changed size while being read ({size} -> {now[0]} bytes)"
    if now[1] != mtime:
        return "it was modified while being read"
    return None


def spool_stdin() -> Path:
    """Copy stdin to a temporary file so it can be hashed and read twice."""
    tmp = tempfile.NamedTemporaryFile(prefix="arena-stdin-", delete=False)
    try:
        with tmp:
            shutil.copyfileobj(sys.stdin.buffer, tmp, _CHUNK)
    except BaseException:  # a full disk, an interrupt: no partial copy left behind
        Path(tmp.name).unlink(missing_ok=True)
        raise
    return Path(tmp.name)


def open_input(path_arg: str) -> InputFile:
    """Hash one input (``-``: stdin, spooled first) and note its identity.

    Raises :class:`InputError` for a missing, unreadable or non-regular file and
    for a file that changed while it was hashed.
    """
    if path_arg == "-":
        path, display = spool_stdin(), "<stdin>"
    else:
        path, display = Path(path_arg), display_path(path_arg)
        if not path.exists():
            raise InputError(f"{display}: no such file")
        if not path.is_file():
            raise InputError(f"{display}: not a regular file")
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            identity = (st.st_size, st.st_mtime_ns, st.st_ino)
            head = fh.read(2)
            fh.seek(0)
            while block := fh.read(_CHUNK):
                digest.update(block)
                size += len(block)
    except FileNotFoundError:
        raise InputError(f"{display}: no such file (removed before it could be read)") from None
    except OSError as exc:
        raise InputError(f"{display}: cannot read: {exc.strerror or exc}") from None
    source = InputFile(display, path, digest.hexdigest(), size, head == GZIP_MAGIC, identity)
    if path_arg != "-":
        change = changed_since(source)
        if change is None and size != identity[0]:
            change = f"it changed size while being read ({identity[0]} -> {size} bytes)"
        if change is not None:
            raise FileChanged(f"{display}: {change}")
    return source


class FileChanged(InputError):
    """The file changed while it was read (still being written?): nothing of it is stored."""


def open_binary(source: InputFile) -> IO[bytes]:
    raw = open(source.path, "rb")
    if source.compressed:
        # a binary file object (typeshed types GzipFile as a BufferedIOBase, not IO[bytes])
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    return raw


def detect_format(source: InputFile, requested: str) -> str:
    """``csv``, ``jsonl`` or ``json``: from the option, else the name, else the content."""
    if requested != "auto":
        return requested
    name = source.display.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix, fmt in (
        (".csv", "csv"),
        (".jsonl", "jsonl"),
        (".ndjson", "jsonl"),
        (".json", "json"),
    ):
        if name.endswith(suffix):
            return fmt
    with open_binary(source) as fh:
        try:
            head = fh.read(4096).decode("utf-8-sig", errors="replace").lstrip()
        except (OSError, EOFError) as exc:
            raise InputError(f"{source.display}: cannot read: {exc}") from exc
    if head.startswith("["):
        return "json"
    if head.startswith("{"):
        return "jsonl"
    return "csv"


def first_bad_line(source: InputFile) -> str:
    """``line N: not valid UTF-8 (...)`` for the first undecodable line."""
    with open_binary(source) as fh:
        for line_no, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return (
                    f"line {line_no}: not valid UTF-8 "
                    f"(byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                )
    return "not valid UTF-8"


def bounded_lines(stream: IO[Any], limit: int, display: str, counter: Any = None) -> Iterator[Any]:
    """The lines of ``stream`` (binary or text), each read with at most ``limit``
    characters, so that one huge line is refused before it is held whole."""
    readline = stream.readline
    newline = b"\n" if isinstance(stream.read(0), bytes) else "\n"
    while line := readline(limit):
        if len(line) >= limit and not line.endswith(newline):
            where = "" if counter is None else f"line {counter.line_no + 1}: "
            raise InputError(
                f"{display}: {where}a line longer than {limit} characters "
                "(not a battle record; is it the right file?)"
            )
        yield line
