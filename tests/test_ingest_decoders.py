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

import pytest

from arena.ingest import json_lines
from tests.helpers.paths import ROOT
from tests.helpers.stored import bad_jsonl, ingest_and_dump, second_url

DECODERS = sorted(json_lines.BLOCK_DECODERS)


def test_the_fast_decoder_is_installed_for_the_tests():
    """The test extra installs orjson, so the comparison below runs both decoders."""
    assert DECODERS == ["json", "orjson"]
    assert json_lines.JSON_DECODER == "orjson"


def _ingest_each(db_url, tmp_path, monkeypatch, files, *, chunk_rows: int):
    """Per decoder: (what was stored, each file's rejects text and CLI output)."""
    monkeypatch.setattr("arena.ingest.loader.CHUNK_ROWS", chunk_rows)
    out = {}
    for k, decoder in enumerate(DECODERS):
        monkeypatch.setattr(json_lines, "JSON_DECODER", decoder)
        urls = iter([db_url]) if k == 0 else second_url(db_url, tmp_path, f"{decoder}.db")
        url = next(urls)
        try:
            out[decoder] = ingest_and_dump(url, files, tmp_path, decoder)
        finally:
            next(urls, None)
    return out


def test_decoders_store_and_reject_the_same_rows(db_url, tmp_path, monkeypatch):
    path = bad_jsonl(tmp_path / "bad.jsonl")
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
