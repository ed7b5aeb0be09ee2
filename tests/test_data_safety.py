"""Nothing lost, nothing stored twice, nothing clobbered (SQLite and PostgreSQL).

Each test here failed before its fix (issue 16): a rejects file that clobbered the
database, a file stored twice by two concurrent ingests, a publish that
deleted files it did not write, an id re-used with other content skipped
as a "duplicate".
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from arena.db.models import Battle, IngestBatch
from tests.helpers.cli import arena_process
from tests.helpers.db import count
from tests.helpers.files import write_csv


def sqlite_file(url: str) -> Path | None:
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


MIXED = [["1", "a", "b", "model_a"], ["2", "a", "b", "nope"], ["3", "b", "c", "tie"]]
HEADER = ["id", "model_a", "model_b", "winner"]


# ------------------------------------------------ 1: where rejects may be written


def test_rejects_never_overwrite_database_input_or_other_files(run_cli, engine, db_url, tmp_path):
    path = write_csv(tmp_path / "in.csv", HEADER, MIXED)
    run_cli("ingest", write_csv(tmp_path / "seed.csv", HEADER, [["0", "x", "y", "tie"]]))
    db_file = sqlite_file(db_url)
    targets = {"the input file": path}
    if db_file is not None:
        targets["the database"] = str(db_file)
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n", encoding="utf-8")
    targets["not a rejects file"] = str(other)
    for reason, target in targets.items():
        before = Path(target).read_bytes()
        result = run_cli("ingest", path, "--skip-invalid", "--rejects", target, ok=False)
        assert result.exit_code != 0, reason
        assert "--rejects" in result.output and "refusing" in result.output, result.output
        assert Path(target).read_bytes() == before, reason
    assert count(engine, Battle) == 1  # nothing ingested by the refused runs
    # an earlier rejects file may be replaced
    rejects = tmp_path / "rejects.csv"
    run_cli("ingest", path, "--skip-invalid", "--rejects", str(rejects))
    assert "line 3" in rejects.read_text(encoding="utf-8")
    run_cli(
        "ingest",
        write_csv(tmp_path / "in2.csv", HEADER, [["9", "a", "b", "bad"]]),
        "--skip-invalid",
        "--rejects",
        str(rejects),
    )
    assert "bad" in rejects.read_text(encoding="utf-8")


def test_rejects_written_under_a_temporary_name(run_cli, engine, tmp_path, monkeypatch):
    """An interrupted ingest leaves the previous rejects file as it was, and no temp file."""
    from tests.helpers.ingest import interrupt_on_insert

    rejects = tmp_path / "rejects.csv"
    run_cli(
        "ingest",
        write_csv(tmp_path / "in.csv", HEADER, MIXED),
        "--skip-invalid",
        "--rejects",
        str(rejects),
    )
    before = rejects.read_bytes()
    interrupt_on_insert(monkeypatch, at=1)
    from click.testing import CliRunner

    from arena.cli import cli

    url = engine.url.render_as_string(hide_password=False)
    path = write_csv(
        tmp_path / "in2.csv", HEADER, [["7", "a", "b", "oops"], ["8", "a", "c", "tie"]]
    )
    result = CliRunner().invoke(
        cli, ["--db", url, "ingest", path, "--skip-invalid", "--rejects", str(rejects)]
    )
    assert result.exit_code != 0
    assert rejects.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if "rejects" in p.name) == ["rejects.csv"]


# ------------------------------------------------ 2: the same file, twice at once


@pytest.mark.slow
def test_same_file_ingested_twice_at_once_is_stored_once(db_url, engine, tmp_path):
    rows = [[f"m{i % 7}", f"m{(i * 3 + 1) % 11}", "model_a"] for i in range(60_000)]
    path = write_csv(tmp_path / "noid.csv", ["model_a", "model_b", "winner"], rows)
    url = engine.url.render_as_string(hide_password=False)
    procs = [arena_process(url, "ingest", path, "-q") for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    assert count(engine, Battle) == len(rows)
    assert count(engine, IngestBatch) == 1
    assert sum("already ingested" in out for out, _ in outs) == 1, outs


# ------------------------------------------------ 3: publish writes only its own files


def test_publish_never_removes_files_it_did_not_write(tmp_path):
    from arena.db.session import open_engine
    from arena.publish import PublishError, publish_site
    from tests.publish_fixtures import build_site_db

    engine = open_engine(f"sqlite:///{tmp_path / 'site.db'}")
    build_site_db(engine, n_models=4, history=1, rounds=16, category=False)
    out = tmp_path / "site"
    publish_site(engine, out)
    # a file of the user's own in a site arena wrote (e.g. the database itself)
    (out / "arena.db").write_bytes(b"precious")
    with pytest.raises(PublishError, match="arena.db"):
        publish_site(engine, out)
    assert (out / "arena.db").read_bytes() == b"precious"
    (out / "arena.db").unlink()
    publish_site(engine, out)  # once it is gone, the site may be replaced again
    # a non-empty folder without the marker is refused as before
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    with pytest.raises(PublishError, match="not empty"):
        publish_site(engine, other)
    assert (other / "keep.txt").read_text() == "x"


def test_publish_cli_refuses_a_folder_holding_the_database(tmp_path):
    from click.testing import CliRunner

    from arena.cli import cli

    site = tmp_path / "site"
    site.mkdir()
    url = f"sqlite:///{site / 'arena.db'}"
    runner = CliRunner()
    data = write_csv(
        tmp_path / "b.csv",
        ["model_a", "model_b", "winner"],
        [["a", "b", "model_a"]] * 5 + [["b", "a", "model_a"]] * 3,
    )
    assert runner.invoke(cli, ["--db", url, "ingest", data]).exit_code == 0
    assert runner.invoke(cli, ["--db", url, "rebuild", "--rounds", "20"]).exit_code == 0
    before = (site / "arena.db").read_bytes()
    result = runner.invoke(cli, ["--db", url, "publish", str(site)])
    assert result.exit_code != 0 and "arena.db" in result.output
    assert (site / "arena.db").read_bytes() == before


def test_publish_removes_leftovers_of_interrupted_publishes(tmp_path):
    from arena.db.session import open_engine
    from arena.publish import publish_site
    from tests.publish_fixtures import build_site_db

    engine = open_engine(f"sqlite:///{tmp_path / 'site.db'}")
    build_site_db(engine, n_models=4, history=1, rounds=16, category=False)
    out = tmp_path / "site"
    publish_site(engine, out)
    # what a kill -9 during a publish leaves: a half-written new site, an old one aside
    for stale in (".site.new-abc123", ".site.old-0123456789ab"):
        (tmp_path / stale / "models").mkdir(parents=True)
        (tmp_path / stale / ".arena-site").write_text("x")
        (tmp_path / stale / "index.html").write_text("half")
    (tmp_path / ".site.new-empty").mkdir()
    unrelated = tmp_path / ".site.new-mine"  # not a site: left alone
    unrelated.mkdir()
    (unrelated / "thesis.tex").write_text("x")
    publish_site(engine, out)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [
        ".site.new-mine"
    ]


# ------------------------------------------------ 4: same id, other content


def test_same_id_with_other_content_is_a_conflict(run_cli, engine, tmp_path):
    run_cli("ingest", write_csv(tmp_path / "one.csv", HEADER, [["u1", "a", "b", "model_a"]]))
    # u2 first: one.csv's bytes are not same.csv's first lines (those would be skipped whole)
    same = write_csv(
        tmp_path / "same.csv", HEADER, [["u2", "a", "c", "tie"], ["u1", "a", "b", "model_a"]]
    )
    out = run_cli("ingest", same).output
    assert "1 inserted" in out and "1 duplicates skipped" in out
    cases = {
        "outcome": (["u1", "a", "b", "model_b"], ()),
        "models": (["u1", "a", "z", "model_a"], ()),
        "source": (["u1", "a", "b", "model_a"], ("--source", "judge")),
    }
    for name, (row, extra) in cases.items():
        path = write_csv(tmp_path / f"{name}.csv", HEADER, [[f"new-{name}", "c", "d", "tie"], row])
        result = run_cli("ingest", path, *extra, ok=False)
        assert result.exit_code == 1, (name, result.output)
        msg = result.output
        assert f"{name}.csv: line 3" in msg and "u1" in msg, msg
        assert "stored" in msg and "a_wins" in msg and "batch 1" in msg, msg
        rejects = tmp_path / f"{name}-rejects.csv"
        result = run_cli("ingest", path, *extra, "--skip-invalid", "--rejects", str(rejects))
        assert "1 inserted" in result.output and "1 rejected" in result.output, result.output
        rej = list(csv.DictReader(open(rejects, encoding="utf-8")))
        assert [(r["location"], r["field"]) for r in rej] == [("line 3", "id")]
    assert count(engine, Battle) == 2 + len(cases)


def test_conflict_found_by_the_row_parser_too(run_cli, engine, tmp_path):
    """JSON lines go row by row (writer.write, not write_columns): same rule."""
    import json

    run_cli("ingest", write_csv(tmp_path / "one.csv", HEADER, [["u1", "a", "b", "model_a"]]))
    path = tmp_path / "two.jsonl"
    path.write_text(
        json.dumps({"id": "u1", "model_a": "a", "model_b": "b", "winner": "model_a"})
        + "\n"
        + json.dumps({"id": "u1x", "model_a": "a", "model_b": "b", "winner": "tie"})
        + "\n"
        + json.dumps({"id": "u1", "model_a": "a", "model_b": "b", "winner": "tie"})
        + "\n",
        encoding="utf-8",
    )
    result = run_cli("ingest", str(path), ok=False)
    assert result.exit_code == 1 and "line 3" in result.output and "u1" in result.output
    assert count(engine, Battle) == 1


# ------------------------------------------------ 11: a model added by a concurrent ingest


@pytest.mark.parametrize(
    # SQLite cannot race here: the writer holds the write lock from its batch insert
    "db_url",
    ["postgresql"],
    indirect=True,
)
def test_model_created_by_a_concurrent_ingest_is_reused(engine):
    from sqlalchemy import insert

    from arena.db.models import IngestBatch, Model
    from arena.ingest.records import ParsedBattle
    from arena.ingest.writer import BattleWriter

    with engine.connect() as conn, conn.begin():
        batch = conn.execute(
            insert(IngestBatch)
            .values(file_name="f", sha256="0" * 64, format="csv")
            .returning(IngestBatch.id)
        ).scalar_one()
        writer = BattleWriter(conn, batch_id=batch, source=None)  # reads the models now
        with engine.begin() as other:  # another ingest commits the same new model
            theirs = other.execute(
                insert(Model).values(name="fresh").returning(Model.id)
            ).scalar_one()
        battle = ParsedBattle(None, "fresh", "old", "a_wins", 1.0, None, None, None, None, (), None)
        result = writer.write([battle])
        writer.finish()
        assert result.inserted == 1 and writer.models["fresh"] == theirs
        assert writer.new_models == 1  # "old" only


# ------------------------------------------------ 15: no temporary copies of stdin left


def test_stdin_copy_removed_when_already_ingested(run_cli, engine, tmp_path, monkeypatch):
    import tempfile

    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    data = "model_a,model_b,winner\na,b,model_a\n"
    run_cli("ingest", "-", "--format", "csv", input=data)
    out = run_cli("ingest", "-", "--format", "csv", input=data).output
    assert "already ingested" in out
    assert list(spool.iterdir()) == []
