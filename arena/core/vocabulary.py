"""Values every layer reads the same way: yes/no words, web links, gzip files.

Pure standard library, so the ingester, the per-item reader, the annotations
and the page writer can all import it at no cost.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

#: Probe names in report order (import-light: the command line's choices).
PROBE_NAMES = (
    "position",
    "ties",
    "intransitivity",
    "clustering",
    "influence",
    "anomaly",
    "coverage",
)

__all__ = [
    "PROBE_NAMES",
    "FALSE_WORDS",
    "GZIP_MAGIC",
    "TAG_TRUE",
    "TRUE_WORDS",
    "is_gzip",
    "is_web_url",
    "parse_bool",
]

#: Words read as true / false (compared lower-cased, surrounding blanks ignored).
TRUE_WORDS = frozenset({"1", "1.0", "true", "yes", "y"})
FALSE_WORDS = frozenset({"0", "0.0", "false", "no", "n"})
#: The cells of a boolean category-tag column that put a battle in the category:
#: a boolean as exports write it, exactly (compared as is, so the ingest's
#: column path tests a whole column in one C-level pass).  Deliberately not
#: the yes-words above: LMArena's exports carry score columns beside the tags
#: (``creative_writing.score`` holds yes/no, ``if.score`` holds 1.0) that must
#: not become categories.
TAG_TRUE = frozenset({"true", "True", "TRUE"})
#: The first two bytes of every gzip stream (RFC 1952).
GZIP_MAGIC = b"\x1f\x8b"


def parse_bool(text: str) -> bool | None:
    """``True`` / ``False`` for a yes/no word (:data:`TRUE_WORDS`, :data:`FALSE_WORDS`), else None."""
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


def is_web_url(url: str) -> bool:
    """An absolute http(s) URL: the only links a page may follow (no ``javascript:``)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def is_gzip(path: str | Path) -> bool:
    """Whether the file is gzip-compressed, by its content (not its name)."""
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC
