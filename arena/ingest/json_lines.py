"""Decoding JSON lines and JSON array files, and the rule against repeated keys.

Every record comes with a human location (``line 12`` or ``record 7``) so that an
error can name the file, line and field.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import compress, repeat
from typing import IO, Any

from arena.core.errors import ArenaError
from arena.ingest.sources import LINE_MAX, InputError, InputFile, bounded_lines

#: Largest JSON array file (decompressed bytes): it is parsed whole.
JSON_ARRAY_MAX = 1 << 30


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


#: Block decoders of JSON lines by name (``arena.ingest.json_lines.JSON_DECODER``
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
