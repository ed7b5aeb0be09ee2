"""Ingestion end to end through the CLI, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import gzip
import io
import json

import pytest
from sqlalchemy import func, select

from arena.db.models import Battle, BattleCategory, Category, IngestBatch, Model
from tests.helpers.db import count
from tests.helpers.files import write_csv
from tests.helpers.ingest import interrupt_on_insert
from tests.helpers.paths import bundled_lmarena, shared_path


@pytest.fixture
def lmarena_engine(lmarena_db):
    from arena.db.session import open_engine

    eng = open_engine(lmarena_db.url)
    yield eng
    eng.dispose()


def test_lmarena_export_with_tags(lmarena_db, lmarena_engine):
    """The real 135,634-vote export with category tags (bundled copy, ingested once per engine)."""
    run_cli, engine, path = lmarena_db.run_cli, lmarena_engine, bundled_lmarena()
    out = lmarena_db.ingest_output
    assert "135634 rows read, 135634 inserted" in out
    assert "10 of them excluded" in out
    assert count(engine, Battle) == 135634
    assert count(engine, Model) == 53
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with engine.connect() as conn:
        excluded = conn.execute(
            select(func.count()).where(Battle.excluded_reason == "self_play")
        ).scalar_one()
        outcomes = dict(
            conn.execute(select(Battle.outcome, func.count()).group_by(Battle.outcome)).all()
        )
        per_cat = dict(
            conn.execute(
                select(Category.name, func.count()).join(BattleCategory).group_by(Category.name)
            ).all()
        )
    assert excluded == 10
    # Published counts of the data set (../shared/README.md).
    assert outcomes == {"a_wins": 48563, "b_wins": 49785, "tie": 21532, "tie_both_bad": 15754}
    assert per_cat["math"] == sum(1 for r in rows if r["math"] == "True")
    assert per_cat["if"] == sum(1 for r in rows if r["if"] == "True")
    # Score columns ("creative_writing.score": yes/no, "if.score": 1.0) are not tags.
    assert "if.score" not in per_cat and "creative_writing.score" not in per_cat

    models = json.loads(run_cli("models", "--format", "json").output)["models"]
    by_name = {m["model"]: m for m in models}
    qwen = by_name["qwen3-coder-480b-a35b-instruct"]
    assert (qwen["battles"], qwen["ties"], qwen["wins"], qwen["losses"]) == (2, 2, 0, 0)
    assert sum(m["battles"] for m in models) == 2 * (135634 - 10)
    self_decisive = sum(
        1 for r in rows if r["model_a"] == r["model_b"] and r["winner"] in ("model_a", "model_b")
    )
    assert sum(m["wins"] for m in models) == 48563 + 49785 - self_decisive
    assert sum(m["excluded"] for m in models) == 10

    again = run_cli("ingest", str(path)).output
    assert "already ingested" in again
    assert count(engine, Battle) == 135634


def test_mt_bench_jsonl_keeps_judge_and_question(run_cli, engine):
    path = shared_path("data", "mt-bench-human", "human_judgments_turn1.jsonl")
    run_cli("ingest", str(path), "--source", "mt-bench-human")
    with engine.connect() as conn:
        judges = conn.execute(select(func.count(func.distinct(Battle.judge)))).scalar_one()
        questions = conn.execute(select(func.count(func.distinct(Battle.question)))).scalar_one()
        sources = conn.execute(select(func.distinct(Battle.source))).scalars().all()
    assert count(engine, Battle) == 1689
    assert (judges, questions) == (65, 80)
    assert sources == ["mt-bench-human"]


def test_llmfao_crowd_shape(run_cli, engine):
    path = shared_path("data", "llmfao", "crowd-comparisons.csv")
    out = run_cli("ingest", str(path)).output
    assert "8931 inserted" in out
    with engine.connect() as conn:
        ties = conn.execute(select(func.count()).where(Battle.outcome == "tie")).scalar_one()
        workers = conn.execute(select(func.count(func.distinct(Battle.judge)))).scalar_one()
        ext = conn.execute(select(func.count(Battle.external_id))).scalar_one()
    assert ties == 3471 and workers == 124
    assert ext == 0  # LLMFAO ids name answer pairs, not votes


def test_arena_hard_verdicts_weight_strong_three(run_cli, engine, tmp_path):
    path = write_csv(
        tmp_path / "v.csv",
        ["model_a", "model_b", "verdict"],
        [
            ["m1", "m2", "A>>B"],
            ["m1", "m2", "A>B"],
            ["m1", "m2", "A=B"],
            ["m1", "m2", "B>A"],
            ["m1", "m2", "[[B>>A]]"],
        ],
    )
    run_cli("ingest", path)
    with engine.connect() as conn:
        rows = conn.execute(select(Battle.outcome, Battle.weight).order_by(Battle.id)).all()
    assert [tuple(r) for r in rows] == [
        ("a_wins", 3.0),
        ("a_wins", 1.0),
        ("tie", 1.0),
        ("b_wins", 1.0),
        ("b_wins", 3.0),
    ]


def test_json_array_stdin_and_gzip(run_cli, engine, tmp_path):
    records = [
        {"model_a": "x", "model_b": "y", "winner": "model_a", "id": "r1", "tstamp": 1700000000.5},
        {"model_a": "y", "model_b": "x", "winner": "tie (bothbad)", "id": "r2"},
    ]
    run_cli("ingest", "-", input=json.dumps(records))
    gz = tmp_path / "more.jsonl.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(
            json.dumps({"model_a": "x", "model_b": "z", "winner": "model_b", "id": "r3"}) + "\n"
        )
    run_cli("ingest", str(gz))
    with engine.connect() as conn:
        got = conn.execute(
            select(Battle.external_id, Battle.outcome, Battle.occurred_at).order_by(Battle.id)
        ).all()
    assert [(g[0], g[1]) for g in got] == [
        ("r1", "a_wins"),
        ("r2", "tie_both_bad"),
        ("r3", "b_wins"),
    ]
    assert got[0][2].year == 2023 and got[1][2] is None


@pytest.mark.parametrize(
    "rows, fragment",
    [
        ([["a", "b", "bogus"]], "line 3: field 'winner': unknown value 'bogus'"),
        ([["", "b", "tie"]], "line 3: field 'model_a': empty model name"),
        ([["a", "b"]], "line 3: field 'winner': missing"),
    ],
)
def test_bad_row_rejects_whole_file(run_cli, engine, tmp_path, rows, fragment):
    path = write_csv(
        tmp_path / "bad.csv", ["model_a", "model_b", "winner"], [["a", "b", "tie"], *rows]
    )
    result = run_cli("ingest", path, ok=False)
    assert result.exit_code != 0
    assert "bad.csv: " + fragment in result.output
    assert "Traceback" not in result.output
    assert count(engine, Battle) == 0 and count(engine, Model) == 0
    assert count(engine, IngestBatch) == 0


def test_bad_json_and_encoding(run_cli, engine, tmp_path):
    jl = tmp_path / "bad.jsonl"
    jl.write_text('{"model_a": "a", "model_b": "b", "winner": "tie"}\n{"model_a": "a",\n')
    result = run_cli("ingest", str(jl), ok=False)
    assert (
        result.exit_code == 1 and "bad.jsonl: line 2: field 'json': invalid JSON" in result.output
    )
    latin = tmp_path / "latin.csv"
    latin.write_bytes("model_a,model_b,winner\na,b,tie\ncaf\xe9,b,tie\n".encode("latin-1"))
    result = run_cli("ingest", str(latin), ok=False)
    assert result.exit_code == 1 and "latin.csv: line 3: not valid UTF-8" in result.output
    missing = write_csv(tmp_path / "nocol.csv", ["model_a", "winner"], [["a", "tie"]])
    result = run_cli("ingest", missing, ok=False)
    assert "nocol.csv: line 1: field 'model_b': missing" in result.output
    assert count(engine, Battle) == 0


def test_skip_invalid_writes_rejects(run_cli, engine, tmp_path):
    path = write_csv(
        tmp_path / "mixed.csv",
        ["id", "model_a", "model_b", "winner"],
        [
            ["1", "a", "b", "model_a"],
            ["2", "a", "b", "nope"],
            ["3", "a", "a", "tie"],
            ["1", "a", "b", "model_b"],
            ["4", "b", "a", "model_b"],
        ],
    )
    rejects = tmp_path / "rejects.csv"
    result = run_cli("ingest", path, "--skip-invalid", "--rejects", str(rejects))
    assert "5 rows read, 3 inserted, 1 of them excluded" in result.output
    assert "2 rejected" in result.output
    rej = list(csv.DictReader(open(rejects, encoding="utf-8")))
    assert [(r["location"], r["field"]) for r in rej] == [("line 3", "winner"), ("line 5", "id")]
    assert "appears twice" in rej[1]["error"]
    assert json.loads(rej[0]["record"]) == ["2", "a", "b", "nope"]
    result = run_cli("ingest", path, "--skip-invalid", ok=False)
    assert result.exit_code == 2 and "--rejects" in result.output


def test_duplicate_ids_across_files_are_skipped(run_cli, engine, tmp_path):
    first = write_csv(
        tmp_path / "one.csv",
        ["id", "model_a", "model_b", "winner"],
        [["u1", "a", "b", "tie"], ["u2", "a", "b", "model_a"]],
    )
    second = write_csv(
        tmp_path / "two.csv",
        ["id", "model_a", "model_b", "winner"],
        [["u2", "a", "b", "model_a"], ["u3", "b", "c", "model_b"]],
    )
    run_cli("ingest", first)
    out = run_cli("ingest", second).output
    assert "1 inserted" in out and "1 duplicates skipped" in out
    assert count(engine, Battle) == 3


def test_model_names_are_data(run_cli, engine, tmp_path):
    names = [
        "<script>alert(1)</script>",
        '"onmouseover=',
        "../../etc/passwd",
        "模型 🚀",
        "two  inner\u00a0spaces",
    ]
    path = write_csv(
        tmp_path / "names.csv",
        ["model_a", "model_b", "winner"],
        [[n, "base", "model_a"] for n in names],
    )
    run_cli("ingest", path)
    with engine.connect() as conn:
        stored = set(conn.execute(select(Model.name)).scalars())
    assert stored == set(names) | {"base"}


def test_model_names_are_normalised(run_cli, engine, tmp_path):
    """Issue 16 item 14: NFC and NFD forms, surrounding spaces and NBSP are one model."""
    import unicodedata

    nfc = "café-7b"
    variants = [
        nfc,
        unicodedata.normalize("NFD", nfc),
        f" {nfc}",
        f"{nfc}   ",
        f"\u00a0{nfc}\u00a0",
    ]
    assert len(set(variants)) == 5
    path = write_csv(
        tmp_path / "n.csv", ["model_a", "model_b", "winner"], [[v, "base", "tie"] for v in variants]
    )
    run_cli("ingest", path)
    with engine.connect() as conn:
        stored = sorted(conn.execute(select(Model.name)).scalars())
    assert stored == ["base", nfc]
    assert count(engine, Battle) == 5


@pytest.mark.parametrize(
    "bad",
    ["a\u0085b", "a\u2028b", "a\u200bb", "\u202emodel-rtl", "a\u2066b", "\ufeffmodel", "a\x07b"],
)
def test_invisible_characters_in_model_names_are_rejected(run_cli, engine, tmp_path, bad):
    path = tmp_path / "bad.jsonl"
    rec = {"model_a": "base", "model_b": bad, "winner": "tie"}
    path.write_text(
        json.dumps({"model_a": "x", "model_b": "y", "winner": "tie"})
        + "\n"
        + json.dumps(rec)
        + "\n"
    )
    result = run_cli("ingest", str(path), ok=False)
    code = f"U+{ord(next(c for c in bad if not c.isalnum() and c not in '-')):04X}"
    assert result.exit_code == 1
    assert "bad.jsonl: line 2: field 'model_b': model name contains " + code in result.output
    assert count(engine, Battle) == 0


@pytest.mark.parametrize("raw", ["42", "4.5", "NaN", "1e400", "null", "true", '["a"]'])
def test_model_names_must_be_strings_in_json(run_cli, engine, tmp_path, raw):
    path = tmp_path / "num.jsonl"
    path.write_text(f'{{"model_a": {raw}, "model_b": "b", "winner": "tie"}}\n')
    result = run_cli("ingest", str(path), ok=False)
    assert result.exit_code == 1 and "line 1: field 'model_a': model name" in result.output
    assert "Traceback" not in result.output and count(engine, Model) == 0


def test_case_variants_are_kept_with_a_warning(run_cli, engine, tmp_path):
    run_cli(
        "ingest",
        write_csv(tmp_path / "a.csv", ["model_a", "model_b", "winner"], [["GPT-4", "b", "tie"]]),
    )
    second = write_csv(
        tmp_path / "b.csv", ["model_a", "model_b", "winner"], [["gpt-4", "b", "tie"]]
    )
    result = run_cli("ingest", second)
    assert (
        "warning: " in result.output
        and "'gpt-4' differs from 'GPT-4' only by case; kept as two models" in result.output
    )
    assert count(engine, Model) == 3


def test_interrupted_ingest_leaves_database_as_before(run_cli, engine, tmp_path, monkeypatch):
    import arena.ingest.loader as loader

    run_cli(
        "ingest",
        write_csv(tmp_path / "seed.csv", ["model_a", "model_b", "winner"], [["a", "b", "tie"]]),
    )
    monkeypatch.setattr(loader, "CHUNK_ROWS", 2)
    calls = interrupt_on_insert(monkeypatch, at=2)
    path = write_csv(
        tmp_path / "big.csv", ["model_a", "model_b", "winner"], [["c", "d", "model_a"]] * 5
    )
    from click.testing import CliRunner

    from arena.cli import cli

    url = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(cli, ["--db", url, "ingest", path])
    assert result.exit_code != 0 and calls["n"] == 2
    assert count(engine, Battle) == 1 and count(engine, Model) == 2
    assert count(engine, IngestBatch) == 1


def test_missing_file_is_a_clean_error(run_cli, tmp_path):
    result = run_cli("ingest", str(tmp_path / "nope.csv"), ok=False)
    assert result.exit_code == 1 and "nope.csv: no such file" in result.output


def test_csv_output_neutralises_formulas(run_cli, tmp_path):
    path = write_csv(
        tmp_path / "f.csv", ["model_a", "model_b", "winner"], [["=HYPERLINK(1)", "b", "tie"]]
    )
    run_cli("ingest", path)
    out = run_cli("models", "--format", "csv").output
    rows = list(csv.reader(io.StringIO(out)))
    assert ["'=HYPERLINK(1)"] == [r[0] for r in rows[1:] if "HYPERLINK" in r[0]]


def test_classic_sports_files_ingest_as_they_are(run_cli, engine):
    """The shared classic data sets: results from one side's view, and aggregated counts."""
    out = run_cli("ingest", str(shared_path("data", "classic", "football_epl.csv"))).output
    assert "1900 inserted" in out
    out = run_cli("ingest", str(shared_path("data", "classic", "icehockey.csv"))).output
    assert "1083 inserted" in out
    out = run_cli("ingest", str(shared_path("data", "classic", "baseball.csv"))).output
    assert "42 rows read, 273 inserted" in out  # each row expands to home.wins + away.wins battles
    with engine.connect() as conn:
        ties = conn.execute(select(func.count()).where(Battle.outcome == "tie")).scalar_one()
        cats = conn.execute(select(func.count()).select_from(Category)).scalar_one()
    assert ties == 505 + 125  # published draw/tie counts (../shared/README.md)
    assert cats == 0  # home.ice and conference are not categories


def test_baseball_through_the_whole_pipeline_matches_agresti(run_cli, tmp_path):
    """Ingest -> rebuild -> leaderboard reproduces the published log-abilities
    (Agresti 2002, Table 10.11; Baltimore = 0) and the home advantage."""
    import math

    run_cli("ingest", str(shared_path("data", "classic", "baseball.csv")))
    scale = 400 / math.log(10)
    published = {
        "Boston": 1.1077,
        "Cleveland": 0.6839,
        "Detroit": 1.4364,
        "Milwaukee": 1.5814,
        "New York": 1.2476,
        "Toronto": 1.2945,
    }
    run_cli("rebuild", "--ci", "fisher", "--min-battles", "0", "--rounds", "20")
    rows = {
        r["model"]: r for r in json.loads(run_cli("leaderboard", "--format", "json").output)["rows"]
    }
    for team, value in published.items():
        got = (rows[team]["rating"] - rows["Baltimore"]["rating"]) / scale
        assert abs(got - value) < 5e-5, team
    run_cli("rebuild", "--ci", "fisher", "--min-battles", "0", "--rounds", "20", "--position")
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    snap_id = doc["snapshot"]["id"]
    snaps = json.loads(run_cli("snapshots", "--format", "json").output)["snapshots"]
    assert snaps[-1]["id"] == snap_id
    rows = {r["model"]: r for r in doc["rows"]}
    assert abs((rows["Boston"]["rating"] - rows["Baltimore"]["rating"]) / scale - 1.1438) < 5e-5
