"""`arena categories`: keys, labels (default, stored, spelled) and battle counts, both engines."""

from __future__ import annotations

import csv
import io
import json

import pytest

from arena.store.categories import DEFAULT_LABELS, label_for, spelled_label

BATTLES = (
    "model_a,model_b,winner,if,math,criteria.domain_knowledge,my_topic\n"
    "a,b,model_a,True,False,True,False\n"
    "b,c,model_b,True,True,False,False\n"
    "a,c,tie,True,False,False,True\n"
    "c,a,model_a,False,False,True,False\n"
)


@pytest.fixture
def tagged(run_cli, tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text(BATTLES)
    run_cli("ingest", str(path), "-q")
    return run_cli


def _rows(run_cli, *args):
    return {
        r["key"]: r
        for r in json.loads(run_cli("categories", "--format", "json", *args).output)["categories"]
    }


def test_lists_keys_labels_and_counts(tagged):
    rows = _rows(tagged)
    # counts are the battles each tag column marks true in BATTLES
    expect = {"if": 3, "criteria.domain_knowledge": 2, "math": 1, "my_topic": 1}
    assert {k: r["battles"] for k, r in rows.items()} == expect
    assert all(isinstance(r["battles"], int) for r in rows.values())
    assert rows["if"]["label"] == "Instruction following" and rows["if"]["source"] == "default"
    assert rows["criteria.domain_knowledge"]["label"] == "Criterion: domain knowledge"
    assert rows["my_topic"] == {
        "key": "my_topic",
        "label": "My topic",
        "source": "key",
        "battles": 1,
        "rule": "",
    }
    # most battles first
    keys = json.loads(tagged("categories", "--format", "json").output)["categories"]
    assert keys[0]["key"] == "if"


def test_label_override_is_stored_and_reset(tagged):
    out = tagged("categories", "label", "if", "Follows instructions").output
    assert "Follows instructions" in out
    rows = _rows(tagged)
    assert rows["if"]["label"] == "Follows instructions" and rows["if"]["source"] == "set"
    table = tagged("categories").output
    assert "Follows instructions" in table
    got = list(csv.DictReader(io.StringIO(tagged("categories", "--format", "csv").output)))
    assert {r["key"]: r["label"] for r in got}["if"] == "Follows instructions"
    tagged("categories", "label", "if", "")
    assert _rows(tagged)["if"]["source"] == "default"


def test_label_errors_are_one_line(tagged):
    bad = tagged("categories", "label", "iff", "X", ok=False)
    assert bad.exit_code == 1 and "Traceback" not in bad.output
    assert "unknown category 'iff'" in bad.output and "if" in bad.output
    spaces = tagged("categories", "label", "math", "   ", ok=False)
    assert spaces.exit_code == 1 and "only spaces" in spaces.output
    long = tagged("categories", "label", "math", "x" * 300, ok=False)
    assert long.exit_code == 1 and "longer than 255" in long.output
    assert _rows(tagged)["math"]["source"] == "default"


def test_label_rules():
    assert spelled_label("hard_english.v2") == "Hard english v2"
    assert label_for("if") == "Instruction following"
    assert label_for("IF") == "Instruction following"
    assert label_for("if", {"if": "IF"}) == "IF"
    # every default label is distinct text, not the key itself
    assert all(v != k for k, v in DEFAULT_LABELS.items())


def test_bundled_keys_all_have_default_labels():
    import gzip

    from arena.core.resources import demo_data

    with gzip.open(demo_data(), "rt") as fh:
        header = next(csv.reader(fh))
    tags = [c for c in header[4:] if not c.endswith(".score")]
    assert tags and all(t in DEFAULT_LABELS for t in tags), tags
