"""How a file is read changes nothing stored or rejected.

JSON lines are read a piece of bytes at a time (``sources._jsonl_pieces``),
not line by line: the same lines, numbers and errors.
"""

from __future__ import annotations

import io

import pytest

from arena.ingest import sources
from arena.ingest.sources import InputError

# ------------------------------------------------------------- lines, a piece at a time

CONTENTS = {
    "blank and spaced lines, CRLF, U+2028 in a value": (
        b'{"a": 1}\n\n  \n{"b": 2}\r\n\t\r\n{"c": "x\xe2\x80\xa8y"}\n'
    ),
    "a BOM, no final line break": b'\xef\xbb\xbf{"a": 1}\n{"b": 2}',
    "a BOM-looking line later": b'{"a": 1}\n\xef\xbb\xbf{"b": 2}\n',
    "bad UTF-8 on line 3": b'{"a": 1}\n{"b": 2}\n{"c": "\xff"}\n{"d": 4}\n',
    "bad UTF-8 on a last line without a break": b'{"a": 1}\n{"b": "\xc3"}',
    "a cut multibyte character at the end": b'{"a": 1}\n{"b": 2}\xc3',
    "multibyte characters across pieces": b'{"a": "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"}\n' * 9,
    "carriage returns only": b'{"a": 1}\r{"b": 2}\r',
    "an overlong line": b'{"a": 1}\n' + b"x" * 45 + b"\n{}\n",
    "a line under the limit, then an overlong one": b"y" * 39 + b"\n" + b"z" * 40 + b"\n",
    "an overlong last line": b'{"a": 1}\n' + b"w" * 41,
    "only blank lines": b"\n \n\r\n",
    "empty": b"",
}


def _by_lines(data: bytes, first_line: int) -> tuple[list, str | None]:
    """What the line-by-line reader gave (the reference): (number, text), then the error."""
    lines = sources._Utf8Lines(io.BytesIO(data), "f.jsonl")
    lines.line_no = first_line
    out = []
    try:
        for text in lines:
            if text.strip():
                out.append((lines.line_no, text if text.endswith("\n") else text + "\n"))
    except InputError as exc:
        return out, str(exc)
    return out, None


def _by_pieces(data: bytes, first_line: int) -> tuple[list, str | None]:
    out = []
    try:
        for numbers, texts in sources._jsonl_pieces(io.BytesIO(data), "f.jsonl", first_line):
            out.extend(zip(numbers, texts, strict=True))
    except InputError as exc:
        return out, str(exc)
    return out, None


@pytest.mark.parametrize("piece", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("name", list(CONTENTS))
def test_pieces_read_the_lines_and_errors_of_line_by_line(monkeypatch, name, piece):
    monkeypatch.setattr(sources, "LINE_MAX", 40)
    monkeypatch.setattr(sources, "_PIECE", piece)
    data = CONTENTS[name]
    for first_line in (0, 12):
        want = _by_lines(data, first_line)
        assert _by_pieces(data, first_line) == want
    # the cases say what they are about
    lines, error = want
    if "bad UTF-8" in name or "overlong" in name:
        assert error is not None and "line" in error, (name, error)
    else:
        assert error is None, (name, error)
    if name == "bad UTF-8 on line 3":
        assert [n for n, _ in lines] == [13, 14]  # the lines before it are read first
        assert error == "f.jsonl: line 15: not valid UTF-8 (byte 0xff at column 8)"
