"""``arena nightly``: real processes racing on one database, and status.json timing the publish.

Issue 18's gaps: two real ``arena nightly`` processes on one database (one
waits, one refuses; nothing lost, nothing stored twice), on SQLite and
PostgreSQL; ``status.json``'s ``seconds`` include the publish.
"""

from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import create_engine, func, select

from arena.db.lock import database_lock
from arena.db.models import Battle, Snapshot
from arena.db.session import open_engine
from arena.jobs.nightly import EXIT_LOCKED, EXIT_NOTHING_NEW, EXIT_OK
from tests.helpers.cli import arena_process
from tests.helpers.files import synth_battles

pytestmark = pytest.mark.slow  # real arena processes racing on one database

BIG = 5_000


def _args(tmp_path, *extra):
    return (
        "nightly",
        "--incoming",
        str(tmp_path / "incoming"),
        "--site",
        str(tmp_path / "site"),
        "--done",
        str(tmp_path / "done"),
        "--rounds",
        "300",
        "--format",
        "json",
        *extra,
    )


def _counts(db_url: str) -> tuple[int, int, int]:
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            battles = conn.execute(select(func.count()).select_from(Battle)).scalar()
            distinct = conn.execute(select(func.count(func.distinct(Battle.external_id)))).scalar()
            snaps = conn.execute(select(func.count()).select_from(Snapshot)).scalar()
    finally:
        engine.dispose()
    return battles, distinct, snaps


def _wait_for_notice(proc, seen: list[str]) -> None:
    """Read ``proc``'s stderr until it says it is waiting for the lock."""
    for line in proc.stderr:
        seen.append(line)
        if "waiting for another" in line:
            return
    raise AssertionError(f"exited without waiting: {''.join(seen)}")


def test_two_real_nightly_runs_race_one_waits_one_refuses(db_url, run_cli, tmp_path):
    """While the lock is held, one run with --wait 0 refuses and two runs wait; when
    it is released the two race for it: one does the night, the other waits for it,
    then finds nothing new. Nothing is lost or stored twice."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(tmp_path / "first.csv", n=200, models=8, seed=1)
    run_cli("ingest", str(tmp_path / "first.csv"), "-q")  # the database exists
    synth_battles(incoming / "big.csv", n=BIG, models=8, seed=2, extra_id=10_000)
    synth_battles(incoming / "small.csv", n=500, models=8, seed=3, extra_id=100_000)

    engine = open_engine(db_url, migrate_new=False)
    try:
        with database_lock(engine, wait=0):  # the test holds the lock: nobody starts
            racers = [arena_process(db_url, "--wait", "600", *_args(tmp_path)) for _ in range(2)]
            refuser = arena_process(db_url, "--wait", "0", *_args(tmp_path))
            out_r, err_r = refuser.communicate(timeout=300)
            errs: list[list[str]] = [[], []]
            for proc, seen in zip(racers, errs, strict=True):
                _wait_for_notice(proc, seen)
        outs = [proc.communicate(timeout=600) for proc in racers]
    finally:
        engine.dispose()

    # refused cleanly: its own exit code, no traceback, nothing done
    assert refuser.returncode == EXIT_LOCKED, (out_r, err_r)
    assert "nothing was done" in err_r and "Traceback" not in err_r
    docs = [json.loads(out) for out, _ in outs]
    codes = sorted(proc.returncode for proc in racers)
    assert codes == [EXIT_OK, EXIT_NOTHING_NEW], outs
    winner, loser = sorted(docs, key=lambda d: d["exit_code"])
    for (_out, err), seen in zip(outs, errs, strict=True):
        text = "".join(seen) + err
        assert text.count("waiting for another") == 1 and "Traceback" not in text
    # the loser waited for the winner's whole night: no second ingest, no second rebuild
    assert winner["battles_added"] == BIG + 500 and loser["battles_added"] == 0
    assert loser["rebuilt"] is False and loser["snapshot_ids"] == winner["snapshot_ids"]
    battles, distinct, snaps = _counts(db_url)
    assert battles == distinct == 200 + BIG + 500
    assert snaps == len(winner["snapshot_ids"])
    assert sorted(p.name for p in (tmp_path / "done").iterdir()) == ["big.csv", "small.csv"]
    assert list(incoming.iterdir()) == []
    # the site is the loser's (published last), from the winner's snapshots
    status = json.loads((tmp_path / "site" / "status.json").read_text())
    assert status["snapshot_ids"] == winner["snapshot_ids"] and status["rebuilt"] is False


def test_status_seconds_include_the_publish(run_cli, tmp_path, monkeypatch):
    """status.json is rendered after every page: a slow publish shows in its seconds."""
    import arena.publish.site as site

    pause = 2.0
    real = site._files

    def slow_files(*args, **kwargs):
        yield from real(*args, **kwargs)
        time.sleep(pause)  # every page written, status.json next

    monkeypatch.setattr(site, "_files", slow_files)
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=300, models=5, seed=2)
    res = run_cli(*_args(tmp_path, "-q"))
    doc = json.loads(res.stdout)
    status = json.loads((tmp_path / "site" / "status.json").read_text())
    assert status["seconds"] >= pause
    # only the directory swap after status.json is missing from its seconds
    assert doc["seconds"] - status["seconds"] < pause / 2, (doc["seconds"], status["seconds"])
