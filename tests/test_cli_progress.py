"""Progress goes to stderr on a terminal, phase by phase, and -q silences it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from tests.helpers.files import synth_battles
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow  # real arena processes on a pseudo-terminal


def _stderr_on_a_terminal(args: list[str]) -> tuple[str, str]:
    """Run ``python -m arena ARGS`` with stderr on a pseudo-terminal; return (stdout, stderr)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena", *args],
            stdout=subprocess.PIPE,
            stderr=follower,
            cwd=ROOT,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closes when the child exits (EIO on Linux)
                break
            if not chunk:
                break
            chunks.append(chunk)
        out = proc.stdout.read().decode()
        assert proc.wait(timeout=300) == 0, b"".join(chunks).decode(errors="replace")
    finally:
        os.close(leader)
    return out, b"".join(chunks).decode(errors="replace")


@pytest.fixture
def loaded(run_cli, tmp_path):
    path = tmp_path / "battles.csv"
    synth_battles(path, n=600, models=5)
    run_cli("ingest", str(path), "-q")


@pytest.mark.parametrize("quiet", [[], ["-q"], ["-q", "BEFORE"]], ids=["loud", "q", "q-before"])
def test_rebuild_reports_each_phase_unless_quiet(db_url, loaded, quiet):
    args = ["rebuild", "--rounds", "30", "--db", db_url]
    if quiet == ["-q", "BEFORE"]:
        args = ["-q", *args]
    else:
        args += quiet
    out, err = _stderr_on_a_terminal(args)
    assert "snapshot 1: overall" in out
    if quiet:
        assert err.strip() == ""
    else:
        # Every phase of issue 16's list: aggregate, fit, intervals (the default
        # sandwich's fixed draws since issue 41), ranks and tiers, write.
        for phase in (
            "s] aggregate:",
            "s] overall: fit:",
            "s] overall: sandwich: 30 fixed draws",
            "s] overall: ranks and tiers:",
            "s] write: 1 snapshot(s)",
        ):
            assert phase in err, (phase, err)
