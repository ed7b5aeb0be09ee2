"""The column-wise CSV path stores exactly what the row-by-row path stores.

Plain LMArena-shaped CSV blocks are validated and written column by column;
JSON lines always go row by row.  Same records in both formats must give the
same battles, categories, exclusions and counts, on both engines, including
ids already stored by an earlier file, ids the file repeats, self-play, tag
columns, and blocks that fall back to the row path because of a bad value.
"""

from __future__ import annotations

import csv
import json

from sqlalchemy import select

from arena.db.models import Battle, Model
from arena.db.session import open_engine
from tests.helpers.db import stored
from tests.helpers.files import TAGGED_HEADER, TAGGED_ROWS, write_csv

#: Names the model-name rule normalises (NFC, surrounding spaces): one model each.
NORMALISED = [
    ["u8", "cafe\u0301", "a", "model_a", "False", "False"],
    ["u9", " b ", "caf\u00e9", "tie", "True", "False"],
    ["u10", "caf\u00e9", "cafe\u0301", "model_b", "False", "False"],  # self-play after NFC
]


def test_columns_and_rows_store_the_same(db_url, run_cli, tmp_path, monkeypatch):
    import arena.ingest.loader as loader

    monkeypatch.setattr(loader, "CHUNK_ROWS", 3)  # several blocks, conflicts in a later one
    rows = TAGGED_ROWS + NORMALISED
    # the two rows in another order: not all.csv's first lines (those would be skipped as stored)
    first = write_csv(tmp_path / "first.csv", TAGGED_HEADER, rows[1::-1])
    csv_path = write_csv(tmp_path / "all.csv", TAGGED_HEADER, rows)
    jsonl = tmp_path / "all.jsonl"
    jsonl.write_text(
        "".join(json.dumps(dict(zip(TAGGED_HEADER, r, strict=True))) + "\n" for r in rows)
    )

    run_cli("ingest", first)
    out = run_cli("ingest", csv_path).output
    assert "10 rows read, 8 inserted, 2 of them excluded" in out and "2 duplicates skipped" in out
    via_columns = stored(open_engine(db_url))

    other = f"sqlite:///{tmp_path / 'rows.db'}"
    from click.testing import CliRunner

    from arena.cli import cli

    for path in (first, str(jsonl)):
        res = CliRunner().invoke(
            cli,
            [
                "--db",
                other,
                "ingest",
                path,
                "--input-format",
                "jsonl" if path.endswith("l") else "csv",
            ],
        )
        assert res.exit_code == 0, res.output
    via_rows = stored(open_engine(other))
    assert via_columns == via_rows
    battles, links, _ = via_columns
    assert ("u3", "c", "c", "b_wins", "self_play", 1.0) in battles
    assert ("u10", "caf\u00e9", "caf\u00e9", "b_wins", "self_play", 1.0) in battles
    assert ("u9", "b", "caf\u00e9", "tie", None, 1.0) in battles
    assert ("u7", "creative") in links and ("u7", "math") in links and ("u4", "math") not in links


def test_repeated_id_in_a_later_block_is_rejected(db_url, run_cli, tmp_path, monkeypatch):
    import arena.ingest.loader as loader

    monkeypatch.setattr(loader, "CHUNK_ROWS", 2)
    rows = [r[:4] for r in TAGGED_ROWS[:4]] + [["u1", "a", "d", "model_a"], ["u9", "a", "d", "tie"]]
    path = write_csv(tmp_path / "rep.csv", TAGGED_HEADER[:4], rows)
    result = run_cli("ingest", path, ok=False)
    assert (
        result.exit_code == 1
        and "rep.csv: line 6: field 'id': 'u1' appears twice in this file" in result.output
    )
    assert stored(open_engine(db_url))[0] == []  # the whole file was rejected
    rejects = tmp_path / "rejects.csv"
    out = run_cli("ingest", path, "--skip-invalid", "--rejects", str(rejects)).output
    assert "6 rows read, 5 inserted" in out and "1 rejected" in out
    rej = list(csv.DictReader(open(rejects, encoding="utf-8")))
    assert [(r["location"], r["field"]) for r in rej] == [("line 6", "id")]


def test_bad_value_in_a_block_falls_back_and_names_the_line(db_url, run_cli, tmp_path, monkeypatch):
    import arena.ingest.loader as loader

    monkeypatch.setattr(loader, "CHUNK_ROWS", 3)
    rows = [r[:4] for r in TAGGED_ROWS[:4]] + [["u8", "a", "", "model_a"], ["u9", "a", "d", "nope"]]
    path = write_csv(tmp_path / "bad.csv", TAGGED_HEADER[:4], rows)
    result = run_cli("ingest", path, ok=False)
    assert "bad.csv: line 6: field 'model_b': empty model name" in result.output
    rejects = tmp_path / "rejects.csv"
    out = run_cli("ingest", path, "--skip-invalid", "--rejects", str(rejects)).output
    assert "6 rows read, 4 inserted" in out and "2 rejected" in out


def test_line_numbers_count_line_breaks_inside_quoted_fields(
    db_url, run_cli, tmp_path, monkeypatch
):
    import arena.ingest.loader as loader

    monkeypatch.setattr(loader, "CHUNK_ROWS", 2)
    path = tmp_path / "multi.csv"
    path.write_text(
        'model_a,model_b,winner,note\na,b,tie,"two\nlines"\n\na,b,model_a,x\na,b,nope,x\n',
        encoding="utf-8",
    )
    result = run_cli("ingest", str(path), ok=False)
    # header 1, quoted record on lines 2-3, blank line 4, good row 5, bad row 6
    assert "multi.csv: line 6: field 'winner': unknown value 'nope'" in result.output


def test_ids_with_copy_special_characters_are_stored_exactly(engine, run_cli, tmp_path):
    """Backslashes, quotes and commas in ids (PostgreSQL's COPY text format escapes the
    backslash). Tabs and line breaks are control characters: refused since issue 26."""
    ids = ["back\\slash", 'quo"te', "com,ma", "\\N", "plain"]
    path = write_csv(
        tmp_path / "odd.csv",
        ["id", "model_a", "model_b", "winner"],
        [[i, "a", "b", "tie"] for i in ids],
    )
    run_cli("ingest", path, "--source", "src\\with\\backslash")
    with engine.connect() as conn:
        got = set(conn.execute(select(Battle.external_id)).scalars())
        sources = set(conn.execute(select(Battle.source)).scalars())
    assert got == set(ids) and sources == {"src\\with\\backslash"}
    for bad, code in (("tab\there", "U+0009"), ("line\nbreak", "U+000A")):
        path = write_csv(
            tmp_path / "ctl.csv", ["id", "model_a", "model_b", "winner"], [[bad, "a", "b", "tie"]]
        )
        res = run_cli("ingest", path, ok=False)
        assert res.exit_code == 1 and code in res.output and "'id'" in res.output


def test_fast_split_and_csv_mode_agree_on_rows_and_lines(
    db_url, run_cli, engine, tmp_path, monkeypatch
):
    """Quote-free blocks are split directly; the first block with a quote hands the rest
    of the file to csv.reader.  Line numbers stay exact across the switch, CRLF included."""
    import arena.ingest.csv_blocks as csv_blocks
    import arena.ingest.loader as loader

    monkeypatch.setattr(csv_blocks, "_BLOCK_CHARS", 40)
    monkeypatch.setattr(loader, "CHUNK_ROWS", 3)
    body = [
        "a,b,tie,x",
        "",
        "b,c,model_a,x",
        "c,d,model_b,x",
        "d,a,tie,x",
        "a,c,model_a,x",
        '"quoted, name",a,tie,x',
        'd,b,model_a,"multi\nline"',
        "a,b,model_b,x",
        "a,b,nope,x",
    ]
    path = tmp_path / "mixed.csv"
    path.write_bytes(("model_a,model_b,winner,note\r\n" + "\r\n".join(body) + "\r\n").encode())
    result = run_cli("ingest", str(path), ok=False)
    # header line 1; body[k] is on line k + 2, the two-line record takes lines 9-10
    assert "mixed.csv: line 12: field 'winner': unknown value 'nope'" in result.output
    rejects = tmp_path / "rejects.csv"
    out = run_cli("ingest", str(path), "--skip-invalid", "--rejects", str(rejects)).output
    assert "9 rows read, 8 inserted" in out
    with engine.connect() as conn:
        names = set(conn.execute(select(Model.name)).scalars())
    assert names == {"a", "b", "c", "d", "quoted, name"}


def test_nul_byte_is_an_error_with_its_line(run_cli, tmp_path):
    path = tmp_path / "nul.csv"
    path.write_bytes(b"model_a,model_b,winner\na,b,tie\na\x00x,b,tie\n")
    result = run_cli("ingest", str(path), ok=False)
    assert (
        result.exit_code == 1
        and "nul.csv: line 3:" in result.output
        and "Traceback" not in result.output
    )


def test_ragged_rows_in_a_quote_free_block_are_reported_by_line(run_cli, tmp_path, monkeypatch):
    import arena.ingest.csv_blocks as csv_blocks

    monkeypatch.setattr(csv_blocks, "_BLOCK_CHARS", 30)  # blocks of both shapes get joined
    path = tmp_path / "ragged.csv"
    path.write_text(
        "model_a,model_b,winner\na,b,tie\nb,c,model_a\nc,a,tie\na,b\nb,c,tie\n", encoding="utf-8"
    )
    result = run_cli("ingest", str(path), ok=False)
    assert result.exit_code == 1 and "ragged.csv: line 5: field 'winner'" in result.output
    out = run_cli(
        "ingest", str(path), "--skip-invalid", "--rejects", str(tmp_path / "r.csv")
    ).output
    assert "5 rows read, 4 inserted" in out and "1 rejected" in out
