"""Model aliases (``arena models alias``): the rules, the CLI, and agreement matched through them.

On SQLite and PostgreSQL. The agreement check writes the judge's votes with
one model spelled differently; with the alias the per-vote agreement and the
shared models must be exactly those of the same votes under one spelling.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from sqlalchemy import insert

import arena
from arena.audit.agreement import _by_key, board_agreement
from arena.core.errors import ArenaError, OptionError
from arena.core.resources import demo_aliases
from arena.db.models import Model
from arena.store.aliases import Alias, AliasError, define_aliases, list_aliases, read_aliases
from tests.helpers.two_sources import HUMAN, JUDGE, write_votes
from tests.helpers.two_sources import outcome as _outcome

NAMES = ["alpha", "alpha-2024", "beta", "beta-v1", "gamma", "<b>x</b>"]


@pytest.fixture
def models(engine):
    with engine.begin() as conn:
        conn.execute(insert(Model), [{"name": n, "hidden": False} for n in NAMES])
    return engine


def stored(engine):
    with engine.connect() as conn:
        return [(a.alias, a.canonical, a.reason) for a in list_aliases(conn)]


def define(engine, *items):
    with engine.begin() as conn:
        return define_aliases(conn, [Alias(*i) for i in items])


def test_rules_are_checked_and_a_batch_is_all_or_nothing(models):
    assert define(models, ("alpha-2024", "alpha", "same release"), ("beta-v1", "beta")) == 2
    assert stored(models) == [("alpha-2024", "alpha", "same release"), ("beta-v1", "beta", "")]
    # the same alias again: nothing changes; without a reason the stored one is kept
    assert define(models, ("alpha-2024", "alpha")) == 0
    assert stored(models)[0] == ("alpha-2024", "alpha", "same release")
    cases = [
        ((("gamma", "gamma"),), "names itself"),
        ((("gamma", "alpha-2024"),), "'alpha-2024' is itself an alias of 'alpha'"),
        ((("alpha", "gamma"),), "'alpha' is the canonical model of 'alpha-2024'"),
        ((("gamma", "alphx"),), "unknown model 'alphx' (did you mean alpha"),
        ((("gamma", "beta"), ("gamma", "alpha")), "two canonical models"),
        # a good alias beside a bad one: neither is stored
        ((("gamma", "beta"), ("nope", "beta")), "unknown model 'nope'"),
    ]
    for items, message in cases:
        with pytest.raises(AliasError, match=message.replace("(", r"\(")):
            define(models, *items)
    assert [a for a, _, _ in stored(models)] == ["alpha-2024", "beta-v1"]
    # redefining an alias replaces its canonical model
    assert define(models, ("beta-v1", "gamma", "renamed")) == 1
    assert ("beta-v1", "gamma", "renamed") in stored(models)


def test_csv_file_comments_and_line_numbers(tmp_path):
    path = tmp_path / "aliases.csv"
    path.write_text(
        "# a comment\nalias,canonical,reason\n\nx,y,why\n# more\n,z,no alias\n", encoding="utf-8"
    )
    with pytest.raises(AliasError, match=r"aliases.csv line 6: alias is empty"):
        read_aliases(path)
    path.write_text("alias,canonical\nx,y\n", encoding="utf-8")
    assert read_aliases(path) == [Alias("x", "y", "")]
    path.write_text("name,canonical\nx,y\n", encoding="utf-8")
    with pytest.raises(AliasError, match="missing alias"):
        read_aliases(path)
    path.write_text("alias,canonical\nx,y,z,w\n", encoding="utf-8")
    with pytest.raises(AliasError, match="line 2: 4 cells for 2 columns"):
        read_aliases(path)


def test_the_bundled_file_reads_and_links_no_variant():
    items = read_aliases(demo_aliases())
    assert len(items) >= 8 and all(a.reason for a in items)
    aliases = {a.alias for a in items}
    canon = {a.canonical for a in items}
    assert not aliases & canon  # no chains
    # reasoning efforts and thinking variants are other models, never aliases
    assert not any(n.startswith(("o3-", "o4-mini-", "o1-")) for n in aliases)
    assert not any("thinking" in n for n in aliases | canon)


def test_cli_alias_list_show_and_remove(models, run_cli, tmp_path):
    out = run_cli("models", "alias", "alpha-2024", "alpha", "--reason", "one release").output
    assert "stored 1 alias" in out
    path = tmp_path / "a.csv"
    path.write_text("alias,canonical,reason\nbeta-v1,beta,<i>same</i>\n", encoding="utf-8")
    assert "stored 1 alias" in run_cli("models", "alias", "--from", str(path)).output
    doc = json.loads(run_cli("models", "aliases", "--format", "json").output)
    assert doc == {
        "aliases": [
            {"alias": "alpha-2024", "canonical": "alpha", "reason": "one release"},
            {"alias": "beta-v1", "canonical": "beta", "reason": "<i>same</i>"},
        ]
    }
    table = run_cli("models", "aliases").output
    assert table.splitlines()[0].split() == ["alias", "canonical", "reason"]
    listing = json.loads(run_cli("models", "--format", "json").output)["models"]
    same = {m["model"]: m["same_as"] for m in listing}
    assert same["alpha-2024"] == "alpha" and same["alpha"] is None
    assert "same as" in run_cli("models").output.splitlines()[0]
    # errors: one line, exit 1, nothing changed
    res = run_cli("models", "alias", "gamma", "alpha-2024", ok=False)
    assert res.exit_code == 1 and "no chains" in res.output and "Traceback" not in res.output
    res = run_cli("models", "unalias", "nope", ok=False)
    assert res.exit_code == 1 and "no alias 'nope'" in res.output
    res = run_cli("models", "alias", "gamma", ok=False)
    assert res.exit_code == 2 and "give ALIAS and CANONICAL" in res.output
    assert "removed 1 alias" in run_cli("models", "unalias", "beta-v1").output
    assert [a for a, _, _ in stored(models)] == ["alpha-2024"]


def test_front_door(models, db_url, tmp_path):
    with arena.open(db_url) as db:
        assert db.alias("gamma", "beta", reason="why").to_dict() == {"changed": 1}
        assert db.aliases().to_dict()["aliases"][0]["canonical"] == "beta"
        with pytest.raises(OptionError) as err:
            db.alias("gamma", "beta", from_file=tmp_path / "x.csv")
        assert err.value.parameter == "alias"
        with pytest.raises(ArenaError, match="unknown model"):
            db.alias("gamma", "zzz")
        assert db.unalias("gamma").changed == 1 and db.aliases().aliases == ()


@pytest.fixture
def spelled_apart(run_cli, tmp_path):
    """The judge's votes with m2 spelled 'judge-m2'; both sources rebuilt."""
    rng = np.random.default_rng(5)
    human = write_votes(tmp_path / "human.csv", rng, HUMAN, n=4000, questions=30, bias=0.0)
    judge = write_votes(tmp_path / "judge.csv", rng, JUDGE, n=4000, questions=30, bias=0.2)
    text = (tmp_path / "judge.csv").read_text(encoding="utf-8")
    (tmp_path / "judge.csv").write_text(text.replace(",m2,", ",judge-m2,"), encoding="utf-8")
    run_cli("ingest", str(tmp_path / "human.csv"), "--source", "human", "-q")
    run_cli("ingest", str(tmp_path / "judge.csv"), "--source", "judge", "-q")
    run_cli("rebuild", "--source", "human", "--rounds", "100", "-q")
    run_cli("rebuild", "--source", "judge", "--rounds", "100", "-q")
    return human, judge


def test_agreement_matches_through_an_alias(spelled_apart, engine, run_cli):
    human, judge = spelled_apart
    with engine.connect() as conn:
        apart = board_agreement(conn, reference="source=human", candidate="source=judge")
    assert "m2" not in apart.models and apart.aliased == []
    assert {(d["model"], d["reason"]) for d in apart.left_out} == {
        ("m2", "only on the reference board"),
        ("judge-m2", "only on the candidate board"),
    }
    run_cli("models", "alias", "judge-m2", "m2", "--reason", "test spelling")
    with engine.connect() as conn:
        ag = board_agreement(conn, reference="source=human", candidate="source=judge")
    assert sorted(ag.models) == [f"m{k}" for k in range(8)] and ag.left_out == []
    assert ag.aliased == [{"reference": "m2", "candidate": "judge-m2"}]
    # per-vote agreement: every pair of votes on one question and (canonical) model pair
    ref_votes: dict = {}
    for _, a, b, w, q in human:
        ref_votes.setdefault((q, min(a, b), max(a, b)), []).append(_outcome(w, a, b))
    table = np.zeros((3, 3))
    for _, a, b, w, q in judge:  # the rows as generated: m2 under its canonical name
        for v in ref_votes.get((q, min(a, b), max(a, b)), []):
            table[v, _outcome(w, a, b)] += 1
    assert ag.votes is not None and ag.votes.vote_pairs == table.sum() > 0
    assert ag.votes.with_ties == pytest.approx(np.trace(table) / table.sum())
    # the pair verdicts read the candidate's samples of judge-m2 for m2
    pair = next(p for p in ag.pairs if {p.model_a, p.model_b} == {"m2", "m3"})
    assert pair.model_a == "m2" and pair.p_candidate < 0.5  # the judge swaps m2 and m3
    out = run_cli("agreement", "--reference", "source=human", "--candidate", "source=judge").output
    assert "1 of them matched by alias (reference = candidate): m2 = judge-m2" in out


def test_a_model_and_its_alias_on_one_board_are_left_out_not_merged():
    rows = [SimpleNamespace(model=n) for n in ("m1", "judge-m1", "m2")]
    ambiguous: dict = {}
    by = _by_key(rows, lambda m: {"judge-m1": "m1"}.get(m, m), ambiguous)
    assert set(by) == {"m2"} and ambiguous == {"m1": ["judge-m1", "m1"]}
