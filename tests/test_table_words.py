"""The command line's tables say the site's words; JSON and CSV keep the machine tokens."""

from __future__ import annotations

import csv
import io
import json

from arena.core.words import FLAG_WORDS, flag_word
from tests.helpers.files import synth_battles


def test_leaderboard_table_page_and_exports_agree_on_flag_words(tmp_path, run_cli):
    path = tmp_path / "battles.csv"
    synth_battles(path, n=800, models=5, seed=7)
    with open(path, "a", newline="") as fh:  # a model with 2 battles: flagged few_battles
        w = csv.writer(fh)
        for k in range(2):
            w.writerow([f"thin{k}", "rare-model", "model-0", "tie", "j1", "True", "False"])
    run_cli("ingest", str(path), "-q")
    run_cli("rebuild", "--rounds", "20", "-q")

    table = run_cli("leaderboard").output
    rare = next(
        line for line in table.splitlines() if line.startswith("-") and "rare-model" in line
    )
    assert rare.rstrip().endswith("few battles"), rare
    assert "few_battles" not in table

    doc = json.loads(run_cli("leaderboard", "--format", "json").output)
    row = next(r for r in doc["rows"] if r["model"] == "rare-model")
    assert row["flags"] == ["few_battles"]
    rows = list(csv.DictReader(io.StringIO(run_cli("leaderboard", "--format", "csv").output)))
    assert next(r for r in rows if r["model"] == "rare-model")["flags"] == "few_battles"

    run_cli("publish", str(tmp_path / "site"), "-q")
    page = (tmp_path / "site" / "index.html").read_text()
    assert flag_word("few_battles") in page


def test_every_flag_has_a_word_without_underscores():
    for token, (word, meaning) in FLAG_WORDS.items():
        assert "_" not in word and word and meaning, token
    assert flag_word("some_new_flag") == "some new flag"  # unknown tokens still read as words
