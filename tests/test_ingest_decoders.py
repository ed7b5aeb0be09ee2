"""Every JSON-lines block decoder stores and rejects exactly what the standard library does.

The fast decoder (orjson, the ``fast`` extra) only ever decodes a block that
the column parsers then check by exact type; anything it reads differently
(an error, NaN, a lone surrogate, an integer beyond 64 bits) goes back to the
standard library.  These tests ingest the same files with each decoder, in
small chunks so that good and bad records share blocks, and compare
everything stored (battles with their ids, style rows, count table, batches)
and the rejects file (file, line, field, message, record), on both engines.
"""

from __future__ import annotations

import gzip
import json

import pytest
from sqlalchemy import select, text

from arena.db.models import Battle, BattleStyle
from arena.ingest import sources
from tests.helpers.cli import cli_for
from tests.helpers.files import conv_metadata
from tests.helpers.paths import ROOT
from tests.helpers.postgres import pg_schema

DECODERS = sorted(sources.BLOCK_DECODERS)


def test_the_fast_decoder_is_installed_for_the_tests():
    """The test extra installs orjson, so the comparison below runs both decoders."""
    assert DECODERS == ["json", "orjson"]
    assert sources.JSON_DECODER == "orjson"


def _meta(tokens: int = 300) -> dict:
    return conv_metadata((tokens, 20), (1, 0), (0, 2), (3, 0))


def _good(i: int) -> dict:
    return {"id": f"g{i}", "model_a": f"m{i % 4}", "model_b": "m9", "winner": "model_a"}


BAD_LINES = [
    # a key twice, and '":' inside a value of a good row
    '{"id": "d1", "model_a": "m1", "model_a": "m2", "model_b": "m3", "winner": "tie"}',
    json.dumps({**_good(1000), "id": 'x":y'}),
    # not JSON, or JSON that only the standard library reads
    '{"id": "d2", "model_a": "m1", "model_b": "m2", "winner": "tie",}',
    '{"id": "d3", "model_a": "m1", "model_b": "m2", "winner": "tie", "conv_metadata": '
    '{"sum_assistant_a_tokens": NaN}}',
    '{"id": "d4", "model_a": "m1", "model_b": "m2", "winner": "tie", "conv_metadata": '
    '{"sum_assistant_a_tokens": 1e400}}',
    '{"id": "d5", "model_a": "m\\ud800", "model_b": "m2", "winner": "tie"}',
    # integers beyond 64 bits: a count (rejected, named) and an ignored key (stored)
    json.dumps(
        {
            **_good(1001),
            "conv_metadata": {**_meta(), "sum_assistant_a_tokens": 18446744073709551617},
        }
    ),
    json.dumps({**_good(1002), "conv_metadata": {**_meta(), "turns": 18446744073709551617}}),
    # counts of the wrong kind
    json.dumps({**_good(1003), "conv_metadata": {**_meta(), "sum_assistant_b_tokens": True}}),
    json.dumps({**_good(1004), "conv_metadata": {**_meta(), "sum_assistant_b_tokens": 3.0}}),
    json.dumps({**_good(1005), "conv_metadata": {**_meta(), "sum_assistant_b_tokens": 3.5}}),
    json.dumps({**_good(1006), "conv_metadata": {**_meta(), "bold_count_a": {"**": -1}}}),
    json.dumps({**_good(1007), "conv_metadata": {**_meta(), "header_count_b": {}}}),
    json.dumps(
        {**_good(1008), "conv_metadata": {k: v for k, v in _meta().items() if k[-1] != "b"}}
    ),
    # fields of the wrong kind, empty, too long or with controls
    json.dumps({**_good(1009), "model_a": 7}),
    json.dumps({**_good(1010), "id": ""}),
    json.dumps({**_good(1011), "model_b": "x" * 300}),
    json.dumps({**_good(1012), "model_b": "a\u0007b"}),
    json.dumps({**_good(1013), "winner": "nobody"}),
    # not an object; spacing before a colon; a value across lines
    "[1, 2]",
    '"a string"',
    "{}",
    '{"id" : "s1", "model_a": "m1", "model_b": "m2", "winner": "tie"}',
    '{"id": "s2", "model_a": "m1", "model_b": "m2", "winner": "tie", "c": [{}',
    "{}]}",
    # an id this file repeats (the second is rejected, its record reported)
    json.dumps({**_good(7), "conv_metadata": {**_meta(), "turns": 18446744073709551618}}),
]


def _bad_file(path) -> str:
    """Good rows of three shapes with the bad lines spread among them."""
    lines = []
    for i in range(400):
        rec = _good(i)
        if i % 3 == 1:
            rec["conv_metadata"] = _meta(i)
        elif i % 3 == 2:
            rec = {**rec, "conv_metadata": _meta(i), "judge": "j", "question_id": f"q{i}"}
            rec["verdict"] = rec.pop("winner").replace("model_a", "A>>B")
        lines.append(json.dumps(rec, separators=(",", ":") if i % 2 else (", ", ": ")))
        if i % 15 == 0 and i // 15 < len(BAD_LINES):
            lines.append(BAD_LINES[i // 15])
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _second_url(db_url: str, tmp_path, name: str):
    if db_url.startswith("sqlite"):
        return iter([f"sqlite:///{tmp_path / name}"])
    return pg_schema()


def _dump(url: str) -> tuple:
    """Everything an ingest stores, in id order (ids included: both ingests start empty)."""
    from arena.db.session import open_engine

    eng = open_engine(url)
    try:
        with eng.connect() as conn:
            battles = [tuple(r) for r in conn.execute(select(Battle).order_by(Battle.id)).all()]
            style = [
                tuple(r)
                for r in conn.execute(select(BattleStyle).order_by(BattleStyle.battle_id)).all()
            ]
            models = conn.execute(text("SELECT id, name FROM models ORDER BY id")).all()
            cells = conn.execute(
                text(
                    "SELECT category_id, model_a_id, model_b_id, outcome, weight, rated, n "
                    "FROM battle_counts ORDER BY 1, 2, 3, 4, 5, 6"
                )
            ).all()
            batches = conn.execute(
                text(
                    "SELECT rows_read, inserted, duplicates, excluded, rejected "
                    "FROM ingest_batches ORDER BY id"
                )
            ).all()
    finally:
        eng.dispose()
    # created_at differs between the two ingests
    battles = [tuple(v for v in row if not hasattr(v, "tzinfo")) for row in battles]
    return battles, style, [tuple(m) for m in models], [tuple(c) for c in cells], batches


def _ingest_each(db_url, tmp_path, monkeypatch, files, *, chunk_rows: int):
    """Per decoder: (what was stored, each file's rejects text and CLI output)."""
    monkeypatch.setattr("arena.ingest.loader.CHUNK_ROWS", chunk_rows)
    out = {}
    for k, decoder in enumerate(DECODERS):
        monkeypatch.setattr(sources, "JSON_DECODER", decoder)
        urls = iter([db_url]) if k == 0 else _second_url(db_url, tmp_path, f"{decoder}.db")
        url = next(urls)
        try:
            run = cli_for(url)
            reports = []
            for j, path in enumerate(files):
                rejects = tmp_path / f"rejects-{decoder}-{j}.csv"
                res = run("ingest", path, "--skip-invalid", "--rejects", str(rejects))
                reports.append((res.output, rejects.read_text() if rejects.exists() else ""))
            out[decoder] = (_dump(url), reports)
        finally:
            next(urls, None)
    return out


def test_decoders_store_and_reject_the_same_rows(db_url, tmp_path, monkeypatch):
    path = _bad_file(tmp_path / "bad.jsonl")
    got = _ingest_each(db_url, tmp_path, monkeypatch, [path], chunk_rows=37)
    (stored, reports), (stored2, reports2) = got["json"], got["orjson"]
    assert stored == stored2
    assert reports == reports2
    output, rejects = reports[0]
    # the file really holds what it should: good rows of each shape, every bad line rejected
    battles, style = stored[0], stored[1]
    # the good rows; 'x":y'; the big integer in an ignored key; the count 3.0; an empty
    # id (stored without one); a long model name; spacing before a colon
    assert len(battles) == 400 + 6
    assert len(style) == 266 + 2  # the good rows with metadata; the big integer; 3.0
    assert "20 rejected" in output, output
    for fragment in (
        "appears more than once",
        "invalid JSON",
        "conv_metadata.sum_assistant_a_tokens",
        "conv_metadata.sum_assistant_b_tokens",
        "conv_metadata.bold_count_a",
        "model_a",
        "winner",
        "'g7' appears twice in this file",
        "18446744073709551618",  # the reported record, as the standard library reads it
    ):
        assert fragment in rejects, (fragment, rejects)


@pytest.mark.slow
def test_decoders_store_the_bundled_data_alike(db_url, tmp_path, monkeypatch):
    """The bundled ko-arena-hard judgments (76,000 games, 4,000 without metadata) and the
    tests' slice, in chunks that mix records with and without metadata."""
    bundled = tmp_path / "ko.jsonl"
    with gzip.open(ROOT / "arena" / "data" / "ko-arena-hard-battles.jsonl.gz", "rb") as fh:
        bundled.write_bytes(fh.read())
    got = _ingest_each(db_url, tmp_path, monkeypatch, [str(bundled)], chunk_rows=5000)
    assert got["json"] == got["orjson"]
    (battles, style, *_), reports = got["json"]
    assert len(battles) == 75_999 and len(style) == 75_999 - 4_000
    assert "0 rejected" in reports[0][0]
