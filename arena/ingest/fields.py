"""Field rules: how one raw value becomes a stored value, or a :class:`RowError`.

Each rule is written once here.  Where the column fast path
(:func:`arena.ingest.records.csv_block_parser`) applies a rule to a whole
column, the column form sits beside the scalar form and gives the same result.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from arena.core.defaults import DEFAULT_MAX_EXPAND
from arena.core.text import FORBIDDEN_CATEGORIES, bad_character, describe_character, text_problem
from arena.core.vocabulary import TAG_TRUE
from arena.db.tables import MODEL_NAME_MAX
from arena.ingest.errors import RowError

#: Longest stored text of ids, judges, questions, categories.
TEXT_MAX = 255
LANGUAGE_MAX = 64
#: Values of a boolean tag column that put a battle in that category.
TRUE = TAG_TRUE
#: Battle weights are bounded: one row weighing 1e308 would decide every rating.
WEIGHT_MAX = 1e6
#: Default limit of battles one aggregated-count row may stand for (``--max-expand``).
EXPAND_MAX = DEFAULT_MAX_EXPAND
#: Unicode categories never allowed in a model name (or any stored text,
#: :mod:`arena.core.text`): controls (C0, C1 such as U+0085), format characters
#: (zero-width, bidi overrides, BOM), line/paragraph separators (U+2028, U+2029):
#: they make different names look the same; lone surrogates cannot be stored.
_FORBIDDEN = FORBIDDEN_CATEGORIES
# Model names repeat on almost every row: each distinct name is checked once per
# file.  Past this many distinct names (a file of unique names) new ones are
# still checked but no longer remembered, so memory stays bounded.
_NAMES_REMEMBERED = 100_000


_invisible = bad_character


class ModelNames:
    """The model-name rule, with the names of one file already checked.

    A name is a string (a JSON number, ``NaN`` or ``1e400`` is not), normalised
    to NFC with surrounding whitespace removed, 1 to MODEL_NAME_MAX characters,
    without control or invisible format characters.  Case is kept as given.
    """

    def __init__(self) -> None:
        self._checked: dict[str, str] = {}  # raw value -> stored name

    def __call__(self, value: Any, column: str) -> str:
        if value.__class__ is str:
            known = self._checked.get(value)
            if known is not None:
                return known
        if not isinstance(value, str):
            what = "missing" if value is None else f"not a string: {value!r}"
            raise RowError(column, f"model name {what} (a model name is text)")
        bad = _invisible(value)
        if bad is not None:
            raise RowError(
                column,
                f"model name contains {describe_character(bad)}, "
                "a control or invisible format character or lone surrogate",
            )
        name = unicodedata.normalize("NFC", value).strip()
        if not name:
            raise RowError(column, "empty model name")
        if len(name) > MODEL_NAME_MAX:
            raise RowError(column, f"model name longer than {MODEL_NAME_MAX} characters")
        if len(self._checked) < _NAMES_REMEMBERED:
            self._checked[value] = name
        return name

    def column(self, values: Iterable[str]) -> dict[str, str] | None:
        """Stored name of every distinct raw value, or None if one is not valid."""
        out = {}
        for value in set(values):
            try:
                out[value] = self(value, "model")
            except RowError:
                return None
        return out


def text(value: Any, column: str, *, limit: int = TEXT_MAX) -> str | None:
    """Optional text (an id, judge, question, category): empty is absent; a value
    longer than ``limit`` or with a character :mod:`arena.core.text` forbids
    (NUL, controls, bidi overrides, lone surrogates) is an error naming it."""
    if value is None:
        return None
    text: str = value if isinstance(value, str) else str(value)
    if text == "":
        return None
    problem = text_problem(text, limit=limit)
    if problem is not None:
        raise RowError(column, problem)
    return text


def text_column_ok(values: Sequence[str], *, limit: int = TEXT_MAX) -> bool:
    """The column form of :func:`text` for a column of present values: every value
    is stored as it is (none empty, none too long, no forbidden character).

    One ``isprintable`` over the joined column (C speed) clears the common case;
    a column with any other character goes row by row, which names it.
    """
    return (
        "" not in values
        and max(map(len, values), default=0) <= limit
        and " ".join(values).isprintable()
    )


def timestamp(value: Any, column: str) -> datetime | None:
    """Unix seconds or ISO 8601, as an aware UTC datetime (an offset is converted,
    a time without offset is taken as UTC), so both engines store the same instant."""
    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = None
    if seconds is not None:
        if not math.isfinite(seconds):
            raise RowError(column, f"not a finite number: {value!r}")
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise RowError(column, f"out of range: {value!r}") from None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise RowError(column, f"not a Unix time or ISO 8601 date: {value!r}") from None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise RowError(column, f"out of range in UTC: {value!r}") from None


def weight(value: Any, column: str) -> float:
    """A battle weight: empty is 1; otherwise a number with 0 < w <= WEIGHT_MAX."""
    if value is None or value == "":
        return 1.0
    if isinstance(value, bool):
        raise RowError(column, f"not a number: {value!r}")
    try:
        w = float(value)
    except (TypeError, ValueError):
        raise RowError(column, f"not a number: {value!r}") from None
    if not (math.isfinite(w) and 0 < w <= WEIGHT_MAX):
        raise RowError(column, f"must be a number with 0 < weight <= {WEIGHT_MAX:g}, got {value!r}")
    return w


def count(value: Any, column: str) -> int:
    """How many battles of one kind an aggregated row stands for (a whole number >= 0)."""
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        raise RowError(column, f"not a whole number: {value!r}") from None
    if n < 0:
        raise RowError(column, f"must not be negative, got {n}")
    return n


@dataclass(frozen=True)
class Vocabulary:
    """The outcome values of one input shape: raw value -> (outcome, weight)."""

    values: Mapping[str, tuple[str, float]]
    #: characters stripped around a raw value before the lookup (``[A>B]``)
    strip: str = ""

    def __call__(self, raw: Any, column: str) -> tuple[str, float]:
        if raw is None or raw == "":
            raise RowError(column, "missing")
        found = self.values.get(str(raw).strip().strip(self.strip))
        if found is None:
            allowed = " | ".join(self.values)
            raise RowError(column, f"unknown value {raw!r} (expected {allowed})")
        return found

    @property
    def plain(self) -> dict[str, str] | None:
        """raw -> outcome for the column fast path: only for unit weights, exact values."""
        if self.strip or any(w != 1.0 for _, w in self.values.values()):
            return None
        return {raw: outcome for raw, (outcome, _) in self.values.items()}


def tags_true(prefix: str, value: Any, out: list[str]) -> None:
    """Category names a tag value puts the battle in (nested JSON objects: ``a.b``)."""
    if value is True or (isinstance(value, str) and value in TRUE):
        out.append(prefix)
    elif isinstance(value, dict):
        for key, inner in value.items():
            tags_true(f"{prefix}.{key}", inner, out)
