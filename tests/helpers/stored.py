"""Comparing two ways of ingesting the same files: a JSON-lines file of bad rows among
good ones, and everything an ingest stores."""

from __future__ import annotations

import json
from collections.abc import Iterator

from sqlalchemy import select, text

from arena.db.models import Battle, BattleStyle
from tests.helpers.files import conv_metadata
from tests.helpers.postgres import pg_schema


def _meta(tokens: int = 300) -> dict:
    return conv_metadata((tokens, 20), (1, 0), (0, 2), (3, 0))


def _good(i: int) -> dict:
    return {"id": f"g{i}", "model_a": f"m{i % 4}", "model_b": "m9", "winner": "model_a"}


BAD_LINES = [
    # a key twice, and '":' inside a value of a good row
    '{"id": "d1", "model_a": "m1", "model_a": "m2", "model_b": "m3", "winner": "tie"}',
    json.dumps({**_good(1000), "id": 'x":y'}),
    # not JSON, or JSON that only the standard library reads
    '{"id": "d2", "model_a": "m1", "model_b": "m2", "winner": "tie",}',
    '{"id": "d3", "model_a": "m1", "model_b": "m2", "winner": "tie", "conv_metadata": '
    '{"sum_assistant_a_tokens": NaN}}',
    '{"id": "d4", "model_a": "m1", "model_b": "m2", "winner": "tie", "conv_metadata": '
    '{"sum_assistant_a_tokens": 1e400}}',
    '{"id": "d5", "model_a": "m\\ud800", "model_b": "m2", "winner": "tie"}',
    # integers beyond 64 bits: a count (rejected, named) and an ignored key (stored)
    json.dumps(
        {
            **_good(1001),
            "conv_metadata": {**_meta(), "sum_assistant_a_tokens": 18446744073709551617},
        }
    ),
    json.dumps({**_good(1002), "conv_metadata": {**_meta(), "turns": 18446744073709551617}}),
    # counts of the wrong kind
    json.dumps({**_good(1003), "conv_metadata": {**_meta(), "sum_assistant_b_tokens": True}}),
    json.dumps({**_good(1004), "conv_metadata": {**_meta(), "sum_assistant_b_tokens": 3.0}}),
    json.dumps({**_good(1005), "conv_metadata": {**_meta(), "sum_assistant_b_tokens": 3.5}}),
    json.dumps({**_good(1006), "conv_metadata": {**_meta(), "bold_count_a": {"**": -1}}}),
    json.dumps({**_good(1007), "conv_metadata": {**_meta(), "header_count_b": {}}}),
    json.dumps(
        {**_good(1008), "conv_metadata": {k: v for k, v in _meta().items() if k[-1] != "b"}}
    ),
    # fields of the wrong kind, empty, too long or with controls
    json.dumps({**_good(1009), "model_a": 7}),
    json.dumps({**_good(1010), "id": ""}),
    json.dumps({**_good(1011), "model_b": "x" * 300}),
    json.dumps({**_good(1012), "model_b": "a\u0007b"}),
    json.dumps({**_good(1013), "winner": "nobody"}),
    # not an object; spacing before a colon; a value across lines
    "[1, 2]",
    '"a string"',
    "{}",
    '{"id" : "s1", "model_a": "m1", "model_b": "m2", "winner": "tie"}',
    '{"id": "s2", "model_a": "m1", "model_b": "m2", "winner": "tie", "c": [{}',
    "{}]}",
    # an id this file repeats (the second is rejected, its record reported)
    json.dumps({**_good(7), "conv_metadata": {**_meta(), "turns": 18446744073709551618}}),
]


def bad_jsonl(path) -> str:
    """Good rows of three shapes with the bad lines spread among them."""
    lines = []
    for i in range(400):
        rec = _good(i)
        if i % 3 == 1:
            rec["conv_metadata"] = _meta(i)
        elif i % 3 == 2:
            rec = {**rec, "conv_metadata": _meta(i), "judge": "j", "question_id": f"q{i}"}
            rec["verdict"] = rec.pop("winner").replace("model_a", "A>>B")
        lines.append(json.dumps(rec, separators=(",", ":") if i % 2 else (", ", ": ")))
        if i % 15 == 0 and i // 15 < len(BAD_LINES):
            lines.append(BAD_LINES[i // 15])
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def second_url(db_url: str, tmp_path, name: str) -> Iterator[str]:
    """A second empty database on the engine of ``db_url`` (next() again drops it)."""
    if db_url.startswith("sqlite"):
        return iter([f"sqlite:///{tmp_path / name}"])
    return pg_schema()


def dump_store(url: str) -> tuple:
    """Everything an ingest stores, in id order (ids included: both ingests start empty)."""
    from arena.db.session import open_engine

    eng = open_engine(url)
    try:
        with eng.connect() as conn:
            battles = [tuple(r) for r in conn.execute(select(Battle).order_by(Battle.id)).all()]
            style = [
                tuple(r)
                for r in conn.execute(select(BattleStyle).order_by(BattleStyle.battle_id)).all()
            ]
            models = conn.execute(text("SELECT id, name FROM models ORDER BY id")).all()
            cells = conn.execute(
                text(
                    "SELECT category_id, model_a_id, model_b_id, outcome, weight, rated, n "
                    "FROM battle_counts ORDER BY 1, 2, 3, 4, 5, 6"
                )
            ).all()
            links = conn.execute(
                text("SELECT category_id, battle_id FROM battle_categories ORDER BY 2, 1")
            ).all()
            batches = conn.execute(
                text(
                    "SELECT rows_read, inserted, duplicates, excluded, rejected "
                    "FROM ingest_batches ORDER BY id"
                )
            ).all()
    finally:
        eng.dispose()
    # created_at differs between the two ingests
    battles = [tuple(v for v in row if not hasattr(v, "tzinfo")) for row in battles]
    return (
        battles,
        style,
        [tuple(m) for m in models],
        [tuple(c) for c in cells],
        batches,
        [tuple(k) for k in links],
    )


def ingest_and_dump(url: str, files, tmp_path, tag: str) -> tuple[tuple, list[tuple[str, str]]]:
    """Ingest ``files`` (skipping bad records) into ``url``: what it stores and, per file,
    the command's output and its rejects file (two ways of ingesting compared by equality)."""
    from tests.helpers.cli import cli_for

    run = cli_for(url)
    reports = []
    for j, path in enumerate(files):
        rejects = tmp_path / f"rejects-{tag}-{j}.csv"
        res = run("ingest", path, "--skip-invalid", "--rejects", str(rejects))
        reports.append((res.output, rejects.read_text() if rejects.exists() else ""))
    return dump_store(url), reports
