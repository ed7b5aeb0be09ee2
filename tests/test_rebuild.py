"""Rebuild, snapshots and the reading commands, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from sqlalchemy import func, select

from arena.boards.snapshots import latest_snapshot_id, load_board, load_samples
from arena.db.models import Snapshot
from arena.jobs.rebuild import RebuildOptions, rebuild
from tests.helpers.files import synth_battles

ROUNDS = "200"  # enough for stable tests, fast on CI
RATING_TOL = 1e-6  # Elo points: same cells must give the same point fit


@pytest.fixture
def loaded(run_cli, tmp_path):
    path = tmp_path / "battles.csv"
    rows = synth_battles(path)
    run_cli("ingest", str(path), "-q")
    return rows


def test_rebuild_and_leaderboard_json(run_cli, engine, loaded):
    out = run_cli("rebuild", "--rounds", ROUNDS).output
    assert "snapshot 1: overall" in out
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    snap, rows = doc["snapshot"], doc["rows"]
    assert set(snap) >= {"id", "created_at", "options", "watermark", "counts"}
    assert snap["watermark"] == 3000 and snap["counts"]["battles"] == 3000
    assert snap["options"]["rounds"] == 200 and snap["options"]["seed"] == 20240501
    assert [r["model"] for r in rows] == [f"model-{i}" for i in range(8)]  # true order recovered
    assert all(
        set(r)
        == {
            "model",
            "rating",
            "ci_low",
            "ci_high",
            "rank_low",
            "rank_high",
            "rank_ub",
            "rank_lb",
            "tier",
            "battles",
            "wins",
            "losses",
            "ties",
            "flags",
            "unranked_reason",
        }
        for r in rows
    )
    ratings = [r["rating"] for r in rows]
    assert ratings == sorted(ratings, reverse=True)
    assert abs(np.mean(ratings) - 1000) < 1e-6
    for r in rows:
        assert r["ci_low"] < r["rating"] < r["ci_high"]
        assert r["battles"] == r["wins"] + r["losses"] + r["ties"]
    assert sum(r["battles"] for r in rows) == 2 * 3000
    # Ranks: rank_ub from intervals, tiers a partition of the board starting at 1.
    tiers = [r["tier"] for r in rows]
    assert tiers[0] == 1 and all(0 <= b - a <= 1 for a, b in zip(tiers, tiers[1:], strict=False))
    brute = [1 + sum(o["ci_low"] > r["ci_high"] for o in rows) for r in rows]
    assert [r["rank_ub"] for r in rows] == brute
    brute_lb = [sum(o["ci_high"] >= r["ci_low"] for o in rows) for r in rows]
    assert [r["rank_lb"] for r in rows] == brute_lb
    table = run_cli("leaderboard").output
    assert "rank" in table and "model-0" in table
    # the rank column shows the simultaneous rank set the data allow, e.g. "2-4"
    first = {r["model"]: r for r in rows}["model-1"]
    shown = str(first["rank_low"]) + (
        "" if first["rank_high"] == first["rank_low"] else f"-{first['rank_high']}"
    )
    assert any(line.split()[0] == shown and "model-1" in line for line in table.splitlines())
    assert "options: ties=half cluster=battle ci=sandwich level=0.95" in table
    csv_out = run_cli("leaderboard", "--format", "csv").output.splitlines()
    assert csv_out[0] == (
        "model,rating,ci_low,ci_high,rank_low,rank_high,rank_ub,rank_lb,tier,battles,wins,losses,ties,flags,"
        "unranked_reason"
    )


def test_same_data_same_seed_same_numbers(run_cli, engine, loaded):
    run_cli("rebuild", "--rounds", ROUNDS)
    run_cli("rebuild", "--rounds", ROUNDS)
    with engine.connect() as conn:
        a, b = load_board(conn, 1), load_board(conn, 2)
        sa, sb = load_samples(conn, 1), load_samples(conn, 2)
    strip = lambda board: [(r.model, r.rating, r.ci_low, r.ci_high, r.tier) for r in board.rows]  # noqa: E731
    assert strip(a) == strip(b)
    assert sa.tobytes() == sb.tobytes()
    run_cli("rebuild", "--rounds", ROUNDS, "--seed", "5")
    with engine.connect() as conn:
        c = load_board(conn, 3)
    assert [r.rating for r in c.rows] == [r.rating for r in a.rows]  # point fit has no randomness
    # the default intervals (sandwich) draw no random numbers: the seed changes nothing
    assert strip(c) == strip(a)
    run_cli("rebuild", "--rounds", ROUNDS, "--ci", "bootstrap", "--seed", "5")
    run_cli("rebuild", "--rounds", ROUNDS, "--ci", "bootstrap", "--seed", "6")
    with engine.connect() as conn:
        d, e = load_board(conn, 4), load_board(conn, 5)
    assert [r.rating for r in d.rows] == [r.rating for r in a.rows]  # point fit has no randomness
    assert [r.ci_low for r in d.rows] != [r.ci_low for r in e.rows]


def test_battles_ingested_during_rebuild_are_not_in_it(
    run_cli, engine, loaded, tmp_path, monkeypatch
):
    import arena.store.read as store
    from arena.ingest import ingest_file

    late = tmp_path / "late.csv"
    synth_battles(late, n=500, seed=9, extra_id=10_000)
    real = store._aggregate

    def aggregate_after_a_concurrent_ingest(conn, opts, watermark, *, by_category):
        if not getattr(aggregate_after_a_concurrent_ingest, "done", False):
            aggregate_after_a_concurrent_ingest.done = True
            ingest_file(engine, str(late))  # another connection commits mid-rebuild
        return real(conn, opts, watermark, by_category=by_category)

    monkeypatch.setattr(store, "_aggregate", aggregate_after_a_concurrent_ingest)
    result = rebuild(engine, RebuildOptions(rounds=50))
    with engine.connect() as conn:
        board = load_board(conn, result.snapshot_ids[0])
    assert board.snapshot.watermark == 3000
    assert board.snapshot.n_battles == 3000  # the 500 late battles are not in it


def test_failed_rebuild_leaves_previous_snapshot(run_cli, engine, loaded, monkeypatch):
    import arena.jobs.rebuild as rb

    run_cli("rebuild", "--rounds", ROUNDS)
    real = rb.write_snapshot
    calls = {"n": 0}

    def crash_on_second_board(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(rb, "write_snapshot", crash_on_second_board)
    with pytest.raises(RuntimeError):
        rebuild(engine, RebuildOptions(rounds=50), all_categories=True)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Snapshot)).scalar_one() == 1
        assert latest_snapshot_id(conn) == 1
    monkeypatch.undo()
    # A user error: pure MLE requested where it cannot exist -> clean message, nothing written.
    result = run_cli("rebuild", "--rounds", ROUNDS, "--anchor", "no-such-model=1200", ok=False)
    assert result.exit_code == 1 and "no snapshot was written" in result.output
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Snapshot)).scalar_one() == 1


def test_prior_zero_without_mle_is_a_clear_error(run_cli, engine, tmp_path):
    path = tmp_path / "undefeated.csv"
    path.write_text("model_a,model_b,winner\nchamp,x,model_a\nchamp,y,model_a\nx,y,tie\n")
    run_cli("ingest", str(path))
    # --prior 0 asks for the MLE of the joint fit, which does not exist; the
    # comparable set (x and y, who tied) has one, so that is what is rated.
    out = run_cli("rebuild", "--prior", "0", "--rounds", "20", "--min-battles", "0").output
    assert "snapshot 1" in out and "champ never lost" in out
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    champ = next(r for r in doc["rows"] if r["model"] == "champ")
    assert {"never_lost", "no_mle"} <= set(champ["flags"])
    # no rating, no rank; its two wins put a floor under it and no ceiling
    assert champ["rating"] is None and champ["rank_ub"] is None and champ["tier"] is None
    assert champ["ci_low"] is not None and champ["ci_high"] is None
    assert "finite rating" in champ["unranked_reason"]
    assert all(r["rank_ub"] is not None for r in doc["rows"] if r["model"] != "champ")


def test_per_category_snapshot_matches_filtered_copy(run_cli, engine, loaded, tmp_path, db_url):
    run_cli("rebuild", "--rounds", ROUNDS, "--all-categories")
    with engine.connect() as conn:
        boards = dict(conn.execute(select(Snapshot.board, Snapshot.id)).all())
        math_board = load_board(conn, boards["category:math"])
    assert set(boards) == {"overall", "category:math", "category:code"}
    # Same battles, filtered before ingest, into a fresh SQLite database.
    filtered = tmp_path / "math_only.csv"
    with open(filtered, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["id", "model_a", "model_b", "winner"])
        w.writeheader()
        for r in loaded:
            if r["math"] == "True":
                w.writerow({k: r[k] for k in ("id", "model_a", "model_b", "winner")})
    from arena.db.session import open_engine

    other = open_engine(f"sqlite:///{tmp_path / 'copy.db'}")
    from arena.ingest import ingest_file

    ingest_file(other, str(filtered))
    result = rebuild(other, RebuildOptions(rounds=200))
    with other.connect() as conn:
        copy_board = load_board(conn, result.snapshot_ids[0])
    got = {r.model: r for r in math_board.rows}
    for r in copy_board.rows:
        assert abs(got[r.model].rating - r.rating) < RATING_TOL
        assert got[r.model].battles == r.battles and got[r.model].wins == r.wins
    assert math_board.snapshot.n_battles == copy_board.snapshot.n_battles
    leaderboard = json.loads(
        run_cli("leaderboard", "--category", "math", "--format", "json").output
    )
    assert leaderboard["snapshot"]["id"] == boards["category:math"]


def test_min_battles_anchor_and_options(run_cli, engine, loaded, tmp_path):
    extra = tmp_path / "newcomer.csv"
    extra.write_text("model_a,model_b,winner\nnewbie,model-0,model_b\nnewbie,model-1,tie\n")
    run_cli("ingest", str(extra))
    run_cli(
        "rebuild",
        "--rounds",
        ROUNDS,
        "--anchor",
        "model-7=800",
        "--ci",
        "sandwich",
        "--tiers",
        "overlap",
    )
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    rows = {r["model"]: r for r in doc["rows"]}
    assert abs(rows["model-7"]["rating"] - 800) < 1e-9
    newbie = rows["newbie"]
    assert newbie["rank_ub"] is None and newbie["tier"] is None and "few_battles" in newbie["flags"]
    assert newbie["unranked_reason"].startswith("newbie has only")
    assert doc["rows"][-1]["model"] == "newbie"  # unranked models listed after the board
    assert doc["snapshot"]["options"]["ci"] == "sandwich"
    assert doc["snapshot"]["options"]["anchor"] == {"model": "model-7", "rating": 800.0}


def test_cluster_bootstrap_by_judge_keeps_point_fit(run_cli, engine, loaded):
    run_cli("rebuild", "--rounds", ROUNDS)
    run_cli("rebuild", "--rounds", ROUNDS, "--cluster", "judge")
    with engine.connect() as conn:
        battle, judge = load_board(conn, 1), load_board(conn, 2)
    assert judge.snapshot.diagnostics["clusters"] == 40
    assert [r.rating for r in battle.rows] == [r.rating for r in judge.rows]


def test_snapshots_diff_and_compare(run_cli, engine, loaded, tmp_path):
    run_cli("rebuild", "--rounds", ROUNDS)
    extra = tmp_path / "more.csv"
    synth_battles(extra, n=400, seed=3, extra_id=5000, models=9)
    run_cli("ingest", str(extra))
    run_cli("rebuild", "--rounds", ROUNDS, "--min-battles", "0")
    snaps = json.loads(run_cli("snapshots", "--format", "json").output)["snapshots"]
    assert [s["id"] for s in snaps] == [1, 2] and snaps[1]["watermark"] == 3400
    result = run_cli("diff", "1", "2", "--format", "json")
    diff = json.loads(result.stdout)["rows"]
    assert {d["model"]: d["status"] for d in diff}["model-8"] == "new"
    # the two boards were built with different --min-battles: said loudly, on stderr
    assert "WARNING" in result.stderr and "min-battles: 50 vs 0" in result.stderr
    both = next(d for d in diff if d["model"] == "model-0")
    assert both["old_ci_low"] < both["old_ci_high"] and both["ci_low"] < both["ci_high"]
    cmp = json.loads(run_cli("compare", "model-0", "model-7", "--format", "json").output)
    assert cmp["difference"] > 0 and cmp["uncorrected"]["ci_low"] > 0 and cmp["significant"]
    assert cmp["p_a_better"] > 0.99 and 0.5 < cmp["win_probability_a"] < 1
    record = cmp["record"]
    assert record["a_wins"] + record["b_wins"] + record["ties"] > 0
    text = run_cli("compare", "model-0", "model-7").output
    assert "verdict: model-0 is better" in text
    missing = run_cli("compare", "model-0", "nobody", ok=False)
    assert missing.exit_code == 1 and "unknown model 'nobody'" in missing.output
    typo = run_cli("compare", "model-0", "model7", ok=False)
    assert "did you mean model-7" in typo.output


def test_rebuild_with_no_battles_is_a_clean_error(run_cli, engine):
    # `engine` creates the schema: a database without battles (an empty one is refused earlier)
    result = run_cli("rebuild", ok=False)
    assert result.exit_code == 1 and "ingest battles first" in result.output
    result = run_cli("leaderboard", ok=False)
    assert result.exit_code == 1 and "run `arena rebuild`" in result.output


def test_excluded_counts_per_board(run_cli, engine, tmp_path):
    path = tmp_path / "selfplay.csv"
    path.write_text(
        "model_a,model_b,winner,math\n"
        "x,y,model_a,True\nx,x,tie,True\ny,y,tie,False\nx,y,model_b,False\n"
    )
    run_cli("ingest", str(path))
    run_cli("rebuild", "--rounds", "20", "--min-battles", "0", "--all-categories")
    run_cli("rebuild", "--rounds", "20", "--min-battles", "0", "--category", "math")
    with engine.connect() as conn:
        rows = conn.execute(
            select(Snapshot.board, Snapshot.n_excluded, Snapshot.n_battles).order_by(Snapshot.id)
        ).all()
    assert [tuple(r) for r in rows] == [
        ("overall", 2, 2.0),
        ("category:math", 1, 1.0),
        ("category:math", 1, 1.0),
    ]


def test_a_failed_draws_check_is_said_on_every_surface(run_cli, loaded, monkeypatch):
    import arena.engine.board as engine_board

    # every check fails: the rebuild doubles its draws to the cap and says so
    monkeypatch.setattr(engine_board, "DRAWS_CHECK_SHARE", 1.5)
    monkeypatch.setattr(engine_board, "DRAWS_MAX", 2000)
    run_cli("rebuild")
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    check = doc["snapshot"]["draws_check"]
    assert check["tried"] == [1000, 2000] and not check["passed"] and check["chosen"]
    table = run_cli("leaderboard").output
    assert "Monte-Carlo error: the rank sets and tiers are counted over 2,000 fixed draws" in table
    assert "2000" in run_cli("snapshots").output
    # a passing check adds nothing
    monkeypatch.undo()
    run_cli("rebuild", "--rounds", "1000")
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    check = doc["snapshot"]["draws_check"]
    assert check["draws"] == 1000 and "chosen" not in check
    # the note is there exactly when the check failed
    assert ("Monte-Carlo error" in run_cli("leaderboard").output) is (not check["passed"])
