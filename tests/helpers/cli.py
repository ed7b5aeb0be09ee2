"""Running ``arena``: in-process through click, or as a real process."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from tests.helpers.paths import ROOT


def cli_for(url: str):
    """``run(*args)``: invoke the CLI against ``url``; returns the click Result."""
    from arena.cli import cli

    runner = CliRunner()

    def run(*args: str, input: str | bytes | None = None, ok: bool = True):
        result = runner.invoke(cli, ["--db", url, *args], input=input, catch_exceptions=False)
        if ok and result.exit_code != 0:
            raise AssertionError(
                f"arena {' '.join(args)} exited {result.exit_code}:\n{result.output}"
            )
        return result

    return run


def run_file_command(args, *, ok=True):
    """Run an ``arena`` command that reads files, not a database (eval, irt)."""
    from arena.cli import cli

    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def arena_process(url: str, *args: str) -> subprocess.Popen:
    """``arena --db url args...`` as a separate process (for races and locks)."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "--db", url, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def nightly_args(tmp_path, incoming, *extra) -> tuple[str, ...]:
    """``arena nightly`` over the drop folder ``incoming``, with site, done and failed
    folders under ``tmp_path`` and few bootstrap rounds."""
    return (
        "nightly",
        "--incoming",
        str(incoming),
        "--site",
        str(tmp_path / "site"),
        "--done",
        str(tmp_path / "done"),
        "--failed",
        str(tmp_path / "failed"),
        "--rounds",
        "50",
        "-q",
        *extra,
    )
