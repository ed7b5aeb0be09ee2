"""Every command documents itself with an example (sqlite-utils style)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from arena.cli import cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


ALL = list(_commands(cli))


def test_core_commands_exist():
    names = {" ".join(path) for path, _ in ALL}
    assert {"ingest", "models", "db", "db upgrade", "db current"} <= names


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=[" ".join(p) for p, _ in ALL])
def test_every_command_has_help_with_example(path):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example:" in result.output, f"arena {' '.join(path)} --help has no Example: block"
    assert len(result.output.splitlines()) > 4


def test_python_dash_m():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "arena", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "arena" in out.stdout
