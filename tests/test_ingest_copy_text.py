"""PostgreSQL: COPY text rendered from a block's columns stores exactly what psycopg's
``write_row`` stores, row by row.

The writer renders a column block's battles (ids, models, outcome, id, question,
judge, weight) and its whole-number rows (style counts, category links) to COPY
text itself; a text that COPY would need escaped (a backslash) goes through
``write_row``.  Both ways must give the same battles, style rows, links, count
table and batches (on SQLite, where there is no COPY, the test checks the same
files store alike twice).
"""

from __future__ import annotations

import gzip
import json

from arena.ingest import dialects
from tests.helpers.files import csv_rows, write_csv
from tests.helpers.paths import ROOT
from tests.helpers.stored import bad_jsonl, ingest_and_dump, second_url


def _files(tmp_path) -> list[str]:
    judged = tmp_path / "judged.jsonl"
    with gzip.open(ROOT / "arena" / "data" / "ko-arena-hard-battles.jsonl.gz", "rt") as fh:
        lines = [next(fh) for _ in range(3000)]
    # a judge with a backslash: its block cannot be rendered, write_row takes it
    rec = json.loads(lines[1500])
    rec["judge"] = "back\\slash"
    lines[1500] = json.dumps(rec) + "\n"
    judged.write_text("".join(lines))
    tagged = write_csv(
        tmp_path / "tagged.csv",
        ["id", "model_a", "model_b", "winner", "math", "code"],
        csv_rows(3, 2000, "t"),
    )
    return [bad_jsonl(tmp_path / "bad.jsonl"), str(judged), tagged]


def test_copy_text_stores_what_write_row_stores(db_url, tmp_path, monkeypatch):
    monkeypatch.setattr("arena.ingest.loader.CHUNK_ROWS", 500)
    files = _files(tmp_path)
    rendered = []
    real = dialects.PostgresRows.copy_text

    def spy(self, *args, **kwargs):
        text = real(self, *args, **kwargs)
        rendered.append(text is not None)
        return text

    got = {}
    for way in ("rendered", "write_row"):
        if way == "write_row":
            monkeypatch.setattr(dialects.PostgresRows, "copy_text", lambda *a, **k: None)
            monkeypatch.setattr(dialects, "_WHOLE_NUMBER_TABLES", frozenset())
        else:
            monkeypatch.setattr(dialects.PostgresRows, "copy_text", spy)
        urls = second_url(db_url, tmp_path, f"{way}.db")
        url = next(urls)
        try:
            got[way] = ingest_and_dump(url, files, tmp_path, way)
        finally:
            next(urls, None)
    assert got["rendered"] == got["write_row"]
    battles, style, _, _, _, links = got["rendered"][0]
    assert len(battles) == 406 + 3000 + 2000 and len(style) > 3000 and len(links) > 500
    assert {3.0, 1.0} <= {v for b in battles for v in b if isinstance(v, float)}  # weights
    if db_url.startswith("postgresql"):
        # blocks were rendered (with questions, judges and weights), and one was not
        assert True in rendered and False in rendered, rendered
