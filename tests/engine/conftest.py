"""Fixtures for the rating-engine tests: shared real data sets and small builders."""

from __future__ import annotations

import csv
import gzip
import json

import numpy as np
import pytest

from arena.core.outcomes import A_WINS, B_WINS, TIE, TIE_BOTH_BAD
from arena.engine.counts import count_table, from_cells
from tests.helpers.paths import bundled_lmarena, shared_path

LMARENA_WINNER = {
    "model_a": A_WINS,
    "model_b": B_WINS,
    "tie": TIE,
    "both_bad": TIE_BOTH_BAD,
    "tie (bothbad)": TIE_BOTH_BAD,
}


@pytest.fixture(scope="session")
def baseball():
    """(team names, CountTable) of Agresti's 1987 AL East data; home team shown first."""
    rows = list(csv.DictReader(open(shared_path("data", "classic", "baseball.csv"))))
    teams = sorted({r["home.team"] for r in rows} | {r["away.team"] for r in rows})
    ix = {t: i for i, t in enumerate(teams)}
    a, b, o, n = [], [], [], []
    for r in rows:
        a += [ix[r["home.team"]]] * 2
        b += [ix[r["away.team"]]] * 2
        o += [A_WINS, B_WINS]
        n += [float(r["home.wins"]), float(r["away.wins"])]
    return teams, from_cells(a, b, o, n, n_models=len(teams))


def read_lmarena(path) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Per-battle arrays of an LMArena CSV export: names, a, b, outcome (self-play kept)."""
    with gzip.open(path, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    names = sorted({r["model_a"] for r in rows} | {r["model_b"] for r in rows})
    ix = {m: i for i, m in enumerate(names)}
    a = np.array([ix[r["model_a"]] for r in rows])
    b = np.array([ix[r["model_b"]] for r in rows])
    o = np.array([LMARENA_WINNER[r["winner"]] for r in rows])
    return names, a, b, o


@pytest.fixture(scope="session")
def lmarena():
    """The LMArena 140k votes as per-battle arrays (see :func:`read_lmarena`).

    Read from the bundled copy: same rows as ../shared's battles.csv.gz, plus tag columns.
    """
    return read_lmarena(bundled_lmarena())


@pytest.fixture(scope="session")
def lmarena_table(lmarena):
    names, a, b, o = lmarena
    return count_table(a, b, o, n_models=len(names))


@pytest.fixture(scope="session")
def mtbench():
    """MT-Bench human votes: names, a, b, outcome, judge, question."""
    path = shared_path("data", "mt-bench-human", "human_judgments_turn1.jsonl")
    recs = [json.loads(line) for line in open(path) if line.strip()]
    names = sorted({r["model_a"] for r in recs} | {r["model_b"] for r in recs})
    ix = {m: i for i, m in enumerate(names)}
    win = {"model_a": A_WINS, "model_b": B_WINS, "tie": TIE}
    a = np.array([ix[r["model_a"]] for r in recs])
    b = np.array([ix[r["model_b"]] for r in recs])
    o = np.array([win[r["winner"]] for r in recs])
    judge = np.array([str(r["judge"]) for r in recs])
    question = np.array([str(r["question_id"]) for r in recs])
    return names, a, b, o, judge, question
