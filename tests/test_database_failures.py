"""Failures of the database underneath a command (SQLite and PostgreSQL).

Passwords never printed, read commands never create a schema, newer schemas
named as such, lock waits bounded by --wait with a notice, concurrent first
runs, and environmental failures (disk full, read-only or non-database file,
broken gzip, a server that goes away) as one line, exit 1, database intact.
"""

from __future__ import annotations

import gzip
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, func, inspect, select, text

from arena.cli import cli
from arena.db.models import Battle, Snapshot
from tests.helpers.cli import arena_process
from tests.helpers.files import write_csv

pytestmark = pytest.mark.slow  # real processes, lock waits, a tmpfs filled up

PAIRS = [["a", "b", "model_a"], ["b", "c", "model_b"], ["c", "a", "tie"], ["a", "c", "model_a"]]
HEADER = ["model_a", "model_b", "winner"]


def invoke(url: str, *args: str, input: str | None = None):
    """Run the CLI in-process; a traceback would surface as a non-SystemExit exception."""
    result = CliRunner().invoke(cli, ["--db", url, *args], input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback instead of a message: {result.exception!r}") from (
            result.exception
        )
    return result


def count_battles(url: str) -> int:
    eng = create_engine(url)
    try:
        with eng.connect() as conn:
            return conn.execute(select(func.count()).select_from(Battle)).scalar_one()
    finally:
        eng.dispose()


def tables(url: str) -> set[str]:
    eng = create_engine(url)
    try:
        return set(inspect(eng).get_table_names())
    finally:
        eng.dispose()


# ------------------------------------------------ 7: passwords masked everywhere


def test_passwords_never_printed(tmp_path):
    data = write_csv(tmp_path / "b.csv", HEADER, PAIRS)
    urls = [
        "mysql://u:s3cretPW@h/db",  # unsupported
        "postgresql+psycopg://u:s3cretPW@127.0.0.1:1/db",  # nothing listens there
        "postgresql+psycopg://u:s3cretPW@h:notaport/db",  # non-numeric port
    ]
    for url in urls:
        for args in (["models"], ["db", "current"], ["db", "upgrade"], ["ingest", data]):
            result = invoke(url, *args)
            assert result.exit_code == 1, (url, args, result.output)
            assert "s3cretPW" not in result.output, (url, args, result.output)
            assert "***" in result.output or "port" in result.output, result.output
    assert "port" in invoke(urls[2], "models").output


# ------------------------------------------------ 9: read commands create nothing


@pytest.mark.parametrize("foreign", [False, True])
def test_read_commands_refuse_empty_or_foreign_database(db_url, foreign):
    sqlite_path = Path(db_url.removeprefix("sqlite:///")) if db_url.startswith("sqlite") else None
    if foreign:
        eng = create_engine(db_url)
        with eng.begin() as conn:
            conn.execute(text("CREATE TABLE their_data (x INTEGER)"))
        eng.dispose()
    elif sqlite_path is None:
        assert tables(db_url) == set()
    for args in (["models"], ["leaderboard"], ["snapshots"], ["compare", "a", "b"], ["rebuild"]):
        result = invoke(db_url, *args)
        assert result.exit_code == 1, (args, result.output)
        word = (
            "not an arena database"
            if foreign
            else "empty"
            if sqlite_path is None
            else "no database file"
        )
        assert word in result.output and "arena ingest" in result.output, result.output
    if sqlite_path is not None and not foreign:
        assert not sqlite_path.exists()  # not even an empty file
        sqlite_path.touch()  # an empty file: "empty"
        assert "empty" in invoke(db_url, "models").output
    expected = {"their_data"} if foreign else set()
    assert tables(db_url) == expected  # nothing created
    assert invoke(db_url, "db", "current").exit_code == 0  # says "none", creates nothing
    assert tables(db_url) == expected


# ------------------------------------------------ 13: a database from a newer arena


def test_database_from_a_newer_arena_is_named_as_such(db_url, tmp_path):
    assert invoke(db_url, "ingest", write_csv(tmp_path / "b.csv", HEADER, PAIRS)).exit_code == 0
    eng = create_engine(db_url)
    with eng.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    eng.dispose()
    for args in (
        ["db", "current"],
        ["db", "upgrade"],
        ["models"],
        ["ingest", str(tmp_path / "b.csv")],
    ):
        result = invoke(db_url, *args)
        assert result.exit_code == 1, (args, result.output)
        assert "written by a newer arena (revision 0099)" in result.output, result.output
        assert "upgrade arena" in result.output
    assert count_battles(db_url) == len(PAIRS)


# ------------------------------------------------ 11/13: concurrent first runs


def test_concurrent_first_runs_on_a_new_database(db_url, tmp_path):
    files = [
        write_csv(tmp_path / f"f{i}.csv", HEADER, [[f"m{i}", f"n{i}", "model_a"]] * (i + 1))
        for i in range(4)
    ]
    procs = [arena_process(db_url, "ingest", f, "-q") for f in files]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    assert count_battles(db_url) == 1 + 2 + 3 + 4
    assert invoke(db_url, "db", "current").output.startswith(
        __import__("arena.db.session", fromlist=["HEAD_REVISION"]).HEAD_REVISION
    )


# ------------------------------------------------ 10: waiting for another writer


def _hold_lock(db_url: str, table: str = "ingest_batches"):
    """Start a transaction that blocks every writer (PostgreSQL: of ``table``);
    returns (release, close)."""
    if db_url.startswith("sqlite"):
        conn = sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        return (lambda: conn.execute("COMMIT")), conn.close
    eng = create_engine(db_url)
    conn = eng.connect()
    conn.execute(text(f"LOCK TABLE {table} IN EXCLUSIVE MODE"))
    return conn.commit, lambda: (conn.close(), eng.dispose())


def test_wait_for_a_writer_then_a_clear_message(db_url, tmp_path):
    assert invoke(db_url, "ingest", write_csv(tmp_path / "a.csv", HEADER, PAIRS)).exit_code == 0
    data = write_csv(tmp_path / "b.csv", HEADER, PAIRS[:2])
    release, close = _hold_lock(db_url)
    try:
        proc = arena_process(db_url, "--wait", "2", "ingest", data)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, (out, err)
        assert "Traceback" not in err and "--wait" in err, err
        assert "lock" in err, err
        assert "waiting for another command" in err, err
        # released while the next one waits: it goes on and succeeds
        proc = arena_process(db_url, "--wait", "60", "ingest", data)
        time.sleep(2.5)
        release()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    finally:
        close()
    assert count_battles(db_url) == len(PAIRS) + 2


#: Lock requests not granted on a table of this test's schema (the URL's search path), so
#: other tests and other users of the server, waiting for their own locks, do not count.
WAITING_HERE = text(
    "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
    " WHERE NOT l.granted AND c.relnamespace = current_schema()::regnamespace"
)


def _until_waiting(db_url: str, proc: subprocess.Popen) -> None:
    """Return once ``proc`` waits for a lock: SQLite -- its notice on stderr;
    PostgreSQL -- a lock request not granted on a table of this schema."""
    if db_url.startswith("sqlite"):
        line = proc.stderr.readline()
        while line and "waiting for another command" not in line:
            line = proc.stderr.readline()
        assert line, "exited without waiting"
        return
    eng = create_engine(db_url)
    try:
        for _ in range(600):
            with eng.connect() as conn:
                if conn.execute(WAITING_HERE).scalar():
                    return
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        raise AssertionError("never waited for the lock")
    finally:
        eng.dispose()


def test_rebuild_waits_to_write_its_snapshot(db_url, tmp_path):
    """A rebuild finishing while another command writes waits for it, then stores its work."""
    rows = [
        ["a", "b", "model_a"],
        ["b", "a", "model_a"],
        ["b", "c", "model_a"],
        ["c", "b", "model_a"],
    ]
    rows += [["a", "c", "model_a"], ["c", "a", "model_a"]]
    assert invoke(db_url, "ingest", write_csv(tmp_path / "a.csv", HEADER, rows * 10)).exit_code == 0
    release, close = _hold_lock(db_url, "snapshots")
    try:
        proc = arena_process(db_url, "--wait", "60", "rebuild", "--rounds", "20")
        _until_waiting(db_url, proc)
        release()
        _out, err = proc.communicate(timeout=120)
    finally:
        close()
    assert proc.returncode == 0, err
    eng = create_engine(db_url)
    with eng.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Snapshot)).scalar_one() == 1
    eng.dispose()


# ------------------------------------------------ 12: environmental failures


def test_corrupt_or_truncated_gzip(db_url, tmp_path):
    whole = gzip.compress(("model_a,model_b,winner\n" + "a,b,model_a\n" * 50_000).encode())
    for name, data in (
        ("truncated.csv.gz", whole[: len(whole) // 2]),
        ("corrupt.csv.gz", whole[:40] + bytes(200) + whole[240:]),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        result = invoke(db_url, "ingest", str(path))
        assert result.exit_code == 1, result.output
        assert name in result.output and "gzip" in result.output, result.output
        assert "Aborted" not in result.output
    assert count_battles(db_url) == 0


def test_not_a_database_and_read_only_database(tmp_path):
    data = write_csv(tmp_path / "b.csv", HEADER, PAIRS)
    junk = tmp_path / "notes.db"
    junk.write_bytes(b"these are my notes, not a database\n" * 200)
    before = junk.read_bytes()
    for args in (["models"], ["ingest", data], ["db", "current"], ["db", "upgrade"]):
        result = invoke(f"sqlite:///{junk}", *args)
        assert result.exit_code == 1, (args, result.output)
        assert "not an SQLite database" in result.output, result.output
    assert junk.read_bytes() == before
    db = tmp_path / "arena.db"
    assert invoke(f"sqlite:///{db}", "ingest", data).exit_code == 0
    ro = f"sqlite:///file:{db}?mode=ro&uri=true"
    assert invoke(ro, "models").exit_code == 0  # reading is fine
    result = invoke(ro, "ingest", write_csv(tmp_path / "c.csv", HEADER, PAIRS[:1]))
    assert result.exit_code == 1 and "read-only" in result.output, result.output
    assert count_battles(f"sqlite:///{db}") == len(PAIRS)


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (root only: mounting needs it)."""
    if os.geteuid() != 0:
        pytest.skip("NOT ROOT: the disk-full test mounts a small tmpfs and needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=True)  # -l: pooled handles


def test_disk_full(small_disk, tmp_path, monkeypatch):
    url = f"sqlite:///{small_disk / 'arena.db'}"
    first = write_csv(tmp_path / "a.csv", HEADER, PAIRS)
    assert invoke(url, "ingest", first).exit_code == 0
    big = write_csv(
        tmp_path / "big.csv",
        ["id", *HEADER],
        [
            [f"battle-{i:08d}-{'x' * 40}", f"m{i % 50}", f"n{i % 70}", "model_a"]
            for i in range(60_000)
        ],
    )
    result = invoke(url, "ingest", big)
    assert result.exit_code == 1 and "disk is full" in result.output, result.output
    assert count_battles(url) == len(PAIRS)
    with sqlite3.connect(small_disk / "arena.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # stdin spooled to a full temp folder
    import tempfile

    spool = small_disk / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    result = invoke(f"sqlite:///{tmp_path / 'other.db'}", "ingest", "-", input=open(big).read())
    assert list(spool.iterdir()) == []
    assert result.exit_code == 1 and "disk is full" in result.output, result.output


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)  # a server to lose
def test_postgresql_server_gone_mid_ingest(db_url, tmp_path, monkeypatch):
    assert invoke(db_url, "ingest", write_csv(tmp_path / "a.csv", HEADER, PAIRS)).exit_code == 0
    import arena.ingest.writer as writer

    admin = create_engine(db_url)
    real = writer.BattleWriter._insert

    def shutdown_then_insert(self, *args, **kwargs):
        pid = self.conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        with admin.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        return real(self, *args, **kwargs)

    monkeypatch.setattr(writer.BattleWriter, "_insert", shutdown_then_insert)
    result = invoke(db_url, "ingest", write_csv(tmp_path / "b.csv", HEADER, PAIRS[:2]))
    admin.dispose()
    assert result.exit_code == 1, result.output
    assert "database server" in result.output, result.output
    assert count_battles(db_url) == len(PAIRS)


# ------------------------------------------------ 16: --max-models


def test_max_models_guard(db_url, tmp_path):
    assert invoke(db_url, "ingest", write_csv(tmp_path / "a.csv", HEADER, PAIRS)).exit_code == 0
    result = invoke(db_url, "rebuild", "--rounds", "10", "--max-models", "2")
    assert result.exit_code == 1, result.output
    assert "3 models" in result.output and "--max-models 2" in result.output, result.output
    eng = create_engine(db_url)
    with eng.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Snapshot)).scalar_one() == 0
    eng.dispose()
    assert invoke(db_url, "rebuild", "--rounds", "10", "--max-models", "3").exit_code == 0
