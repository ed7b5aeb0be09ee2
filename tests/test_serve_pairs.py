"""The pair rule's "new models first" (``arena serve``'s picker), on SQLite and PostgreSQL.

A model is new to a board when it has few battles on the board's snapshot or was
first stored after it. A model of another source's board (a judge's models in
a store that also holds human votes, as the demo's) is not new to the human
board and must never be shown on it as one.
"""

from __future__ import annotations

from collections import Counter

import pytest

from arena.serve.ledger import ServedCounter
from arena.serve.pairs import PairPicker, PairRule


def _csv(path, rows):
    path.write_text("id,model_a,model_b,winner\n" + "".join(f"{','.join(r)}\n" for r in rows))
    return path


@pytest.fixture
def two_boards(run_cli, tmp_path):
    humans = ["alpha", "bravo", "charlie", "delta"]
    rows = [
        (f"h{k}", humans[k % 4], humans[(k + 1 + k // 4) % 4], "model_a" if k % 3 else "tie")
        for k in range(400)
    ]
    rows = [r for r in rows if r[1] != r[2]]
    judged = [(f"j{k}", "judge-only", humans[k % 4], "model_b") for k in range(200)]
    run_cli("ingest", str(_csv(tmp_path / "h.csv", rows)), "--source", "humans", "-q")
    run_cli("ingest", str(_csv(tmp_path / "j.csv", judged)), "--source", "judge", "-q")
    run_cli("rebuild", "--source", "humans", "--rounds", "20", "-q")
    return humans


def test_another_sources_model_is_never_new_to_a_board(two_boards, engine, run_cli, tmp_path):
    counter = ServedCounter(engine)
    rule = PairRule(new_share=0.5, uniform_share=0.3, refresh=0.0)
    picker = PairPicker(engine, rule=rule, seed=1, served=counter)
    shown = Counter(m for _ in range(300) for m in picker.pick(source="humans"))
    assert set(shown) == set(two_boards)  # never "judge-only"
    # a model first stored after the snapshot is new, and drawn at once
    late = [(f"n{k}", "echo", "alpha", "model_a") for k in range(5)]
    run_cli("ingest", str(_csv(tmp_path / "n.csv", late)), "--source", "humans", "-q")
    shown = Counter(m for _ in range(300) for m in picker.pick(source="humans"))
    assert shown["echo"] > 50 and "judge-only" not in shown
    counter.flush()
