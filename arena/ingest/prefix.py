"""A file that begins with a file stored before: read only what is new.

A cumulative export (yesterday's rows plus today's, without ids) and a file
that grew after it was ingested (still being written when the nightly job read
it) start with the exact bytes of a file stored before. Every batch keeps the
size and sha256 of the content it read (``content_bytes``,
``content_sha256``; the decompressed content for gzip input). Before a file is
read, the earlier batches of the same source that are shorter are checked:
when the file's first ``content_bytes`` bytes hash to a stored
``content_sha256`` and end at a line break, those lines were stored (or
rejected) before, and the ingest reads from the line after them. A CSV file's
header is read from the top as usual.

What this cannot see: a cumulative export written in another order, or with
its header or line endings changed. Ids de-duplicate such files (the
``battle_keys``); without ids they are stored again.
"""

from __future__ import annotations

import hashlib
import io
from collections import defaultdict
from dataclasses import dataclass
from typing import IO, Any

from sqlalchemy import Connection, select

from arena.db.models import IngestBatch
from arena.ingest.sources import LINE_MAX, InputError, InputFile, open_binary

__all__ = ["ContentReader", "Prefix", "stored_prefix", "content_stream"]

_BLOCK = 1 << 20


@dataclass(frozen=True)
class Prefix:
    """The stored file this one begins with."""

    batch_id: int
    file_name: str
    #: bytes (of content) and lines it covers
    bytes: int
    lines: int
    #: sha256 state after those bytes (gzip input continues it for its own content hash)
    digest: Any


def stored_prefix(conn: Connection, src: InputFile, source: str | None) -> Prefix | None:
    """The longest earlier batch of ``source`` whose content begins this file, or None.

    One read of the file (up to the longest candidate) and only when a shorter
    batch of that source exists.
    """
    query = select(
        IngestBatch.id, IngestBatch.file_name, IngestBatch.content_bytes, IngestBatch.content_sha256
    ).where(
        IngestBatch.finished_at.is_not(None),
        IngestBatch.content_bytes > 0,
        IngestBatch.content_sha256.is_not(None),
        IngestBatch.source.is_(None) if source is None else IngestBatch.source == source,
    )
    if not src.compressed:
        query = query.where(IngestBatch.content_bytes < src.size)
    by_size: dict[int, list[tuple[int, str, str]]] = defaultdict(list)
    for batch_id, name, size, sha in conn.execute(query):
        assert size is not None and sha is not None  # the query selects neither NULL
        by_size[int(size)].append((batch_id, name, sha))
    if not by_size:
        return None
    found = None
    digest = hashlib.sha256()
    pos = lines = 0
    last = b""
    with open_binary(src) as fh:
        for target in sorted(by_size):
            while pos < target:
                block = fh.read(min(target - pos, _BLOCK))
                if not block:
                    return found
                digest.update(block)
                lines += block.count(b"\n")
                pos += len(block)
                last = block[-1:]
            if last != b"\n":
                continue  # ends inside a line: its last row may have been partial
            hexdigest = digest.hexdigest()
            for batch_id, name, sha in by_size[target]:
                if sha == hexdigest:
                    found = Prefix(batch_id, name, target, lines, digest.copy())
    return found


class ContentReader(io.RawIOBase):
    """The bytes a parser reads: ``head`` first (a CSV header re-read from the top,
    not counted), then ``binary``, hashed and counted on the way (the content's size
    and sha256 for gzip input, whose file hash is of the compressed bytes)."""

    def __init__(self, binary: IO[bytes], *, head: bytes = b"", digest: Any = None) -> None:
        super().__init__()
        self._binary = binary
        self._head = memoryview(head)
        self.digest = digest
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        out = memoryview(buffer).cast("B")
        if len(self._head):
            n = min(len(out), len(self._head))
            out[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._binary.read(len(out))
        n = len(data)
        out[:n] = data
        if self.digest is not None:
            self.digest.update(data)
        self.count += n
        return n


def content_stream(
    binary: IO[bytes], src: InputFile, fmt: str, prefix: Prefix | None
) -> tuple[IO[bytes], ContentReader | None]:
    """What the parser reads (``binary``, or past ``prefix`` with the CSV header
    kept), and the reader that hashes gzip content (None for plain files: their
    content hash is the file's)."""
    if prefix is None and not src.compressed:
        return binary, None
    head = b""
    if prefix is not None:
        if fmt == "csv":
            head = binary.readline(LINE_MAX)
            if len(head) > prefix.bytes:
                raise InputError(f"{src.display}: line 1: header longer than the stored file")
        binary.seek(prefix.bytes)
    digest = None
    if src.compressed:
        digest = prefix.digest.copy() if prefix is not None else hashlib.sha256()
    reader = ContentReader(binary, head=head, digest=digest)
    if prefix is not None:
        reader.count = prefix.bytes
    return io.BufferedReader(reader, buffer_size=1 << 16), reader if src.compressed else None
