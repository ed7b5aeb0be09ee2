"""How a file is read changes nothing stored or rejected.

JSON lines are read a piece of bytes at a time (``json_lines._jsonl_pieces``),
not line by line: the same lines, numbers and errors.  On PostgreSQL the
chunks are read by a thread ahead of the writes (``arena.ingest.ahead``):
the same rows, rejects and messages as reading them in turn.
"""

from __future__ import annotations

import gzip
import io
import threading

import pytest

from arena.ingest import json_lines
from arena.ingest.ahead import read_ahead
from arena.ingest.sources import InputError
from tests.helpers.cli import cli_for
from tests.helpers.files import csv_rows, write_csv
from tests.helpers.stored import bad_jsonl, dump_store, second_url

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
    lines = json_lines._Utf8Lines(io.BytesIO(data), "f.jsonl")
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
        for numbers, texts in json_lines._jsonl_pieces(io.BytesIO(data), "f.jsonl", first_line):
            out.extend(zip(numbers, texts, strict=True))
    except InputError as exc:
        return out, str(exc)
    return out, None


@pytest.mark.parametrize("piece", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("name", list(CONTENTS))
def test_pieces_read_the_lines_and_errors_of_line_by_line(monkeypatch, name, piece):
    monkeypatch.setattr(json_lines, "LINE_MAX", 40)
    monkeypatch.setattr(json_lines, "_PIECE", piece)
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


# ------------------------------------------------------------- reading ahead in a thread


def test_read_ahead_gives_the_items_in_order_then_the_error():
    def items():
        yield from range(10)
        raise InputError("f.jsonl: line 11: not valid UTF-8")

    got = []
    with pytest.raises(InputError, match="line 11"):
        for item in read_ahead(items(), depth=2):
            got.append(item)
    assert got == list(range(10))
    # a consumer that stops early stops the thread
    ahead = read_ahead(iter(range(1000)), depth=2)
    assert [next(ahead) for _ in range(3)] == [0, 1, 2]
    ahead.close()
    assert not [t for t in threading.enumerate() if t.name == "arena-ingest-read-ahead"]


def _bad_csv(path) -> str:
    """Tagged CSV rows (the column path) with bad ones among them."""
    rows = csv_rows(5, 300, "c")
    rows[10][3] = "nobody"  # an unknown winner
    rows[40][1] = ""  # no model
    rows[41][0] = rows[40][0] = "c7"  # an id the file repeats
    rows.insert(120, ["c999", "m1"])  # a short row
    return write_csv(path, ["id", "model_a", "model_b", "winner", "math", "code"], rows)


def test_reading_ahead_stores_and_rejects_the_same(db_url, tmp_path, monkeypatch):
    """PostgreSQL reads the chunks in a thread ahead of the writes: the same battles,
    style rows, links, counts, batches, rejects and messages as reading in turn
    (SQLite reads in turn either way)."""
    monkeypatch.setattr("arena.ingest.loader.CHUNK_ROWS", 37)
    jsonl = bad_jsonl(tmp_path / "bad.jsonl")
    gz = tmp_path / "again.jsonl.gz"
    gz.write_bytes(
        gzip.compress(
            b'{"id": "z0", "model_a": "m1", "model_b": "m2", '
            b'"winner": "tie"}\n' + open(jsonl, "rb").read()
        )
    )
    files = [jsonl, _bad_csv(tmp_path / "bad.csv"), str(gz)]
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(open(jsonl, "rb").read() + b'{"id": "\xff"}\n')
    got = {}
    for way in ("ahead", "in turn"):
        if way == "in turn":
            monkeypatch.setattr("arena.ingest.loader.READ_AHEAD", lambda chunks: chunks)
        urls = second_url(db_url, tmp_path, f"{way}.db")
        url = next(urls)
        try:
            run = cli_for(url)
            outputs = [
                run(
                    "ingest",
                    str(broken),
                    "--skip-invalid",
                    "--rejects",
                    str(tmp_path / "x.csv"),
                    ok=False,
                ).output,
                run("ingest", jsonl, ok=False).output,  # the first bad row rejects it
            ]
            for j, path in enumerate(files):
                rejects = tmp_path / f"rejects-{way}-{j}.csv"
                res = run("ingest", path, "--skip-invalid", "--rejects", str(rejects))
                outputs.append((res.output, rejects.read_text()))
            got[way] = (dump_store(url), outputs)
        finally:
            next(urls, None)
    assert got["ahead"] == got["in turn"]
    (battles, *_), outputs = got["ahead"]
    assert "not valid UTF-8" in outputs[0] and "line 2: field 'json'" in outputs[1]
    assert len(battles) == 406 + 297 + 2
    assert "406 duplicates skipped, 19 rejected" in outputs[4][0], outputs
