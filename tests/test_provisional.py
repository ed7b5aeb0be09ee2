"""Provisional boards (issue 43): the latest snapshot refitted on the battles stored since.

On SQLite and PostgreSQL: the provisional ratings are a full rebuild's MLE on
the same battles (to 1e-6 Elo), warm-started or not; the rank sets and tiers
obey the full board's invariants; the board says what it is (kind, watermark,
method, battles since) and is shown only when asked for, and only until the
next full rebuild replaces it.
"""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select

import arena
from arena.core.errors import OptionError
from arena.db.models import ProvisionalSnapshot, Snapshot
from tests.helpers.cli import cli_for
from tests.helpers.serve import MODELS, battles_csv


def _more_battles(path, n: int, *, seed: int, start: int = 0):
    """``n`` more battles in which the last model mostly wins (the board moves)."""
    rng = np.random.default_rng(seed)
    lines = ["id,model_a,model_b,winner"]
    for k in range(n):
        i, j = rng.choice(len(MODELS), 2, replace=False)
        winner = "model_b" if (j == len(MODELS) - 1 and rng.random() < 0.8) else "model_a"
        if rng.random() < 0.1:
            winner = "tie"
        lines.append(f"more-{seed}-{start + k},{MODELS[i]},{MODELS[j]},{winner}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def board(db_url, tmp_path):
    run = cli_for(db_url)
    run("ingest", str(battles_csv(tmp_path / "b.csv")), "-q")
    run("rebuild", "--rounds", "50", "-q")
    return db_url, run


def _ratings(doc):
    return {r["model"]: r["rating"] for r in doc["rows"]}


def test_provisional_equals_a_full_rebuild_on_the_same_battles(board, tmp_path):
    url, run = board
    with arena.open(url) as db:
        nothing = db.refit_provisional()
        assert nothing.provisional_id is None and "no battle" in nothing.reason
        # without new battles the provisional board is the full snapshot itself
        same = db.leaderboard(provisional=True).to_dict()
        assert same["provisional"] is None and same["snapshot"]["kind"] == "full"
        full_id = db.leaderboard().snapshot.id
        for step in range(2):  # the second refit is warm-started from the first
            run("ingest", str(_more_battles(tmp_path / f"m{step}.csv", 150, seed=step)), "-q")
            done = db.refit_provisional().refit
            assert done.provisional_id is not None, done.reason
            assert done.since_snapshot == full_id and done.battles_since == 150 * (step + 1)
        with db.engine().connect() as conn:
            kept = conn.execute(select(func.count()).select_from(ProvisionalSnapshot)).scalar()
            watermark = conn.execute(select(func.max(Snapshot.watermark))).scalar()
        assert kept == 1  # only the latest provisional board is kept
        prov = db.leaderboard(provisional=True).to_dict()
        assert prov["snapshot"]["kind"] == "provisional"
        p = prov["provisional"]
        assert p["since_snapshot"] == full_id and p["battles_since"] == 300
        assert p["method"] == "sandwich" and p["computed_at"].endswith("Z")
        assert prov["snapshot"]["watermark"] > watermark
        assert prov["snapshot"]["counts"]["battles"] == 900
        assert prov["snapshot"]["options"]["ci"] == "sandwich"
        # never shown without asking; the full board is untouched
        plain = db.leaderboard().to_dict()
        assert plain["snapshot"]["id"] == full_id and "provisional" not in plain
        assert plain["snapshot"]["counts"]["battles"] == 600
    # the reference: a full rebuild on the same battles
    run("rebuild", "--rounds", "50", "-q")
    with arena.open(url) as db:
        full = db.leaderboard().to_dict()
        assert full["snapshot"]["counts"]["battles"] == 900
        got, want = _ratings(prov), _ratings(full)
        assert got.keys() == want.keys()
        assert max(abs(got[m] - want[m]) for m in want) < 1e-6
        # the full rebuild replaces the provisional board
        after = db.leaderboard(provisional=True).to_dict()
        assert after["provisional"] is None and after["snapshot"]["id"] != full_id
        assert db.refit_provisional().provisional_id is None


def test_cold_and_warm_refits_agree_and_warm_is_not_slower(board, tmp_path):
    url, run = board
    run("ingest", str(_more_battles(tmp_path / "m.csv", 100, seed=5)), "-q")
    with arena.open(url) as db:
        first = db.refit_provisional().refit
        run("ingest", str(_more_battles(tmp_path / "n.csv", 5, seed=6, start=500)), "-q")
        second = db.refit_provisional().refit  # warm-started from the first
        warm_ratings = _ratings(db.leaderboard(provisional=True).to_dict())
    with arena.open(url) as db:  # a new Arena: a cold start
        cold = db.refit_provisional(force=True).refit
        again = _ratings(db.leaderboard(provisional=True).to_dict())
    assert second.iterations <= cold.iterations and first.iterations >= 1
    assert max(abs(warm_ratings[m] - again[m]) for m in again) < 1e-6


@pytest.mark.parametrize("method", ["sandwich", "fisher"])
def test_provisional_board_obeys_the_board_invariants(board, tmp_path, method):
    url, run = board
    run("ingest", str(_more_battles(tmp_path / "m.csv", 300, seed=2)), "-q")
    with arena.open(url) as db:
        done = db.refit_provisional(provisional_method=method)
        assert done.provisional_id is not None, done.reason
        doc = db.leaderboard(provisional=True).to_dict()
    assert doc["provisional"]["method"] == method
    # a refit takes its full snapshot's draws, checked by the rebuild: no check of its own
    assert doc["snapshot"]["draws_check"] is None
    rows = [r for r in doc["rows"] if r["rank_low"] is not None]
    assert len(rows) == len(MODELS)
    n = len(rows)
    ratings = [r["rating"] for r in rows]
    assert ratings == sorted(ratings, reverse=True)  # board order
    for r in rows:
        assert 1 <= r["rank_low"] <= r["rank_high"] <= n
        assert r["ci_low"] < r["rating"] < r["ci_high"]
        assert r["tier"] >= 1
    # rank sets move with the ratings and tiers never go back up the board
    lows = [r["rank_low"] for r in rows]
    highs = [r["rank_high"] for r in rows]
    tiers = [r["tier"] for r in rows]
    assert lows == sorted(lows) and highs == sorted(highs) and tiers == sorted(tiers)
    assert rows[0]["rank_low"] == 1 and rows[-1]["rank_high"] == n


def test_provisional_refuses_a_snapshot_style_or_component(board):
    url, _ = board
    with arena.open(url) as db:
        for kwargs in ({"snapshot": 1}, {"style_control": True}, {"component": 2}):
            with pytest.raises(OptionError) as err:
                db.leaderboard(provisional=True, **kwargs)
            assert err.value.name in kwargs and "provisional" in str(err.value)
        assert db.refit_provisional(category="nope").reason.endswith("no snapshot yet")


def test_cli_leaderboard_provisional(board, tmp_path):
    url, run = board
    run("ingest", str(_more_battles(tmp_path / "m.csv", 60, seed=4)), "-q")
    with arena.open(url) as db:
        db.refit_provisional()
    import json

    doc = json.loads(run("leaderboard", "--provisional", "--format", "json").output)
    assert doc["snapshot"]["kind"] == "provisional" and doc["provisional"]["battles_since"] == 60
    text = run("leaderboard", "--provisional").output
    assert "provisional board" in text and "the 60 battles since snapshot 1" in text
    plain = run("leaderboard").output
    assert "provisional" not in plain


def _tagged(path, n: int, *, start: int):
    """``n`` battles tagged ``math`` (the category of ``battles_csv(tags=True)``)."""
    rng = np.random.default_rng(start)
    lines = ["id,model_a,model_b,winner,math"]
    for k in range(n):
        i, j = rng.choice(len(MODELS), 2, replace=False)
        winner = ("model_a", "model_b", "tie")[int(rng.integers(3))]
        lines.append(f"tagged-{start + k},{MODELS[i]},{MODELS[j]},{winner},True")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_category_board_is_refitted_only_for_its_own_battles(db_url, tmp_path):
    run = cli_for(db_url)
    run("ingest", str(battles_csv(tmp_path / "b.csv", tags=True)), "-q")
    run("rebuild", "--rounds", "50", "--all-categories", "-q")
    with arena.open(db_url) as db:
        assert db.refit_provisional(category="math").provisional_id is None
        # battles of no category: the overall board moves, the math board does not
        run("ingest", str(_more_battles(tmp_path / "m.csv", 40, seed=8)), "-q")
        skipped = db.refit_provisional(category="math").refit
        assert skipped.provisional_id is None and "no battle of this board" in skipped.reason
        assert db.refit_provisional().provisional_id is not None
        run("ingest", str(_tagged(tmp_path / "t.csv", 30, start=0)), "-q")
        done = db.refit_provisional(category="math").refit
        assert done.provisional_id is not None and done.battles_since == 30
        prov = db.leaderboard(category="math", provisional=True).to_dict()
        assert prov["provisional"]["battles_since"] == 30
        assert db.leaderboard(provisional=True).to_dict()["provisional"]["battles_since"] == 40
    run("rebuild", "--rounds", "50", "--all-categories", "-q")
    with arena.open(db_url) as db:
        full = db.leaderboard(category="math").to_dict()
    got, want = _ratings(prov), _ratings(full)
    assert full["snapshot"]["counts"] == prov["snapshot"]["counts"]
    assert max(abs(got[m] - want[m]) for m in want) < 1e-6


def test_a_board_that_leaves_a_judge_out_is_refitted_from_the_battles(db_url, tmp_path):
    """The demo's overall board leaves the LLM judge out (``exclude_judges``), which the
    count table cannot serve: the refit reads the battles instead (it used to skip it,
    so `arena serve` on the demo database never showed a provisional board)."""
    from arena.db.session import open_engine
    from arena.jobs.rebuild import RebuildOptions, rebuild

    def votes(path, n, seed, judge_share):
        rng = np.random.default_rng(seed)
        lines = ["id,model_a,model_b,winner,judge"]
        for k in range(n):
            i, j = rng.choice(len(MODELS), 2, replace=False)
            judge = "bot" if rng.random() < judge_share else f"person-{k % 7}"
            winner = "model_a" if rng.random() < 0.5 + 0.07 * (j - i) else "model_b"
            lines.append(f"{path.stem}-{k},{MODELS[i]},{MODELS[j]},{winner},{judge}")
        path.write_text("\n".join(lines) + "\n")
        return path

    run = cli_for(db_url)
    run("ingest", str(votes(tmp_path / "a.csv", 800, 1, 0.3)), "-q")
    opts = RebuildOptions(rounds=50, exclude_judges=("bot",))
    engine = open_engine(db_url)
    try:
        rebuild(engine, opts)
        run("ingest", str(votes(tmp_path / "b.csv", 200, 2, 0.3)), "-q")
        with arena.open(db_url) as db:
            done = db.refit_provisional().refit
            assert done.provisional_id is not None, done.reason
            prov = db.leaderboard(provisional=True).to_dict()
        rebuild(engine, opts)  # the reference: a full rebuild on the same battles
    finally:
        engine.dispose()
    with arena.open(db_url) as db:
        full = db.leaderboard().to_dict()
    got, want = _ratings(prov), _ratings(full)
    assert got.keys() == want.keys()
    assert max(abs(got[m] - want[m]) for m in want) < 1e-6
    assert prov["snapshot"]["counts"]["battles"] == full["snapshot"]["counts"]["battles"] < 1000


def test_a_refit_takes_the_draws_its_snapshot_chose():
    from arena.boards.keys import OVERALL
    from arena.core.defaults import DEFAULT_ROUNDS
    from arena.jobs.provisional import provisional_options
    from arena.jobs.rebuild import RebuildOptions

    chosen = RebuildOptions().to_dict()  # rounds unset: the snapshot's draws were chosen
    assert chosen["rounds"] is None
    assert provisional_options(chosen, OVERALL, "sandwich", 4000).rounds == 4000
    assert provisional_options(chosen, OVERALL, "sandwich").rounds == DEFAULT_ROUNDS
    given = RebuildOptions(rounds=300).to_dict()
    assert provisional_options(given, OVERALL, "fisher", 4000).rounds == 300
