"""User errors found by using the CLI on real data (qa-user): one line, the option, the known names."""

from __future__ import annotations

import json

import pytest

BATTLES = "model_a,model_b,winner\nm1,m2,model_a\nm2,m1,tie\nm1,m2,model_b\n"


@pytest.fixture
def small_db(run_cli, tmp_path):
    path = tmp_path / "b.csv"
    path.write_text(BATTLES)
    run_cli("ingest", str(path), "--source", "crowd", "-q")
    return run_cli


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--source", "crowds"), "--source: unknown source 'crowds'; did you mean crowd?"),
        (("--source", "gpt4"), "--source: unknown source 'gpt4'; known: crowd"),
        (("--category", "math"), "--category: unknown category 'math'; there is no category yet"),
    ],
)
def test_rebuild_of_unknown_source_or_category_names_it(small_db, args, expected):
    result = small_db("rebuild", *args, "--rounds", "10", ok=False)
    assert result.exit_code == 1
    assert expected in result.output
    assert "ingest battles first" not in result.output
    assert "Traceback" not in result.output
    assert json.loads(small_db("snapshots", "--format", "json").output) == {"snapshots": []}


def test_rebuild_of_known_source_still_works(small_db):
    result = small_db("rebuild", "--source", "crowd", "--rounds", "10", "--min-battles", "1")
    assert "snapshot 1: source:crowd" in result.output


def test_audit_shows_no_interval_for_point_probes_and_rounds_bands(run_cli, tmp_path):
    import csv
    import io
    import json
    import re

    from tests.helpers.files import judged_battles

    path = tmp_path / "votes.csv"
    judged_battles(path)
    run_cli("ingest", str(path), "-q", "--map", "question=question_id")
    run_cli("rebuild", "--rounds", "50")
    doc = json.loads(run_cli("audit", "--rounds", "50", "--format", "json").output)
    rows = {
        r["probe"]: r
        for r in csv.DictReader(
            io.StringIO(run_cli("audit", "--rounds", "50", "--format", "csv").output)
        )
    }
    for p in doc["probes"]:
        row = rows[p["name"]]
        point = p["low"] is not None and p["low"] == p["high"] == p["estimate"]
        assert (row["low"] == "") == point, (p["name"], row)
        for bound in re.findall(r"[-\d.e+]+", row["band"]):
            assert len(bound.lstrip("-").replace(".", "").lstrip("0")) <= 3, row["band"]
    assert rows["influence"]["low"] == rows["influence"]["high"] == ""


def _example_lines(*path: str) -> list[list[str]]:
    """The ``arena ...`` lines of a command's Example: block, as argument lists (comments cut)."""
    import shlex

    from click.testing import CliRunner

    from arena.cli import cli

    text = CliRunner().invoke(cli, [*path, "--help"]).output
    block = text.split("Example:")[1].split("Options:")[0]
    lines = [ln.split("#")[0].strip() for ln in block.splitlines()]
    return [shlex.split(ln)[1:] for ln in lines if ln.startswith("arena ") and "&&" not in ln]


def test_help_examples_run_on_the_bundled_data(lmarena_db):
    """Examples a user pastes after `arena demo`: model names and options that exist there."""
    power = [ln for ln in _example_lines("plan", "power") if len(ln) == 4 and "--format" not in ln]
    rebuild = [ln for ln in _example_lines("rebuild") if "--category" in ln]
    assert power and rebuild
    for args in rebuild:
        assert "snapshot" in lmarena_db.run_cli(*args, "--rounds", "50", "-q").output
    lmarena_db.run_cli("rebuild", "--rounds", "50", "-q")
    for args in power:
        out = lmarena_db.run_cli(*args).output
        assert args[2] in out and args[3] in out


def test_unknown_model_suggests_close_names(small_db):
    out = small_db("models", "annotate", "M1", "--organisation", "X", ok=False)
    assert out.exit_code == 1 and "did you mean m1?" in out.output
    small_db("rebuild", "--rounds", "10", "--min-battles", "1", "-q")
    out = small_db("plan", "power", "m1", "m3", ok=False)
    assert out.exit_code == 1 and "unknown model 'm3'" in out.output


def test_diff_shows_no_sample_column_that_reads_like_a_rank(small_db):
    import json

    small_db("rebuild", "--rounds", "10", "--min-battles", "1", "-q")
    small_db("rebuild", "--rounds", "10", "--min-battles", "1", "-q")
    # the same data and seed twice: one sentence, not rows of zeros
    named, table = small_db("diff", "1", "2").output.splitlines()[:2]
    assert named.startswith("snapshot 1 of board overall (") and " against snapshot 2 " in named
    assert table.startswith("nothing moved between snapshots 1 and 2: 2 models")
    header = small_db("diff", "1", "2", "--format", "csv").output.splitlines()[0]
    # the rank set first; the overlap rank only as a named extra
    assert "position" not in header and header.index("rank_low") < header.index("rank_ub")
    rows = json.loads(small_db("diff", "1", "2", "--format", "json").output)["rows"]
    assert rows and all("position" not in r and "old_position" not in r for r in rows)


def test_leaderboard_and_compare_read_the_board_of_a_source(small_db):
    import json

    small_db("rebuild", "--rounds", "10", "--min-battles", "1", "-q")
    small_db("rebuild", "--source", "crowd", "--rounds", "10", "--min-battles", "1", "-q")
    small_db("rebuild", "--rounds", "10", "--min-battles", "1", "-q")  # overall is the latest
    doc = json.loads(small_db("leaderboard", "--source", "crowd", "--format", "json").output)
    assert doc["snapshot"]["id"] == 2 and doc["snapshot"]["board"] == "source:crowd"
    assert json.loads(small_db("leaderboard", "--format", "json").output)["snapshot"]["id"] == 3
    out = small_db("compare", "m1", "m2", "--source", "crowd").output
    assert "(snapshot 2, board source:crowd)" in out
    bad = small_db("leaderboard", "--source", "crowds", ok=False)
    assert bad.exit_code == 1 and "unknown source 'crowds'; did you mean crowd?" in bad.output


def test_diff_without_ids_is_the_latest_snapshot_against_the_one_before(small_db, tmp_path):
    import json

    small_db("rebuild", "--rounds", "10", "--min-battles", "1", "-q")
    one = small_db("diff", ok=False)
    assert one.exit_code == 1 and "board 'overall' has one snapshot (1)" in one.output
    more = tmp_path / "more.csv"
    more.write_text("model_a,model_b,winner\nm1,m3,model_a\nm3,m2,tie\nm2,m3,model_a\n")
    small_db("ingest", str(more), "-q")
    small_db("rebuild", "--source", "crowd", "--rounds", "10", "--min-battles", "1", "-q")
    small_db("rebuild", "--rounds", "10", "--min-battles", "1", "-q")
    rows = json.loads(small_db("diff", "--format", "json").output)["rows"]
    assert json.loads(small_db("diff", "1", "3", "--format", "json").output)["rows"] == rows
    assert {r["model"]: r["status"] for r in rows}["m3"] == "new"
    assert small_db("diff", "1", ok=False).exit_code == 2
    only = small_db("diff", "--source", "crowd", ok=False)
    assert only.exit_code == 1 and "board 'source:crowd' has one snapshot (2)" in only.output
    small_db("rebuild", "--source", "crowd", "--rounds", "10", "--min-battles", "1", "-q")
    by_source = json.loads(small_db("diff", "--source", "crowd", "--format", "json").output)["rows"]
    assert by_source == json.loads(small_db("diff", "2", "4", "--format", "json").output)["rows"]
    assert small_db("diff", "2", "4", "--source", "crowd", ok=False).exit_code == 2


def test_plan_and_audit_read_the_board_of_a_source(small_db, tmp_path):
    import json

    more = tmp_path / "more.csv"
    more.write_text("model_a,model_b,winner\nm1,m3,model_a\nm3,m2,tie\nm2,m3,model_a\n")
    small_db("ingest", str(more), "-q")
    small_db("rebuild", "--source", "crowd", "--rounds", "10", "--min-battles", "1", "-q")
    small_db("rebuild", "--rounds", "10", "--min-battles", "1", "-q")
    plan = json.loads(small_db("plan", "--source", "crowd", "--format", "json").output)
    assert plan["snapshot"] == 1
    assert json.loads(small_db("plan", "--format", "json").output)["snapshot"] == 2
    power = json.loads(
        small_db("plan", "power", "m1", "m2", "--source", "crowd", "--format", "json").output
    )
    assert power["snapshot"] == 1
    audit = small_db("audit", "--source", "crowd", "--probe", "position", "--rounds", "10")
    assert "audit of snapshot 1 (source:crowd)" in audit.output
    bad = small_db("plan", "--source", "crowds", ok=False)
    assert bad.exit_code == 1 and "unknown source 'crowds'" in bad.output
