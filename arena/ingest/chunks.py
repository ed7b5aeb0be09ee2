"""Reading an input file as chunks of parsed records (the ingest's input side).

A CSV file arrives in blocks that the column fast path validates column-wise
(:func:`arena.ingest.records.csv_block_parser`) where the shape allows, else
row by row; JSON and JSON lines record by record.  Every chunk keeps, beside
its battles, where each came from and the raw record, so a rejected one can
be reported with its line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import IO, Any

from arena.ingest.csv_blocks import CsvBlock, read_csv
from arena.ingest.json_lines import (
    BadJson,
    iter_json_array,
    iter_jsonl,
    jsonl_blocks,
    parse_jsonl_line,
)
from arena.ingest.records import (
    ColumnBlock,
    ParsedBattle,
    RowError,
    Schema,
    csv_block_parser,
    csv_parser,
    json_block_parser,
    merge_blocks,
    parse_json_object,
    resolve_schema,
)
from arena.ingest.sources import InputError, InputFile

__all__ = ["Chunk", "Location", "read_chunks", "where"]


Location = int | str  # a CSV line number, or "line N" / "record N" for JSON


def where(location: Location) -> str:
    return f"line {location}" if isinstance(location, int) else location


Schemas = dict[frozenset[str], "Schema | RowError"]


def _json_items(
    items: Iterator[tuple[Location, Any]],
    mapping: Mapping[str, str],
    max_expand: int,
    schemas: Schemas,
) -> Iterator[tuple[Location, Any, ParsedBattle | list[ParsedBattle] | RowError]]:
    """(location, raw record, parsed battle or the error) of each (location, parsed JSON)."""
    for location, obj in items:
        if isinstance(obj, BadJson):
            yield location, None, RowError("json", f"invalid JSON: {obj.message}")
            continue
        if not isinstance(obj, dict):
            yield location, obj, RowError("json", "not a JSON object")
            continue
        schema = _schema_of(obj, mapping, max_expand, schemas)
        if isinstance(schema, RowError):
            yield location, obj, schema
            continue
        try:
            yield location, obj, parse_json_object(schema, obj)
        except RowError as exc:
            yield location, obj, exc
        except RecursionError:  # category tags nested near the interpreter's limit
            yield location, None, RowError("json", "nested too deeply (not a battle record)")


def _schema_of(
    obj: dict[str, Any], mapping: Mapping[str, str], max_expand: int, schemas: Schemas
) -> Schema | RowError:
    keys = frozenset(obj)
    schema = schemas.get(keys)
    if schema is None:
        try:
            schema = resolve_schema(list(obj), mapping, max_expand=max_expand)
        except RowError as exc:
            schema = exc
        schemas[keys] = schema
    return schema


def _json_records(
    source: InputFile,
    fmt: str,
    binary: IO[bytes],
    mapping: Mapping[str, str],
    max_expand: int,
    skip_lines: int = 0,
) -> Iterator[tuple[Location, Any, ParsedBattle | list[ParsedBattle] | RowError]]:
    """Yield (location, raw record, parsed battle or the error) of a JSON or JSON-lines file."""
    if fmt == "jsonl":
        items = iter_jsonl(source, binary, first_line=skip_lines)
    else:
        items = iter_json_array(source, binary)
    yield from _json_items(items, mapping, max_expand, {})


def _jsonl_chunks(
    source: InputFile,
    binary: IO[bytes],
    mapping: Mapping[str, str],
    max_expand: int,
    rows: int,
    skip_lines: int = 0,
    decoder: str | None = None,
) -> Iterator[Chunk]:
    """JSON lines in blocks: decoded in one call and validated column-wise, each set
    of records sharing their keys (in order) apart
    (:func:`arena.ingest.records.json_block_parser`); the records no column parser
    takes (a bad value, an unusual shape) go line by line -- the same battles,
    in the file's order, and the same errors with their lines."""
    schemas: Schemas = {}
    parsers: dict[tuple[str, ...], Any] = {}

    def parser_for(obj: dict[str, Any]) -> Any:
        keys = tuple(obj)
        parser = parsers.get(keys)
        if parser is None and keys not in parsers:
            schema = _schema_of(obj, mapping, max_expand, schemas)
            parser = None if isinstance(schema, RowError) else json_block_parser(schema, keys)
            parsers[keys] = parser
        return parser

    for block in jsonl_blocks(source, binary, rows=rows, first_line=skip_lines, decoder=decoder):
        objects = block.objects
        n = len(block.lines)
        results: list[Any] = [None] * n
        slow: Sequence[int] = range(n)  # positions for the line-by-line path
        if objects is not None and not block.spaced:
            groups = _by_keys(objects)
            odd = groups.pop(None, [])
            marks = block.key_marks()
            parts: list[tuple[list[int], ColumnBlock]] = []
            slow_list = odd
            for positions in groups.values():
                parser = parser_for(objects[positions[0]])
                columns = None
                if parser is not None:
                    if len(positions) == n:
                        columns = parser(objects, marks)
                    else:
                        columns = parser(
                            [objects[i] for i in positions], [marks[i] for i in positions]
                        )
                if columns is None:
                    slow_list.extend(positions)
                else:
                    parts.append((positions, columns))
            merged = None
            if not slow_list:
                merged = parts[0][1] if len(parts) == 1 else merge_blocks(parts, n)
            if merged is not None:
                yield Chunk(
                    columns=merged,
                    where=_Lines(block.lines),
                    records=_LineRecords(block.texts, texts=True),
                    rows_read=n,
                )
                continue
            for positions, columns in parts:
                for i, battle in zip(positions, columns.battles(), strict=True):
                    results[i] = battle
            slow = sorted(slow_list)
        if slow:
            items = ((f"line {block.lines[i]}", parse_jsonl_line(block.texts[i])) for i in slow)
            parsed = _json_items(items, mapping, max_expand, schemas)
            for i, (location, record, result) in zip(slow, parsed, strict=True):
                results[i] = (location, record, result)
        chunk = Chunk()
        if len(slow) == n:
            for location, record, result in results:
                _add(chunk, location, record, result)
            yield chunk
            continue
        assert objects is not None  # the column parsers took some records
        slow_set = set(slow)
        for i, result in enumerate(results):
            if i in slow_set:
                _add(chunk, *result)
            else:
                chunk.rows_read += 1
                chunk.battles.append(result)
                chunk.where.append(f"line {block.lines[i]}")
                chunk.records.append(_LineRecord(block.texts[i]))
        chunk.records = _LineRecords(chunk.records)
        yield chunk


def _by_keys(objects: list[Any]) -> dict[Any, list[int]]:
    """Positions of the objects by their keys (in order; first seen first); those that
    are not objects under None."""
    n = len(objects)
    if set(map(type, objects)) == {dict}:
        keys = list(map(tuple, objects))
        distinct = dict.fromkeys(keys)
        if len(distinct) == 1:
            return {keys[0]: list(range(n))}
        if len(distinct) <= 4:  # LMArena's: with conv_metadata and without
            everyone = range(n)
            return {k: list(compress(everyone, map(k.__eq__, keys))) for k in distinct}
    groups: dict[Any, list[int]] = {}
    for i, obj in enumerate(objects):
        groups.setdefault(tuple(obj) if obj.__class__ is dict else None, []).append(i)
    return groups


class _LineRecord:
    """The text of one line whose record was parsed column-wise (decoded if reported)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _LineRecords:
    """The raw records of a block, decoded again by the standard library only for
    the few that are reported, so a report shows what ``json.loads`` reads
    whichever decoder parsed the block."""

    def __init__(self, items: list[Any], *, texts: bool = False) -> None:
        self.items = items
        self.texts = texts  # every item is a line's text

    def __getitem__(self, i: int) -> Any:
        item = self.items[i]
        if self.texts:
            return parse_jsonl_line(item)
        if item.__class__ is _LineRecord:
            return parse_jsonl_line(item.text)
        return item


class _Lines:
    """``line N`` of each record of a block, made only for the few that are reported."""

    def __init__(self, lines: list[int]) -> None:
        self.lines = lines

    def __getitem__(self, i: int) -> str:
        return f"line {self.lines[i]}"

    def __len__(self) -> int:
        return len(self.lines)


@dataclass
class Chunk:
    """Up to rows parsed records, with what is needed to report on any of them.

    A block of plain CSV rows arrives as ``columns`` (validated column-wise);
    anything else as one :class:`ParsedBattle` per battle.
    """

    columns: ColumnBlock | None = None
    battles: list[ParsedBattle] = field(default_factory=list)
    where: Any = field(default_factory=list)  # list[Location], or _Lines
    records: Any = field(default_factory=list)  # a list, _BlockRecords or _LineRecords
    errors: list[tuple[Location, RowError, Any]] = field(default_factory=list)
    rows_read: int = 0


def _csv_chunks(
    source: InputFile,
    binary: IO[bytes],
    mapping: Mapping[str, str],
    max_expand: int,
    rows: int,
    skip_lines: int = 0,
) -> Iterator[Chunk]:
    """CSV blocks, parsed column-wise where the shape allows, else row by row."""
    header, read = read_csv(source, binary, skip_lines=skip_lines)
    try:
        schema = resolve_schema(header, mapping, max_expand=max_expand)
    except RowError as exc:
        raise InputError(f"{source.display}: line 1: {exc}") from None
    block_parser = csv_block_parser(schema, header)
    parse = csv_parser(schema, header)
    while True:
        block = read(rows)
        if not len(block):
            return
        columns = block_parser(block) if block_parser is not None else None
        if columns is not None:
            lines: list[Location] = list(block.lines)
            yield Chunk(
                columns=columns,
                where=lines,
                records=_BlockRecords(block),
                rows_read=len(block),
            )
            continue
        chunk = Chunk()
        for line_no, row in zip(block.lines, block.all_rows(), strict=True):
            try:
                parsed = parse(row)
            except RowError as exc:
                parsed = exc
            _add(chunk, line_no, row, parsed)
        yield chunk


class _BlockRecords:
    """The raw records of a column block, built only for the few that are reported."""

    def __init__(self, block: CsvBlock) -> None:
        self.block = block

    def __getitem__(self, i: int) -> list[str]:
        return self.block.row(i)


def _add(
    chunk: Chunk,
    location: Location,
    record: Any,
    parsed: ParsedBattle | list[ParsedBattle] | RowError,
) -> None:
    chunk.rows_read += 1
    if isinstance(parsed, RowError):
        chunk.errors.append((location, parsed, record))
    elif isinstance(parsed, list):  # an aggregated record stands for several battles
        chunk.battles.extend(parsed)
        chunk.where.extend([location] * len(parsed))
        chunk.records.extend([record] * len(parsed))
    else:
        chunk.battles.append(parsed)
        chunk.where.append(location)
        chunk.records.append(record)


def read_chunks(
    source: InputFile,
    fmt: str,
    binary: IO[bytes],
    mapping: Mapping[str, str],
    max_expand: int,
    *,
    rows: int,
    skip_lines: int = 0,
    decoder: str | None = None,
) -> Iterator[Chunk]:
    """The file's records in chunks of about ``rows`` battles, parsed, errors kept beside them.

    ``skip_lines``: lines of the file not in ``binary`` (a stored prefix, see
    :mod:`arena.ingest.prefix`), so that line numbers stay those of the file.
    ``decoder``: the JSON-lines block decoder (see :data:`arena.ingest.json_lines.BLOCK_DECODERS`).
    """
    if fmt == "csv":
        yield from _csv_chunks(source, binary, mapping, max_expand, rows, skip_lines)
        return
    if fmt == "jsonl":
        yield from _jsonl_chunks(source, binary, mapping, max_expand, rows, skip_lines, decoder)
        return
    chunk = Chunk()
    records = _json_records(source, fmt, binary, mapping, max_expand, skip_lines)
    for location, record, parsed in records:
        _add(chunk, location, record, parsed)
        if len(chunk.battles) >= rows:
            yield chunk
            chunk = Chunk()
    if chunk.rows_read:
        yield chunk
