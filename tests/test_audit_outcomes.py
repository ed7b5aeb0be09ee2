"""Three outcomes per judge (issue 40): flagged, consistent with the board, too few votes to tell."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from arena.audit.anomaly import effect_text, needed_hint, outcome_summary
from arena.audit.judge_power import OUTCOMES, Material
from arena.audit.report import run_audit
from arena.core.outcomes import A_WINS, B_WINS
from tests.helpers.audit_votes import OPTS, STRENGTH, simulate


def _judges(seed: int, *, random_votes=(400, 8), honest_votes=400):
    """40 honest judges of 60 votes, random voters of ``random_votes`` and one honest heavy judge.

    Judges j040, j041 vote at random; j042 votes like the board.
    """
    n_random = len(random_votes)

    def override(k, a, b, j, rng):
        if 40 <= j < 40 + n_random:
            return A_WINS if rng.random() < 0.5 else B_WINS
        return None

    w = np.r_[np.full(40, 60.0), random_votes, honest_votes]
    return simulate(
        STRENGTH,
        int(w.sum()),
        seed=seed,
        judge_of=lambda rng, n: rng.choice(w.size, size=n, p=w / w.sum()),
        override=override,
    )


def _rows(votes, **kw):
    p = run_audit(votes, OPTS, only=("anomaly",), **kw).probe("anomaly")
    return p, {r["judge"]: r for r in p.details["judges"]}


def test_random_voter_flagged_few_votes_too_few_honest_heavy_judge_consistent():
    p, rows = _rows(_judges(0))
    assert rows["j040"]["outcome"] == "flagged" and rows["j040"]["votes"] > 350
    assert "random" in rows["j040"]["reasons"]
    assert "agreement with the board" in rows["j040"]["effect"]
    assert rows["j041"]["votes"] < 15 and rows["j041"]["outcome"] == "too few votes"
    assert rows["j041"]["power"] < 0.8 and rows["j041"]["votes_needed"] > 100
    assert rows["j042"]["votes"] > 350 and rows["j042"]["outcome"] == "consistent"
    assert rows["j042"]["power"] >= 0.8 >= rows["j041"]["power"]
    # honest judges of 60 votes cannot be checked here: they would need a few hundred
    honest = [rows[f"j{k:03d}"] for k in range(40)]
    assert {r["outcome"] for r in honest} == {"too few votes"}
    assert all(r["votes_needed"] > r["votes"] for r in honest)
    assert p.details["outcomes"] == {"flagged": 1, "consistent": 1, "too few votes": 41}


def test_every_judge_has_one_of_three_outcomes_and_consistent_means_power():
    for seed in (1, 2):
        p, rows = _rows(_judges(seed, random_votes=(400, 8, 150)))
        for r in rows.values():
            assert r["outcome"] in OUTCOMES
            assert (r["outcome"] == "flagged") == r["flagged"]
            if r["outcome"] == "consistent":
                assert r["power"] >= 0.8 and r["votes_needed"] <= r["votes"]
            if r["outcome"] == "too few votes":
                assert r["power"] < 0.8
            assert set(r["power_by_departure"]) == {"temperature", "position", "favours"}
            assert r["power"] == min(r["power_by_departure"].values())
        # a random voter is never reported consistent
        assert all(rows[j]["outcome"] != "consistent" for j in ("j040", "j041", "j042"))


def test_power_grows_with_votes_and_votes_needed_reach_the_target():
    """Judges alike but for their vote counts: more votes, more power; the needed count is
    where the (normal-approximation) power crosses 80%."""
    _, rows = _rows(_judges(3, random_votes=(), honest_votes=400))
    heavy = rows["j040"]
    light = sorted((r for j, r in rows.items() if j != "j040"), key=lambda r: r["votes"])
    assert light[0]["power"] <= light[-1]["power"] < heavy["power"]
    needs = [r["votes_needed"] for r in rows.values()]
    assert max(needs) / min(needs) < 1.5  # a property of the board, not of the judge's count


def test_organisation_departure_counts_when_annotated():
    _, rows = _rows(_judges(4), organisations={"m5": "Org", "m6": "Org"})
    assert set(rows["j042"]["power_by_departure"]) == {
        "temperature",
        "position",
        "favours",
        "favours_organisation",
    }


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_power_is_not_overstated_for_a_judge_at_the_material_departure():
    """A judge favouring m3 by exactly the material shift, with the votes the audit says it
    needs, is flagged at least about 80% of the time (the approximation is a lower bound)."""
    shift = Material().shift
    hits = []
    for seed in range(8):
        probe = _judges(10 + seed, random_votes=(), honest_votes=60)
        need = _rows(probe)[1]["j040"]["votes_needed"]

        def override(k, a, b, j, rng, need=need):
            if j == 40 and 3 in (a, b):
                x = 1 if a == 3 else -1
                p = expit(x * (STRENGTH[a] - STRENGTH[b]) + shift)
                won = rng.random() < p
                return A_WINS if won == (x == 1) else B_WINS
            return None

        w = np.r_[np.full(40, 60.0), need]
        v = simulate(
            STRENGTH,
            int(w.sum()),
            seed=100 + seed,
            judge_of=lambda rng, n, w=w: rng.choice(w.size, size=n, p=w / w.sum()),
            override=override,
        )
        hits.append(_rows(v)[1]["j040"]["outcome"] == "flagged")
    assert np.mean(hits) >= 0.75


def test_json_carries_outcome_power_and_votes_needed():
    report = run_audit(_judges(0), OPTS, only=("anomaly",))
    doc = report.to_dict()
    assert doc["judge_outcomes"] == {"flagged": 1, "consistent": 1, "too few votes": 41}
    details = doc["probes"][0]["details"]
    row = details["judges"][0]
    assert {"outcome", "power", "votes_needed", "least_seen", "effect"} <= set(row)
    assert details["material"]["win_rate_points"] == 0.4
    assert details["power_target"] == 0.8
    assert details["votes_needed_unchecked"]["judges"] == 41
    assert "too few votes to tell" in doc["probes"][0]["verdict"]


def test_summary_words():
    counts = {"flagged": 2, "consistent": 30, "too few votes": 9}
    assert outcome_summary(counts) == (
        "41 judges checked: 2 flagged, 30 consistent with the board, 9 too few votes to tell"
    )
    assert needed_hint([120, 300, 180], 0.8) == (
        "The 3 judges with too few votes would need 120 to 300 (median 180) votes each "
        "for 80% power against a material departure."
    )
    assert needed_hint([None], 0.8).startswith("The judge with too few votes cannot be checked")
    assert needed_hint([120, 300, 180], 0.8, hardest="favours", coin=[30, 40, 35]) == (
        "The 3 judges with too few votes would need 120 to 300 (median 180) votes each "
        "for 80% power against a material departure, most for favouring one model; "
        "against a coin alone, 35 (median)."
    )
    row = {
        "reasons": ["position"],
        "position": [2.0, 1.5, float("inf")],
    }
    assert effect_text(row) == (
        "first-shown answer favoured by +38 points of win rate (+32 to +50) (in an even match)"
    )


def test_audit_page_shows_the_three_outcomes_per_judge():
    from arena.publish.audit_page import audit_page

    doc = {"snapshot": 3, **run_audit(_judges(0), OPTS, only=("anomaly",)).to_dict()}
    page = audit_page(doc, board_label="Overall", nav=(), attribution=None)
    out = page.outcomes
    assert page.summary.endswith("; " + out.summary) and "43 judges checked" in page.description
    assert out.summary.startswith("43 judges checked: 1 flagged, 1 consistent with the board")
    assert "40 points of win rate" in out.material and "votes each for 80% power" in out.hint
    assert ", most for favouring one model; against a coin alone, " in out.hint
    words = [j.outcome_word for j in out.judges]
    assert words[0] == "Flagged" and words[-1] == "Consistent with the board"
    assert set(words) == {"Flagged", "Consistent with the board", "Too few votes to tell"}
    by = {j.judge: j for j in out.judges}
    assert by["j040"].detail.startswith("agreement with the board")
    assert by["j042"].detail.startswith("power ") and "material departure" in by["j042"].detail
    assert by["j041"].detail.startswith("needs ") and "% now)" in by["j041"].detail
    # an audit stored before issue 40: the flagged judges only, as before
    old = {**doc, "probes": [dict(doc["probes"][0])]}
    details = {**old["probes"][0]["details"]}
    details["judges"] = [
        {k: v for k, v in r.items() if k not in ("outcome", "power", "votes_needed")}
        for r in details["judges"]
    ]
    del details["summary"]
    old["probes"][0]["details"] = details
    before = audit_page(old, board_label="Overall", nav=(), attribution=None)
    assert before.outcomes is None and [j.judge for j in before.flagged_judges] == ["j040"]


def test_material_and_power_are_checked():
    import pytest

    from arena.audit.setup import AuditOptions
    from arena.core.errors import ArenaError

    with pytest.raises(ArenaError, match="power must be between 0 and 1"):
        AuditOptions(power=1.0)
    with pytest.raises(ArenaError, match="material must be between 0 and 0.5"):
        AuditOptions(material=0.6)
