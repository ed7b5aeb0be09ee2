"""Everything the CLI prints comes from a library function a user can call from Python."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import asdict

import pytest
from click.testing import CliRunner

from arena.boards.compare import compare
from arena.boards.diff import STATUSES, diff
from arena.boards.resolve import resolve_board
from arena.boards.snapshots import SnapshotError
from arena.cli import cli
from arena.core.defaults import DEFAULT_SEED
from arena.core.formats import tidy
from arena.evals import evaluate, write_battles
from arena.evals.itemfile import read_results
from arena.jobs.rebuild import RebuildOptions, rebuild
from tests.helpers.files import synth_battles
from tests.helpers.paths import DATA, ROOT, X_FILE, Y_FILE

ROUNDS = 100


@pytest.mark.parametrize("module", ["arena.publish", "arena.boards.compare", "arena.evals"])
@pytest.mark.slow
def test_library_modules_load_no_cli(module):
    code = (
        f"import sys, {module}; "
        "bad = sorted(m for m in sys.modules if m == 'click' or m.startswith('arena.cli')); "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing {module} loads {out.stdout.strip()}"


def test_evaluate_is_what_eval_prints():
    paths = [str(X_FILE), str(Y_FILE)]
    ev = evaluate(read_results(paths), rounds=300, seed=5)
    result = CliRunner().invoke(
        cli, ["eval", *paths, "--rounds", "300", "--seed", "5", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads(json.dumps(ev.to_dict(metric="acc")))
    assert ev.missing == {"model-y": ["9"]} and "no score for 1 of 10" in ev.warnings[0]


def test_eval_seed_is_fixed_by_default_and_boot_is_an_alias():
    path = str(DATA / "eval_results.csv")
    first = CliRunner().invoke(cli, ["eval", path, "--format", "json", "-q"])
    again = CliRunner().invoke(cli, ["eval", path, "--format", "json", "-q"])
    assert first.exit_code == 0 and first.stdout == again.stdout
    assert json.loads(first.stdout)["seed"] == DEFAULT_SEED
    old = CliRunner().invoke(cli, ["eval", path, "--boot", "300", "--format", "json", "-q"])
    new = CliRunner().invoke(cli, ["eval", path, "--rounds", "300", "--format", "json", "-q"])
    assert old.exit_code == 0 and old.stdout == new.stdout
    assert json.loads(old.stdout)["rounds"] == 300
    assert "--boot is deprecated" in old.stderr and "--rounds" in old.stderr
    assert "deprecated" not in new.stderr


def test_write_battles_matches_eval_to_battles(tmp_path):
    paths = [str(X_FILE), str(Y_FILE)]
    lib, cli_out = tmp_path / "lib.csv", tmp_path / "cli.csv"
    written = write_battles(evaluate(read_results(paths)), lib)
    result = CliRunner().invoke(cli, ["eval", *paths, "--to-battles", str(cli_out), "-q"])
    assert result.exit_code == 0, result.output
    assert lib.read_bytes() == cli_out.read_bytes()
    assert written == len(lib.read_text().splitlines()) - 1 == 9  # 9 shared items


@pytest.fixture
def two_snapshots(run_cli, engine, tmp_path):
    path = tmp_path / "battles.csv"
    synth_battles(path, n=1500)
    run_cli("ingest", str(path), "-q")
    rebuild(engine, RebuildOptions(rounds=ROUNDS))
    more = tmp_path / "more.csv"
    synth_battles(more, n=300, seed=3, extra_id=5000, models=9)
    run_cli("ingest", str(more), "-q")
    rebuild(engine, RebuildOptions(rounds=ROUNDS, min_battles=0))
    return engine


def test_diff_is_what_arena_diff_prints(run_cli, two_snapshots):
    with two_snapshots.connect() as conn:
        d = diff(conn, 1, 2)
        with pytest.raises(SnapshotError, match="no snapshot 99"):
            diff(conn, 1, 99)
    assert (d.old.id, d.new.id) == (1, 2)
    status = {r.model: r.status for r in d.rows}
    assert status["model-8"] == "new" and status["model-0"] != "new"
    assert set(status.values()) <= set(STATUSES) and "" not in status.values()
    result = run_cli("diff", "1", "2", "--format", "json")
    # the CLI leaves out the rows' sample columns (position), which read like ranks
    hidden = ("position", "old_position")
    printed = [{k: v for k, v in asdict(r).items() if k not in hidden} for r in d.rows]
    # the library's numbers at the output's 6 significant digits (arena.core.formats.tidy)
    assert json.loads(result.stdout)["rows"] == tidy(printed)
    # the two snapshots differ in --min-battles: a loud warning on stderr, from the library
    assert d.options_differ and all(w in result.stderr for w in d.options_differ)
    moved = {r.model: r for r in d.rows}["model-0"]
    with two_snapshots.connect() as conn:
        a, b = (resolve_board(conn, snapshot_id=s) for s in (1, 2))
    rating = {s: {r.model: r.rating for r in board.rows} for s, board in ((1, a), (2, b))}
    assert moved.d_rating == pytest.approx(rating[2]["model-0"] - rating[1]["model-0"])


def test_compare_is_what_arena_compare_prints(run_cli, two_snapshots):
    with two_snapshots.connect() as conn:
        h = compare(conn, "model-0", "model-7")
        with pytest.raises(SnapshotError, match="unknown model 'nobody'.*snapshot 2"):
            compare(conn, "model-0", "nobody")
        with pytest.raises(ValueError, match="two different models"):
            compare(conn, "model-0", "model-0")
    assert h.snapshot == 2 and h.uncorrected.ci_low > 0 and h.verdict == "model-0 is better"
    printed = json.loads(run_cli("compare", "model-0", "model-7", "--format", "json").output)
    assert printed == json.loads(json.dumps(tidy(h.to_dict())))
    record = printed["record"]
    assert all(isinstance(v, int) for v in record.values()) and sum(record.values()) > 0


def _readme_python() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return block


@pytest.mark.slow
def test_readme_python_example_runs(db_url, tmp_path, monkeypatch, capsys):
    code = _readme_python()
    assert "sqlite:///arena.db" in code
    monkeypatch.chdir(tmp_path)
    exec(compile(code.replace("sqlite:///arena.db", db_url), "README.md", "exec"), {})
    out = capsys.readouterr().out.split()
    # The best model of the bundled data, its rating, and a verdict in words.
    assert len(out) >= 3 and out[1].isdigit() and ("better" in out or "distinguishable" in out)
