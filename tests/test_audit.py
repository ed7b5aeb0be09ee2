"""Audit probes on small constructed boards where the answer is known."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from arena.audit.anomaly import fastchat_score, fisher_test, pair_pvalues
from arena.audit.coverage import gini
from arena.audit.offset import group_fit
from arena.audit.report import run_audit
from arena.audit.result import tripped_by
from arena.audit.setup import Board
from arena.audit.transitivity import triad_shares
from arena.audit.votes import Votes
from arena.core.outcomes import A_WINS, B_WINS, TIE
from arena.engine.scale import SCALE
from tests.helpers.audit_votes import OPTS, STRENGTH, simulate

#: Coverage of a score interval checked by simulation: nominal 0.95, 200 runs.
COVERAGE_FLOOR = 0.90


def test_position_bias_found_and_interval_covers_truth():
    gamma = 0.3  # 52 Elo
    v = simulate(STRENGTH, 6000, gamma=gamma, seed=1)
    p = run_audit(v, OPTS, only=("position",)).probe("position")
    assert p.low < gamma * SCALE < p.high
    assert p.flagged and p.low > 10
    clean = simulate(STRENGTH, 6000, seed=2)
    q = run_audit(clean, OPTS, only=("position",)).probe("position")
    assert not q.flagged and q.low < 0 < q.high


def test_position_bias_of_one_judge():
    def override(k, a, b, j, rng):
        return A_WINS if j == 0 and rng.random() < 0.9 else None

    v = simulate(STRENGTH, 6000, judges=20, seed=3, override=override)
    p = run_audit(v, OPTS, only=("position",)).probe("position")
    flagged = [r["judge"] for r in p.details["judges"] if r["flagged"]]
    assert flagged == ["j000"]


def test_position_flag_raised_by_one_judge_says_so():
    """A flag from one judge beside a pooled estimate inside the band names both."""

    def override(k, a, b, j, rng):
        return A_WINS if j == 0 else None  # one judge of 60 always picks the first shown

    v = simulate(STRENGTH, 30000, judges=60, seed=3, override=override)
    p = run_audit(v, OPTS, only=("position",)).probe("position")
    assert p.flagged and -10 <= p.low and p.high <= 10  # the pooled interval is inside
    assert p.verdict.startswith("Flagged: pooled OK; judge j000 flagged. Pooled: ")
    assert "No position bias" not in p.verdict
    assert "Judge j000: +" in p.verdict and "Elo or more on its own votes" in p.verdict
    assert p.to_dict()["details"]["flagged_by"] == {
        "pooled": False,
        "judges": ["j000"],
        "categories": [],
    }
    # nothing flagged: the plain sentence, and nothing tripped
    q = run_audit(simulate(STRENGTH, 6000, seed=2), OPTS, only=("position",)).probe("position")
    assert not q.flagged and not q.verdict.startswith("Flagged")
    assert q.details["flagged_by"] == {"pooled": False, "judges": [], "categories": []}


def test_tripped_by_words():
    assert tripped_by("OK", {"judge": ["j7"], "category": []}) == "pooled OK; judge j7 flagged"
    assert (
        tripped_by("flagged", {"judge": [], "category": ["math", "if"]})
        == "pooled flagged; categories math and if flagged"
    )


def test_score_interval_coverage_by_simulation():
    """Per-group score intervals hold their level (200 groups of 80 votes, known offsets)."""
    rng = np.random.default_rng(7)
    g = 200
    group = np.repeat(np.arange(g), 80)
    base = rng.normal(0, 1, group.size)
    t_true = rng.normal(0, 0.5, g)
    y = (rng.random(group.size) < expit(base + t_true[group])).astype(float)
    gf, _ = group_fit(group, base, np.ones_like(base), y, n_groups=g, crit=1.959964)
    cover = np.mean((gf.low <= t_true) & (t_true <= gf.high))
    assert cover >= COVERAGE_FLOOR


def _tie_board():
    # A ties C almost always (10% decisive, 60/40 for A); B beats C 55/45, no ties.
    rows = []
    for a, b, o, n in (
        (0, 2, A_WINS, 2400),
        (0, 2, B_WINS, 1600),
        (0, 2, TIE, 36000),
        (1, 2, A_WINS, 11000),
        (1, 2, B_WINS, 9000),
        (0, 1, A_WINS, 1),
        (0, 1, B_WINS, 1),
    ):
        rows += [(a, b, o)] * n
    a, b, o = (np.array(c) for c in zip(*rows, strict=True))
    return Votes.build(["A", "B", "C"], a, b, o)


def test_tie_convention_reversal():
    p = run_audit(_tie_board(), OPTS, only=("ties",)).probe("ties")
    assert p.flagged
    pair = {(r["model_a"], r["model_b"]) for r in p.details["pairs"] if r["flagged"]}
    assert pair == {("A", "B")}
    clean = simulate(STRENGTH, 4000, tie=0.2, seed=4)
    assert not run_audit(clean, OPTS, only=("ties",)).probe("ties").flagged


def test_triads_counted_by_brute_force():
    rng = np.random.default_rng(0)
    w = rng.integers(0, 4, size=(7, 7)) * (1 - np.eye(7, dtype=int))
    cyc, dec = triad_shares(w.astype(float))
    c2 = d2 = 0
    for i in range(7):
        for j in range(i + 1, 7):
            for k in range(j + 1, 7):
                e = [(i, j), (j, k), (k, i)]
                if any(w[x, y] == w[y, x] for x, y in e):
                    continue
                d2 += 1
                fwd = all(w[x, y] > w[y, x] for x, y in e)
                back = all(w[x, y] < w[y, x] for x, y in e)
                c2 += fwd or back
    assert (cyc, dec) == (c2, d2)


def test_intransitivity_rock_paper_scissors():
    """Five rock-paper-scissors triples on well separated tiers: 5 cycles where BT expects ~1.25."""

    def override(k, a, b, j, rng):
        if a // 3 == b // 3:
            beats = (b - a) % 3 == 1
            return A_WINS if beats == (rng.random() < 0.85) else B_WINS
        return None

    strength = np.repeat(np.arange(5) * -1.5, 3)
    v = simulate(strength, 12000, seed=5, override=override)
    p = run_audit(v, OPTS, only=("intransitivity",)).probe("intransitivity")
    assert p.details["cyclic_triads"] == 5
    assert p.flagged and p.low > 0
    clean = simulate(strength, 12000, seed=6)
    assert not run_audit(clean, OPTS, only=("intransitivity",)).probe("intransitivity").flagged


def test_clustering_by_judge():
    # each judge has its own strong idea of every model: votes within a judge correlate
    prefs = np.random.default_rng(8).normal(0, 1.5, size=(30, 8))

    def override(k, a, b, j, rng):
        return (
            A_WINS
            if rng.random() < expit(STRENGTH[a] - STRENGTH[b] + prefs[j, a] - prefs[j, b])
            else B_WINS
        )

    v = simulate(STRENGTH, 6000, judges=30, seed=9, override=override)
    p = run_audit(v, OPTS, only=("clustering",)).probe("clustering")
    assert p.flagged and p.details["groups"][0]["low"] > 1.1
    clean = simulate(STRENGTH, 6000, judges=30, seed=10)
    q = run_audit(clean, OPTS, only=("clustering",)).probe("clustering")
    assert not q.flagged and q.low < 1.0


def test_clustering_says_nothing_of_one_judge():
    # every vote from one judge (a judge board): no spread between clusters, no ratio 0
    v = simulate(STRENGTH, 2000, judges=1, seed=11)
    p = run_audit(v, OPTS, only=("clustering",)).probe("clustering")
    assert p.skipped and "every vote is from one judge" in p.skipped
    assert "x0.00" not in p.verdict


def test_influence_of_a_heavy_judge():
    def override(k, a, b, j, rng):
        if j == 0:
            return A_WINS if a == 7 else (B_WINS if b == 7 else None)
        return None

    # judge 0 casts a third of the votes and always crowns the weakest model
    v = simulate(
        STRENGTH,
        4000,
        seed=11,
        judge_of=lambda rng, n: np.where(rng.random(n) < 0.33, 0, rng.integers(1, 40, n)),
        override=override,
    )
    p = run_audit(v, OPTS, only=("influence",)).probe("influence")
    assert p.details["judges"][0]["judge"] == "j000" and p.details["judges"][0]["flagged"]
    assert p.details["judges"][0]["model"] == "m7"
    assert [r["judge"] for r in p.details["judges"] if r["flagged"]] == ["j000"]


def _planted():
    """40 honest judges and four planted ones: random, always-A, favours m7, reversed."""

    def override(k, a, b, j, rng):
        if j == 40:
            return A_WINS if rng.random() < 0.5 else B_WINS
        if j == 41:
            return A_WINS
        if j == 42 and 7 in (a, b):
            return A_WINS if a == 7 else B_WINS
        if j == 43:
            return B_WINS if rng.random() < expit(STRENGTH[a] - STRENGTH[b]) else A_WINS
        return None

    # planted judges vote 300 times each: a random voter needs that many to be told apart
    w = np.r_[np.full(40, 60.0), np.full(4, 300.0)]
    return simulate(
        STRENGTH,
        int(w.sum()),
        seed=12,
        judge_of=lambda rng, n: rng.choice(44, size=n, p=w / w.sum()),
        override=override,
    )


def test_anomalous_judges_bt_detector():
    p = run_audit(_planted(), OPTS, only=("anomaly",)).probe("anomaly")
    assert set(p.details["flagged_judges"]) == {"j040", "j041", "j042", "j043"}
    reasons = {r["judge"]: r["reasons"] for r in p.details["judges"]}
    assert "random" in reasons["j040"]
    assert "position" in reasons["j041"]
    assert "favours" in reasons["j042"]
    assert "reversed" in reasons["j043"]
    fav = next(r for r in p.details["judges"] if r["judge"] == "j042")["favours"]
    assert fav["model"] == "m7" and fav["low"] > 1


def test_pair_pvalues_by_brute_force():
    v = simulate(STRENGTH[:4], 300, judges=6, seed=13, tie=0.2)
    board = Board(v, OPTS)
    p = pair_pvalues(board)
    y, _ = v.score()
    for k in range(0, 300, 7):
        same = (np.minimum(v.a, v.b) == min(v.a[k], v.b[k])) & (
            np.maximum(v.a, v.b) == max(v.a[k], v.b[k])
        )
        hist = same & (v.judge != v.judge[k])
        h = np.where(v.a[hist] == v.a[k], y[hist], 1 - y[hist])
        assert p[k] == pytest.approx((1 + np.sum(h >= y[k])) / (hist.sum() + 1))
    pv, _ = fisher_test(board, p)
    assert np.all((pv > 0) & (pv <= 1))
    assert fastchat_score(board, p).shape == (6,)


def test_paper_test_as_published():
    """The paper's one-sided p-values: valid for honest judges, and they catch a judge
    who sees the weakest model first and always votes for it."""

    def judge_of(rng, n):
        return rng.integers(1, 30, size=n)

    v = simulate(STRENGTH, 3000, seed=14, judge_of=judge_of)
    extra = 80  # judge j000: weakest model shown first, always its vote
    a = np.r_[v.a, np.full(extra, 7)]
    b = np.r_[v.b, np.random.default_rng(1).integers(0, 4, extra)]
    o = np.r_[v.outcome, np.full(extra, A_WINS)]
    judges = [v.judges[j] for j in v.judge] + ["j000"] * extra
    w = Votes.build(v.names, a, b, o, judge=judges)
    p = run_audit(w, OPTS, only=("anomaly",)).probe("anomaly")
    rows = {r["judge"]: r for r in p.details["judges"]}
    assert rows["j000"]["fisher_flagged"] and rows["j000"]["flagged"]
    assert sum(r["fisher_flagged"] for r in rows.values()) == 1


def test_coverage_facts():
    assert gini(np.array([5, 5, 5, 5])) == pytest.approx(0.0)
    assert gini(np.array([0, 0, 0, 10])) == pytest.approx(0.75)
    a = [0] * 50 + [1] * 50 + [0] * 30
    b = [1] * 50 + [2] * 50 + [3] * 30
    o = [A_WINS, B_WINS] * 65
    v = Votes.build(["w", "x", "y", "z"], a, b, o)
    p = run_audit(v, OPTS, only=("coverage",)).probe("coverage")
    assert p.details["pairs_never_played"] == 3  # w-y, x-z, y-z
    assert set(p.details["one_opponent"]) == {"y", "z"}
    assert p.details["battles"] == {"w": 80, "x": 100, "y": 50, "z": 30}


def test_probes_needing_judges_skip_without_them():
    v = simulate(STRENGTH, 2000, seed=15)
    report = run_audit(v, OPTS)
    for name in ("clustering", "influence", "anomaly"):
        assert report.probe(name).skipped and "judge" in report.probe(name).skipped
    assert report.flagged_judges == []
    assert not report.probe("position").skipped


def test_same_seed_same_document():
    v = _planted()
    one = run_audit(v, OPTS).to_dict()
    two = run_audit(v, OPTS).to_dict()
    assert one == two


def test_count_estimates_are_integers_in_json():
    """Issue 14: probes counting pairs or judges give JSON integers, not 4.0."""
    import json

    doc = run_audit(_planted(), OPTS, only=("anomaly",)).to_dict()
    ties = run_audit(_tie_board(), OPTS, only=("ties",)).to_dict()
    probes = {p["name"]: p for d in (doc, ties) for p in d["probes"]}
    for name in ("anomaly", "ties"):
        p = probes[name]
        assert p["unit"] in ("judges", "pairs")
        for value in (p["estimate"], p["low"], p["high"], *p["band"]):
            assert type(value) is int, (name, value)
    assert probes["anomaly"]["estimate"] == 4 and probes["ties"]["estimate"] >= 1
    text = json.dumps(doc)
    assert '"estimate": 4,' in text and '"estimate": 4.0' not in text


def test_audit_page_says_what_flagged_a_stored_position_probe():
    """An audit stored before the verdict named its cause reads "No position bias" beside
    the flag; the page opens it with what tripped the flag."""
    from arena.publish.audit_page import audit_page

    judge = {"judge": "j00", "votes": 300, "estimate": 400.0, "low": 250.0, "high": 900.0}
    probe = {
        "name": "position",
        "title": "Position bias (first-shown advantage)",
        "estimate": 3.2,
        "low": -1.3,
        "high": 7.7,
        "unit": "Elo",
        "band": [-10.0, 10.0],
        "flagged": True,
        "verdict": "No position bias beyond +-10 Elo: +3.2 (-1.3 to +7.7). "
        "1 judge(s) show their own position bias beyond the band.",
        "skipped": None,
        "details": {
            "order_changes": [],
            "judges": [{**judge, "flagged": True}, {**judge, "judge": "j01", "flagged": False}],
            "categories": [],
        },
    }
    doc = {
        "snapshot": 1,
        "votes": 30000,
        "judges": 2,
        "options": {"level": 0.95, "alpha": 0.05},
        "probes": [probe],
    }
    page = audit_page(doc, board_label="Overall", nav=(), attribution=None)
    (view,) = page.probes
    assert view.status == "flagged"
    assert view.verdict.startswith("Flagged: pooled OK; judge j00 flagged. No position bias")
    # a verdict that already says it is left as written
    new = {**probe, "verdict": "Flagged: pooled OK; judge j00 flagged. Pooled: +3.2 Elo"}
    (view,) = audit_page({**doc, "probes": [new]}, board_label="O", nav=(), attribution=None).probes
    assert view.verdict == "Flagged: pooled OK; judge j00 flagged. Pooled: +3.2 Elo"


def test_organisation_favouring_judge_needs_the_annotation():
    """Judge j040 boosts both models of one organisation (m5, m6) against any other model:
    flagged as favouring the organisation when the annotation is given."""

    def override(k, a, b, j, rng):
        org = {5, 6}
        if j == 40 and (a in org) != (b in org):
            return A_WINS if a in org else B_WINS
        return None

    w = np.r_[np.full(40, 60.0), 150.0]
    v = simulate(
        STRENGTH,
        int(w.sum()),
        seed=21,
        judge_of=lambda rng, n: rng.choice(41, size=n, p=w / w.sum()),
        override=override,
    )
    orgs = {"m5": "Org", "m6": "Org", "m0": "Solo"}
    p = run_audit(v, OPTS, only=("anomaly",), organisations=orgs).probe("anomaly")
    rows = {r["judge"]: r for r in p.details["judges"]}
    assert "favours organisation" in rows["j040"]["reasons"]
    fav = rows["j040"]["favours_organisation"]
    assert fav["organisation"] == "Org" and fav["low"] > 1  # only organisations of 2+ models
    assert p.details["flagged_judges"] == ["j040"]  # no honest judge flagged
    assert p.details["family"]["judge_organisation_groups"] > 0
    plain = run_audit(v, OPTS, only=("anomaly",)).probe("anomaly")
    assert all(r["favours_organisation"] is None for r in plain.details["judges"])


def test_flags_control_the_false_discovery_rate_on_honest_judges():
    """60 honest judges, no planted one: Benjamini-Hochberg at 0.05 flags none here."""
    v = simulate(STRENGTH, 6000, judges=60, seed=22)
    p = run_audit(v, OPTS, only=("anomaly",)).probe("anomaly")
    assert p.details["flagged_judges"] == [] and p.details["fdr_cut"] < 0
