"""Names and number formats of the site: one function per thing shown, used on every page.

Every number is a string with a fixed format (output is deterministic and
identical wherever it appears); an interval is written one way everywhere,
``+6.8/\u22125.9`` (distances from the rating), beside its bar.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, datetime
from functools import lru_cache

from arena.boards.snapshots import BoardRow
from arena.core.vocabulary import is_web_url
from arena.engine.scale import win_probability

DASH = "\u2013"
MINUS = "\u2212"


@lru_cache(maxsize=65536)
def slug(text: str, *, prefix: str = "") -> str:
    """A file-name-safe stem for untrusted ``text``: ASCII slug plus 8 hex of its sha256.

    The hash keeps names unique (``a/b`` and ``a-b`` slug alike) and the slug
    alphabet ``[a-z0-9-]`` cannot express ``..``, ``/`` or a leading dot, so a
    file named after a model always stays inside the output directory.
    """
    ascii_ = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    stem = re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")[:40].strip("-") or "x"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{prefix}{stem}-{digest}"


def model_href(name: str, root: str = "") -> str:
    return f"{root}models/{slug(name)}.html"


def display(row: BoardRow) -> str:
    return row.display_name or row.model


def fmt_rating(x: float | None) -> str:
    """One decimal; an en dash for no value (no rating on the board's scale, no bound)."""
    return DASH if x is None else f"{x + 0.0:.1f}"


def fmt_interval(rating: float | None, low: float | None, high: float | None) -> str:
    """The interval as distances from the rating, ``+6.8/\u22125.9``; a dash without one."""
    if rating is None or low is None or high is None:
        return DASH
    return f"+{high - rating + 0.0:.1f}/{MINUS}{rating - low + 0.0:.1f}"


def interval_words(low: float | None, high: float | None) -> str:
    """The interval's bounds in words, for a screen reader or a tooltip."""
    return f"interval {fmt_rating(low)} to {fmt_rating(high)}"


def rank_text(row: BoardRow) -> str:
    """The ranks the data allow: ``3`` when pinned, ``3\u20137`` otherwise, dash if unranked.

    The board's simultaneous rank set (all models at once); a snapshot written
    before the sets existed (migration 0013) shows the interval-overlap rank,
    and one written before ranks had a worst bound (migration 0007) gives
    ``3\u2013?``: its best rank alone must not read as a firm one.
    """
    low, high = getattr(row, "rank_low", None), getattr(row, "rank_high", None)
    if low is not None and high is not None:
        return str(low) if low == high else f"{low}{DASH}{high}"
    if row.rank_ub is None:
        return DASH
    if row.rank_lb is None:
        return f"{row.rank_ub}{DASH}?"
    if row.rank_lb == row.rank_ub:
        return str(row.rank_ub)
    return f"{row.rank_ub}{DASH}{row.rank_lb}"


def fmt_count(x: float) -> str:
    """A count with thousands separators ("135,624"); a fractional one to a tenth."""
    i = int(x)
    return f"{i:,}" if i == x else f"{x:,.1f}"


@lru_cache(maxsize=4096)
def fmt_date(dt: datetime) -> str:
    """Snapshot time in UTC; SQLite hands back naive datetimes that were written as UTC."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%d %H:%M UTC")


def safe_link(url: str | None) -> str | None:
    """Only http(s) links become hrefs; ``javascript:`` and friends stay plain text."""
    return url.strip() if url and is_web_url(url) else None


def predicted(r_i: float, r_j: float) -> float:
    """Bradley-Terry probability that i beats j on the Elo scale (ties ignored)."""
    return float(win_probability(r_i - r_j))
