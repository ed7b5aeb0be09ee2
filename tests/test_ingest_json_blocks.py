"""JSON lines read in blocks (issue 30): one parse per block, column-wise validation.

The block path (:func:`arena.ingest.records.json_block_parser`) must give
exactly what the record-by-record path gives: the same battles and style
counts, stored as the same rows on both engines, and for any unusual block the
same errors with the same lines (it hands such blocks to the row path).
"""

from __future__ import annotations

import json
import random

import pytest
from sqlalchemy import select

from arena.db.models import Battle, BattleStyle, Model
from arena.ingest import chunks, records
from arena.ingest.sources import open_binary, open_input
from tests.helpers.cli import cli_for
from tests.helpers.db import stored
from tests.helpers.files import conv_metadata
from tests.helpers.postgres import pg_schema

WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)", "both_bad")
VERDICTS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")


def lmarena_records(n: int, seed: int, *, flat: bool = False) -> list[dict]:
    rng = random.Random(seed)
    names = [f"model-{i}" for i in range(7)] + [" spaced ", "cafe\u0301"]  # normalised names
    out = []
    for i in range(n):
        a, b = rng.choice(names), rng.choice(names)  # some self-play
        meta = conv_metadata(
            (rng.randint(0, 3000), rng.randint(0, 3000)),
            (rng.randint(0, 5), rng.randint(0, 5)),
            (rng.randint(0, 9), rng.randint(0, 9)),
            (rng.randint(0, 4), rng.randint(0, 4)),
        )
        meta["sum_user_tokens"] = rng.randint(1, 50)  # ignored key
        rec = {"id": f"r{i}", "model_a": a, "model_b": b, "winner": rng.choice(WINNERS)}
        if flat:
            for key, value in meta.items():
                if key != "sum_user_tokens":
                    rec[key] = sum(value.values()) if isinstance(value, dict) else value
        else:
            rec["conv_metadata"] = meta
        out.append(rec)
    return out


def judge_records(n: int, seed: int) -> list[dict]:
    """The ko-arena-hard shape: verdicts (strong ones weigh 3), judge and question ids."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        out.append(
            {
                "conv_metadata": conv_metadata((rng.randint(1, 900), 5), (1, 0), (0, 2), (3, 0)),
                "id": f"q{i // 2}:g{i % 2}",
                "judge": "ensemble",
                "model_a": rng.choice(["x", "y", "z"]),
                "model_b": rng.choice(["x", "y", "w"]),
                "question_id": f"q{i // 2}",
                "verdict": rng.choice(VERDICTS),
            }
        )
    return out


def _write(path, records, *, spaced: bool = True) -> str:
    seps = (", ", ": ") if spaced else (",", ":")
    path.write_text("".join(json.dumps(r, separators=seps) + "\n" for r in records))
    return str(path)


def _parse(path: str, *, rows: int) -> list:
    """Every chunk's battles, locations and errors, as plain values."""
    src = open_input(path)
    out = []
    with open_binary(src) as binary:
        for chunk in chunks.read_chunks(src, "jsonl", binary, {}, 10_000, rows=rows):
            out.append(
                (
                    chunk.rows_read,
                    chunk.columns.battles() if chunk.columns is not None else list(chunk.battles),
                    list(chunk.where),
                    [(loc, str(err)) for loc, err, _ in chunk.errors],
                )
            )
    return out


def _row_path_only(monkeypatch) -> None:
    monkeypatch.setattr(chunks, "json_block_parser", lambda *args: None)


def _spy(monkeypatch) -> list:
    """Counts the blocks the block path took (a parser returning battles)."""
    taken = []
    real = records.json_block_parser

    def wrapped(schema, keys):
        parser = real(schema, keys)
        if parser is None:
            return None

        def block(objects, marks):
            got = parser(objects, marks)
            taken.append(got is not None)
            return got

        return block

    monkeypatch.setattr(chunks, "json_block_parser", wrapped)
    return taken


@pytest.mark.parametrize(
    "make",
    [
        lambda: lmarena_records(700, 1),
        lambda: lmarena_records(700, 2, flat=True),
        lambda: judge_records(700, 3),
    ],
    ids=["nested", "flat", "judge"],
)
@pytest.mark.parametrize("spaced", [True, False])
def test_block_path_parses_like_the_row_path(tmp_path, monkeypatch, make, spaced):
    path = _write(tmp_path / "b.jsonl", make(), spaced=spaced)
    taken = _spy(monkeypatch)
    fast = _parse(path, rows=128)
    assert taken and all(taken), taken  # every block went the block path
    _row_path_only(monkeypatch)
    slow = _parse(path, rows=128)
    assert fast == slow
    battles = [b for _, bs, _, _ in fast for b in bs]
    assert len(battles) == 700
    assert any(b.excluded_reason == "self_play" for b in battles)
    assert all(b.style is not None and len(b.style.counts) == 8 for b in battles)


def _dump(url: str) -> tuple:
    from arena.db.session import open_engine

    eng = open_engine(url)
    try:
        battles, links, names = stored(eng)
        with eng.connect() as conn:
            model = dict(conn.execute(select(Model.id, Model.name)).all())
            extra = sorted(
                (b.id, b.external_id, model[b.model_a_id], b.question, b.judge, b.weight)
                for b in conn.execute(select(Battle)).all()
            )
            style = sorted(tuple(r) for r in conn.execute(select(BattleStyle)).all())
    finally:
        eng.dispose()
    return battles, links, names, extra, style


@pytest.fixture
def second_url(db_url, tmp_path):
    """Another empty database of the same engine."""
    if db_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'row-path.db'}"
    else:
        yield from pg_schema()


def test_block_path_stores_the_same_rows(run_cli, db_url, second_url, tmp_path, monkeypatch):
    """Both paths end to end (several chunks, so ids run on across them): the same rows."""
    monkeypatch.setattr("arena.ingest.loader.CHUNK_ROWS", 300)
    nested = _write(tmp_path / "nested.jsonl", lmarena_records(1000, 4))
    judged = _write(tmp_path / "judge.jsonl", judge_records(800, 5))
    taken = _spy(monkeypatch)
    for path in (nested, judged):
        run_cli("ingest", path)
    assert taken and all(taken)
    _row_path_only(monkeypatch)
    row_cli = cli_for(second_url)
    for path in (nested, judged):
        row_cli("ingest", path)
    fast, slow = _dump(db_url), _dump(second_url)
    assert fast == slow
    assert len(fast[0]) == 1800 and len(fast[4]) == 1800
    assert {w for *_, w in fast[3]} == {1.0, 3.0}


def _lines(records) -> list[str]:
    return [json.dumps(r) for r in records]


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        # a key twice: the block's key count is off, the row path names the line
        (
            '{"id": "d", "model_a": "m1", "model_a": "m2", "model_b": "m3", "winner": "tie", '
            '"conv_metadata": null}',
            "key 'model_a' appears more than once",
        ),
        # '":' inside a value is fine (the row path looks closely), a bad count is not
        (
            json.dumps(
                {
                    "id": 'x":',
                    "model_a": "m1",
                    "model_b": "m3",
                    "winner": "tie",
                    "conv_metadata": conv_metadata((-1, 2), (0, 0), (0, 0), (0, 0)),
                }
            ),
            "conv_metadata.sum_assistant_a_tokens",
        ),
        # a sub-count named twice (and one left out): as many keys written as the other
        # lines of its block hold, so only the sub-counts' own sizes give it away
        (
            '{"id": "h", "model_a": "m1", "model_b": "m2", "winner": "tie", "conv_metadata": '
            + json.dumps(
                {**conv_metadata((1, 2), (0, 0), (0, 0), (0, 0)), "sum_user_tokens": 3}
            ).replace('"h2": 0', '"h1": 4', 1)
            + "}",
            "key 'h1' appears more than once",
        ),
        ('{"id": "e", "model_a": "m1", "model_b": "m1", "winner": "A>B"}', "winner"),
        ('{"id": "f", "model_a": 7, "model_b": "m1", "winner": "tie"}', "model_a"),
        ('{"id": "", "model_a": "m1", "model_b": "m2", "winner": "mystery"}', "winner"),
    ],
)
def test_unusual_line_in_a_block_is_named(run_cli, engine, tmp_path, bad, fragment):
    lines = _lines(lmarena_records(40, 6))
    lines[22] = bad
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = run_cli("ingest", str(path), ok=False)
    assert res.exit_code == 1
    assert "Traceback" not in res.output
    assert "line 23" in res.output and fragment in res.output, res.output
    with engine.connect() as conn:
        assert conn.execute(select(Battle.id)).first() is None


def test_values_spanning_lines_are_not_taken_as_records(run_cli, engine, tmp_path):
    """Lines that are not JSON on their own can still join into a valid array with one
    element per line; the block path must not accept them (the row path rejects line 1)."""
    rec = '{"model_a": "a", "model_b": "b", "winner": "tie"}'
    lines = [
        rec[:-1] + "}, " + rec,  # two objects on one line
        rec[:-1] + ', "c": [{}',  # opens a list ...
        "{}]}",  # ... closed on the next line
    ]
    path = tmp_path / "span.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = run_cli("ingest", str(path), ok=False)
    assert res.exit_code == 1
    assert "line 1" in res.output and "invalid JSON" in res.output, res.output
    rejects = tmp_path / "rejected.csv"
    res = run_cli("ingest", str(path), "--skip-invalid", "--rejects", str(rejects))
    assert "0 inserted" in res.output and "3 rejected" in res.output, res.output


def test_blank_lines_keep_line_numbers(run_cli, engine, tmp_path):
    lines = _lines(lmarena_records(30, 7))
    lines[10] = ""
    lines[20] = '{"id": "g", "model_a": "m1", "model_b": "m2", "winner": "nobody"}'
    path = tmp_path / "blank.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = run_cli("ingest", str(path), ok=False)
    assert "line 21" in res.output and "winner" in res.output, res.output
