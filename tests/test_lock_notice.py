"""Every command that waits for another one's lock says so once on stderr (none with -q).

Issue 16's gap: the notice was shown for ingest and migrations only. Real
processes, on SQLite (a writer holding the write lock) and PostgreSQL (a table
lock held by another session; reads wait too).
"""

from __future__ import annotations

import queue
import sqlite3
import threading
import time

import pytest
from sqlalchemy import create_engine, text

from tests.helpers.cli import arena_process
from tests.helpers.files import write_csv

pytestmark = pytest.mark.slow  # real processes waiting for each other's locks

NOTICE = "waiting for another"
ROWS = [["a", "b", "model_a"], ["b", "a", "model_a"], ["b", "c", "model_a"], ["c", "b", "tie"]]
ROWS += [["a", "c", "model_a"], ["c", "a", "model_b"]]


@pytest.fixture
def loaded(db_url, run_cli, tmp_path):
    run_cli("ingest", write_csv(tmp_path / "a.csv", ["model_a", "model_b", "winner"], ROWS * 10))
    run_cli("rebuild", "--rounds", "20", "--min-battles", "0")
    run_cli("rebuild", "--rounds", "20", "--min-battles", "0")
    return db_url


def _hold(db_url: str, table: str):
    """Block the command (SQLite: every writer; PostgreSQL: everyone touching ``table``)."""
    if db_url.startswith("sqlite"):
        conn = sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        return lambda: (conn.execute("COMMIT"), conn.close())
    eng = create_engine(db_url)
    conn = eng.connect()
    conn.execute(text(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
    return lambda: (conn.commit(), conn.close(), eng.dispose())


def _lines(stream) -> queue.Queue:
    q: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in stream:
            q.put(line)
        q.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return q


def _wait_for_notice(q: queue.Queue, seen: list[str], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = q.get(timeout=0.5)
        except queue.Empty:
            continue
        assert line is not None, f"exited without waiting: {''.join(seen)}"
        seen.append(line)
        if NOTICE in line:
            return
    raise AssertionError(f"no lock-wait notice within {timeout}s: {''.join(seen)}")


#: (command, the table PostgreSQL locks; None: SQLite only, reads never wait there)
COMMANDS = [
    (("models", "annotate", "a", "--display-name", "Model A"), "models"),
    (("snapshots", "prune", "--keep-last", "1"), "snapshots"),
    (("rebuild", "--rounds", "20", "--min-battles", "0"), "snapshots"),
    (("leaderboard",), "snapshot_rows"),
]


@pytest.mark.parametrize("args,table", COMMANDS, ids=["annotate", "prune", "rebuild", "read"])
def test_a_waiting_command_says_so_once(loaded, args, table):
    db_url = loaded
    if args[0] == "leaderboard" and db_url.startswith("sqlite"):
        args = ("models", "annotate", "b", "--hide")  # a read never waits on SQLite (WAL)
    release = _hold(db_url, table)
    try:
        proc = arena_process(db_url, "--wait", "60", *args)
        q, seen = _lines(proc.stderr), []
        _wait_for_notice(q, seen)
    finally:
        release()
    out, _ = proc.communicate(timeout=120)
    while (line := q.get(timeout=30)) is not None:
        seen.append(line)
    err = "".join(seen)
    assert proc.returncode == 0, err
    assert err.count(NOTICE) == 1, err
    assert "see --wait" in err


def test_quiet_waits_without_a_word(loaded):
    db_url = loaded
    release = _hold(db_url, "models")
    try:
        proc = arena_process(db_url, "-q", "--wait", "60", "models", "annotate", "a", "--hide")
        time.sleep(3.0)  # well past the one-second notice
        assert proc.poll() is None, proc.communicate()  # still waiting
    finally:
        release()
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert NOTICE not in err
