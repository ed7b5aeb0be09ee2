"""Turning input records into normalised battles, or a field-level error.

Two paths read a :class:`~arena.ingest.shapes.Schema` and apply the same field
rules (:mod:`arena.ingest.fields`): :func:`parse_record`, one record at a time
(JSON, unusual CSV rows; it names the field of an error), and
:func:`csv_block_parser`, whole CSV columns at once for the common shape.  A
block the column path cannot take goes through the row path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import compress
from operator import eq, itemgetter
from typing import Any, NamedTuple, cast

from arena.core.text import text_problem
from arena.ingest import fields
from arena.ingest.csv_blocks import CsvBlock
from arena.ingest.errors import RowError
from arena.ingest.json_lines import key_count
from arena.ingest.shapes import FIELDS, Schema, resolve_schema
from arena.ingest.style import Style, StyleColumns, parse_columns, style_column

__all__ = [
    "FIELDS",
    "SELF_PLAY",
    "ColumnBlock",
    "ParsedBattle",
    "RowError",
    "Schema",
    "csv_block_parser",
    "csv_parser",
    "json_block_parser",
    "parse_json_object",
    "parse_record",
    "resolve_schema",
]

SELF_PLAY = "self_play"
#: Optional text fields: (field, longest value).
_TEXT_FIELDS = (
    ("id", fields.TEXT_MAX),
    ("question", fields.TEXT_MAX),
    ("judge", fields.TEXT_MAX),
    ("language", fields.LANGUAGE_MAX),
)
#: The fields the column fast path handles; a schema with any other goes row by row.
_COLUMN_FIELDS = frozenset({"model_a", "model_b", "winner", "id"})


class ParsedBattle(NamedTuple):
    external_id: str | None
    model_a: str
    model_b: str
    outcome: str  # an Outcome value, e.g. "a_wins"
    weight: float
    question: str | None
    judge: str | None
    language: str | None
    occurred_at: datetime | None
    categories: tuple[str, ...]
    excluded_reason: str | None
    style: Style | None = None


Getter = Callable[[str], Any]


def _expand_counts(schema: Schema, get: Getter, model_a: str, model_b: str) -> list[ParsedBattle]:
    """An aggregated record (``home.wins=4, away.wins=3``) as that many single battles,
    so that resampling battles stays exact; at most ``schema.max_expand`` per row."""
    excluded = SELF_PLAY if model_a == model_b else None
    counts = schema.counts
    assert counts is not None  # only a schema of counts is expanded
    kinds = [
        (fields.count(get(column), column), outcome)
        for column, outcome in zip(counts, ("a_wins", "b_wins"), strict=True)
    ]
    total = sum(n for n, _ in kinds)
    if total > schema.max_expand:
        raise RowError(
            counts[0],
            f"this row stands for {total} battles, more than max_expand={schema.max_expand} allows",
        )
    out: list[ParsedBattle] = []
    for n, outcome in kinds:
        battle = ParsedBattle(
            None, model_a, model_b, outcome, 1.0, None, None, None, None, (), excluded
        )
        out.extend([battle] * n)
    return out


def parse_record(
    schema: Schema, get: Getter, tag_values: Iterable[tuple[str, Any]], column: Getter
) -> ParsedBattle | list[ParsedBattle]:
    """Normalise one record.

    ``get(field)`` returns the raw value of a mapped field, ``tag_values`` yields
    (column, value) pairs of tag columns, ``column(name)`` the raw value of any
    column (style metadata reads its own columns).
    """
    cols = schema.columns
    model_a = schema.names(get("model_a"), cols["model_a"])
    model_b = schema.names(get("model_b"), cols["model_b"])
    if schema.counts is not None:
        return _expand_counts(schema, get, model_a, model_b)
    where = schema.outcome_field
    # a schema without counts has an outcome field and its vocabulary
    assert where is not None and schema.outcomes is not None
    outcome, weight = schema.outcomes(get(where), cols[where])
    if "weight" in cols:
        weight *= fields.weight(get("weight"), cols["weight"])
    categories: list[str] = []
    if "category" in cols:
        raw = get("category")
        if isinstance(raw, list):
            categories.extend(str(c) for c in raw if str(c))
        elif raw not in (None, ""):
            categories.append(str(raw))
    for tag, value in tag_values:
        fields.tags_true(tag, value, categories)
    for name in categories:
        problem = text_problem(name, limit=fields.TEXT_MAX)
        if problem is not None:
            raise RowError("category", f"category name {problem}")
    text = {
        f: fields.text(get(f), cols[f], limit=limit) if f in cols else None
        for f, limit in _TEXT_FIELDS
    }
    return ParsedBattle(
        external_id=text["id"],
        model_a=model_a,
        model_b=model_b,
        outcome=outcome,
        weight=weight,
        question=text["question"],
        judge=text["judge"],
        language=text["language"],
        occurred_at=fields.timestamp(get("tstamp"), cols["tstamp"]) if "tstamp" in cols else None,
        categories=tuple(dict.fromkeys(categories)),
        excluded_reason=SELF_PLAY if model_a == model_b else None,
        style=schema.style.parse(column) if schema.style is not None else None,
    )


def csv_parser(schema: Schema, header: Sequence[str]) -> Callable[[Sequence[str]], Any]:
    """The row path for one CSV header: ``parse(row)`` -> battle(s), or RowError."""
    positions = {name: i for i, name in enumerate(header)}
    index = {f: positions[c] for f, c in schema.columns.items() if c in positions}
    index.update((c, positions[c]) for c in schema.counts or () if c in positions)
    tag_index = [(n, positions[n]) for n in schema.tag_columns]
    truthy = fields.TRUE

    def parse(row: Sequence[str]) -> ParsedBattle | list[ParsedBattle]:
        width = len(row)

        def get(fld: str) -> str | None:
            i = index.get(fld)
            return row[i] if i is not None and i < width else None

        def column(name: str) -> str | None:
            i = positions.get(name)
            return row[i] if i is not None and i < width else None

        tags = ((name, row[i]) for name, i in tag_index if i < width and row[i] in truthy)
        return parse_record(schema, get, tags, column)

    return parse


@dataclass
class ColumnBlock:
    """A block of plain CSV rows, validated and normalised column by column.

    Only for the common shape (model names, winner, optional id and boolean tag
    columns): every value was checked, so the writer can bind whole columns.
    """

    n: int
    model_a: Sequence[str]
    model_b: Sequence[str]
    outcome: list[str]
    external_id: Sequence[str] | None
    #: (category name, positions of the battles it tags)
    tags: list[tuple[str, list[int]]]
    #: positions of self-play battles (stored, excluded from ratings)
    self_play: list[int]
    #: style metadata of every row, if the file has style columns
    style: StyleColumns | None = None
    #: per-row weights (verdicts: a strong one weighs more); None: all 1
    weight: list[float] | None = None
    #: question and judge of every row (JSON lines), if the file has them
    question: Sequence[str] | None = None
    judge: Sequence[str] | None = None

    @property
    def names(self) -> set[str]:
        found = set(self.model_a)
        found.update(self.model_b)
        return found

    def battles(self) -> list[ParsedBattle]:
        """The block as one :class:`ParsedBattle` per row (what the row path gives)."""
        n = self.n
        none = [None] * n
        excluded: list[str | None] = list(none)
        for pos in self.self_play:
            excluded[pos] = SELF_PLAY
        categories: list[list[str]] = [[] for _ in range(n)]
        for name, positions in self.tags:
            for pos in positions:
                categories[pos].append(name)
        style: list[Style | None] = list(none)
        if self.style is not None:
            counts = self.style.counts or none
            for pos in range(n):
                covs = tuple((c, a[pos], b[pos]) for c, a, b in self.style.covariates)
                if counts[pos] is not None or covs:
                    style[pos] = Style(counts[pos], covs)
        return [
            ParsedBattle(*row)
            for row in zip(
                self.external_id or none,
                self.model_a,
                self.model_b,
                self.outcome,
                self.weight or [1.0] * n,
                self.question or none,
                self.judge or none,
                none,
                none,
                map(tuple, categories),
                excluded,
                style,
                strict=True,
            )
        ]


def merge_blocks(parts: list[tuple[list[int], ColumnBlock]], n: int) -> ColumnBlock | None:
    """Column blocks of records sharing keys, put back in the order of their block of
    ``n`` records (``parts``: each block's positions in it); None if their columns
    differ in kind (ids in one and not another, user covariates)."""
    blocks = [b for _, b in parts]
    optional = ("external_id", "question", "judge")
    for name in optional:
        if len({getattr(b, name) is None for b in blocks}) > 1:
            return None
    if any(b.style is not None and b.style.covariates for b in blocks) or any(
        b.tags for b in blocks
    ):
        return None

    def merged(get: Callable[[ColumnBlock], Sequence[Any] | None], fill: Any) -> list[Any]:
        out: list[Any] = [fill] * n
        for positions, block in parts:
            values = get(block)
            if values is None:
                continue
            for pos, value in zip(positions, values, strict=True):
                out[pos] = value
        return out

    style = None
    if any(b.style is not None and b.style.counts is not None for b in blocks):
        style = StyleColumns(merged(lambda b: b.style.counts if b.style else None, None), [])
    weights = None
    if any(b.weight is not None for b in blocks):
        weights = merged(lambda b: b.weight or [1.0] * b.n, 1.0)
    first = blocks[0]
    return ColumnBlock(
        n,
        merged(lambda b: b.model_a, None),
        merged(lambda b: b.model_b, None),
        merged(lambda b: b.outcome, None),
        None if first.external_id is None else merged(lambda b: b.external_id, None),
        [],
        sorted(positions[p] for positions, b in parts for p in b.self_play),
        style,
        weights,
        None if first.question is None else merged(lambda b: b.question, None),
        None if first.judge is None else merged(lambda b: b.judge, None),
    )


def csv_block_parser(
    schema: Schema, header: Sequence[str]
) -> Callable[[CsvBlock], ColumnBlock | None] | None:
    """Column-wise parser for blocks of rows, or None when the shape needs per-row parsing.

    The returned function gives a :class:`ColumnBlock`, or None when anything in
    the block is unusual (a bad value, a short row); the caller then parses that
    block row by row, which names the offending line and field.  The rules are
    those of :func:`parse_record`, in their column forms (:mod:`arena.ingest.fields`).
    """
    winners = schema.outcomes.plain if schema.outcomes is not None else None
    if (
        winners is None
        or schema.counts is not None
        or (schema.style is not None and schema.style.nested is not None)
        or schema.outcome_field != "winner"
        or not set(schema.columns) <= _COLUMN_FIELDS
    ):
        return None
    positions = {name: i for i, name in enumerate(header)}
    index = {f: positions[c] for f, c in schema.columns.items()}
    ia, ib, iw, iid = index["model_a"], index["model_b"], index["winner"], index.get("id")
    tag_index = [(n, positions[n]) for n in schema.tag_columns]
    if any(text_problem(name, limit=fields.TEXT_MAX) for name, _ in tag_index):
        return None  # a tag name not allowed: the row path reports it where it is true
    width = len(header)
    names = schema.names
    truthy = fields.TRUE.__contains__

    def block(raw: CsvBlock) -> ColumnBlock | None:
        """``raw``: a :class:`arena.ingest.csv_blocks.CsvBlock`."""
        n = len(raw)
        if not n:
            return None
        cols: Sequence[Sequence[str]]
        if raw.columns is not None:
            cols = raw.columns
        else:
            assert raw.rows is not None  # row-major when not column-major
            if set(map(len, raw.rows)) != {width}:
                return None
            cols = list(zip(*raw.rows, strict=True))
        outcome = list(map(winners.get, cols[iw]))
        if None in outcome:
            return None
        ca, cb = cols[ia], cols[ib]
        stored = names.column(ca)
        more = names.column(cb) if stored is not None else None
        if stored is None or more is None:
            return None
        stored.update(more)
        if any(k != v for k, v in stored.items()):  # a name normalised (NFC, spaces)
            ca, cb = list(map(stored.__getitem__, ca)), list(map(stored.__getitem__, cb))
        ext = cols[iid] if iid is not None else None
        if ext is not None and not fields.text_column_ok(ext):
            return None
        positions_ = range(n)
        tags = []
        for name, i in tag_index:
            hit = list(compress(positions_, map(truthy, cols[i])))
            if hit:
                tags.append((name, hit))
        style = None
        if schema.style is not None:
            style = parse_columns(schema.style, lambda name: cols[positions[name]])
            if style is None:
                return None
        self_play = list(compress(positions_, map(eq, ca, cb)))
        # no None among the outcomes (checked above)
        return ColumnBlock(n, ca, cb, cast(list[str], outcome), ext, tags, self_play, style)

    return block


def parse_json_object(schema: Schema, obj: Mapping[str, Any]) -> ParsedBattle | list[ParsedBattle]:
    cols = schema.columns

    def get(fld: str) -> Any:
        return obj.get(cols.get(fld, fld))

    tags = ((name, obj.get(name)) for name in schema.tag_columns if name in obj)
    return parse_record(schema, get, tags, obj.get)


#: Fields the JSON block path handles (with the schema's outcome field and style).
_JSON_BLOCK_FIELDS = frozenset(
    {"model_a", "model_b", "winner", "verdict", "id", "question", "judge"}
)


def json_block_parser(
    schema: Schema, keys: Sequence[str]
) -> Callable[[list[Any], list[int]], ColumnBlock | None] | None:
    """Column-wise parser for a block of JSON-lines records with the keys ``keys``, or
    None when the shape needs per-record parsing.

    The returned function takes the block's parsed objects (all with exactly
    these keys, in this order) and the count of ``":`` in each line; it gives
    a :class:`ColumnBlock`, or None when anything in the block is unusual or a line may
    not be exactly its object (a key given twice, a value spanning lines); the
    caller then parses that block record by record, which names the line and
    field.  The rules are those of :func:`parse_record`, in column form.
    """
    cols = schema.columns
    if (
        schema.counts is not None
        or schema.outcomes is None
        or schema.tag_columns
        or not set(cols) <= _JSON_BLOCK_FIELDS
        or len(set(cols.values())) != len(cols)
    ):
        return None
    style_shape = schema.style
    used = set(cols.values()) | (style_shape.columns if style_shape is not None else set())
    if used != set(keys):
        return None
    outcome_field = schema.outcome_field
    assert outcome_field is not None  # a schema without counts
    outcomes = schema.outcomes
    names = schema.names
    text_fields = [(f, cols[f], limit) for f, limit in _TEXT_FIELDS if f in cols]
    text_columns = {c for _, c, _ in text_fields}
    str_columns = [cols["model_a"], cols["model_b"], cols[outcome_field], *text_columns]

    def block(objects: list[Any], key_marks: list[int]) -> ColumnBlock | None:
        # the caller groups the records by their key tuple: all are dicts with ``keys``
        n = len(objects)
        if not n:
            return None

        def column(name: str) -> list[Any]:
            return list(map(itemgetter(name), objects))

        values = {c: column(c) for c in str_columns}
        if any(set(map(type, v)) != {str} for v in values.values()):
            return None
        style = None
        if style_shape is not None:
            counts = style_column(style_shape, lambda name: values.get(name) or column(name))
            if counts is None:
                return None
            style = StyleColumns(counts, [])
        # every line names exactly its object's keys: no key twice, no value across lines
        if set(key_marks) != {key_count(objects[0])}:
            return None
        stored = names.column(values[cols["model_a"]])
        more = names.column(values[cols["model_b"]]) if stored is not None else None
        if stored is None or more is None:
            return None
        stored.update(more)
        ca = list(map(stored.__getitem__, values[cols["model_a"]]))
        cb = list(map(stored.__getitem__, values[cols["model_b"]]))
        raw = values[cols[outcome_field]]
        found = {}
        for value in set(raw):
            try:
                found[value] = outcomes(value, cols[outcome_field])
            except RowError:
                return None
        outcome = [found[v][0] for v in raw]
        weight = [found[v][1] for v in raw]
        text: dict[str, Any] = {}
        for f, c, limit in text_fields:
            if not fields.text_column_ok(values[c], limit=limit):
                return None
            text[f] = values[c]
        return ColumnBlock(
            n,
            ca,
            cb,
            outcome,
            text.get("id"),
            [],
            list(compress(range(n), map(eq, ca, cb))),
            style,
            None if set(weight) == {1.0} else weight,
            text.get("question"),
            text.get("judge"),
        )

    return block
