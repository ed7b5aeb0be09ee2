"""The sampling ledger (issue 43 part 3): battles, shares and pairs served, on both engines.

Every count is recomputed here from the file that was ingested (battles per
model, per organisation, per source) and from the pairs the picker drew; the
served counts go through the server's counter and its upsert, twice, so that
the increment path of each engine is what is checked.
"""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest
from sqlalchemy import select

import arena
from arena.db.models import IngestBatch, ServedPair
from arena.serve.ledger import ServedCounter
from arena.serve.pairs import PairPicker
from arena.store.sampling import UNKNOWN_ORGANISATION, sampling_ledger

MODELS = ["alpha", "beta", "gamma-<i>x</i>", "delta"]
ORGS = {"alpha": "Acme", "beta": "Acme", "gamma-<i>x</i>": "Globex"}  # delta: none


def _write(path, rows):
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "model_a", "model_b", "winner"])
        w.writerows(rows)


@pytest.fixture
def store(run_cli, tmp_path, engine):
    human = [(f"h{k}", MODELS[k % 4], MODELS[(k + 1 + k // 4) % 4], "model_a") for k in range(240)]
    human = [r for r in human if r[1] != r[2]]
    judge = [(f"j{k}", "alpha", MODELS[1 + k % 3], "model_b") for k in range(90)]
    _write(tmp_path / "human.csv", human)
    _write(tmp_path / "judge.csv", judge)
    run_cli("ingest", str(tmp_path / "human.csv"), "--source", "votes", "-q")
    run_cli("ingest", str(tmp_path / "judge.csv"), "--source", "judge", "-q")
    for model, org in ORGS.items():
        run_cli("models", "annotate", model, "--organisation", org)
    run_cli("models", "annotate", "delta", "--hide")
    run_cli("rebuild", "--source", "votes", "--rounds", "20", "-q")
    return {"votes": human, "judge": judge}


def _expected(rows):
    per = Counter()
    for _, a, b, _ in rows:
        per[a] += 1
        per[b] += 1
    return per


def test_battles_and_shares_equal_a_recount_of_the_files(store, engine):
    with engine.connect() as conn:
        whole = sampling_ledger(conn)
        votes = sampling_ledger(conn, source="votes")
        batches = dict(conn.execute(select(IngestBatch.source, IngestBatch.started_at)).all())
    for ledger, rows in ((whole, store["votes"] + store["judge"]), (votes, store["votes"])):
        per = _expected(rows)
        assert ledger.battles == len(rows)
        assert {r.name: r.battles for r in ledger.models} == dict(per)
        assert sum(r.share for r in ledger.models) == pytest.approx(1.0)
        for r in ledger.models:
            assert r.share == pytest.approx(per[r.name] / (2 * len(rows)))
        orgs = Counter()
        for m, n in per.items():
            orgs[ORGS.get(m, UNKNOWN_ORGANISATION)] += n
        assert {r.name: r.battles for r in ledger.organisations} == dict(orgs)
        assert {r.name: r.models for r in ledger.organisations} == {"Acme": 2, "Globex": 1, UNKNOWN_ORGANISATION: 1}  # fmt: skip
        assert [r.name for r in ledger.models if r.hidden is True] == ["delta"]
        assert next(r for r in ledger.organisations if r.name == UNKNOWN_ORGANISATION).hidden == 1
    # first and latest battle: the ingest times of the batches that hold them
    alpha = next(r for r in whole.models if r.name == "alpha")
    assert (alpha.first_battle, alpha.last_battle) == (batches["votes"], batches["judge"])
    alpha_votes = next(r for r in votes.models if r.name == "alpha")
    assert alpha_votes.first_battle == alpha_votes.last_battle == batches["votes"]
    assert whole.served == 0 and whole.drawn_by == {"plan": 0, "uniform": 0, "new": 0}


def test_pairs_served_are_counted_exactly_across_flushes(store, engine):
    counter = ServedCounter(engine)
    picker = PairPicker(engine, seed=3, served=counter)
    drawn = Counter()
    for _flush in range(2):  # the second flush adds to the rows the first wrote
        for _ in range(150):
            a, b = picker.pick(source="votes")
            drawn[a] += 1
            drawn[b] += 1
        assert counter.pending() == 150
        assert counter.flush() == 150 and counter.pending() == 0
    with engine.connect() as conn:
        ledger = sampling_ledger(conn)
    assert {r.name: r.served for r in ledger.models if r.served} == dict(drawn)
    assert ledger.served == 300 == sum(ledger.drawn_by.values())
    assert ledger.drawn_by["uniform"] > 0 and ledger.drawn_by["plan"] > 0
    assert ledger.first_served == ledger.last_served is not None
    with engine.connect() as conn:  # counted under the board's key text
        assert conn.execute(select(ServedPair.board).distinct()).scalars().all() == ["source:votes"]


def test_cli_front_door_and_page(store, run_cli, db_url, tmp_path):
    doc = json.loads(run_cli("sampling", "--format", "json").output)
    with arena.open(db_url) as db:
        assert db.sampling().to_dict() == doc
    assert doc["sources"] == ["judge", "votes"]
    assert doc["battles"] == len(store["votes"]) + len(store["judge"])
    table = run_cli("sampling", "--source", "votes").output
    assert table.splitlines()[0] == f"{len(store['votes'])} battles of source votes"
    assert "no pairs served by arena serve yet" in table
    orgs = run_cli("sampling", "--by", "organisation", "--format", "csv").output
    assert orgs.splitlines()[0].startswith("name,models,battles,share,served")
    bad = run_cli("sampling", "--source", "nope", ok=False)
    assert (
        bad.exit_code == 1 and "'nope' is no source" in bad.output and "Traceback" not in bad.output
    )
    run_cli("rebuild", "--rounds", "20", "-q")  # an overall board to publish
    run_cli("publish", str(tmp_path / "site"), "-q")
    page = (tmp_path / "site" / "sampling.html").read_text(encoding="utf-8")
    assert (
        "Who got how many battles" in page and "Source: votes" in page and "Source: judge" in page
    )
    assert "gamma-&lt;i&gt;x&lt;/i&gt;" in page and "<i>x</i>" not in page
    assert page.index("Source: votes") < page.index("Source: judge")  # most battles first
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="sampling.html"' in index
