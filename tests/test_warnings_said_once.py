"""A rebuild of many boards says each warning once, naming the boards it concerns.

A nightly rebuild of every category used to print the same two sentences on board after
board (18 lines on the bundled LMArena data: one thin model, rounds fitted with the prior).
"""

from __future__ import annotations

import csv

from arena.core.words import board_warnings
from tests.helpers.files import synth_battles


def test_one_sentence_per_warning_with_its_boards():
    notes = [
        ("overall", "model rare has very few battles: wide interval"),
        ("category:math", "model rare has very few battles: wide interval"),
        ("overall", "11 bootstrap rounds had no maximum-likelihood estimate"),
        ("category:math", "5 bootstrap rounds had no maximum-likelihood estimate"),
        ("category:code", "model other never won (nor tied)"),
    ]
    assert board_warnings(notes) == [
        "model rare has very few battles: wide interval (on 2 boards: overall and category:math)",
        "5 to 11 bootstrap rounds had no maximum-likelihood estimate "
        "(on 2 boards: overall 11 and category:math 5)",
        "category:code: model other never won (nor tied)",
    ]


def test_numbers_inside_names_are_not_merged():
    # only a leading count may differ: "gpt-4" and "gpt-5" are other models, other sentences
    notes = [
        ("overall", "model gpt-4 has very few battles: wide interval"),
        ("category:math", "model gpt-5 has very few battles: wide interval"),
    ]
    assert board_warnings(notes) == [
        "overall: model gpt-4 has very few battles: wide interval",
        "category:math: model gpt-5 has very few battles: wide interval",
    ]


def test_all_categories_rebuild_names_a_thin_model_once(tmp_path, run_cli):
    path = tmp_path / "battles.csv"
    synth_battles(path, n=1500, models=6, seed=4)
    with open(path, "a", newline="") as fh:  # a model with 2 ties, in both categories
        w = csv.writer(fh)
        for k in range(2):
            w.writerow([f"thin{k}", "rare-model", "model-0", "tie", "j1", "True", "True"])
    run_cli("ingest", str(path), "-q")
    out = run_cli("rebuild", "--all-categories", "--rounds", "30", "-q").stderr
    thin = [line for line in out.splitlines() if "rare-model" in line]
    assert len(thin) == 1, out
    assert "(on 3 boards: overall, category:code and category:math)" in thin[0], thin
    assert len(out.splitlines()) == len(set(out.splitlines())), out
