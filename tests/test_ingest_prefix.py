"""Issue 26: a file that begins with a stored file's content is read from where it ends.

A cumulative export without ids (yesterday's 90 rows plus 1 new) used to be
stored whole again (181 battles, no warning); a file that grew after the
nightly job stored it the same. Both engines; the migration that keeps each
batch's content size and hash (0014) too.
"""

from __future__ import annotations

import gzip
import hashlib
import json

from alembic import command
from sqlalchemy import inspect, select, text

from arena.db.models import IngestBatch
from arena.db.session import alembic_config, create_db_engine
from arena.ingest import ingest_file
from arena.jobs.nightly import nightly
from arena.jobs.rebuild import RebuildOptions
from tests.helpers.db import battles_at as stored_battles

HEAD = "model_a,model_b,winner\n"


def _rows(n: int, start: int = 0) -> str:
    winners = ("model_a", "model_b", "tie")
    return "".join(f"m{k % 4},m{(k + 1) % 4},{winners[k % 3]}\n" for k in range(start, start + n))


def test_cumulative_export_without_ids_stores_only_new_rows(run_cli, db_url, tmp_path):
    (tmp_path / "day1.csv").write_text(HEAD + _rows(90))
    (tmp_path / "day2.csv").write_text(HEAD + _rows(91))
    run_cli("ingest", str(tmp_path / "day1.csv"), "-q")
    res = run_cli("ingest", str(tmp_path / "day2.csv"))
    assert stored_battles(db_url) == 91  # was 181
    assert "1 inserted" in res.stdout
    assert "first 91 lines are the content of" in res.stderr and "day1.csv" in res.stderr
    assert "read from line 92 on" in res.stderr
    # and a third day, gzip-compressed, continues from the second
    with gzip.open(tmp_path / "day3.csv.gz", "wt") as fh:
        fh.write(HEAD + _rows(95))
    res = run_cli("ingest", str(tmp_path / "day3.csv.gz"))
    assert stored_battles(db_url) == 95 and "day2.csv" in res.stderr


def test_line_numbers_after_the_stored_part_are_the_files(run_cli, db_url, tmp_path):
    (tmp_path / "a.csv").write_text(HEAD + _rows(10))
    (tmp_path / "b.csv").write_text(HEAD + _rows(10) + "m1,m2,maybe\n")
    run_cli("ingest", str(tmp_path / "a.csv"), "-q")
    res = run_cli("ingest", str(tmp_path / "b.csv"), ok=False)
    assert res.exit_code == 1 and "b.csv: line 12: field 'winner'" in res.output
    assert stored_battles(db_url) == 10


def test_json_lines_and_gzip_of_a_grown_file(engine, tmp_path):
    lines = [
        json.dumps({"model_a": f"m{k % 3}", "model_b": f"m{(k + 1) % 3}", "winner": "tie"})
        for k in range(30)
    ]
    (tmp_path / "a.jsonl").write_text("\n".join(lines[:20]) + "\n")
    with gzip.open(tmp_path / "a2.jsonl.gz", "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    first = ingest_file(engine, str(tmp_path / "a.jsonl"))
    second = ingest_file(engine, str(tmp_path / "a2.jsonl.gz"))
    assert (first.inserted, second.inserted) == (20, 10)
    assert second.prefix_of == first.batch_id and second.lines_skipped == 20
    with engine.connect() as conn:
        content = conn.execute(
            select(IngestBatch.content_bytes, IngestBatch.content_sha256).order_by(IngestBatch.id)
        ).all()
    raw = ("\n".join(lines) + "\n").encode()
    assert content[1] == (len(raw), hashlib.sha256(raw).hexdigest())


def test_what_is_not_a_continuation(engine, tmp_path):
    """Another source, a stored file ending inside a line, rows in another order:
    read whole (ids would de-duplicate such files; these have none)."""
    (tmp_path / "a.csv").write_text(HEAD + _rows(20))
    (tmp_path / "b.csv").write_text(HEAD + _rows(21))
    ingest_file(engine, str(tmp_path / "a.csv"), source="human")
    assert ingest_file(engine, str(tmp_path / "b.csv"), source="judge").inserted == 21
    # no line break at its end: the stored file's last row may have been cut
    (tmp_path / "c.csv").write_text(HEAD + _rows(5, 100).rstrip("\n"))
    (tmp_path / "d.csv").write_text(HEAD + _rows(6, 100))
    ingest_file(engine, str(tmp_path / "c.csv"), source="x")
    assert ingest_file(engine, str(tmp_path / "d.csv"), source="x").inserted == 6
    # reordered: not a prefix
    (tmp_path / "e.csv").write_text(
        HEAD + "".join(reversed(_rows(20).splitlines(True))) + "m0,m3,tie\n"
    )
    assert ingest_file(engine, str(tmp_path / "e.csv"), source="human").inserted == 21


def test_nightly_file_grown_after_commit_without_ids(engine, tmp_path, monkeypatch):
    """The file changed between the commit and the move: the next night reads only
    the lines after the stored part, though the file has no ids."""
    from arena.jobs import nightly as nightly_mod

    incoming = tmp_path / "incoming"
    incoming.mkdir()
    (incoming / "votes.csv").write_text(HEAD + _rows(200))
    real = nightly_mod.ingest_file

    def ingest_then_append(eng, path, **kw):
        report = real(eng, path, **kw)
        with open(path, "a") as fh:
            fh.write(_rows(7, 200))
        return report

    def night():
        return nightly(
            engine,
            incoming,
            tmp_path / "site",
            RebuildOptions(rounds=20),
            done=tmp_path / "done",
            wait=5,
        )

    monkeypatch.setattr(nightly_mod, "ingest_file", ingest_then_append)
    first = night()
    assert first.files[0].status == "changed" and first.files[0].inserted == 200
    monkeypatch.setattr(nightly_mod, "ingest_file", real)
    second = night()
    out = second.files[0]
    assert out.status == "ingested" and out.inserted == 7
    assert any("read from line 202 on" in w for w in out.warnings)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM battles")).scalar() == 207


def test_upgrade_0014_adds_batch_content(db_url):
    cfg = alembic_config(db_url)
    command.upgrade(cfg, "0013")
    engine = create_db_engine(db_url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO ingest_batches (id, file_name, sha256, format, rows_read, inserted, "
                "duplicates, excluded, rejected, started_at, finished_at) VALUES "
                "(1, 'f', 'x', 'csv', 3, 3, 0, 0, 0, '2026-01-01', '2026-01-01')"
            )
        )
    command.upgrade(cfg, "0014")
    columns = {c["name"] for c in inspect(engine).get_columns("ingest_batches")}
    assert {"content_bytes", "content_sha256"} <= columns
    with engine.connect() as conn:
        row = conn.execute(text("SELECT content_bytes, content_sha256 FROM ingest_batches")).one()
    assert tuple(row) == (None, None)  # older batches are never taken as a prefix
    command.downgrade(cfg, "0013")
    columns = {c["name"] for c in inspect(engine).get_columns("ingest_batches")}
    assert "content_bytes" not in columns
    engine.dispose()
