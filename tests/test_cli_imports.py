"""A command loads only what it uses (issue 37 item 7: a CLI that answers at once).

Each check runs the command in a fresh interpreter and lists the heavy modules
it loaded; the time they cost is measured by ``benchmarks/bench_cli_latency.py``,
not here.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import arena
from arena.cli import COMMAND_MODULES
from tests.helpers.paths import ROOT

#: Loaded by no ``arena leaderboard``: the engine's numerics, the ORM, the site.
NOT_FOR_A_LEADERBOARD = (
    "numpy",
    "scipy",
    "jinja2",
    "arena.engine.inference.ranks",
    "sqlalchemy.orm",
    "arena.db.models",
)


def loaded_by(args: list[str], watch: tuple[str, ...]) -> list[str]:
    """The modules of ``watch`` that ``arena ARGS`` loaded (its exit status checked)."""
    code = (
        "import json, sys\n"
        "from arena.cli import cli\n"
        "try:\n"
        "    cli(sys.argv[1:], prog_name='arena')\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        f"print(json.dumps(sorted(m for m in {watch!r} if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def board_url(db_url, tmp_path):
    """A database with one snapshot of a small board."""
    path = tmp_path / "battles.csv"
    rows = ["id,model_a,model_b,winner,math"]
    rows += [f"b{k},m{k % 3},m{(k + 1) % 3},model_a,{k % 2 == 0}" for k in range(30)]
    rows += [f"c{k},m{(k + 1) % 3},m{k % 3},model_a,{k % 2 == 0}" for k in range(20)]
    path.write_text("\n".join(rows) + "\n")
    with arena.open(db_url) as db:
        db.ingest(path)
        db.rebuild(rounds=20, min_battles=1, all_categories=True)
    return db_url


@pytest.mark.slow  # builds a board, then runs fresh interpreters
def test_leaderboard_loads_no_numerics_orm_or_other_command(board_url):
    watch = NOT_FOR_A_LEADERBOARD + tuple(f"arena.cli.{m}" for m in set(COMMAND_MODULES.values()))
    if board_url.startswith("sqlite"):
        # validating the battles index's PostgreSQL options would import that dialect
        watch += ("sqlalchemy.dialects.postgresql",)
    got = loaded_by(["leaderboard", "--db", board_url], watch)
    assert got == ["arena.cli.leaderboard_cmd"]
    got = loaded_by(["leaderboard", "--db", board_url, "--category", "math"], watch)
    assert got == ["arena.cli.leaderboard_cmd"]


def test_command_table_names_every_command_of_its_module():
    found = {}
    for path in sorted((ROOT / "arena" / "cli").glob("*.py")):
        module = importlib.import_module(f"arena.cli.{path.stem}")
        for command in getattr(module, "COMMANDS", ()):
            found[command.name] = path.stem
    assert found == COMMAND_MODULES


def test_help_lists_every_command():
    out = subprocess.run(
        [sys.executable, "-m", "arena", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    listed = out.stdout.split("Commands:", 1)[1].split()
    assert set(COMMAND_MODULES) <= set(listed)


def test_help_loads_no_database_or_numerics():
    got = loaded_by(["--help"], ("sqlalchemy", "numpy", "scipy", "jinja2", "arena.api"))
    assert got == []
