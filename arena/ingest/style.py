"""Style metadata of a battle: LMArena's ``conv_metadata`` and user covariates.

Accepted as LMArena and arena-hard-auto write it:

- nested, in JSON and JSON lines: ``"conv_metadata": {"sum_assistant_a_tokens": 333,
  "header_count_a": {"h1": 1, ..., "h6": 0}, "list_count_a": {"ordered": 0,
  "unordered": 6}, "bold_count_a": {"**": 0, "__": 0}, ... the same with _b}``;
- flat, in CSV (or as top-level JSON keys): columns ``sum_assistant_a_tokens``,
  ``header_count_a``, ``list_count_a``, ``bold_count_a`` and the ``_b`` ones,
  each a whole number; or one column per sub-count (``header_count_a.h1``, as
  ``pandas.json_normalize`` writes it), summed. A ``conv_metadata.`` prefix on
  the column names is allowed.

Each count is a whole number >= 0, or an object of such sub-counts (summed).
The four standard features per side: tokens, headers (h1..h6), lists (ordered
+ unordered), bold (``**`` + ``__``).  If a battle has any of them it must have
all eight values (both sides of every feature); a battle with none of them (no
``conv_metadata``, ``null``, or empty cells) is stored without style metadata.

User covariates (a sentiment score, an emoji count, ...): a pair of keys
``NAME_a`` / ``NAME_b`` inside ``conv_metadata`` (JSON), or of columns
``conv_metadata.NAME_a`` / ``conv_metadata.NAME_b`` (CSV), with finite numbers;
NAME is a letter, then letters, digits or ``_`` (at most 64).  Other keys of
``conv_metadata`` (``sum_user_tokens``, ``turns``, ``context_a_tokens``) are
ignored.  Stored per battle and side; ``arena rebuild --style-feature NAME``
uses them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress
from operator import add, itemgetter
from typing import Any, NamedTuple

from arena.db.tables import STYLE_FEATURES as FEATURES
from arena.ingest.errors import RowError

PREFIX = "conv_metadata"
_KEY_FORMAT = {
    "tokens": "sum_assistant_{}_tokens",
    "headers": "header_count_{}",
    "lists": "list_count_{}",
    "bold": "bold_count_{}",
}
#: conv_metadata keys of the standard features, in stored-column order.
STANDARD_KEYS = tuple(_KEY_FORMAT[f].format(side) for f in FEATURES for side in "ab")
#: battle_style columns, in the same order.
STYLE_COLUMNS = tuple(f"{f}_{side}" for f in FEATURES for side in "ab")
#: Largest count accepted (stored as 32-bit integers, tokens as 64-bit).
COUNT_MAX = 2_000_000_000
_COVARIATE = re.compile(r"([A-Za-z][A-Za-z0-9_]{0,63})_([ab])")


class Style(NamedTuple):
    """A battle's validated style metadata."""

    #: the eight standard counts in :data:`STYLE_COLUMNS` order, or None
    counts: tuple[int, ...] | None
    #: (name, value of side a, value of side b) of each user covariate
    covariates: tuple[tuple[str, float, float], ...] = ()


def _whole(value: Any, where: str) -> int:
    if isinstance(value, bool) or value is None:
        raise RowError(where, f"not a whole number: {value!r}")
    if isinstance(value, int):
        n = value
    elif isinstance(value, float) and value.is_integer():
        n = int(value)
    elif isinstance(value, str):
        try:
            n = int(value.strip())
        except ValueError:
            raise RowError(where, f"not a whole number: {value!r}") from None
    else:
        raise RowError(where, f"not a whole number: {value!r}")
    if not 0 <= n <= COUNT_MAX:
        raise RowError(where, f"must be between 0 and {COUNT_MAX}, got {n}")
    return n


def _count(value: Any, where: str) -> int:
    """A count, or an object of sub-counts (summed)."""
    if isinstance(value, Mapping):
        total = sum(_whole(inner, f"{where}.{key}") for key, inner in value.items())
        if total > COUNT_MAX:
            raise RowError(where, f"sum must be at most {COUNT_MAX}, got {total}")
        return total
    return _whole(value, where)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or isinstance(value, (Mapping, list)) or value is None:
        raise RowError(where, f"not a number: {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise RowError(where, f"not a number: {value!r}") from None
    if not math.isfinite(x):
        raise RowError(where, f"not a finite number: {value!r}")
    return x


def _absent(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, Mapping) and not value)


def covariate_names(keys: Iterable[str], where: str) -> list[str]:
    """User covariate names among ``keys`` (``NAME_a`` / ``NAME_b`` pairs), sorted.

    Raises RowError when one side of a pair is missing.
    """
    sides: dict[str, set[str]] = {}
    standard = set(STANDARD_KEYS)
    for key in keys:
        match = _COVARIATE.fullmatch(key)
        if match and key not in standard:
            sides.setdefault(match[1], set()).add(match[2])
    for name, found in sorted(sides.items()):
        if found != {"a", "b"}:
            other = "b" if "a" in found else "a"
            raise RowError(f"{where}{name}_{other}", "missing (a covariate needs both sides)")
    return sorted(sides)


def _plain_counts(values: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The eight standard counts when every one is a plain valid count; else None.

    The common case of LMArena's metadata (whole numbers, or non-empty objects
    of whole numbers), checked by exact type in one pass: about a fifth of the
    cost of :func:`_parse`, which decides (and names the field of) every
    other case.
    """
    out = []
    for key in STANDARD_KEYS:
        value: Any = values.get(key)  # raw JSON, checked by exact type below
        kind = type(value)
        if kind is int:
            if not 0 <= value <= COUNT_MAX:
                return None
            out.append(value)
        elif kind is dict and value:
            total = 0
            for inner in value.values():
                if type(inner) is not int or inner < 0:
                    return None
                total += inner
            if total > COUNT_MAX:
                return None
            out.append(total)
        else:
            return None
    return tuple(out)


#: covariate names of a conv_metadata key set (records of one file share theirs)
_NAMES_OF_KEYS: dict[tuple[str, ...], list[str]] = {}


def _nested_covariates(meta: Mapping[str, Any]) -> list[str]:
    keys = tuple(meta)
    names = _NAMES_OF_KEYS.get(keys)
    if names is None:
        names = covariate_names(keys, f"{PREFIX}.")  # raises for half a pair: not cached
        if len(_NAMES_OF_KEYS) < 1024:
            _NAMES_OF_KEYS[keys] = names
    return names


def _parse(values: Mapping[str, Any], covariates: Iterable[str], where: str) -> Style | None:
    """Validate the standard keys and the given covariates of one record's metadata."""
    present = [k for k in STANDARD_KEYS if not _absent(values.get(k))]
    counts = None
    if present:
        if len(present) < len(STANDARD_KEYS):
            missing = next(k for k in STANDARD_KEYS if k not in present)
            raise RowError(f"{where}{missing}", "missing (style metadata needs both sides)")
        counts = tuple(_count(values[k], f"{where}{k}") for k in STANDARD_KEYS)
    found = []
    for name in covariates:
        a, b = values.get(f"{name}_a"), values.get(f"{name}_b")
        if _absent(a) and _absent(b):
            continue
        for side, value in (("a", a), ("b", b)):
            if _absent(value):
                raise RowError(f"{where}{name}_{side}", "missing (a covariate needs both sides)")
        found.append((name, _number(a, f"{where}{name}_a"), _number(b, f"{where}{name}_b")))
    if counts is None and not found:
        return None
    return Style(counts, tuple(found))


@dataclass(frozen=True)
class StyleShape:
    """Where one input shape keeps its style metadata; resolved once per header.

    Either ``nested`` (the name of a column/key holding a ``conv_metadata``
    object) or flat columns: ``keys`` maps each metadata key to the column
    holding it, or to its sub-count columns (``header_count_a.h1`` ...).
    """

    nested: str | None = None
    keys: Mapping[str, str | tuple[tuple[str, str], ...]] = field(default_factory=dict)
    covariates: tuple[str, ...] = ()

    @property
    def columns(self) -> frozenset[str]:
        """Every input column this shape reads (they are not category tags)."""
        if self.nested is not None:
            return frozenset({self.nested})
        out: set[str] = set()
        for value in self.keys.values():
            out.update([value] if isinstance(value, str) else (c for _, c in value))
        return frozenset(out)

    def parse(self, column: Callable[[str], Any]) -> Style | None:
        """The battle's style, reading raw values by column name; None without metadata."""
        if self.nested is not None:
            meta = column(self.nested)
            if _absent(meta):
                return None
            if not isinstance(meta, Mapping):
                raise RowError(self.nested, f"not an object: {meta!r}")
            names = _nested_covariates(meta)
            if not names:
                counts = _plain_counts(meta)
                if counts is not None:
                    return Style(counts)
            return _parse(meta, names, f"{PREFIX}.")
        values: dict[str, Any] = {}
        for key, source in self.keys.items():
            if isinstance(source, str):
                values[key] = column(source)
            else:
                subs = {sub: column(c) for sub, c in source}
                values[key] = {s: v for s, v in subs.items() if not _absent(v)}
        if not self.covariates:
            counts = _plain_counts(values)
            if counts is not None:
                return Style(counts)
        return _parse(values, self.covariates, "")


@dataclass
class StyleColumns:
    """Style metadata of a whole block of rows (the column form of :meth:`StyleShape.parse`)."""

    #: the eight standard counts per row (STYLE_COLUMNS order; None for a row whose
    #: style cells are all empty: stored without metadata), or None without them
    counts: list[tuple[int, ...] | None] | None
    #: (name, side-a values, side-b values) per user covariate
    covariates: list[tuple[str, list[float], list[float]]]


def _column(values: Sequence[str], rule: Callable[[Any, str], Any], where: str) -> list[Any] | None:
    """``rule`` applied to a column, once per distinct value; None if a value fails it."""
    known = {}
    for value in set(values):
        try:
            known[value] = rule(value, where)
        except RowError:
            return None
    return list(map(known.__getitem__, values))


def _empty_rows(shape: StyleShape, column: Callable[[str], Sequence[str]]) -> list[int] | None:
    """Positions of the rows whose style cells are all empty (stored without
    metadata), when every other row has none empty; None otherwise (the row path
    decides: half a battle's metadata is an error, an empty sub-count is left out)."""
    names = sorted(shape.columns)
    first = column(names[0])
    if "" not in first:
        return [] if all("" not in column(name) for name in names[1:]) else None
    empty = [i for i, value in enumerate(first) if value == ""]
    cells = itemgetter(*empty) if len(empty) > 1 else None
    for name in names[1:]:
        values = column(name)
        if values.count("") != len(empty):
            return None
        # as many empty cells, all where the first column's are: the same rows
        if (set(cells(values)) if cells is not None else {values[empty[0]]}) != {""}:
            return None
    return empty


def parse_columns(shape: StyleShape, column: Callable[[str], Sequence[str]]) -> StyleColumns | None:
    """Flat style columns of one block, validated column by column.

    None when the block needs the row path: nested metadata, user covariates
    with an empty cell, a row with some style cells empty and others not, or
    an invalid cell (the row path then names the line and field of the
    error).  A row whose style cells are all empty has no metadata (its counts
    are None).  Same rules as :meth:`StyleShape.parse`.
    """
    if shape.nested is not None:
        return None
    empty: list[int] = []
    if not shape.covariates:
        found = _empty_rows(shape, column)
        if found is None:
            return None
        empty = found
    if empty:
        # the rows with metadata: those with a non-empty cell (all theirs are)
        has_meta = list(map(bool, column(next(iter(shape.columns)))))
        keep = list(compress(range(len(has_meta)), has_meta))
        full = column

        def column(name: str) -> Sequence[str]:
            return list(compress(full(name), has_meta))

    counts: list[tuple[int, ...] | None] | None = None
    present = [k for k in STANDARD_KEYS if k in shape.keys]
    if present:
        if len(present) < len(STANDARD_KEYS):
            return None
        values = []
        for key in STANDARD_KEYS:
            source = shape.keys[key]
            if isinstance(source, str):
                got = _column(column(source), _whole, key)
            else:
                parts = [_column(column(c), _whole, f"{key}.{sub}") for sub, c in source]
                got = None if None in parts else list(map(sum, zip(*parts, strict=True)))
                if got is not None and max(got, default=0) > COUNT_MAX:
                    got = None
            if got is None:
                return None
            values.append(got)
        counts = list(zip(*values, strict=True))
        if empty:
            full_counts: list[tuple[int, ...] | None] = [None] * (len(counts) + len(empty))
            for i, row in zip(keep, counts, strict=True):
                full_counts[i] = row
            counts = full_counts
    covariates = []
    for name in shape.covariates:
        key_a, key_b = shape.keys[f"{name}_a"], shape.keys[f"{name}_b"]
        assert isinstance(key_a, str) and isinstance(key_b, str)  # a covariate is one column
        a = _column(column(key_a), _number, name)
        b = _column(column(key_b), _number, name) if a is not None else None
        if a is None or b is None:
            return None
        covariates.append((name, a, b))
    return StyleColumns(counts, covariates)


def resolve_style(names: Iterable[str]) -> StyleShape | None:
    """How the columns ``names`` carry style metadata, or None if they do not.

    Raises RowError for a covariate column without its other side.
    """
    names = list(names)
    if PREFIX in names:
        return StyleShape(nested=PREFIX)
    standard = set(STANDARD_KEYS)
    keys: dict[str, Any] = {}
    subs: dict[str, list[tuple[str, str]]] = {}
    covariate_columns: dict[str, str] = {}
    for column in names:
        prefixed = column.startswith(PREFIX + ".")
        key = column[len(PREFIX) + 1 :] if prefixed else column
        head, _, sub = key.partition(".")
        if key in standard:
            keys[key] = column
        elif sub and head in standard:
            subs.setdefault(head, []).append((sub, column))
        elif prefixed and _COVARIATE.fullmatch(key):
            covariate_columns[key] = column
    for head, columns in subs.items():
        if head in keys:
            raise RowError(
                head, f"given both as a column and as sub-count columns ({columns[0][1]})"
            )
        keys[head] = tuple(columns)
    covariates = covariate_names(covariate_columns, f"{PREFIX}.")
    for name in covariates:
        for side in "ab":
            keys[f"{name}_{side}"] = covariate_columns[f"{name}_{side}"]
    if not keys:
        return None
    return StyleShape(keys=keys, covariates=tuple(covariates))


def _count_column(values: list[Any]) -> list[int] | None:
    """The column form of :func:`_plain_counts` for one key: whole numbers, or
    non-empty objects of whole numbers, summed; None
    when any value is otherwise (the row path then decides and names it).

    Checked by exact type on whole columns (``bool`` is not ``int`` here, as
    in :func:`_plain_counts`)."""
    kinds = set(map(type, values))
    if kinds == {int}:
        if values and (min(values) < 0 or max(values) > COUNT_MAX):
            return None
        return values
    if kinds != {dict}:
        return None
    sizes = set(map(len, values))
    if len(sizes) != 1 or 0 in sizes:
        # {} is absent metadata: the row path decides.  Objects of one size: the
        # block's records then all hold as many keys, which the count of keys
        # written on each line is checked against (a key named twice in one of
        # them, another left out, would otherwise pass)
        return None
    inner = list(chain.from_iterable(map(dict.values, values)))  # one walk of the dicts
    if set(map(type, inner)) != {int} or min(inner) < 0:
        return None
    (size,) = sizes
    if size == 2:  # lists and bold: two sub-counts, added pairwise at C speed
        total = list(map(add, inner[::2], inner[1::2]))
    else:
        total = list(map(sum, zip(*[iter(inner)] * size, strict=True)))  # one run per object
    if max(total) > COUNT_MAX:
        return None
    return total


def style_column(
    shape: StyleShape, values: Callable[[str], list[Any]]
) -> list[tuple[int, ...] | None] | None:
    """The standard style counts of a block of JSON records, column by column.

    ``values(column)`` gives a top-level column of the block.  Only the plain
    case: every record has all eight counts (whole numbers or objects of them)
    and no user covariate; nested metadata objects with identical key sets.
    None otherwise (the row path applies :meth:`StyleShape.parse` record by
    record).  The same result as :meth:`StyleShape.parse` where it gives one.
    """
    if shape.covariates:
        return None
    if shape.nested is not None:
        metas = values(shape.nested)
        if set(map(type, metas)) != {dict}:
            return None
        keys = set(map(tuple, metas))
        if len(keys) != 1:
            return None
        (names,) = keys
        if covariate_names(names, f"{PREFIX}.") or not set(STANDARD_KEYS) <= set(names):
            return None
        for key in names:  # ignored keys: only scalars (so no keys hide in them)
            if key not in STANDARD_KEYS and set(map(type, map(itemgetter(key), metas))) & {
                dict,
                list,
            }:
                return None

        def column(key: str) -> list[Any]:
            return list(map(itemgetter(key), metas))
    else:
        if set(shape.keys) != set(STANDARD_KEYS) or not all(
            isinstance(c, str) for c in shape.keys.values()
        ):
            return None

        def column(key: str) -> list[Any]:
            return values(shape.keys[key])  # type: ignore[arg-type]

    counts = []
    for key in STANDARD_KEYS:
        got = _count_column(column(key))
        if got is None:
            return None
        counts.append(got)
    return list(zip(*counts, strict=True))
