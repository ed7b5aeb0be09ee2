"""``arena nightly`` on both engines: drop folder, moved files, exit codes, status.json, lock."""

from __future__ import annotations

import json
import shutil

import pytest
from sqlalchemy import func, select

from arena.db.lock import LockHeld, database_lock
from arena.db.models import Battle
from arena.db.session import open_engine
from arena.jobs.nightly import EXIT_FAILED, EXIT_LOCKED, EXIT_NOTHING_NEW, EXIT_OK, EXIT_REJECTED
from tests.helpers.cli import nightly_args
from tests.helpers.files import synth_battles


def stored_battles(url: str) -> int:
    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(Battle)).scalar()
    finally:
        engine.dispose()


@pytest.fixture
def drop(tmp_path):
    """A drop folder with a good file, a bad file, an empty file and one ingested before."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(tmp_path / "seen.csv", n=200, models=5, seed=1)
    synth_battles(incoming / "good.csv", n=300, models=5, seed=2, extra_id=1000)
    (incoming / "bad.csv").write_text("model_a,model_b,winner\na,b,maybe\n")
    (incoming / "empty.csv").write_text("")
    (incoming / ".partial.csv").write_text("model_a,model_b,winner\n")  # a copy in progress
    return tmp_path, incoming


def test_drop_folder_ingested_rebuilt_published(run_cli, db_url, drop):
    tmp_path, incoming = drop
    run_cli("ingest", str(tmp_path / "seen.csv"), "-q")
    shutil.copy(tmp_path / "seen.csv", incoming / "seen-again.csv")

    res = run_cli(*nightly_args(tmp_path, incoming, "--format", "json"), ok=False)
    assert res.exit_code == EXIT_REJECTED, res.output
    doc = json.loads(res.stdout)
    assert doc["battles_added"] == 300
    assert stored_battles(db_url) == 500
    by_name = {f["name"]: f["status"] for f in doc["files"]}
    assert by_name == {
        "bad.csv": "rejected",
        "empty.csv": "rejected",
        "good.csv": "ingested",
        "seen-again.csv": "seen",
    }
    # moved: processed to done, rejected to failed with the reason beside them
    assert sorted(p.name for p in incoming.iterdir()) == [".partial.csv"]
    assert sorted(p.name for p in (tmp_path / "done").iterdir()) == ["good.csv", "seen-again.csv"]
    failed = tmp_path / "failed"
    assert sorted(p.name for p in failed.iterdir()) == [
        "bad.csv",
        "bad.csv.error.txt",
        "empty.csv",
        "empty.csv.error.txt",
    ]
    assert "bad.csv" in (failed / "bad.csv.error.txt").read_text()
    # every board rebuilt (overall and both categories) and published with status.json
    assert set(doc["boards"]) >= {"overall", "category:math", "category:code"}
    status = json.loads((tmp_path / "site" / "status.json").read_text())
    assert status["snapshot_ids"] == doc["snapshot_ids"]
    assert status["battles_added"] == 300 and status["files_rejected"] == 2
    assert status["published"] is True and status["seconds"] >= 0
    assert (tmp_path / "site" / "index.html").is_file()

    # a second night with nothing new: no rebuild, site refreshed, its own exit code
    res = run_cli(*nightly_args(tmp_path, incoming), ok=False)
    assert res.exit_code == EXIT_NOTHING_NEW, res.output
    assert "rebuild skipped" in res.stdout and len(res.stdout.strip().splitlines()) == 1
    status2 = json.loads((tmp_path / "site" / "status.json").read_text())
    assert status2["rebuilt"] is False and status2["snapshot_ids"] == doc["snapshot_ids"]
    assert stored_battles(db_url) == 500

    # a clean night with new battles: exit 0, the leftover hidden file untouched
    synth_battles(incoming / "more.csv", n=100, models=5, seed=3, extra_id=5000)
    res = run_cli(*nightly_args(tmp_path, incoming))
    assert res.exit_code == EXIT_OK
    assert stored_battles(db_url) == 600
    assert (incoming / ".partial.csv").exists()


def test_rebuild_failure_keeps_previous_site(run_cli, drop):
    tmp_path, incoming = drop
    for name in ("bad.csv", "empty.csv"):
        (incoming / name).unlink()
    run_cli(*nightly_args(tmp_path, incoming))
    before = (tmp_path / "site" / "status.json").read_bytes()
    synth_battles(incoming / "more.csv", n=100, models=5, seed=3, extra_id=5000)
    # a board with more models than --max-models fails the rebuild
    res = run_cli(*nightly_args(tmp_path, incoming, "--max-models", "2"), ok=False)
    assert res.exit_code == EXIT_FAILED, res.output
    assert "previous site kept" in res.stdout
    assert (tmp_path / "site" / "status.json").read_bytes() == before


def test_second_run_while_locked_exits_locked(run_cli, db_url, drop):
    tmp_path, incoming = drop
    run_cli("ingest", str(tmp_path / "seen.csv"), "-q")  # creates the database
    engine = open_engine(db_url, migrate_new=False)
    try:
        with database_lock(engine, wait=0):
            with pytest.raises(LockHeld):  # the lock excludes even in the same process
                with database_lock(engine, wait=0.3):
                    pass
            res = run_cli("--wait", "0.5", *nightly_args(tmp_path, incoming), ok=False)
    finally:
        engine.dispose()
    assert res.exit_code == EXIT_LOCKED, res.output
    assert "nothing was done" in res.stderr
    assert stored_battles(db_url) == 200  # nothing of the drop folder was ingested
    assert (incoming / "good.csv").exists() and not (tmp_path / "site").exists()


@pytest.mark.slow
def test_documented_crontab_line_runs_as_written(tmp_path):
    """The crontab line of docs/operations.md, run by sh with only its paths moved."""
    import os
    import re
    import subprocess
    import sys

    from tests.helpers.paths import ROOT

    doc = (ROOT / "docs" / "operations.md").read_text()
    line = re.search(r"```cron\n(.+?)\n```", doc, re.S).group(1)
    fields = line.split(maxsplit=5)
    assert fields[:5] == ["15", "2", "*", "*", "*"]
    home, www = tmp_path / "srv-arena", tmp_path / "www"
    command = fields[5].replace("/srv/www/arena", str(www)).replace("/srv/arena", str(home))
    (home / "drop").mkdir(parents=True)
    synth_battles(home / "drop" / "votes.csv", n=200, models=4, seed=5)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    done = subprocess.run(["sh", "-c", command], env=env, timeout=300)
    assert done.returncode == EXIT_OK, (home / "nightly.log").read_text()
    assert json.loads((www / "status.json").read_text())["battles_added"] == 200
    assert (home / "drop" / "done" / "votes.csv").is_file()
    assert "nightly ok: 200 battles added" in (home / "nightly.log").read_text()


def test_night_publishes_the_latest_stored_audit(run_cli, drop):
    """Issue 39 item 6: a night's rebuild makes a new snapshot; the site still shows
    the board's latest stored audit and says which snapshot it audited."""
    tmp_path, incoming = drop
    run_cli("ingest", str(tmp_path / "seen.csv"), "-q")
    run_cli("rebuild", "--rounds", "20", "-q")
    run_cli("audit", "--rounds", "20")
    for name in ("bad.csv", "empty.csv"):
        (incoming / name).unlink()
    run_cli(*nightly_args(tmp_path, incoming))
    site = tmp_path / "site"
    assert '<a href="audit.html">Vote audit</a>' in (site / "index.html").read_text()
    page = (site / "audit.html").read_text()
    assert "<h1>Vote audit: Overall</h1>" in page and "probes flagged" in page
    assert "This audit is of snapshot 1, the latest one audited" in page
