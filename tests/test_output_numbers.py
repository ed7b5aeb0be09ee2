"""Numbers the rating commands print as JSON and CSV are clean (SQLite and PostgreSQL).

Interval bounds come from float32 bootstrap samples, so unrounded they print as
``36.266946411132814``; every float of ``leaderboard``, ``compare``, ``diff``,
``audit`` and ``plan`` (and the site's downloads) has at most
:data:`arena.core.formats.DIGITS` significant digits, and counts are integers.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from arena.core.formats import DIGITS, tidy
from tests.helpers.files import synth_battles

COMMANDS = [
    ("leaderboard",),
    ("compare", "model-0", "model-7"),
    ("diff", "1", "2"),
    ("plan",),
    ("plan", "power"),
    ("audit", "--rounds", "20", "--no-store"),
]


def _floats(obj):
    if isinstance(obj, float):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _floats(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _floats(v)


def _short(x: float) -> bool:
    return float(f"{x:.{DIGITS}g}") == x


def test_tidy_rounds_floats_only():
    doc = {"a": 36.266946411132814, "n": 135624, "b": [0.008030774228733358, True, None]}
    assert tidy(doc) == {"a": 36.2669, "n": 135624, "b": [0.00803077, True, None]}
    assert tidy(1e-12 / 3) == 3.33333e-13  # a tiny p-value keeps its digits
    assert tidy(float("inf")) == float("inf")
    assert isinstance(tidy(1000.0), float)  # a whole rating stays a float


@pytest.fixture
def two_snapshots(run_cli, tmp_path):
    path = tmp_path / "battles.csv"
    synth_battles(path, n=1500)
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "100", "-q")
    more = tmp_path / "more.csv"
    synth_battles(more, n=300, seed=3, extra_id=5000)
    run_cli("ingest", str(more), "-q")
    run_cli("rebuild", "--rounds", "100", "-q")
    return run_cli


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a[:2]))
def test_rating_commands_print_clean_numbers(two_snapshots, args):
    doc = json.loads(two_snapshots(*args, "--format", "json").stdout)
    floats = list(_floats(doc))
    assert len(floats) >= 3  # not vacuous: each document has ratings or probabilities
    assert [x for x in floats if not _short(x)] == []
    table = list(csv.reader(io.StringIO(two_snapshots(*args, "--format", "csv").stdout)))
    cells = [c for row in table[1:] for c in row if c.replace(".", "", 1).lstrip("-").isdigit()]
    assert any("." in c for c in cells)
    assert [c for c in cells if not _short(float(c))] == []


def test_same_number_reads_the_same_and_counts_are_integers(two_snapshots, tmp_path):
    board = json.loads(two_snapshots("leaderboard", "--format", "json").stdout)
    rows = {r["model"]: r for r in board["rows"]}
    for r in board["rows"]:
        assert all(isinstance(r[k], int) for k in ("battles", "wins", "losses", "ties"))
    h = json.loads(two_snapshots("compare", "model-0", "model-7", "--format", "json").stdout)
    assert h["rating_a"] == rows["model-0"]["rating"]
    assert all(isinstance(v, int) for v in h["record"].values())
    diff = {
        r["model"]: r
        for r in json.loads(two_snapshots("diff", "1", "2", "--format", "json").stdout)["rows"]
    }
    assert diff["model-0"]["ci_low"] == rows["model-0"]["ci_low"]
    plan = json.loads(two_snapshots("plan", "--format", "json").stdout)
    assert all(isinstance(p["battles"], int) for p in plan["pairs"])
    # the site's downloads are the same document
    two_snapshots("publish", str(tmp_path / "site"), "-q")
    download = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert download["rows"] == board["rows"]
    lines = list(csv.DictReader((tmp_path / "site" / "leaderboard.csv").open()))
    assert float(lines[0]["ci_low"]) == board["rows"][0]["ci_low"]
