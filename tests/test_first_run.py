"""A new user's first commands: a failed first ingest leaves nothing behind."""

from __future__ import annotations

from tests.helpers.cli import cli_for


def test_missing_file_leaves_no_empty_database(tmp_path):
    db = tmp_path / "arena.db"
    out = cli_for(f"sqlite:///{db}")("ingest", str(tmp_path / "nope.csv"), ok=False)
    assert out.exit_code == 1 and "nope.csv: no such file; nothing was stored" in out.output
    assert not db.exists()
