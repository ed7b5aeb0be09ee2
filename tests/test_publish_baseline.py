"""Baseline designs on the page: every model judged against one baseline (issue 39 item 7).

The pairwise heatmaps of such a board are empty, so the page says it is a
baseline design and shows each model's score against the baseline with its
interval, recomputed here from the stored pairs; a board whose pairs meet keeps
its heatmaps.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

from arena.boards.snapshots import PairRecord, load_board, load_pairs
from arena.db.session import open_engine
from arena.publish import publish_site
from arena.publish.baseline import BASELINE_SHARE, baseline_design, scores_vs_baseline
from tests.publish_fixtures import BASE_TIME, add_snapshot

NAMES = [f"judge-model-{k:02d}" for k in range(9)] + ["<b>base</b>"]


def _pairs(spec):
    return [PairRecord(a, b, w, lo, t) for a, b, w, lo, t in spec]


def test_detection_by_share_of_battles():
    star = _pairs([("base", f"m{k}", 30, 10, 5) for k in range(4)])
    found = baseline_design(star)
    assert found is not None and found.model == "base" and found.share == 1.0
    # one other pair played: still mostly against the baseline
    assert baseline_design([*star, *_pairs([("m0", "m1", 5, 5, 0)])]) is not None
    # a round robin is no baseline design; nor are two models alone
    robin = _pairs([(f"m{i}", f"m{j}", 10, 10, 0) for i in range(5) for j in range(i + 1, 5)])
    assert baseline_design(robin) is None
    assert baseline_design(_pairs([("a", "b", 10, 5, 0)])) is None
    # just under the share: not a baseline design
    n_other = int(180 / BASELINE_SHARE) - 180 + 1  # 180 battles against the baseline
    under = [*star, *_pairs([("m0", "m1", n_other, 0, 0)])]
    assert baseline_design(under) is None


@pytest.fixture
def site(tmp_path):
    engine = open_engine(f"sqlite:///{tmp_path / 'a.db'}")
    rng = np.random.default_rng(3)
    strength = 1300 - 30.0 * np.arange(len(NAMES))
    with engine.begin() as conn:
        judge = add_snapshot(
            conn,
            names=NAMES,
            strength=strength,
            when=BASE_TIME,
            board="source:judge",
            rng=rng,
            unranked=0,
            baseline=len(NAMES) - 1,
        )
        overall = add_snapshot(
            conn, names=NAMES, strength=strength, when=BASE_TIME, rng=rng, unranked=0
        )
        board = load_board(conn, judge)
        pairs = load_pairs(conn, judge)
        assert load_pairs(conn, overall)
    publish_site(engine, tmp_path / "site")
    engine.dispose()
    pages = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "site").glob("*.html")}
    judge_page = next(t for n, t in pages.items() if n.startswith("board-source-judge"))
    return board, pairs, judge_page, pages["index.html"]


def test_scores_against_the_baseline_match_a_direct_computation(site):
    board, pairs, _, _ = site
    base = NAMES[-1]
    scores = scores_vs_baseline(board.rows, pairs, base, 0.9)
    assert [s.row.model for s in scores] == [r.model for r in board.rows if r.model != base]
    z = stats.norm.ppf(0.95)
    for s in scores:
        p = next(p for p in pairs if s.row.model in (p.model_a, p.model_b))
        w, loss = (p.a_wins, p.b_wins) if p.model_a == s.row.model else (p.b_wins, p.a_wins)
        x = np.repeat([1.0, 0.0, 0.5], [int(w), int(loss), int(p.ties)])
        assert s.battles == x.size and s.score == pytest.approx(x.mean())
        half = z * x.std() / math.sqrt(x.size)
        assert s.low == pytest.approx(max(0, x.mean() - half))
        assert s.high == pytest.approx(min(1, x.mean() + half))


def test_the_page_says_baseline_design_and_drops_the_empty_heatmaps(site):
    _, _, judge_page, index = site
    assert "A baseline design: 100% of this board" in judge_page
    assert "&lt;b&gt;base&lt;/b&gt;" in judge_page and "<b>base</b>" not in judge_page
    assert "Score against the baseline" in judge_page
    assert "Observed win rate" not in judge_page and "Predicted win probability" not in judge_page
    # one tooltip per model other than the baseline, in percent
    tips = re.findall(r"<title>judge-model-\d\d: score [\d.]+%, interval", judge_page)
    assert len(tips) == len(NAMES) - 1
    # a board whose pairs meet keeps its heatmaps
    assert "Observed win rate" in index and "A baseline design" not in index
