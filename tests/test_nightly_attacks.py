"""Issue 26: one bad file never stops the night (both engines).

Every per-file failure -- a record the engines cannot store, a file that
cannot be read, vanishes, changes while read, a link, a folder, a move that
fails -- becomes that file's outcome in status.json, the night goes on and
exits 3.
"""

from __future__ import annotations

import errno
import json
import os
import shutil

import pytest
from sqlalchemy import func, select

from arena.core.errors import OptionError
from arena.db.models import Battle
from arena.ingest import sources
from arena.jobs import nightly as nightly_mod
from arena.jobs.nightly import EXIT_OK, EXIT_REJECTED, NightlyError, nightly
from arena.jobs.rebuild import RebuildOptions
from tests.helpers.cli import nightly_args
from tests.helpers.db import battles_at as stored_battles
from tests.helpers.files import synth_battles

GOOD_ROWS = 300


def _write(path, text: str | bytes) -> None:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    with open(path, "wb") as fh:
        fh.write(data)


@pytest.fixture
def poisoned(tmp_path):
    """A drop folder with one good file and one of every kind of poison."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "good.csv", n=GOOD_ROWS, models=5, seed=2, extra_id=1000)
    head = "model_a,model_b,winner,id,judge"
    # a lone surrogate in a JSON string (model, id, category)
    _write(
        incoming / "surrogate_model.jsonl",
        '{"model_a": "m\\ud800x", "model_b": "b", "winner": "model_a"}\n',
    )
    _write(
        incoming / "surrogate_id.jsonl",
        '{"model_a": "a", "model_b": "b", "winner": "model_a", "id": "x\\udfff"}\n',
    )
    _write(
        incoming / "surrogate_cat.jsonl",
        '{"model_a": "a", "model_b": "b", "winner": "tie", "category": "c\\ud800"}\n',
    )
    # NUL bytes in an id, a judge, a category (CSV and JSON)
    _write(incoming / "nul_id.csv", f"{head}\na,b,model_a,x\x00y,j\n")
    _write(
        incoming / "nul_judge.jsonl",
        '{"model_a": "a", "model_b": "b", "winner": "tie", "judge": "j\\u0000"}\n',
    )
    _write(
        incoming / "nul_cat.jsonl",
        '{"model_a": "a", "model_b": "b", "winner": "tie", "category": "\\u0000"}\n',
    )
    # a bidi override in a judge, an over-long id
    _write(incoming / "bidi.csv", f"{head}\na,b,model_a,i1,ju\u202edge\n")
    _write(incoming / "long_id.csv", f"{head}\na,b,model_a,{'x' * 300},j\n")
    # 100,000 levels of nesting
    _write(incoming / "deep.jsonl", "[" * 100_000 + "]" * 100_000 + "\n")
    _write(incoming / "deep.json", "[" * 100_000 + "]" * 100_000)
    # duplicated CSV column and JSON key
    _write(incoming / "dup_col.csv", "model_a,model_b,winner,model_a\na,b,model_a,c\n")
    _write(
        incoming / "dup_key.jsonl",
        '{"model_a": "a", "model_b": "b", "winner": "tie", "model_a": "c"}\n',
    )
    # a file name that is not UTF-8
    with open(os.fsencode(incoming) + b"/latin\xe9.csv", "wb") as fh:
        fh.write(b"model_a,model_b,winner\na,b,model_a\n")
    # links and a folder
    secret = tmp_path / "secret.csv"
    synth_battles(secret, n=50, models=3, seed=9, extra_id=90_000)
    os.symlink(secret, incoming / "link.csv")
    os.symlink(tmp_path / "nowhere.csv", incoming / "dangling.csv")
    os.symlink(incoming / "loop2.csv", incoming / "loop1.csv")  # a link loop
    os.symlink(incoming / "loop1.csv", incoming / "loop2.csv")
    (incoming / "subdir").mkdir()
    return tmp_path, incoming


EXPECTED_REJECTED = {
    "surrogate_model.jsonl": "U+D800",
    "surrogate_id.jsonl": "U+DFFF",
    "surrogate_cat.jsonl": "U+D800",
    "nul_id.csv": "U+0000",
    "nul_judge.jsonl": "U+0000",
    "nul_cat.jsonl": "U+0000",
    "bidi.csv": "U+202E",
    "long_id.csv": "longer than 255",
    "deep.jsonl": "nested too deeply",
    "deep.json": "nested too deeply",
    "dup_col.csv": "'model_a' appears more than once",
    "dup_key.jsonl": "'model_a' appears more than once",
    "link.csv": "symbolic link",
    "dangling.csv": "dangling",
    "loop1.csv": "dangling",
    "loop2.csv": "dangling",
}


def test_poison_files_are_rejected_and_the_night_goes_on(run_cli, db_url, poisoned):
    tmp_path, incoming = poisoned
    res = run_cli(*nightly_args(tmp_path, incoming, "--format", "json"), ok=False)
    assert res.exit_code == EXIT_REJECTED, res.output
    doc = json.loads(res.stdout)
    assert "Traceback" not in res.output
    by_name = {f["name"]: f for f in doc["files"]}
    assert by_name["good.csv"]["status"] == "ingested"
    assert by_name["latin\\xe9.csv"]["status"] == "ingested"  # its bytes shown as \xNN
    assert doc["battles_added"] == GOOD_ROWS + 1
    assert stored_battles(db_url) == GOOD_ROWS + 1  # nothing of any poison file, not the link
    for name, fragment in EXPECTED_REJECTED.items():
        out = by_name[name]
        assert out["status"] == "rejected", (name, out)
        assert fragment in out["error"], (name, out["error"])
        assert name in out["error"]
    # the text rule's message names file, line and field
    assert "line 2" in by_name["nul_id.csv"]["error"] and "'id'" in by_name["nul_id.csv"]["error"]
    assert "'judge'" in by_name["bidi.csv"]["error"]
    assert by_name["subdir"]["status"] == "skipped" and "folder" in by_name["subdir"]["error"]
    failed = tmp_path / "failed"
    for name in EXPECTED_REJECTED:
        assert (failed / name).exists() or (failed / name).is_symlink(), name
        assert name in (failed / f"{name}.error.txt").read_text()
    # the link itself was moved, the file it pointed to is untouched
    assert (failed / "link.csv").is_symlink() and (tmp_path / "secret.csv").is_file()
    assert sorted(os.listdir(incoming)) == ["subdir"]
    status = json.loads((tmp_path / "site" / "status.json").read_text())
    assert status["files_rejected"] == len(EXPECTED_REJECTED)
    assert status["files_skipped"] == 1 and status["published"] is True
    assert status["outcome"] == "rejected" and status["exit_code"] == EXIT_REJECTED


def test_follow_symlinks_reads_the_linked_file(run_cli, db_url, tmp_path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(tmp_path / "real.csv", n=80, models=4, seed=3)
    os.symlink(tmp_path / "real.csv", incoming / "link.csv")
    res = run_cli(*nightly_args(tmp_path, incoming, "--follow-symlinks"), ok=False)
    assert res.exit_code == EXIT_OK, res.output
    assert stored_battles(db_url) == 80
    # the link went to done/, the linked file stays where it was
    assert (tmp_path / "done" / "link.csv").is_symlink() and (tmp_path / "real.csv").is_file()


@pytest.mark.parametrize("option", ["--done", "--failed", "--site"])
def test_output_folder_equal_to_drop_folder_refused(run_cli, tmp_path, option):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=20, models=3, seed=1)
    args = {"--done": tmp_path / "done", "--failed": tmp_path / "failed", "--site": tmp_path / "s"}
    args[option] = incoming / "." if option != "--site" else incoming
    flat = [x for k, v in args.items() for x in (k, str(v))]
    res = run_cli("nightly", "--incoming", str(incoming), *flat, "--rounds", "50", "-q", ok=False)
    assert res.exit_code == 1 and f"{option} is the --incoming folder" in res.output, res.output
    assert "nothing was done" in res.output and "Traceback" not in res.output
    assert sorted(os.listdir(incoming)) == ["a.csv"]


@pytest.mark.parametrize("days", ["nan", "inf", "1e10", "-1"])
def test_keep_days_validated(run_cli, tmp_path, days):
    # checked once, by the library, and named as the flag (exit 1, like every refused option)
    res = run_cli("snapshots", "prune", "--keep-days", days, ok=False)
    assert res.exit_code == 1 and "--keep-days must be" in res.output, res.output
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    res = run_cli(*nightly_args(tmp_path, incoming, "--prune-keep-days", days), ok=False)
    assert res.exit_code == 1 and "--prune-keep-days must be" in res.output, res.output
    assert not (tmp_path / "site").exists()  # no status.json claiming anything


def test_library_names_folder_parameters_not_flags(engine, tmp_path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    with pytest.raises(NightlyError, match=r"^done is the incoming folder \(") as caught:
        nightly(engine, incoming, tmp_path / "site", RebuildOptions(), done=incoming, wait=5)
    assert "--" not in str(caught.value)
    with pytest.raises(NightlyError, match="^site must not be the done or failed folder$"):
        nightly(engine, incoming, tmp_path / "d", RebuildOptions(), done=tmp_path / "d", wait=5)


def test_library_refuses_bad_retention_before_work(engine, tmp_path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=20, models=3, seed=1)
    with pytest.raises(OptionError, match="^prune_keep_days must be a finite number"):
        nightly(
            engine,
            incoming,
            tmp_path / "site",
            RebuildOptions(),
            wait=5,
            prune_keep_days=float("inf"),
        )
    assert (incoming / "a.csv").exists() and not (tmp_path / "site").exists()


def test_status_json_reports_the_prune(run_cli, tmp_path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=100, models=4, seed=1)
    run_cli(*nightly_args(tmp_path, incoming, "--prune-keep-last", "1"))
    status = json.loads((tmp_path / "site" / "status.json").read_text())
    assert status["pruned"] is not None and status["outcome"] == "ok"


def _count(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(Battle)).scalar()


def _night(engine, tmp_path, **kw):
    return nightly(
        engine,
        tmp_path / "incoming",
        tmp_path / "site",
        RebuildOptions(rounds=20),
        done=tmp_path / "done",
        failed=tmp_path / "failed",
        wait=5,
        **kw,
    )


def test_file_deleted_mid_night(engine, tmp_path, monkeypatch):
    """A file that vanishes before it is read is reported; the rest is rebuilt and published."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=120, models=4, seed=1)
    synth_battles(incoming / "b.csv", n=50, models=4, seed=2, extra_id=5000)
    real = nightly_mod.ingest_file

    def ingest_and_delete_next(eng, path, **kw):
        report = real(eng, path, **kw)
        (incoming / "b.csv").unlink(missing_ok=True)
        return report

    monkeypatch.setattr(nightly_mod, "ingest_file", ingest_and_delete_next)
    result = _night(engine, tmp_path)
    by_name = {f.name: f for f in result.files}
    assert by_name["a.csv"].status == "ingested"
    assert by_name["b.csv"].status == "rejected" and "removed" in by_name["b.csv"].error
    assert result.rebuilt and result.published and result.exit_code == EXIT_REJECTED
    assert _count(engine) == 120


def test_unreadable_file_is_a_read_error(engine, tmp_path, monkeypatch):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=60, models=4, seed=1)
    synth_battles(incoming / "locked.csv", n=60, models=4, seed=2, extra_id=500)
    real_open = open

    def deny(path, *args, **kw):  # root ignores file modes, so deny the open itself
        if str(path).endswith("locked.csv"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kw)

    monkeypatch.setattr(sources, "open", deny, raising=False)
    result = _night(engine, tmp_path)
    out = {f.name: f for f in result.files}["locked.csv"]
    assert out.status == "rejected"
    assert "cannot read" in out.error and "Permission denied" in out.error
    assert "write" not in out.error
    assert _count(engine) == 60


def test_file_growing_during_the_read_is_not_stored(engine, tmp_path, monkeypatch):
    """Appended while read: rolled back, not moved, read whole the next night."""
    from arena.ingest import loader

    incoming = tmp_path / "incoming"
    incoming.mkdir()
    rows = synth_battles(incoming / "a.csv", n=400, models=4, seed=1)
    synth_battles(tmp_path / "base.csv", n=50, models=4, seed=5, extra_id=70_000)
    loader.ingest_file(engine, str(tmp_path / "base.csv"))  # a store that can be rebuilt
    real_chunks = loader.read_chunks

    def appending(*args, **kw):
        for k, chunk in enumerate(real_chunks(*args, **kw)):
            if k == 0:
                with open(incoming / "a.csv", "a") as fh:
                    fh.write("b99999,model-0,model-1,model_a,j1,True,False\n")
            yield chunk

    monkeypatch.setattr(loader, "read_chunks", appending)
    monkeypatch.setattr(loader, "CHUNK_ROWS", 100)
    result = _night(engine, tmp_path)
    out = result.files[0]
    assert out.status == "changed" and "nothing of it was stored" in out.error
    assert result.exit_code == EXIT_REJECTED and _count(engine) == 50
    assert (incoming / "a.csv").exists() and not (tmp_path / "done").exists()
    monkeypatch.setattr(loader, "read_chunks", real_chunks)
    result = _night(engine, tmp_path)
    assert result.files[0].status == "ingested" and _count(engine) == 50 + len(rows) + 1


def test_file_changed_after_commit_is_left_for_next_night(engine, tmp_path, monkeypatch):
    """Changed between the commit and the move: stored, not moved, and the next night
    stores only what is new (ids de-duplicate)."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    rows = synth_battles(incoming / "a.csv", n=200, models=4, seed=1)
    real = nightly_mod.ingest_file
    appended = []

    def ingest_then_append(eng, path, **kw):
        report = real(eng, path, **kw)
        if not appended:
            with open(path, "a") as fh:
                fh.write("b77777,model-0,model-1,model_a,j1,True,False\n")
            appended.append(path)
        return report

    monkeypatch.setattr(nightly_mod, "ingest_file", ingest_then_append)
    result = _night(engine, tmp_path)
    out = result.files[0]
    assert out.status == "changed" and out.inserted == len(rows) and out.moved_to is None
    assert "read again next time" in out.error and result.exit_code == EXIT_REJECTED
    result = _night(engine, tmp_path)
    assert result.files[0].status == "ingested" and result.files[0].inserted == 1
    assert _count(engine) == len(rows) + 1
    assert (tmp_path / "done" / "a.csv").exists()


def test_cross_device_move_is_atomic_and_a_failed_move_is_reported(engine, tmp_path, monkeypatch):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    rows = synth_battles(incoming / "a.csv", n=150, models=4, seed=1)
    original = (incoming / "a.csv").read_bytes()
    real_rename, real_copy = os.rename, shutil.copyfileobj

    def cross_device(src, dst):
        if os.path.dirname(os.fspath(src)) == os.fspath(incoming):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_rename(src, dst)

    def disk_full(src, dst, length=0):
        dst.write(src.read(1000))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(nightly_mod.os, "rename", cross_device)
    monkeypatch.setattr(nightly_mod.shutil, "copyfileobj", disk_full)
    result = _night(engine, tmp_path)
    out = result.files[0]
    assert out.status == "ingested" and out.inserted == len(rows)
    assert out.moved_to is None and "No space left on device" in out.move_error
    assert "stays in the drop folder" in out.move_error
    assert result.exit_code == EXIT_REJECTED and result.published
    assert "nothing was stored" not in result.summary()
    assert os.listdir(tmp_path / "done") == []  # no truncated copy, no temporary file
    assert (incoming / "a.csv").read_bytes() == original

    # the next night (space freed): recognised as stored, copied whole, then removed
    monkeypatch.setattr(nightly_mod.shutil, "copyfileobj", real_copy)
    result = _night(engine, tmp_path)
    assert result.files[0].status == "seen" and result.files[0].move_error is None
    assert os.listdir(tmp_path / "done") == ["a.csv"]
    assert (tmp_path / "done" / "a.csv").read_bytes() == original
    assert not (incoming / "a.csv").exists() and _count(engine) == len(rows)


def test_database_refusal_is_a_rejection(engine, tmp_path, monkeypatch):
    """An error the database raises about a value (DataError) rejects the file only."""
    from sqlalchemy.exc import DataError

    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=60, models=4, seed=1)
    synth_battles(incoming / "b.csv", n=60, models=4, seed=2, extra_id=500)
    real = nightly_mod.ingest_file

    def refuse_b(eng, path, **kw):
        if path.endswith("b.csv"):
            raise DataError("INSERT", {}, ValueError("invalid byte sequence"))
        return real(eng, path, **kw)

    monkeypatch.setattr(nightly_mod, "ingest_file", refuse_b)
    result = _night(engine, tmp_path)
    out = {f.name: f for f in result.files}["b.csv"]
    assert out.status == "rejected" and "invalid byte sequence" in out.error
    assert (tmp_path / "failed" / "b.csv.error.txt").exists() and result.published


@pytest.mark.parametrize("value", ["1e308", "1e40", "-2e5", "nan", "inf"])
def test_anchor_bounded(run_cli, tmp_path, value):
    synth_battles(tmp_path / "a.csv", n=100, models=4, seed=1)
    run_cli("ingest", str(tmp_path / "a.csv"), "-q")
    res = run_cli("rebuild", "--anchor", f"model-0={value}", "--rounds", "20", ok=False)
    assert res.exit_code == 1 and "--anchor model-0=" in res.output, res.output
    assert "finite number from -100,000 to 100,000" in res.output
    assert "Traceback" not in res.output
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "b.csv", n=50, models=4, seed=2, extra_id=900)
    res = run_cli(*nightly_args(tmp_path, incoming, "--anchor", f"model-0={value}"), ok=False)
    assert res.exit_code == 1 and "nothing was done" in res.output, res.output
    assert (incoming / "b.csv").exists()
    run_cli("rebuild", "--anchor", "model-0=99999", "--rounds", "20", "-q")


def _many_categories(path, n_categories: int) -> None:
    lines = ["id,model_a,model_b,winner,category"]
    for k in range(40 * n_categories):
        lines.append(f"c{k},model-{k % 3},model-{(k + 1) % 3},model_a,cat{k % n_categories}")
    path.write_text("\n".join(lines) + "\n")


def test_max_boards_guard(run_cli, tmp_path):
    _many_categories(tmp_path / "a.csv", 12)
    run_cli("ingest", str(tmp_path / "a.csv"), "-q")
    res = run_cli("rebuild", "--all-categories", "--max-boards", "5", "--rounds", "20", ok=False)
    assert res.exit_code == 1 and "13 boards" in res.output and "--max-boards 5" in res.output
    assert "no snapshot was written" in res.output
    run_cli("rebuild", "--all-categories", "--rounds", "20", "-q")
    res = run_cli("publish", str(tmp_path / "site"), "--max-boards", "5", ok=False)
    assert res.exit_code == 1 and "13 boards" in res.output and "prompt ids" in res.output
    assert not (tmp_path / "site").exists()
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    _many_categories(incoming / "b.csv", 20)
    res = run_cli(*nightly_args(tmp_path, incoming, "--max-boards", "15"), ok=False)
    assert res.exit_code == nightly_mod.EXIT_FAILED and "--max-boards 15" in res.output
    assert "previous site kept" in res.output


def test_error_note_that_cannot_be_written_is_reported(engine, tmp_path, monkeypatch):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=60, models=4, seed=1)
    (incoming / "bad.csv").write_text("model_a,model_b,winner\na,b,maybe\n")

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(nightly_mod, "_write_atomic", full)
    result = _night(engine, tmp_path)
    out = {f.name: f for f in result.files}["bad.csv"]
    assert out.status == "rejected" and out.moved_to.endswith("bad.csv")
    assert "bad.csv.error.txt could not be written: No space left" in out.move_error
    assert result.exit_code == EXIT_REJECTED and result.published
    assert sorted(os.listdir(tmp_path / "failed")) == ["bad.csv"]


def test_file_names_cannot_forge_log_lines_or_drive_the_terminal(run_cli, tmp_path):
    """A name with a newline or an escape sequence is printed escaped, on one line."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    forged = "x.csv\nnightly ok: 0 files, nothing rejected\n"
    (incoming / forged).write_text("not,a,battle,file\n")
    (incoming / "red\x1b[31m.csv").write_text("not,a,battle,file\n")
    res = run_cli(*nightly_args(tmp_path, incoming), ok=False)
    lines = res.output.splitlines()
    assert not any(line.startswith("nightly ok: 0 files, nothing rejected") for line in lines)
    assert "\x1b" not in res.output
    assert "x.csv\\x0anightly ok" in res.output and "red\\x1b[31m.csv" in res.output
    for note in (tmp_path / "failed").glob("*.error.txt"):
        text = note.read_text()
        assert "\x1b" not in text and text.count("\n") <= 1, text
