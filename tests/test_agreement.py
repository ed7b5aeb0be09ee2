"""`arena agreement`: every measure against a direct re-computation, on SQLite and PostgreSQL.

Two sources judge the same questions and model pairs: "human" votes by the
true strengths, "judge" votes by strengths with two models swapped and a
position bias, so the two boards agree on most pairs, not all. Each measure is
recomputed here from the stored snapshots with scipy and plain loops.
"""

from __future__ import annotations

import csv
import json
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from arena.audit.agreement import board_agreement, parse_selector
from arena.boards.resolve import resolve_board
from arena.boards.snapshots import load_samples
from arena.engine.agreement import kendall_rows, spearman_rows, vote_agreement
from arena.engine.inference.rank_sets import board_inference
from tests.helpers.two_sources import HUMAN, JUDGE, MODELS, outcome, write_votes

_write = write_votes


@pytest.fixture
def two_sources(run_cli, tmp_path):
    rng = np.random.default_rng(11)
    human = _write(tmp_path / "human.csv", rng, HUMAN, n=6000, questions=40, bias=0.0)
    judge = _write(tmp_path / "judge.csv", rng, JUDGE, n=6000, questions=40, bias=0.3)
    run_cli("ingest", str(tmp_path / "human.csv"), "--source", "human", "-q")
    run_cli("ingest", str(tmp_path / "judge.csv"), "--source", "judge", "-q")
    run_cli("rebuild", "--source", "human", "--rounds", "200", "-q")
    run_cli("rebuild", "--source", "judge", "--rounds", "150", "-q")
    return human, judge


def _side(conn, source):
    board = resolve_board(conn, source=source)
    samples = load_samples(conn, board.snapshot.id).astype(np.float64)
    ranked = {r.model: r for r in board.rows if r.ranked}
    return board, samples, ranked


def _overlap_sign(ri, rj):
    lo_i, hi_i = ri.ci_low, ri.ci_high
    lo_j, hi_j = rj.ci_low, rj.ci_high
    if min(hi_i, hi_j) - max(lo_i, lo_j) > 0:
        return 0
    return 1 if lo_i >= hi_j else -1


_outcome = outcome


def test_every_measure_matches_a_direct_recomputation(two_sources, engine):
    human, judge = two_sources
    with engine.connect() as conn:
        ag = board_agreement(conn, reference="source=human", candidate="source=judge")
        hb, hs, hr = _side(conn, "human")
        jb, js, jr = _side(conn, "judge")
    models = ag.models
    assert sorted(models) == sorted(f"m{k}" for k in range(MODELS)) and ag.left_out == []
    assert models == sorted(models, key=lambda m: -hr[m].rating)  # reference order
    x = np.array([hr[m].rating for m in models])
    y = np.array([jr[m].rating for m in models])
    sx = hs[:, [hr[m].position for m in models]]
    sy = js[:, [jr[m].position for m in models]]
    rounds = min(len(sx), len(sy))
    assert ag.rounds == rounds == 150
    # Correlations: scipy on the point ratings, and on every paired round.
    assert ag.spearman.estimate == pytest.approx(stats.spearmanr(x, y).statistic)
    assert ag.kendall.estimate == pytest.approx(stats.kendalltau(x, y).statistic)
    rho = [stats.spearmanr(sx[r], sy[r]).statistic for r in range(rounds)]
    tau = [stats.kendalltau(sx[r], sy[r]).statistic for r in range(rounds)]
    for est, per_round in ((ag.spearman, rho), (ag.kendall, tau)):  # basic bootstrap interval
        q_lo, q_hi = np.percentile(per_round, [2.5, 97.5])
        expected = [max(-1, 2 * est.estimate - q_hi), min(1, 2 * est.estimate - q_lo)]
        assert [est.ci_low, est.ci_high] == pytest.approx(expected)
    # Separability by intervals and by each board's simultaneous inference.
    pairs = list(combinations(range(len(models)), 2))
    for side, rows, board, samples in (("reference", hr, hb, hs), ("candidate", jr, jb, js)):
        ranked = [r for r in board.rows if r.ranked]
        inf = board_inference(np.array([r.rating for r in ranked]), samples[:, [r.position for r in ranked]])  # fmt: skip
        idx = {r.model: n for n, r in enumerate(ranked)}
        by_iv = sum(_overlap_sign(rows[models[i]], rows[models[j]]) != 0 for i, j in pairs)
        by_sim = sum(inf.separated(idx[models[i]], idx[models[j]]) != 0 for i, j in pairs)
        assert ag.separability[side]["overlap"] == pytest.approx(by_iv / len(pairs))
        assert ag.separability[side]["simultaneous"] == pytest.approx(by_sim / len(pairs))
    # Agreement with confidence and the Brier score, pair by pair.
    scores, losses = [], []
    for i, j in pairs:
        ref = _overlap_sign(hr[models[i]], hr[models[j]])
        if ref == 0:
            continue
        cand = _overlap_sign(jr[models[i]], jr[models[j]])
        scores.append(1 if cand == ref else (-1 if cand == -ref else 0))
        win, lose = (i, j) if ref > 0 else (j, i)
        d = sy[:, win] - sy[:, lose]
        p = (np.sum(d > 0) + 0.5 * np.sum(d == 0)) / d.size
        losses.append((1 - p) ** 2)
    assert scores and ag.agreement_with_confidence == pytest.approx(np.mean(scores))
    assert ag.agreement_counts["disagree"] == scores.count(-1)
    assert ag.brier == pytest.approx(np.mean(losses)) and ag.brier_pairs == len(losses)
    # The swapped neighbours: the judge's board puts m3 above m2.
    pair = next(p for p in ag.pairs if {p.model_a, p.model_b} == {"m2", "m3"})
    assert pair.model_a == "m2" and pair.p_candidate < 0.5
    # Per-vote agreement: every pair of votes on the same question and model pair.
    ref_votes: dict = {}
    for _, a, b, w, q in human:
        ref_votes.setdefault((q, min(a, b), max(a, b)), []).append(_outcome(w, a, b))
    table = np.zeros((3, 3))
    for _, a, b, w, q in judge:
        for v in ref_votes.get((q, min(a, b), max(a, b)), []):
            table[v, _outcome(w, a, b)] += 1
    po = np.trace(table) / table.sum()
    pe = (table.sum(axis=1) @ table.sum(axis=0)) / table.sum() ** 2
    v = ag.votes
    assert v is not None and v.vote_pairs == table.sum()
    assert v.with_ties == pytest.approx(po)
    assert v.without_ties == pytest.approx((table[0, 0] + table[1, 1]) / table[:2, :2].sum())
    assert v.kappa == pytest.approx((po - pe) / (1 - pe))


def test_cli_json_shape_table_and_errors(two_sources, run_cli):
    doc = json.loads(run_cli("agreement", "--reference", "source=human", "--candidate", "source=judge", "--format", "json").output)  # fmt: skip
    assert {"models", "left_out", "spearman", "kendall", "separability", "agreement_with_confidence", "brier", "pairs"} <= set(doc)  # fmt: skip
    assert set(doc["spearman"]) == {"estimate", "ci_low", "ci_high"}
    assert set(doc["separability"]) == {"reference", "candidate"}
    assert len(doc["pairs"]) == MODELS * (MODELS - 1) // 2
    assert {p["outcome"] for p in doc["pairs"]} <= {"agree", "disagree", "not separated"}
    assert isinstance(doc["votes"]["vote_pairs"], int)
    table = run_cli(
        "agreement", "--reference", "source=human", "--candidate", "source=judge"
    ).output
    assert "agreement with confidence" in table and "Brier" in table and "Cohen's kappa" in table
    csv_out = run_cli("agreement", "--reference", "source=human", "--candidate", "source=judge", "--format", "csv").output  # fmt: skip
    assert csv_out.splitlines()[0].startswith("model_a,model_b,reference,candidate,outcome")
    for args, message in (
        (("--reference", "source=nope", "--candidate", "source=judge"), "unknown source"),
        (("--reference", "colour=red", "--candidate", "source=judge"), "unknown key 'colour'"),
        (("--reference", "source=human", "--candidate", "source=human"), "same snapshot"),
    ):
        out = run_cli("agreement", *args, ok=False)
        assert out.exit_code != 0 and message in out.output and "Traceback" not in out.output


def test_selectors():
    assert parse_selector("overall") == {}
    assert parse_selector("12") == {"snapshot_id": 12}
    assert parse_selector("source=a, category=math,style") == {"source": "a", "category": "math", "style": True}  # fmt: skip
    with pytest.raises(ValueError, match="snapshot must be a number"):
        parse_selector("snapshot=x")


def test_row_helpers_match_scipy_with_ties():
    g = np.random.default_rng(3)
    x = g.integers(0, 4, size=(30, 9)).astype(float)  # many ties
    y = g.integers(0, 4, size=(30, 9)).astype(float)
    rho = [stats.spearmanr(x[r], y[r]).statistic for r in range(30)]
    tau = [stats.kendalltau(x[r], y[r]).statistic for r in range(30)]
    assert spearman_rows(x, y) == pytest.approx(rho, nan_ok=True)
    assert kendall_rows(x, y) == pytest.approx(tau, nan_ok=True)


def test_vote_agreement_kappa_on_a_known_table():
    # 2 x 2 textbook case without ties: 20 both A, 15 both B, 5 + 10 disagreements.
    ref = [0] * 25 + [1] * 25
    cand = [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15
    keys = list(range(50))
    va = vote_agreement(keys, ref, keys, cand)
    assert va.with_ties == pytest.approx(0.7) and va.without_ties == pytest.approx(0.7)
    assert va.kappa == pytest.approx(0.4)  # po 0.7, pe 0.5


def test_audit_page_has_an_agreement_section_when_two_sources_are_published(two_sources, run_cli, tmp_path):  # fmt: skip
    site = tmp_path / "site"
    run_cli("publish", str(site), "--snapshot", "1")
    page = (site / "audit.html").read_text(encoding="utf-8")
    assert "Agreement: " in page and "Pair-rank Brier score" in page and "Spearman" in page
    assert "arena agreement --reference source=human --candidate source=judge" in page
    assert page.count('<tr class="') == MODELS * (MODELS - 1) // 2
    index = (site / "index.html").read_text(encoding="utf-8")
    # no vote audit stored: the index names the page for what it holds (issue 39 item 6)
    assert '<a href="audit.html">Sources\' agreement</a>' in index
    assert "Vote audit</a>" not in index
    assert "No vote audit has been run on this board yet." in page and "`" not in page


def test_front_door_gives_the_same_document(two_sources, db_url):
    from arena.api import open_arena

    with open_arena(db_url) as arena:
        doc = arena.agreement("source=human", "source=judge").to_dict()
        assert doc["models"] and doc["pairs"] and doc["votes"]["vote_pairs"] > 0
        quiet = arena.agreement("source=human", {"source": "judge"}, votes=False)
    assert quiet.votes is None and quiet.brier == doc["brier"]


def test_overall_board_of_one_source_is_compared_with_the_other_source(engine, run_cli, tmp_path):
    """The demo's layout: the overall board rates the human votes only (the judge's
    battles excluded), the judge has its own source board."""
    from arena.jobs.rebuild import RebuildOptions, rebuild

    rng = np.random.default_rng(12)
    _write(tmp_path / "human.csv", rng, HUMAN, n=3000, questions=20, bias=0.0)
    rows = _write(tmp_path / "judge.csv", rng, JUDGE, n=3000, questions=20, bias=0.0)
    with (tmp_path / "judge.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "model_a", "model_b", "winner", "question_id", "judge"])
        w.writerows([*r, "bot"] for r in rows)
    run_cli("ingest", str(tmp_path / "human.csv"), "--source", "human", "-q")
    run_cli("ingest", str(tmp_path / "judge.csv"), "--source", "judge", "-q")
    rebuild(engine, RebuildOptions(rounds=100, exclude_judges=("bot",)))
    run_cli("rebuild", "--source", "judge", "--rounds", "100", "-q")
    site = tmp_path / "site"
    run_cli("publish", str(site))
    page = (site / "audit.html").read_text(encoding="utf-8")
    assert "arena agreement --reference overall --candidate source=judge" in page
    assert "Pair-rank Brier score" in page
