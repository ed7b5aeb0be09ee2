"""render_table's ``width``: the last column wraps at word breaks, the others never move."""

from __future__ import annotations

from arena.core.formats import WRAP_MIN, render_table

ROWS = [
    {"probe": "position", "n": 79.5, "verdict": "Flagged: " + "the first answer favoured " * 8},
    {"probe": "ties", "n": 0, "verdict": "short"},
]


def test_last_column_wraps_to_the_width_and_keeps_every_word():
    plain = render_table(ROWS, ["probe", "n", "verdict"])
    wrapped = render_table(ROWS, ["probe", "n", "verdict"], width=60)
    assert max(map(len, plain.splitlines())) > 60 >= max(map(len, wrapped.splitlines()))
    start = wrapped.splitlines()[0].index("verdict")
    body = wrapped.splitlines()[2:]
    # continuation lines sit under the column; the words are the same, in order
    assert all(line[:start].strip() == "" for line in body[1:-1])
    words = " ".join(line[start:].strip() for line in body[:-1]).split()
    assert words == ROWS[0]["verdict"].split()
    assert body[-1].split() == ["ties", "0", "short"]


def test_a_narrow_width_keeps_a_readable_column_and_a_wide_one_changes_nothing():
    wrapped = render_table(ROWS, ["probe", "n", "verdict"], width=10)
    start = wrapped.splitlines()[0].index("verdict")
    assert len(wrapped.splitlines()[1]) - start == WRAP_MIN
    assert render_table(ROWS, ["probe", "n", "verdict"], width=1000) == render_table(
        ROWS, ["probe", "n", "verdict"]
    )
