"""Reading an input file as chunks of parsed records (the ingest's input side).

A CSV file arrives in blocks that the column fast path validates column-wise
(:func:`arena.ingest.records.csv_block_parser`) where the shape allows, else
row by row; JSON and JSON lines record by record.  Every chunk keeps, beside
its battles, where each came from and the raw record, so a rejected one can
be reported with its line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from arena.ingest.records import (
    ColumnBlock,
    ParsedBattle,
    RowError,
    Schema,
    csv_block_parser,
    csv_parser,
    json_block_parser,
    parse_json_object,
    resolve_schema,
)
from arena.ingest.sources import (
    BadJson,
    CsvBlock,
    InputError,
    InputFile,
    iter_json_array,
    iter_jsonl,
    jsonl_blocks,
    parse_jsonl_line,
    read_csv,
)

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
) -> Iterator[Chunk]:
    """JSON lines in blocks: parsed in one call and validated column-wise where the
    block allows (:func:`arena.ingest.records.json_block_parser`), else line by
    line -- the same battles, and the same errors with their lines."""
    schemas: Schemas = {}
    parsers: dict[tuple[str, ...], Any] = {}
    for block in jsonl_blocks(source, binary, rows=rows, first_line=skip_lines):
        battles = None
        objects = block.objects
        if objects and objects[0].__class__ is dict and not block.spaced:
            keys = tuple(objects[0])
            parser = parsers.get(keys)
            if parser is None and keys not in parsers:
                schema = _schema_of(objects[0], mapping, max_expand, schemas)
                parser = None if isinstance(schema, RowError) else json_block_parser(schema, keys)
                parsers[keys] = parser
            if parser is not None:
                battles = parser(objects, block.key_marks())
        if battles is not None:
            yield Chunk(
                battles=battles,
                where=[f"line {n}" for n in block.lines],
                records=objects,
                rows_read=len(battles),
            )
            continue
        chunk = Chunk()
        items = (
            (f"line {n}", parse_jsonl_line(t))
            for n, t in zip(block.lines, block.texts, strict=True)
        )
        for location, record, parsed in _json_items(items, mapping, max_expand, schemas):
            _add(chunk, location, record, parsed)
        yield chunk


@dataclass
class Chunk:
    """Up to rows parsed records, with what is needed to report on any of them.

    A block of plain CSV rows arrives as ``columns`` (validated column-wise);
    anything else as one :class:`ParsedBattle` per battle.
    """

    columns: ColumnBlock | None = None
    battles: list[ParsedBattle] = field(default_factory=list)
    where: list[Location] = field(default_factory=list)
    records: Any = field(default_factory=list)  # a list, or _BlockRecords
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
) -> Iterator[Chunk]:
    """The file's records in chunks of about ``rows`` battles, parsed, errors kept beside them.

    ``skip_lines``: lines of the file not in ``binary`` (a stored prefix, see
    :mod:`arena.ingest.prefix`), so that line numbers stay those of the file.
    """
    if fmt == "csv":
        yield from _csv_chunks(source, binary, mapping, max_expand, rows, skip_lines)
        return
    if fmt == "jsonl":
        yield from _jsonl_chunks(source, binary, mapping, max_expand, rows, skip_lines)
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
