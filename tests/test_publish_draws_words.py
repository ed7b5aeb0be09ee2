"""The page's method text on the draws behind ranks and tiers (issue 41)."""

from __future__ import annotations

from datetime import UTC, datetime

from arena.boards.snapshots import SnapshotInfo
from arena.publish.words import describe_method


def _info(ci: str, check: dict | None, cluster: str = "battle") -> SnapshotInfo:
    options = {"ci": ci, "level": 0.95, "tiers": "simultaneous", "cluster": cluster}
    return SnapshotInfo(
        id=3,
        created_at=datetime(2026, 12, 6, tzinfo=UTC),
        board="overall",
        category=None,
        source=None,
        run_id="r",
        options=options,
        seed=1,
        code_version="x",
        watermark=10,
        n_battles=1000.0,
        n_excluded=0,
        n_models=20,
        diagnostics={"tiers": {"draws_check": check}} if check else {},
    )


def _text(info: SnapshotInfo) -> str:
    return " ".join(describe_method(info))


CHECK = {"draws": 8000, "ranked": 52, "sets_moved": 4, "max_ranks": 1, "tiers_equal": True}


def test_a_passed_check_adds_nothing_and_the_draws_are_named():
    text = _text(_info("sandwich", {**CHECK, "sets_moved": 0, "passed": True, "chosen": True}))
    assert "Monte-Carlo error" not in text
    assert "fixed normal draws" in text and "no random seed enters" in text
    assert "bootstrap" not in text
    assert "paired bootstrap differences" in _text(_info("bootstrap", None))


def test_a_failed_check_is_said_with_its_figures():
    text = _text(_info("sandwich", {**CHECK, "passed": False, "chosen": True}))
    assert "Monte-Carlo error" in text
    assert "8,000 fixed draws" in text and "move 4 of 52 rank sets by up to 1 rank," in text
    assert "doubled its draws" in text
    given = _text(_info("sandwich", {**CHECK, "max_ranks": 2, "passed": False}))
    assert "by up to 2 ranks" in given and "leaves its rounds to the data" in given


def test_clusters_are_named_for_the_sandwich_as_robustness_not_resampling():
    text = _text(_info("sandwich", None, cluster="judge"))
    assert "robust to battles of one judge being alike" in text and "resampling" not in text
    assert "resampling whole clusters" in _text(_info("bootstrap", None, cluster="judge"))
