"""Battle outcomes: the vocabulary shared by the store, the ingester and the engine.

The engine works on small integer codes; the database stores the names.
"""

from __future__ import annotations

import enum


class Outcome(enum.StrEnum):
    A_WINS = "a_wins"
    B_WINS = "b_wins"
    TIE = "tie"
    TIE_BOTH_BAD = "tie_both_bad"

    @property
    def code(self) -> int:
        return OUTCOME_CODES[self]


#: Integer codes used by :mod:`arena.engine` (index into a count table's outcome axis).
OUTCOME_CODES: dict[Outcome, int] = {
    Outcome.A_WINS: 0,
    Outcome.B_WINS: 1,
    Outcome.TIE: 2,
    Outcome.TIE_BOTH_BAD: 3,
}
A_WINS, B_WINS, TIE, TIE_BOTH_BAD = 0, 1, 2, 3
N_OUTCOMES = 4
