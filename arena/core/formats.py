"""Rendering rows as text tables, CSV and JSON, shared by the CLI and the site.

Neutral on purpose: no click, no database, so :mod:`arena.publish` and library
users can render the same documents the command line prints.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

#: Output formats of every listing command (``--format``).
FORMATS = ("table", "json", "csv")

# Spreadsheet programs execute cells that start with these characters.
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def iso_utc(dt: datetime) -> str:
    """ISO 8601 in UTC with its zone (``2026-12-02T06:48:18Z``).

    Databases hand back stored times with (PostgreSQL) or without (SQLite) a
    zone; arena stores UTC, so a naive time is UTC.
    """
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def csv_safe(value: Any) -> Any:
    """Neutralise a text cell that a spreadsheet would read as a formula.

    Numbers pass through unchanged (a negative rating is not a formula).
    """
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value


def count(value: float) -> int | float:
    """A battle count as an ``int`` when it is whole.

    Counts are stored as floats because weighted battles (an arena-hard strong
    verdict weighs 3, a sports row expands by its weight) may be fractional;
    a whole count must still read as ``135624`` in JSON and CSV, not ``135624.0``.
    """
    v = float(value)
    return int(v) if math.isfinite(v) and v.is_integer() else v


#: Significant digits of the floats that the rating commands (``leaderboard``,
#: ``compare``, ``diff``, ``audit``, ``plan``) and the site's downloads write as
#: JSON and CSV. Ratings (hundreds to thousands) keep 0.01 Elo, far below any
#: interval's width; interval bounds come from float32 bootstrap samples
#: (``snapshot_samples``), whose ~7 digits print as ``36.266946411132814`` in
#: full; a plan's small probabilities keep their order (0.00803077). The audit
#: has rounded this way from the start (:func:`arena.audit.result.clean`).
#: ``arena eval`` and ``arena irt`` print full precision: an item bank is reread.
DIGITS = 6


def tidy(value: Any) -> Any:
    """``value`` for output: finite floats to :data:`DIGITS` significant digits.

    Walks dicts, lists and tuples (tuples become lists, as JSON writes them);
    numpy scalars become Python numbers; integers, text, booleans, ``None`` and
    non-finite floats pass unchanged. Counts are integers before they get here
    (:func:`count`), so a rating that happens to be whole stays a float.
    """
    if isinstance(value, float):
        return float(f"{value:.{DIGITS}g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: tidy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [tidy(v) for v in value]
    if hasattr(value, "item") and hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0:
        return tidy(value.item())  # a numpy scalar
    return value


#: The narrowest a wrapped last column gets (:func:`render_table`'s ``width``).
WRAP_MIN = 30


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 1 else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def render_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    headers: Sequence[str] | None = None,
    *,
    width: int | None = None,
) -> str:
    """Plain aligned text table: numbers right-aligned, booleans as ``yes``/``no``.

    Parameters
    ----------
    rows : sequence of mappings
        One mapping per row; missing keys and ``None`` print as empty cells.
    columns : sequence of str
        Keys to show, in order; they are also the header unless ``headers`` is given.
    headers : sequence of str, optional
        The header's words, one per column.
    width : int, optional
        Fit the table in this many characters by wrapping its last column (at
        word breaks, continuation lines under the column, never narrower than
        :data:`WRAP_MIN`); other columns are never cut.

    Returns
    -------
    str
        The table without a trailing newline.
    """
    heads = list(columns if headers is None else headers)
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(heads)]
    numeric = [
        bool(rows) and all(_is_number(r.get(c)) or r.get(c) is None for r in rows) for c in columns
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    last = len(widths) - 1
    room = None if width is None else width - sum(widths[:-1]) - 2 * last

    def split(text: str) -> list[str]:
        return [text]

    if room is not None and widths[last] > room and not numeric[last]:
        import textwrap  # only for a table that wraps

        widths[last] = max(room, WRAP_MIN)

        def split(text: str) -> list[str]:
            return textwrap.wrap(text, widths[last], break_on_hyphens=False) or [""]

    out = [line(heads), line(["-" * w for w in widths])]
    for row in cells:
        first, *more = split(row[last])
        out.append(line([*row[:-1], first]))
        out.extend(line([*([""] * last), m]) for m in more)
    return "\n".join(out)


def render_csv(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """CSV with a header row; lists joined by commas, formula-like text neutralised."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow(
            [
                csv_safe(",".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
                for v in (r.get(c) for c in columns)
            ]
        )
    return buf.getvalue()


def to_json(obj: Any) -> str:
    """Indented JSON, non-ASCII kept as is, keys in the order given."""
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False)


__all__ = [
    "DIGITS",
    "FORMATS",
    "count",
    "csv_safe",
    "render_csv",
    "render_table",
    "tidy",
    "to_json",
]
