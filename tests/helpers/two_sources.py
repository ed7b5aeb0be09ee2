"""Two sources judging the same questions and model pairs (``arena agreement``'s tests).

"human" votes follow the true strengths, "judge" votes strengths with two
neighbours swapped (and, in the tests, a position bias), so the two boards agree
on most pairs, not all.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

__all__ = ["HUMAN", "JUDGE", "MODELS", "outcome", "write_votes"]

MODELS = 8
HUMAN = np.linspace(1.5, -1.5, MODELS)
JUDGE = HUMAN.copy()
JUDGE[[2, 3]] = JUDGE[[3, 2]]  # the judge swaps two neighbours


def write_votes(
    path: Path,
    rng: np.random.Generator,
    source_strength: np.ndarray,
    *,
    n: int,
    questions: int,
    bias: float,
) -> list[list[str]]:
    """``n`` votes of models ``m0``... by ``source_strength`` to a CSV; returns its rows."""
    rows = []
    for k in range(n):
        a, b = rng.choice(MODELS, size=2, replace=False)
        q = int(rng.integers(questions))
        p_a = 1.0 / (1.0 + np.exp(-(source_strength[a] - source_strength[b] + bias)))
        u = rng.random()
        winner = "tie" if u < 0.1 else ("model_a" if u < 0.1 + 0.9 * p_a else "model_b")
        rows.append([f"{path.stem}-{k}", f"m{a}", f"m{b}", winner, f"q{q}"])
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "model_a", "model_b", "winner", "question_id"])
        w.writerows(rows)
    return rows


def outcome(code_winner: str, a: str, b: str) -> int:
    """0: the alphabetically first model wins, 1: the other, 2: tie."""
    if code_winner == "tie":
        return 2
    won = a if code_winner == "model_a" else b
    return 0 if won == min(a, b) else 1
