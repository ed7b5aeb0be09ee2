"""Derived categories (a rule over tags), category names by label, --all-sources: both engines."""

from __future__ import annotations

import json

import pytest

from arena.store.derived import (
    HARD_PROMPTS,
    DerivedError,
    Rule,
    derive_names,
    derive_positions,
    make_rule,
)

# four tags; the rule "at least 2 of t1,t2,t3" picks battles 1, 2 and 4
BATTLES = (
    "id,model_a,model_b,winner,t1,t2,t3,other\n"
    "b1,a,b,model_a,True,True,False,False\n"
    "b2,b,c,model_b,True,True,True,False\n"
    "b3,a,c,tie,True,False,False,True\n"
    "b4,c,a,model_a,False,True,True,False\n"
    "b5,a,b,model_b,False,False,False,True\n"
)
MORE_CSV = (
    "id,model_a,model_b,winner,t1,t2,t3\n"
    "c1,a,b,model_a,True,False,True\n"  # 2 of 3: in
    "c2,b,c,model_a,False,False,True\n"  # 1 of 3: out
)
MORE_JSONL = (
    '{"id": "j1", "model_a": "a", "model_b": "c", "winner": "model_b", "category": ["t1", "t2"]}\n'
    '{"id": "j2", "model_a": "b", "model_b": "c", "winner": "tie", "category": ["t3"]}\n'
)


def _categories(run_cli):
    doc = json.loads(run_cli("categories", "--format", "json").output)
    return {r["key"]: r for r in doc["categories"]}


@pytest.fixture
def tagged(run_cli, tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text(BATTLES)
    run_cli("ingest", str(path), "-q")
    return run_cli


def test_rule_in_words_and_checks():
    rule = make_rule("two", [" t3", "t1", "t2", "t1"], 2, "  from   here ")
    assert rule == Rule("two", ("t1", "t2", "t3"), 2, "from here")
    assert rule.describe() == "at least 2 of the 3 tags t1, t2, t3"
    assert make_rule("all", ["x", "y"], None).describe() == "all 2 of the tags x, y"
    assert make_rule("any", ["x", "y"], 1).describe() == "any of the 2 tags x, y"
    for bad in ((["x"], 2), ([], 1), ([" "], None), (["x", "y"], 0)):
        with pytest.raises(DerivedError):
            make_rule("k", *bad)
    with pytest.raises(DerivedError, match="itself"):
        make_rule("x", ["x", "y"], 1)
    assert HARD_PROMPTS.at_least == 6 and len(HARD_PROMPTS.tags) == 7


def test_row_and_column_forms_agree():
    rule = make_rule("two", ["t1", "t2", "t3"], 2)
    rows = [("t1", "t2"), ("t1", "t2", "t3"), ("t1", "x"), ("t2", "t3"), ()]
    by_row = [i for i, tags in enumerate(rows) if derive_names([rule], tags) == ["two"]]
    columns = [(t, [i for i, tags in enumerate(rows) if t in tags]) for t in ("t1", "t2", "t3")]
    assert derive_positions([rule], columns) == [("two", by_row)] == [("two", [0, 1, 3])]
    # data that tags the key itself keeps its own tag (never linked twice)
    assert derive_names([rule], ("two", "t1", "t2")) == []
    assert derive_positions([rule], [*columns, ("two", [0])]) == []


def test_define_links_stored_and_new_battles(tagged, tmp_path):
    out = tagged("categories", "derive", "two", "--tags", "t1,t2,t3", "--at-least", "2").output
    assert "category two defined: at least 2 of the 3 tags t1, t2, t3; 3 battles" in out
    rows = _categories(tagged)
    assert rows["two"]["battles"] == 3 and rows["two"]["rule"].startswith("at least 2 of")
    assert rows["t1"]["rule"] == ""
    # new battles are linked by the ingest that stores them: the CSV column path ...
    (tmp_path / "more.csv").write_text(MORE_CSV)
    tagged("ingest", str(tmp_path / "more.csv"), "-q")
    # ... and the per-row path (JSON lines with a category list)
    (tmp_path / "more.jsonl").write_text(MORE_JSONL)
    tagged("ingest", str(tmp_path / "more.jsonl"), "-q")
    assert _categories(tagged)["two"]["battles"] == 5  # + c1 and j1
    # the count table agrees with the battles for the derived board
    for read in ("counts", "battles"):
        tagged("rebuild", "--category", "two", "--rounds", "20", "--read", read, "-q")
    a, b = (
        json.loads(tagged("leaderboard", "--snapshot", str(i), "--format", "json").output)
        for i in (1, 2)
    )
    assert a["rows"] == b["rows"] and sum(r["battles"] for r in a["rows"]) == 2 * 5
    # redefining replaces the rule and relinks; --remove forgets it
    out = tagged("categories", "derive", "two", "--tags", "t1,t2,t3").output
    assert "replaced: all 3 of the tags" in out and "; 1 battles" in out
    tagged("categories", "derive", "two", "--remove")
    assert "two" not in {k for k, r in _categories(tagged).items() if r["battles"]}


def test_derive_errors_are_one_line(tagged):
    bad = tagged("categories", "derive", "t1", "--tags", "t2,t3", ok=False)
    assert bad.exit_code != 0 and "category of 3 ingested battles" in bad.output
    bad = tagged("categories", "derive", "k", "--tags", "t1", "--at-least", "3", ok=False)
    assert "between 1 and 1" in bad.output and "Traceback" not in bad.output
    bad = tagged("categories", "derive", "nope", "--remove", ok=False)
    assert "unknown derived category 'nope'" in bad.output


def test_category_by_label_or_key_any_case(tagged):
    tagged("categories", "label", "t1", "First tag")
    tagged("rebuild", "--all-categories", "--rounds", "20", "-q")
    for name in ("t1", "T1", "First tag", "first TAG"):
        doc = json.loads(tagged("leaderboard", "--category", name, "--format", "json").output)
        assert doc["snapshot"]["board"] == "category:t1", name
    bad = tagged("leaderboard", "--category", "First tog", ok=False)
    assert "did you mean t1 (First tag)?" in bad.output
    bad = tagged("rebuild", "--category", "othr", ok=False)
    assert "--category: unknown category 'othr'; did you mean other?" in bad.output


def test_all_sources_and_the_mixing_warning(run_cli, tmp_path):
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "id,model_a,model_b,winner\n"
        + "".join(f"v{k},m{k % 3},m{(k + 1) % 3},model_a\n" for k in range(30))
        + "".join(f"w{k},m{(k + 1) % 3},m{k % 3},model_a\n" for k in range(20))
    )
    verdicts = tmp_path / "judge.jsonl"
    verdicts.write_text(
        "".join(
            json.dumps(
                {
                    "model_a": f"m{k % 3}",
                    "model_b": f"m{(k + 2) % 3}",
                    "verdict": "A>B" if k % 4 else "B>A",
                    "judge": "gpt",
                }
            )
            + "\n"
            for k in range(40)
        )
    )
    run_cli("ingest", str(votes), "--source", "humans", "-q")
    run_cli("ingest", str(verdicts), "--source", "judges", "-q")
    # the fix a missing board needs, spelled out
    bad = run_cli("leaderboard", "--source", "judges", ok=False)
    assert "run `arena rebuild --source judges`" in bad.output
    out = run_cli("rebuild", "--all-sources", "--rounds", "20")
    boards = [
        line.split(": ")[1] for line in out.output.splitlines() if line.startswith("snapshot ")
    ]
    assert boards == ["overall", "source:humans", "source:judges"]
    assert (
        "pools sources of different kinds: humans (50 battles, no judge named), "
        "judges (40 battles, judge verdicts)" in out.output
    )
    # a style-controlled board cannot come from battles without style metadata: no
    # "run arena rebuild" that would not help
    bad = run_cli("leaderboard", "--source", "humans", "--style-control", ok=False)
    assert "carry no style metadata" in bad.output and "run `arena rebuild" not in bad.output
    bad = run_cli("rebuild", "--all-sources", "--source", "humans", ok=False)
    assert "give it without --source" in bad.output
