"""Reading CSV input in blocks of records, with their line numbers.

Every record comes with its line number so that an error can name the file,
line and field.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain, islice, repeat
from typing import IO, Any

from arena.ingest.sources import LINE_MAX, InputError, InputFile, bounded_lines, first_bad_line

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


#: Characters of text read at a time by the quote-free fast path (bounded memory).
_BLOCK_CHARS = 1 << 21


@dataclass
class CsvBlock:
    """Consecutive CSV records with their line numbers.

    Column-major (``columns``, one list per header column) when every record
    has the header's width and came through the quote-free fast path, else
    row-major (``rows``).
    """

    lines: list[int]
    rows: list[list[str]] | None = None
    columns: list[list[str]] | None = None

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def _by_column(self) -> list[list[str]]:
        """``columns`` of a block that is not row-major (one of the two is set)."""
        assert self.columns is not None
        return self.columns

    def row(self, i: int) -> list[str]:
        return self.rows[i] if self.rows is not None else [col[i] for col in self._by_column]

    def all_rows(self) -> list[list[str]]:
        return (
            self.rows
            if self.rows is not None
            else [list(r) for r in zip(*self._by_column, strict=True)]
        )

    def split(self, n: int) -> tuple[CsvBlock, CsvBlock]:
        if self.rows is not None:
            return CsvBlock(self.lines[:n], rows=self.rows[:n]), CsvBlock(
                self.lines[n:], rows=self.rows[n:]
            )
        return (
            CsvBlock(self.lines[:n], columns=[c[:n] for c in self._by_column]),
            CsvBlock(self.lines[n:], columns=[c[n:] for c in self._by_column]),
        )

    def extend(self, other: CsvBlock) -> CsvBlock:
        if not self.lines:
            return other
        if (
            self.columns is not None
            and other.columns is not None
            and len(self.columns) == len(other.columns)
        ):
            return CsvBlock(
                self.lines + other.lines,
                columns=[a + b for a, b in zip(self.columns, other.columns, strict=True)],
            )
        return CsvBlock(self.lines + other.lines, rows=self.all_rows() + other.all_rows())


def read_csv(
    source: InputFile, binary: IO[bytes], *, skip_lines: int = 0
) -> tuple[list[str], Callable[[int], CsvBlock]]:
    """The header and a block reader: ``read(n)`` gives the next (up to) n records.

    See :class:`CsvBlocks`.  On a decoding error the file is scanned again to
    name the offending line.  ``skip_lines``: the records start after that many
    lines of the file (the header, then rows stored before, left out of ``binary``).
    """
    blocks = CsvBlocks(source, binary)
    if skip_lines:
        blocks.line = skip_lines
    return blocks.header, blocks.read


class CsvBlocks:
    """The records of one CSV stream, read in blocks.

    A block of text without quotes, lone carriage returns or NULs is split on
    commas at C speed, straight into columns when every line has the header's
    width (what csv.reader would give, several times faster); from the first
    block that has any of those, the rest of the file goes through csv.reader
    (``fast`` turns False for good).  Line numbers are exact either way (csv
    mode counts the line breaks inside quoted fields).  Blank lines are skipped.
    """

    def __init__(self, source: InputFile, binary: IO[bytes]) -> None:
        self.source = source
        self.stream = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="strict", newline="")
        self.reader = csv.reader(self._lines(self.stream))
        try:
            header = next(self.reader)
        except StopIteration:
            raise InputError(f"{source.display}: empty file (no CSV header)") from None
        except csv.Error as exc:
            raise InputError(f"{source.display}: line 1: malformed CSV: {exc}") from None
        except UnicodeDecodeError as exc:
            raise self._bad_bytes(exc) from None
        self.header = [h.strip() for h in header]
        repeated = sorted({h for h in self.header if h and self.header.count(h) > 1})
        if repeated:
            raise InputError(
                f"{source.display}: line 1: column {repeated[0]!r} appears more than once "
                "in the header (which one holds the data?)"
            )
        self.width = len(header)
        self.fast = True  # quote-free blocks so far
        self.eof = False
        self.line = self.reader.line_num  # last line read by the fast path
        self.base = 0  # lines read before the csv reader took over
        self.pending = CsvBlock([], rows=[])

    def _lines(self, stream: IO[Any]) -> Iterator[str]:
        return bounded_lines(stream, LINE_MAX, self.source.display)

    def _bad_bytes(self, _exc: UnicodeDecodeError) -> InputError:
        # The decoder works on large blocks, so find the line again (error path only).
        return InputError(f"{self.source.display}: {first_bad_line(self.source)}")

    def _empty(self) -> CsvBlock:
        return CsvBlock([], columns=[[] for _ in range(self.width)])

    def _read_fast(self) -> CsvBlock | None:
        """The next quote-free block, or None (and csv mode from here) if it is not one."""
        try:
            text = self.stream.read(_BLOCK_CHARS)
            if text and not text.endswith("\n"):
                rest = self.stream.readline(LINE_MAX)
                if len(rest) >= LINE_MAX and not rest.endswith("\n"):
                    raise InputError(
                        f"{self.source.display}: line {self.line + text.count(chr(10)) + 1}: "
                        f"a line longer than {LINE_MAX} characters "
                        "(not a battle record; is it the right file?)"
                    )
                text += rest
        except UnicodeDecodeError as exc:
            raise self._bad_bytes(exc) from None
        if "\r\n" in text:
            text = text.replace("\r\n", "\n")
        if '"' in text or "\r" in text or "\x00" in text:
            # hand the block and the rest of the stream to csv.reader
            self.fast = False
            self.base = self.line
            self.reader = csv.reader(chain(io.StringIO(text, newline=""), self._lines(self.stream)))
            return None
        if not text:
            self.eof = True
            return self._empty()
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        first = self.line + 1
        self.line += len(lines)
        numbers = list(range(first, first + len(lines)))
        if "" in lines:  # blank lines
            keep = [i for i, line in enumerate(lines) if line]
            lines = [lines[i] for i in keep]
            numbers = [numbers[i] for i in keep]
        if not lines:
            return self._empty()
        width = self.width
        if set(map(str.count, lines, repeat(","))) == {width - 1}:
            # every line has the header's width: split once, columns by slicing
            fields = ",".join(lines).split(",")
            return CsvBlock(numbers, columns=[fields[j::width] for j in range(width)])
        return CsvBlock(numbers, rows=list(map(str.split, lines, repeat(","))))

    def _read_csv_rows(self, n: int) -> CsvBlock:
        rdr = self.reader
        start = rdr.line_num
        try:
            rows = list(islice(rdr, n))
        except csv.Error as exc:
            raise InputError(
                f"{self.source.display}: line {self.base + rdr.line_num}: malformed CSV: {exc}"
            ) from None
        except UnicodeDecodeError as exc:
            raise self._bad_bytes(exc) from None
        first = self.base + start
        if rdr.line_num - start == len(rows):  # one line per row: the common case
            lines = list(range(first + 1, first + 1 + len(rows)))
        else:
            lines = []
            line = first
            for row in rows:
                line += 1
                lines.append(line)
                line += sum(len(_LINE_BREAK.findall(v)) for v in row if "\n" in v or "\r" in v)
        if [] in rows:  # blank lines
            keep = [i for i, row in enumerate(rows) if row]
            rows = [rows[i] for i in keep]
            lines = [lines[i] for i in keep]
        return CsvBlock(lines, rows=rows)

    def read(self, n: int) -> CsvBlock:
        """The next (up to) ``n`` records; an empty block at the end."""
        while self.fast and not self.eof and len(self.pending) < n:
            got = self._read_fast()
            if got is None:  # csv mode from here; that block went to the csv reader
                break
            self.pending = self.pending.extend(got)
        if len(self.pending):
            out, self.pending = self.pending.split(n)
            return out
        if self.fast:
            return self.pending
        return self._read_csv_rows(n)
