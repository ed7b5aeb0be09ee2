"""`arena rebuild` on the sparse engine path, forced on small boards by the threshold."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import arena.engine.sparse.fit as sparse_fit
import arena.jobs.rebuild as rebuild_module
from arena.boards.keys import OVERALL
from arena.boards.snapshots import latest_snapshot_id, load_board, load_pairs, load_samples
from tests.helpers.files import synth_battles

SLICE = Path(__file__).parent / "data" / "ko-arena-hard-slice.jsonl.gz"


@pytest.fixture
def sparse_above(monkeypatch):
    """Boards of 4 models or more take the sparse path."""
    monkeypatch.setattr(sparse_fit, "SPARSE_MIN_MODELS", 4)
    monkeypatch.setattr(rebuild_module, "SPARSE_MIN_MODELS", 4)


def _board(engine):
    with engine.connect() as conn:
        return load_board(conn, latest_snapshot_id(conn, OVERALL))


def test_sparse_rebuild_matches_dense_and_readers_work(run_cli, engine, tmp_path, monkeypatch):
    path = tmp_path / "battles.csv"
    synth_battles(path, n=3000, models=8)
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--ci", "bootstrap", "--rounds", "200", "-q")
    dense = _board(engine)
    monkeypatch.setattr(sparse_fit, "SPARSE_MIN_MODELS", 4)
    run_cli("rebuild", "--ci", "bootstrap", "--rounds", "200", "-q")
    sparse = _board(engine)
    assert sparse.snapshot.diagnostics["engine_path"] == "sparse"
    assert "engine_path" not in dense.snapshot.diagnostics
    assert sparse.snapshot.diagnostics["tiers"]["bound"] == "bonferroni"
    by_model = {r.model: r for r in dense.rows}
    for row in sparse.rows:
        want = by_model[row.model]
        assert row.rating == pytest.approx(want.rating, abs=1e-6)
        # same resamples; each round solved to the same tolerance (< 1e-5 Elo)
        assert row.ci_low == pytest.approx(want.ci_low, abs=1e-4)
        assert row.ci_high == pytest.approx(want.ci_high, abs=1e-4)
        assert (row.rank_ub, row.rank_lb) == (want.rank_ub, want.rank_lb)
    with engine.connect() as conn:
        sid = latest_snapshot_id(conn, OVERALL)
        samples = load_samples(conn, sid)
        pairs = load_pairs(conn, sid)
    assert samples.shape == (200, 8) and np.isfinite(samples).all()
    # only the pairs that met are stored (here all 28), never M^2 cells
    assert len(pairs) == 8 * 7 // 2
    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    assert len(doc["rows"]) == 8
    run_cli("compare", "model-0", "model-7")


def test_sparse_path_gives_bootstrap_intervals_and_says_so(run_cli, engine, tmp_path, sparse_above):
    path = tmp_path / "battles.csv"
    synth_battles(path, n=600, models=6)
    run_cli("ingest", str(path), "-q")
    # the default (sandwich) and an explicit analytic method alike
    for extra in ((), ("--ci", "fisher")):
        res = run_cli("rebuild", *extra, "--rounds", "20")
        assert "these are bootstrap intervals" in res.output and "Traceback" not in res.output
        assert _board(engine).snapshot.diagnostics["method"] == "bootstrap"


def test_no_style_board_beyond_the_dense_style_fit(run_cli, sparse_above):
    run_cli("ingest", str(SLICE), "-q")
    res = run_cli("rebuild", "--rounds", "20")
    assert "overall|style" not in res.output
    assert "no style-controlled board" in res.output
