"""Style control through the CLI: rebuild writes the paired board; leaderboard, compare, diff read it.

Data: a 1,800-game slice of ko-arena-hard committed under tests/data (Apache-2.0,
see tests/data/ko-arena-hard-slice.README.md): 300 games without style metadata,
300 self-play games; ingested with its conv_metadata and rebuilt by ``arena rebuild``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arena.engine.style.design import style_table
from arena.engine.style.rate import fit_style
from tests.engine.style_data import load_ko_arena_hard

pytestmark = pytest.mark.slow  # rebuilds of a real 1,800-game data set with style control

SLICE = Path(__file__).parent / "data" / "ko-arena-hard-slice.jsonl.gz"
ROUNDS = 100
#: The stored ratings are the engine's point fit, not an approximation; JSON prints
#: them to 6 significant digits (arena.core.formats.DIGITS), 0.01 Elo at ~1000.
ELO_TOL = 0.005


@pytest.fixture
def style_db(run_cli):
    run_cli("db", "upgrade")
    run_cli("ingest", str(SLICE))
    out = run_cli("rebuild", "--rounds", str(ROUNDS)).output
    assert "overall|style" in out
    return run_cli


def _doc(run_cli, *args):
    return json.loads(run_cli("leaderboard", *args, "--format", "json").output)


def test_leaderboard_shows_the_paired_style_board(style_db):
    raw = _doc(style_db)
    style = _doc(style_db, "--style-control")
    rs, ss = raw["snapshot"], style["snapshot"]
    assert rs["board"] == "overall" and ss["board"] == "overall|style"
    assert not rs["style_controlled"] and ss["style_controlled"]
    assert rs["paired_snapshot"] == ss["id"] and ss["paired_snapshot"] == rs["id"]
    assert rs["paired_board"] == "overall|style" and ss["paired_board"] == "overall"
    assert "style_coefficients" not in rs
    # 1,500 rated games; the 300 without metadata are left out and counted
    assert rs["counts"]["battles"] == 1500 and ss["counts"]["battles"] == 1200
    assert ss["counts"]["excluded"] == rs["counts"]["excluded"] + 300
    # every model of the raw board is listed; the one without style metadata unranked, with why
    assert {r["model"] for r in raw["rows"]} == {r["model"] for r in style["rows"]}
    (missing,) = [r for r in style["rows"] if r["model"] == "llama-3.1-8b-instruct"]
    assert missing["rating"] is None and missing["tier"] is None and missing["rank_low"] is None
    assert missing["flags"] == ["no_style"]
    assert "no battle with style metadata" in missing["unranked_reason"]
    text = style_db("leaderboard", "--style-control").output
    assert "no battle with style metadata" in text and "llama-3.1-8b-instruct" in text
    out = style_db(
        "compare", "llama-3.1-8b-instruct", style["rows"][0]["model"], "--style-control"
    ).output
    assert "no verdict" in out and "style metadata" in out
    coefs = ss["style_coefficients"]
    assert [c["feature"] for c in coefs] == ["tokens", "headers", "lists", "bold"]
    for c in coefs:
        assert c["ci_low"] < c["estimate"] < c["ci_high"]
    # the stored ratings and coefficients are the engine's fit of the same battles
    d = load_ko_arena_hard(SLICE)
    fit = fit_style(
        style_table(
            d.a, d.b, d.outcome, d.side_a, d.side_b, n_models=len(d.models), weight=d.weight
        )
    )
    want = {m: float(r) for m, r in zip(d.models, fit.rating, strict=True)}
    for row in style["rows"]:
        if row["rating"] is not None:
            assert abs(row["rating"] - want[row["model"]]) < ELO_TOL
    assert np.allclose([c["estimate"] for c in coefs], fit.coef, atol=1e-9)
    # the snapshot id of the raw board leads to its style board too
    by_id = _doc(style_db, "--snapshot", str(rs["id"]), "--style-control")
    assert by_id["snapshot"]["id"] == ss["id"]
    table = style_db("leaderboard", "--style-control").output
    assert "style coefficients" in table and "tokens" in table


def test_diff_raw_against_style(style_db):
    rows = json.loads(style_db("diff", "--style-control", "--format", "json").output)["rows"]
    by = {r["model"]: r for r in rows}
    # listed on the style board, unranked there (no style metadata): no rating to diff
    unrated = by["llama-3.1-8b-instruct"]
    assert unrated["status"] == "not ranked" and unrated["rating"] is None
    assert unrated["note"] and unrated["rank_low"] is None and unrated["d_rating"] is None
    kept = [r for r in rows if r["status"] in ("up", "down", "moved", "unchanged")]
    assert len(kept) == 5
    for r in kept:
        assert r["rating"] is not None and r["d_rating"] is not None
        assert "position" not in r and "old_position" not in r  # a sample column, not a rank
    assert style_db("diff", "1", ok=False).exit_code == 2
    assert style_db("diff", "1", "--style-control", ok=False).exit_code == 2


def test_compare_on_the_style_board(style_db):
    out = json.loads(
        style_db(
            "compare", "command-a", "claude-3.5-haiku", "--style-control", "--format", "json"
        ).output
    )
    style = _doc(style_db, "--style-control")
    assert out["snapshot"] == style["snapshot"]["id"]
    rating = {r["model"]: r["rating"] for r in style["rows"]}
    # three printed numbers, each rounded to 6 significant digits
    assert abs(out["difference"] - (rating["command-a"] - rating["claude-3.5-haiku"])) < 2 * ELO_TOL


def test_style_control_off_writes_no_style_board(run_cli):
    run_cli("db", "upgrade")
    run_cli("ingest", str(SLICE))
    out = run_cli("rebuild", "--rounds", str(ROUNDS), "--style-control", "off").output
    assert "|style" not in out
    res = run_cli("leaderboard", "--style-control", ok=False)
    assert res.exit_code == 1 and "overall|style" in res.output
    assert "Traceback" not in res.output
    res = run_cli("leaderboard", "--snapshot", "1", "--style-control", ok=False)
    assert res.exit_code == 1 and "no style-controlled board" in res.output


def test_style_reg_and_bad_style_options(style_db):
    style_db("rebuild", "--rounds", str(ROUNDS), "--style-reg", "0.5")
    doc = _doc(style_db, "--style-control")
    assert doc["snapshot"]["options"]["style_reg"] == 0.5
    plain = fit_style(_slice_table())
    penalised = fit_style(_slice_table(), style_reg=0.5)
    coefs = [c["estimate"] for c in doc["snapshot"]["style_coefficients"]]
    assert np.allclose(coefs, penalised.coef, atol=1e-9)
    assert not np.allclose(coefs, plain.coef, atol=1e-6)
    bad = style_db("rebuild", "--style-reg", "-1", ok=False)
    assert bad.exit_code == 1 and "--style-reg" in bad.output
    assert "Traceback" not in bad.output
    unknown = style_db("rebuild", "--style-feature", "sentiment", ok=False)
    assert unknown.exit_code == 1 and "sentiment" in unknown.output
    assert "Traceback" not in unknown.output


def _slice_table():
    d = load_ko_arena_hard(SLICE)
    return style_table(
        d.a, d.b, d.outcome, d.side_a, d.side_b, n_models=len(d.models), weight=d.weight
    )


def test_user_covariate_from_ingest_to_coefficients(run_cli, tmp_path):
    """--style-feature NAME: a per-side covariate ingested as NAME_a / NAME_b joins the model."""
    import gzip

    path = tmp_path / "with_sentiment.jsonl"
    rng = np.random.default_rng(5)
    with gzip.open(SLICE, "rt") as src, open(path, "w") as out:
        for line in src:
            rec = json.loads(line)
            if "conv_metadata" in rec:
                rec["conv_metadata"]["sentiment_a"] = round(float(rng.normal()), 3)
                rec["conv_metadata"]["sentiment_b"] = round(float(rng.normal()), 3)
            out.write(json.dumps(rec) + "\n")
    run_cli("db", "upgrade")
    run_cli("ingest", str(path))
    run_cli("rebuild", "--rounds", str(ROUNDS), "--style-feature", "sentiment")
    doc = _doc(run_cli, "--style-control")
    coefs = doc["snapshot"]["style_coefficients"]
    assert [c["feature"] for c in coefs] == ["tokens", "headers", "lists", "bold", "sentiment"]
    # random noise: its coefficient's interval covers zero
    assert coefs[-1]["ci_low"] < 0 < coefs[-1]["ci_high"]
    assert doc["snapshot"]["options"]["style_features"] == ["sentiment"]
