"""Gzip-compressed input files, recognised by their first bytes (never by the name)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO

#: The first two bytes of every gzip stream (RFC 1952).
GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(head: bytes) -> bool:
    """Whether a file starting with ``head`` is gzip-compressed."""
    return head[:2] == GZIP_MAGIC


def open_bytes(path: str | Path, *, compressed: bool | None = None) -> IO[bytes]:
    """The file's bytes, decompressed if it is gzip (``compressed``: already known)."""
    raw = open(path, "rb")
    if compressed is None:
        compressed = is_gzip(raw.read(2))
        raw.seek(0)
    if compressed:
        return gzip.GzipFile(fileobj=raw, mode="rb")
    return raw
