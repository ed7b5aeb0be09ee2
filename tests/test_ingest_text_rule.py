"""Issue 26: every stored text field follows the model-name rule, on both engines.

Valid Unicode (no lone surrogates), no NUL, no control or bidi-override
characters, a length limit; the message names the file, line, field and code
point; nothing of the file is stored. Plus the input-level refusals: a
duplicated CSV column or JSON key, a line too long to hold, a file name that
is not UTF-8, an unreadable file.
"""

from __future__ import annotations

import gzip
import os

import pytest
from sqlalchemy import select

from arena.core.text import text_problem
from arena.db.models import IngestBatch
from arena.ingest import csv_blocks, fields, json_lines, sources
from tests.helpers.db import battles_at as stored_battles

HEAD = "model_a,model_b,winner,id,judge"


def _write(path, text: str) -> str:
    with open(path, "wb") as fh:
        fh.write(text.encode("utf-8", "surrogatepass"))
    return str(path)


def _refused(run_cli, path, *fragments, args=()):
    res = run_cli("ingest", str(path), *args, ok=False)
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    for fragment in fragments:
        assert fragment in res.output, (fragment, res.output)
    return res


@pytest.mark.parametrize(
    ("name", "text", "fragments"),
    [
        (
            "nul_id.csv",
            f"{HEAD}\na,b,model_a,i1,j\na,b,model_a,x\x00y,j\n",
            ("line 3", "'id'", "U+0000"),
        ),
        ("nul_judge.csv", f"{HEAD}\na,b,model_a,i1,j\x00\n", ("line 2", "'judge'", "U+0000")),
        ("c1_id.csv", f"{HEAD}\na,b,model_a,i\x851,j\n", ("'id'", "U+0085")),
        ("bidi_judge.csv", f"{HEAD}\na,b,model_a,i1,\u202ej\n", ("'judge'", "U+202E")),
        ("zwsp_id.csv", f"{HEAD}\na,b,model_a,i\u200b1,j\n", ("'id'", "U+200B")),
        (
            "surrogate_model.jsonl",
            '{"model_a": "m\\ud800x", "model_b": "b", "winner": "model_a"}\n',
            ("line 1", "'model_a'", "U+D800", "lone surrogate"),
        ),
        (
            "surrogate_id.jsonl",
            '{"model_a": "a", "model_b": "b", "winner": "model_a", "id": "\\udc00"}\n',
            ("'id'", "U+DC00"),
        ),
        (
            "surrogate_question.jsonl",
            '{"model_a": "a", "model_b": "b", "winner": "tie", "question_id": "q\\ud83d"}\n',
            ("'question_id'", "U+D83D"),
        ),
        (
            "nul_category.jsonl",
            '{"model_a": "a", "model_b": "b", "winner": "tie", "category": "x\\u0000"}\n',
            ("'category'", "U+0000"),
        ),
        (
            "tag_name.jsonl",
            '{"model_a": "a", "model_b": "b", "winner": "tie", "tags": {"m\\u202eath": true}}\n',
            ("'category'", "U+202E"),
        ),
        ("long_judge.csv", f"{HEAD}\na,b,model_a,i1,{'j' * 256}\n", ("'judge'", "longer than 255")),
    ],
)
def test_text_fields_refused_on_both_engines(run_cli, db_url, tmp_path, name, text, fragments):
    path = _write(tmp_path / name, text)
    _refused(run_cli, path, name, *fragments)
    # neither engine stored anything (SQLite used to keep the NUL silently)
    run_cli("ingest", _write(tmp_path / "ok.csv", f"{HEAD}\na,b,model_a,ok1,j\n"), "-q")
    assert stored_battles(db_url) == 1


def test_skip_invalid_keeps_the_rest(run_cli, db_url, tmp_path):
    """With --skip-invalid the row goes to the rejects file (a surrogate written escaped)."""
    path = _write(
        tmp_path / "mixed.jsonl",
        '{"model_a": "a", "model_b": "b", "winner": "model_a", "id": "1"}\n'
        '{"model_a": "a", "model_b": "b", "winner": "model_a", "id": "2\\ud800"}\n'
        '{"model_a": "a", "model_b": "b", "winner": "model_b", "id": "3\\u0000"}\n',
    )
    rejects = tmp_path / "rejects.csv"
    run_cli("ingest", path, "--skip-invalid", "--rejects", str(rejects), "-q")
    assert stored_battles(db_url) == 1
    text = rejects.read_text(encoding="utf-8")
    assert "U+D800" in text and "U+0000" in text and "line 2" in text


def test_column_fast_path_agrees_with_row_path():
    """The column form refuses what the row form refuses, cheaply for plain text."""
    for bad in ("x\x00", "\x1b[31m", "a\u202eb", "\ud800", "x" * 256, ""):
        assert not fields.text_column_ok(["ok", bad])
        if bad:
            with pytest.raises(fields.RowError):
                fields.text(bad, "id")
    assert fields.text_column_ok(["plain", "ünïcödé", "中文", "a b"])
    assert fields.text("a\u00a0b", "id") == "a\u00a0b"  # NBSP inside text is text
    assert text_problem("x" * 10, limit=9) == "longer than 9 characters"


def test_source_label_validated(run_cli, tmp_path):
    path = _write(tmp_path / "a.csv", f"{HEAD}\na,b,model_a,i1,j\n")
    res = run_cli("ingest", path, "--source", "hu\x00man", ok=False)
    assert res.exit_code == 1 and "--source" in res.output and "U+0000" in res.output
    res = run_cli("ingest", path, "--source", "s" * 300, ok=False)
    assert res.exit_code == 1 and "longer than 255" in res.output


def test_duplicated_csv_column_and_json_key(run_cli, db_url, tmp_path):
    path = _write(tmp_path / "dup.csv", "model_a,model_b,winner,model_a\na,b,model_a,c\n")
    _refused(run_cli, path, "dup.csv", "line 1", "column 'model_a' appears more than once")
    path = _write(
        tmp_path / "dup.jsonl",
        '{"model_a": "a", "model_b": "b", "winner": "tie"}\n'
        '{"model_a": "a", "model_b": "b", "winner": "tie", "winner": "model_a"}\n',
    )
    _refused(run_cli, path, "dup.jsonl", "line 2", "key 'winner' appears more than once")
    path = _write(tmp_path / "dup.json", '[{"model_a": "a", "model_b": "b", "model_b": "c"}]')
    _refused(run_cli, path, "key 'model_b' appears more than once")
    assert stored_battles(db_url) == 0


def test_deep_nesting_refused(run_cli, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    _refused(run_cli, _write(tmp_path / "deep.jsonl", deep + "\n"), "nested too deeply")
    _refused(run_cli, _write(tmp_path / "deep.json", deep), "nested too deeply")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_overlong_line_refused_before_it_is_read(run_cli, tmp_path, monkeypatch, fmt):
    """Memory per line is bounded: the line is refused after LINE_MAX characters.

    (LINE_MAX is lowered here, in the reader of the format; `benchmarks` size the
    real 400 MiB case.)
    """
    monkeypatch.setattr(csv_blocks if fmt == "csv" else json_lines, "LINE_MAX", 1 << 16)
    path = tmp_path / f"long.{fmt}.gz"
    head = HEAD + "\n" if fmt == "csv" else ""
    with gzip.open(path, "wt") as fh:
        fh.write(head + "a,b,model_a,i0,j\n" if fmt == "csv" else '{"model_a": "a"}\n')
        fh.write("x" * (3 << 20) + "\n")  # beyond the 2 MiB block of the CSV fast path
    res = _refused(run_cli, path, "a line longer than 65536 characters")
    assert "line 3" in res.output or "line 2" in res.output


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_quoted_csv_overlong_line_refused(run_cli, tmp_path, monkeypatch):
    """In csv.reader mode (a quote in the first block) lines are read bounded too."""
    monkeypatch.setattr(csv_blocks, "LINE_MAX", 1 << 16)
    filler = "a,b,model_a,i{},j\n"
    lines = "".join(filler.format(k) for k in range(150_000))  # > the 2 MiB first block
    path = _write(tmp_path / "q.csv", f'{HEAD}\n"a",b,model_a,q,j\n{lines}"{"y" * (3 << 20)}",b\n')
    _refused(run_cli, path, "a line longer than 65536 characters")


def test_non_utf8_file_name(run_cli, db_url, tmp_path):
    raw = os.fsencode(tmp_path) + b"/caf\xe9.csv"
    with open(raw, "wb") as fh:
        fh.write(f"{HEAD}\na,b,model_a,i1,j\n".encode())
    res = run_cli("ingest", os.fsdecode(raw))
    assert "Traceback" not in res.output
    from arena.db.session import open_engine

    engine = open_engine(db_url, migrate_new=False)
    try:
        with engine.connect() as conn:
            names = conn.execute(select(IngestBatch.file_name)).scalars().all()
    finally:
        engine.dispose()
    assert names == [os.fsdecode(os.fsencode(tmp_path)) + "/caf\\xe9.csv"]


def test_unreadable_file_says_read(run_cli, tmp_path, monkeypatch):
    path = _write(tmp_path / "a.csv", f"{HEAD}\na,b,model_a,i1,j\n")
    real_open = open

    def deny(p, *args, **kw):
        if str(p).endswith("a.csv"):
            raise PermissionError(13, "Permission denied", str(p))
        return real_open(p, *args, **kw)

    monkeypatch.setattr(sources, "open", deny, raising=False)
    res = _refused(run_cli, path, "a.csv: cannot read: Permission denied")
    assert "write" not in res.output


def test_annotations_and_labels_follow_the_rule(run_cli, tmp_path):
    run_cli("ingest", _write(tmp_path / "a.csv", f"{HEAD}\na,b,model_a,i1,j\n"), "-q")
    notes = _write(tmp_path / "notes.csv", "model,organisation\na,Acme\u202e\n")
    res = run_cli("models", "annotate", "--from", notes, ok=False)
    assert res.exit_code == 1 and "U+202E" in res.output and "organisation" in res.output
    res = run_cli("models", "annotate", "a", "--display-name", "A\x00", ok=False)
    assert res.exit_code == 1 and "U+0000" in res.output


def test_duplicate_key_check_is_exact(tmp_path):
    """The cheap check (count of '":' against the parsed keys) falls back to the exact one
    whenever it could be fooled: spacing, '":' inside values, nested objects."""
    import io

    from arena.ingest.json_lines import BadJson, iter_jsonl
    from arena.ingest.sources import InputFile

    lines = [
        '{"a": 1, "a" : 2}',  # spaced duplicate
        '{"m": {"k": 1, "k": 2}}',  # nested duplicate
        '{"l": [{"k": 1, "k": 2}]}',  # in a list
        '{"id": "x\\":y", "a": 1}',  # '":' inside a value: no duplicate
        '{"id": "x\\":y", "a": 1, "a": 2}',  # both
        '{"a" :1, "b": {"c" : 2}}',  # spaced, no duplicate
    ]
    src = InputFile("t.jsonl", tmp_path / "t.jsonl", "0" * 64, 0, False)
    got = [obj for _, obj in iter_jsonl(src, io.BytesIO("\n".join(lines).encode()))]
    dup = [isinstance(o, BadJson) and "more than once" in o.message for o in got]
    assert dup == [True, True, True, False, True, False]
    assert got[3] == {"id": 'x":y', "a": 1} and got[5] == {"a": 1, "b": {"c": 2}}
