"""Reading input files: stdin spooling, gzip, hashing, format detection, records.

Every record comes with a human location (``line 12`` or ``record 7``) so that an
error can name the file, line and field.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, compress, islice, repeat
from pathlib import Path
from typing import IO, Any, cast

from arena.core.defaults import INPUT_FORMATS
from arena.core.errors import ArenaError
from arena.core.text import shown
from arena.core.vocabulary import GZIP_MAGIC

#: The input formats a file may be read as (``auto``: guessed from its name or content).
FORMATS = INPUT_FORMATS
_CHUNK = 1 << 20

#: Longest line read (characters of CSV text, bytes of JSON lines): a longer one
#: is refused before it is read whole, so memory stays bounded (a 400 KB gzip can
#: hold one 400 MiB line). Far above any real record; CSV fields have the same bound.
LINE_MAX = 1 << 24
#: Largest JSON array file (decompressed bytes): it is parsed whole.
JSON_ARRAY_MAX = 1 << 30

csv.field_size_limit(LINE_MAX)


class InputError(ArenaError):
    """A problem with one input file, already phrased for the user."""


@dataclass(frozen=True)
class InputFile:
    """A readable copy of one input: a real path (stdin is spooled to a temp file)."""

    display: str  # what messages call it: the path as given, or "<stdin>"
    path: Path
    sha256: str
    size: int
    compressed: bool
    #: (size, mtime_ns, inode) when it was hashed: a file still being written is
    #: recognised by a change (:func:`changed_since`)
    identity: tuple[int, int, int] | None = None


def display_path(path_arg: str | os.PathLike[str]) -> str:
    """A path as messages, logs, the database and JSON can hold it, on one line.

    A file name that is not UTF-8 arrives with its bytes as lone surrogates
    (``surrogateescape``), which no encoder accepts; those bytes are shown as
    ``\\xNN``. Controls and other invisible characters (a newline that would
    forge a line of the nightly log, a terminal escape) are escaped the same way
    (:func:`arena.core.text.shown`).
    """
    text = os.fspath(path_arg)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = os.fsencode(text).decode("utf-8", "backslashreplace")
    return shown(text)


def file_identity(path: Path) -> tuple[int, int, int]:
    """(size, mtime_ns, inode) of ``path``: what changes when a file is written or replaced."""
    st = path.stat()
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def changed_since(source: InputFile) -> str | None:
    """How ``source`` changed since it was hashed (grew, was rewritten or replaced,
    vanished), or None if it is as it was."""
    if source.identity is None:
        return None
    try:
        now = file_identity(source.path)
    except FileNotFoundError:
        return "it was removed while being read"
    except OSError as exc:
        return f"it can no longer be read ({exc.strerror})"
    size, mtime, inode = source.identity
    if now[2] != inode:
        return "it was replaced by another file while being read"
    if now[0] != size:
        return f"it changed size while being read ({size} -> {now[0]} bytes)"
    if now[1] != mtime:
        return "it was modified while being read"
    return None


def spool_stdin() -> Path:
    """Copy stdin to a temporary file so it can be hashed and read twice."""
    tmp = tempfile.NamedTemporaryFile(prefix="arena-stdin-", delete=False)
    try:
        with tmp:
            shutil.copyfileobj(sys.stdin.buffer, tmp, _CHUNK)
    except BaseException:  # a full disk, an interrupt: no partial copy left behind
        Path(tmp.name).unlink(missing_ok=True)
        raise
    return Path(tmp.name)


def open_input(path_arg: str) -> InputFile:
    """Hash one input (``-``: stdin, spooled first) and note its identity.

    Raises :class:`InputError` for a missing, unreadable or non-regular file and
    for a file that changed while it was hashed.
    """
    if path_arg == "-":
        path, display = spool_stdin(), "<stdin>"
    else:
        path, display = Path(path_arg), display_path(path_arg)
        if not path.exists():
            raise InputError(f"{display}: no such file")
        if not path.is_file():
            raise InputError(f"{display}: not a regular file")
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            identity = (st.st_size, st.st_mtime_ns, st.st_ino)
            head = fh.read(2)
            fh.seek(0)
            while block := fh.read(_CHUNK):
                digest.update(block)
                size += len(block)
    except FileNotFoundError:
        raise InputError(f"{display}: no such file (removed before it could be read)") from None
    except OSError as exc:
        raise InputError(f"{display}: cannot read: {exc.strerror or exc}") from None
    source = InputFile(display, path, digest.hexdigest(), size, head == GZIP_MAGIC, identity)
    if path_arg != "-":
        change = changed_since(source)
        if change is None and size != identity[0]:
            change = f"it changed size while being read ({identity[0]} -> {size} bytes)"
        if change is not None:
            raise FileChanged(f"{display}: {change}")
    return source


class FileChanged(InputError):
    """The file changed while it was read (still being written?): nothing of it is stored."""


def open_binary(source: InputFile) -> IO[bytes]:
    raw = open(source.path, "rb")
    if source.compressed:
        # a binary file object (typeshed types GzipFile as a BufferedIOBase, not IO[bytes])
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    return raw


def detect_format(source: InputFile, requested: str) -> str:
    """``csv``, ``jsonl`` or ``json``: from the option, else the name, else the content."""
    if requested != "auto":
        return requested
    name = source.display.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix, fmt in (
        (".csv", "csv"),
        (".jsonl", "jsonl"),
        (".ndjson", "jsonl"),
        (".json", "json"),
    ):
        if name.endswith(suffix):
            return fmt
    with open_binary(source) as fh:
        try:
            head = fh.read(4096).decode("utf-8-sig", errors="replace").lstrip()
        except (OSError, EOFError) as exc:
            raise InputError(f"{source.display}: cannot read: {exc}") from exc
    if head.startswith("["):
        return "json"
    if head.startswith("{"):
        return "jsonl"
    return "csv"


def first_bad_line(source: InputFile) -> str:
    """``line N: not valid UTF-8 (...)`` for the first undecodable line."""
    with open_binary(source) as fh:
        for line_no, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return (
                    f"line {line_no}: not valid UTF-8 "
                    f"(byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                )
    return "not valid UTF-8"


class _Utf8Lines:
    """Decode UTF-8 strictly, line by line, remembering the line number for errors."""

    def __init__(self, binary: IO[bytes], display: str) -> None:
        self._binary = binary
        self._display = display
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self.line_no = 0

    def __iter__(self) -> Iterator[str]:
        return self._decoded(bounded_lines(self._binary, LINE_MAX, self._display, self))

    def _decoded(self, raws: Iterable[bytes]) -> Iterator[str]:
        for raw in raws:
            self.line_no += 1
            try:
                yield self._decoder.decode(raw)
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{self._display}: line {self.line_no}: not valid UTF-8 "
                    f"(byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                ) from None


def bounded_lines(stream: IO[Any], limit: int, display: str, counter: Any = None) -> Iterator[Any]:
    """The lines of ``stream`` (binary or text), each read with at most ``limit``
    characters, so that one huge line is refused before it is held whole."""
    readline = stream.readline
    newline = b"\n" if isinstance(stream.read(0), bytes) else "\n"
    while line := readline(limit):
        if len(line) >= limit and not line.endswith(newline):
            where = "" if counter is None else f"line {counter.line_no + 1}: "
            raise InputError(
                f"{display}: {where}a line longer than {limit} characters "
                "(not a battle record; is it the right file?)"
            )
        yield line


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


def parse_jsonl_line(text: str) -> Any:
    """One JSON-lines record: the parsed value, or :class:`BadJson` naming the problem."""
    try:
        obj = json.loads(text)
        if obj.__class__ is dict and (
            text.count('":') != key_count(obj) or _SPACED_KEY_END.search(text)
        ):
            # a key given twice, or '":' inside a value, or unusual spacing: look closely
            obj = json.loads(text, object_pairs_hook=unique_keys)
        return obj
    except json.JSONDecodeError as exc:
        return BadJson(exc.msg)
    except DuplicateKey as exc:
        return BadJson(str(exc))
    except RecursionError:
        return BadJson(_TOO_DEEP)


def iter_jsonl(
    source: InputFile, binary: IO[bytes], *, first_line: int = 0
) -> Iterator[tuple[str, Any]]:
    """Yield (``line N``, parsed object); bad JSON is reported as a row error via a marker.

    ``first_line``: lines of the file before ``binary`` starts (a stored prefix)."""
    lines = _Utf8Lines(binary, source.display)
    lines.line_no = first_line
    for text in lines:
        if not text.strip():
            continue
        yield f"line {lines.line_no}", parse_jsonl_line(text)


@dataclass
class JsonlBlock:
    """Up to ``rows`` consecutive non-blank lines of a JSON-lines file.

    ``objects``: every line parsed in one call (``[line,line,...]``), when that
    parse succeeded; None otherwise (then the lines are parsed one by one).  It
    holds one value per line only if no value spans a line break: the caller
    checks that (:func:`arena.ingest.records.json_block_parser` does, from
    ``key_marks``, before it trusts any of it).  Bad UTF-8 or an overlong line
    is raised while the block is read, before any of its records is looked
    at, as the line-by-line chunks do.
    """

    lines: list[int]
    texts: list[str]
    objects: list[Any] | None = None

    def key_marks(self) -> list[int]:
        """Per line, how often ``":`` occurs: a line names at most this many keys."""
        return list(map(str.count, self.texts, repeat('":')))

    @property
    def spaced(self) -> bool:
        """Some line has white space between a key and its colon (or a value looks so).

        Looked for in the block's text at once: a line ends with its line break and
        the next begins a record, so no match spans two lines of a block that decodes."""
        return _spaced("".join(self.texts))


def _stdlib_block(texts: list[str]) -> list[Any] | None:
    """The standard library's block decoder: the lines joined into one array, one call.

    Strings cannot span lines (each text keeps its line break, which JSON
    forbids inside a string), so a joined parse can only mis-split lines
    through brackets left open; see :class:`JsonlBlock`.
    """
    try:
        objects = json.loads("[" + ",".join(texts) + "]")
    except (json.JSONDecodeError, RecursionError):
        return None
    return objects if len(objects) == len(texts) else None


def _orjson_block(texts: list[str]) -> list[Any] | None:
    """orjson, line by line; None (the standard library decides) on any error.

    orjson reads what the standard library reads, with one difference: an
    integer beyond 64 bits becomes a float.  No stored value can come from
    one: every field the column parsers store must be a string or an ``int``
    (a float sends its block line by line, through the standard library), and
    a reported record is decoded again from its line by the standard library
    (see ``records`` of :class:`arena.ingest.chunks.Chunk`).
    """
    import orjson

    try:
        return list(map(orjson.loads, texts))
    except (orjson.JSONDecodeError, RecursionError):
        return None


#: Block decoders of JSON lines by name (``arena.ingest.sources.JSON_DECODER``
#: picks one; the benchmark ``bench_ingest_parsers.py`` compares them).
BLOCK_DECODERS: dict[str, Callable[[list[str]], list[Any] | None]] = {
    "json": _stdlib_block,
    "orjson": _orjson_block,
}


def _default_decoder() -> str:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return "json"
    return "orjson"


#: The block decoder in use: orjson where installed (the ``fast`` extra), else
#: the standard library.  Either gives the same records: a block either
#: decodes exactly as ``json.loads`` would, or is handed back (None) to it.
JSON_DECODER = _default_decoder()


def jsonl_blocks(
    source: InputFile,
    binary: IO[bytes],
    *,
    rows: int,
    first_line: int = 0,
    decoder: str | None = None,
) -> Iterator[JsonlBlock]:
    """The file in blocks of ``rows`` non-blank lines, each decoded in one go when it
    can be (``decoder``: a name of :data:`BLOCK_DECODERS`; default :data:`JSON_DECODER`).
    """
    decode = BLOCK_DECODERS[decoder or JSON_DECODER]
    numbers: list[int] = []
    texts: list[str] = []
    # (bad UTF-8 or an overlong line raises while the pieces are read, after the
    # blocks of the lines before it: as when the file was read line by line)
    for piece_numbers, piece_texts in _jsonl_pieces(binary, source.display, first_line):
        numbers += piece_numbers
        texts += piece_texts
        while len(texts) >= rows:
            block = texts[:rows]
            yield JsonlBlock(numbers[:rows], block, decode(block))
            del numbers[:rows], texts[:rows]
    if texts:
        yield JsonlBlock(numbers, texts, decode(texts))


#: Bytes of JSON lines read and decoded at a time.
_PIECE = 1 << 20


def _jsonl_pieces(
    binary: IO[bytes], display: str, first_line: int
) -> Iterator[tuple[list[int], list[str]]]:
    """The non-blank lines of a JSON-lines stream with their numbers, a piece of
    about :data:`_PIECE` bytes at a time: each line's text ends with its line break
    (one is added to a last line without).

    The same lines and errors as reading it line by line through :class:`_Utf8Lines`
    (which this falls back to for a piece that is not valid UTF-8, so the error
    names its line and column), at a fifth of the cost: one read, one decode and
    one split per piece, not per line.
    """
    reader = _Utf8Lines(binary, display)  # its decoder: a BOM dropped at the start only
    decoder = reader._decoder
    line_no = first_line
    rest = b""

    def overlong() -> InputError:
        return InputError(
            f"{display}: line {line_no + 1}: a line longer than {LINE_MAX} characters "
            "(not a battle record; is it the right file?)"
        )

    while data := binary.read(_PIECE):
        data = rest + data if rest else data
        end = data.rfind(b"\n") + 1
        piece, rest = data[:end], data[end:]
        too_long = False
        if len(piece) > LINE_MAX:  # rare: a piece is far shorter, unless a long line began it
            at = 0
            for raw in piece.split(b"\n"):
                if len(raw) >= LINE_MAX:  # the lines before it are read first
                    piece, too_long = piece[:at], True
                    break
                at += len(raw) + 1
        if piece:
            state = decoder.getstate()
            try:
                lines = decoder.decode(piece).split("\n")[:-1]
            except UnicodeDecodeError:
                decoder.setstate(state)
                reader.line_no = line_no
                lines = []
                raws = [raw + b"\n" for raw in piece.split(b"\n")[:-1]]
                try:  # line by line, to name the line; the lines before it are read first
                    for text in reader._decoded(raws):
                        lines.append(text[:-1])
                except InputError:
                    if lines:
                        yield _numbered(lines, line_no)
                    raise
            yield _numbered(lines, line_no)
            line_no += len(lines)
        if too_long or len(rest) >= LINE_MAX:
            raise overlong()
    if rest:  # a last line without a line break
        reader.line_no = line_no
        (text,) = reader._decoded([rest])
        if text.strip():
            yield [line_no + 1], [text + "\n"]


def _numbered(lines: list[str], line_no: int) -> tuple[list[int], list[str]]:
    """The non-blank ``lines`` (without their line breaks) with their numbers, the
    first being ``line_no + 1``, each text with its line break."""
    numbers = list(range(line_no + 1, line_no + 1 + len(lines)))
    if not all(map(str.strip, lines)):  # blank lines are skipped, but counted
        keep = list(map(bool, map(str.strip, lines)))
        numbers, lines = list(compress(numbers, keep)), list(compress(lines, keep))
    return numbers, list(map(str.__add__, lines, repeat("\n")))


def iter_json_array(source: InputFile, binary: IO[bytes]) -> Iterator[tuple[str, Any]]:
    """A JSON array of objects. Parsed whole: JSON arrays are for small files."""
    data = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="strict")
    try:
        text = data.read(JSON_ARRAY_MAX + 1)
        if len(text) > JSON_ARRAY_MAX:
            raise InputError(
                f"{source.display}: a JSON array file larger than {JSON_ARRAY_MAX} characters "
                "(it is read whole): write it as JSON lines, one battle per line"
            )
        doc = json.loads(text, object_pairs_hook=unique_keys)
    except UnicodeDecodeError:
        raise InputError(f"{source.display}: not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{source.display}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    except DuplicateKey as exc:
        raise InputError(f"{source.display}: {exc}") from None
    except RecursionError:
        raise InputError(f"{source.display}: {_TOO_DEEP}") from None
    finally:
        data.detach()  # leave the binary stream open for its owner
    if not isinstance(doc, list):
        raise InputError(f"{source.display}: a JSON file must hold an array of battle objects")
    for i, item in enumerate(doc, start=1):
        yield f"record {i}", item


@dataclass(frozen=True)
class BadJson:
    message: str


_TOO_DEEP = "JSON nested too deeply (not a battle record)"


class DuplicateKey(ArenaError, ValueError):
    """A JSON object names one key twice (which value was meant?); ``key`` is the key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} appears more than once in one object")
        self.key = self.field = key


#: A key's closing quote with white space before its colon (``"k" : 1``).
_SPACED_KEY_END = re.compile(r'"[ \t\r\n]+:')


def _spaced(text: str) -> bool:
    """:data:`_SPACED_KEY_END` in ``text``: one regular-expression scan (three times
    faster than looking for each of its four openings with ``in`` first)."""
    return _SPACED_KEY_END.search(text) is not None


def key_count(obj: dict[str, Any]) -> int:
    """Keys of ``obj`` and the objects inside it (those in lists of lists are not
    counted: the count is never above the true one).

    Every key written in a line ends with ``":`` (unless spaced, which is checked
    apart), and a ``":`` inside a value only adds to the count: a line with as
    many ``":`` as its parsed objects have keys names no key twice. The common
    case costs a ``str.count`` and one short recursion, not a hook call per
    object (which cost ~40 % of the JSON parse).
    """
    n = len(obj)
    for value in obj.values():
        if value.__class__ is dict:
            n += key_count(value)
        elif value.__class__ is list:
            for item in value:
                if item.__class__ is dict:
                    n += key_count(item)
    return n


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object as a dict, refusing a repeated key (the file
    ingester's rule, which ``arena serve`` applies to request bodies too)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return obj
