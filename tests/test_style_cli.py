"""Style-controlled snapshots through the CLI: leaderboard, compare and diff read them.

Data: a 1,800-game slice of ko-arena-hard committed under tests/data (Apache-2.0,
see tests/data/ko-arena-hard-slice.README.md): 300 games without style metadata,
300 self-play games.  The style board is rated by the engine's board function and
written by the snapshot writer, as the rebuild does, beside the raw board of
the same run.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from arena.db.models import Model, Snapshot
from arena.db.session import open_engine
from arena.engine.board import BoardOptions, rate_style_board
from arena.engine.style import fit_style
from arena.engine.style_design import style_table
from arena.snapshot_writer import write_snapshot
from arena.snapshots import board_key, latest_snapshot_id
from tests.engine.style_data import load_ko_arena_hard

SLICE = Path(__file__).parent / "data" / "ko-arena-hard-slice.jsonl.gz"
ROUNDS = 100
ELO_TOL = 1e-6  # the stored ratings are the engine's point fit, not an approximation


def write_style_board(url: str, style_reg=None) -> int:
    """Rate the slice's battles with metadata and store them paired with the latest raw board."""
    d = load_ko_arena_hard(SLICE)
    keep = d.a != d.b  # the store rates no self-play
    engine = open_engine(url)
    with engine.begin() as conn:
        raw = conn.execute(
            select(
                Snapshot.run_id, Snapshot.options_json, Snapshot.watermark, Snapshot.n_excluded
            ).where(Snapshot.id == latest_snapshot_id(conn, "overall"))
        ).one()
        ids = dict(conn.execute(select(Model.name, Model.id)).all())
        model_ids = np.array([ids[m] for m in d.models])
        result, _ = rate_style_board(
            d.a[keep],
            d.b[keep],
            d.outcome[keep],
            d.side_a[keep],
            d.side_b[keep],
            replace(BoardOptions(), rounds=ROUNDS, seed=1),
            n_models=len(d.models),
            features=("tokens", "headers", "lists", "bold"),
            weight=d.weight[keep],
            style_reg=style_reg,
        )
        sid = write_snapshot(
            conn,
            board=board_key(style=True),
            category=None,
            source=None,
            run_id=raw.run_id,
            options={**json.loads(raw.options_json), "style_reg": style_reg},
            seed=1,
            watermark=raw.watermark,
            model_ids=model_ids,
            n_excluded=raw.n_excluded + d.n_without_metadata,
            result=result,
            hidden=set(),
            diagnostics={"n_without_style": d.n_without_metadata},
        )
    engine.dispose()
    return sid


@pytest.fixture
def style_db(run_cli, db_url):
    run_cli("db", "upgrade")
    run_cli("ingest", str(SLICE))
    run_cli("rebuild", "--rounds", str(ROUNDS))
    write_style_board(db_url)
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
    assert {r["model"] for r in raw["rows"]} - {r["model"] for r in style["rows"]} == {
        "llama-3.1-8b-instruct"
    }
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
        assert abs(row["rating"] - want[row["model"]]) < ELO_TOL
    assert np.allclose([c["estimate"] for c in coefs], fit.coef, atol=1e-9)
    # the snapshot id of the raw board leads to its style board too
    by_id = _doc(style_db, "--snapshot", str(rs["id"]), "--style-control")
    assert by_id["snapshot"]["id"] == ss["id"]
    table = style_db("leaderboard", "--style-control").output
    assert "style coefficients" in table and "tokens" in table


def test_diff_raw_against_style(style_db):
    rows = json.loads(style_db("diff", "--style-control", "--format", "json").output)
    by = {r["model"]: r for r in rows}
    assert by["llama-3.1-8b-instruct"]["status"] == "gone"
    kept = [r for r in rows if r["status"] == ""]
    assert len(kept) == 5
    for r in kept:
        assert r["rank"] is not None and r["old_rank"] is not None and r["d_rating"] is not None
    assert style_db("diff", ok=False).exit_code == 2
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
    assert abs(out["difference"] - (rating["command-a"] - rating["claude-3.5-haiku"])) < 1e-6


def test_raw_board_without_style_pair_says_why(run_cli):
    run_cli("db", "upgrade")
    run_cli("ingest", str(SLICE))
    run_cli("rebuild", "--rounds", str(ROUNDS))
    res = run_cli("leaderboard", "--style-control", ok=False)
    assert res.exit_code == 1 and "overall|style" in res.output
    assert "Traceback" not in res.output
    res = run_cli("leaderboard", "--snapshot", "1", "--style-control", ok=False)
    assert res.exit_code == 1 and "no style-controlled board" in res.output
