"""Style metadata (conv_metadata) at ingest, and the store's per-battle read of it.

Both engines: nested JSON, flat CSV and sub-count CSV columns store the same
numbers; bad values name file, line and field and store nothing; the read
function filters exactly as the rebuild's aggregation does.
"""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import func, select

from arena.core.outcomes import OUTCOME_CODES, Outcome
from arena.db.models import Battle, BattleCovariate, BattleStyle, Model, StyleFeature
from arena.store.read import BattleSelection as Sel
from arena.store.style import StyleDataError, read_style_battles
from tests.helpers.db import count
from tests.helpers.files import STYLE_SUBS, conv_metadata, write_csv, write_jsonl
from tests.helpers.paths import shared_path

RECORDS = [
    {"id": "s1", "model_a": "x", "model_b": "y", "winner": "model_a",
     "tstamp": "2026-01-01T00:00:00Z", "conv_metadata": conv_metadata((10, 20), (1, 0), (2, 3), (0, 4), sentiment=(0.5, -0.25))},
    {"id": "s2", "model_a": "y", "model_b": "z", "winner": "tie",
     "tstamp": "2026-02-01T00:00:00Z", "conv_metadata": conv_metadata((300, 7), (0, 0), (0, 1), (5, 0), sentiment=(1.0, 2.0))},
    {"id": "s3", "model_a": "x", "model_b": "z", "winner": "model_b",
     "tstamp": "2026-03-01T00:00:00Z", "conv_metadata": None},
    {"id": "s4", "model_a": "z", "model_b": "x", "winner": "both_bad",
     "tstamp": "2026-04-01T00:00:00Z", "conv_metadata": conv_metadata((1, 2), (3, 4), (5, 6), (7, 8))},
]  # fmt: skip


def stored_style(engine) -> list[tuple]:
    with engine.connect() as conn:
        names = dict(conn.execute(select(Model.id, Model.name)).all())
        ext = dict(conn.execute(select(Battle.id, Battle.external_id)).all())
        style = sorted(
            (ext[r.battle_id], *(getattr(r, c) for c in ("tokens_a", "tokens_b", "headers_a",
             "headers_b", "lists_a", "lists_b", "bold_a", "bold_b")))
            for r in conn.execute(select(BattleStyle)).all()
        )  # fmt: skip
        features = dict(conn.execute(select(StyleFeature.id, StyleFeature.name)).all())
        covs = sorted(
            (ext[r.battle_id], features[r.feature_id], r.value_a, r.value_b)
            for r in conn.execute(select(BattleCovariate)).all()
        )
    assert names
    return style + covs


EXPECTED = [
    ("s1", 10, 20, 1, 0, 2, 3, 0, 4),
    ("s2", 300, 7, 0, 0, 0, 1, 5, 0),
    ("s4", 1, 2, 3, 4, 5, 6, 7, 8),
    ("s1", "sentiment", 0.5, -0.25),
    ("s2", "sentiment", 1.0, 2.0),
]


def flat_rows(records, *, sub_columns: bool, base=("id", "model_a", "model_b", "winner", "tstamp")):
    """The same records as flat CSV columns: one per count, or one per sub-count."""
    header = list(base)
    keys = []
    for side in "ab":
        keys.append(f"sum_assistant_{side}_tokens")
        for key, subs in STYLE_SUBS.items():
            if sub_columns:
                keys += [f"{key}_{side}.{s}" for s in subs]
            else:
                keys.append(f"{key}_{side}")
    header += keys + ["conv_metadata.sentiment_a", "conv_metadata.sentiment_b"]
    rows = []
    for r in records:
        m = r["conv_metadata"] or {}
        row = [r[c] for c in base]
        for k in keys:
            head, _, sub = k.partition(".")
            value = m.get(head, "")
            if isinstance(value, dict):
                value = value[sub] if sub else sum(value.values())
            row.append(value)
        row += [m.get("sentiment_a", ""), m.get("sentiment_b", "")]
        rows.append(row)
    return header, rows


@pytest.mark.parametrize("shape", ["jsonl", "csv", "csv-subcounts"])
def test_style_metadata_is_stored_once_per_battle(run_cli, engine, tmp_path, shape):
    if shape == "jsonl":
        path = write_jsonl(tmp_path / "b.jsonl", RECORDS)
    else:
        header, rows = flat_rows(RECORDS, sub_columns=shape == "csv-subcounts")
        path = write_csv(tmp_path / "b.csv", header, rows)
    out = run_cli("ingest", path).output
    assert "4 rows read, 4 inserted" in out
    assert stored_style(engine) == EXPECTED
    # tag columns stay tags: no style column became a category
    assert count(engine, Battle) == 4


@pytest.mark.parametrize("sub_columns", [False, True])
def test_column_fast_path_stores_the_same_style(
    run_cli, engine, tmp_path, monkeypatch, sub_columns
):
    """Without a timestamp the file takes the column path; a block with a battle
    without metadata falls back to the row path; both store what JSON lines store."""
    import arena.ingest.loader as loader
    import arena.ingest.records as records

    monkeypatch.setattr(loader, "CHUNK_ROWS", 2)
    taken = []
    real = records.parse_columns
    monkeypatch.setattr(
        records, "parse_columns", lambda *a: taken.append(real(*a) is not None) or real(*a)
    )
    base = ("id", "model_a", "model_b", "winner")
    header, rows = flat_rows(RECORDS, sub_columns=sub_columns, base=base)
    run_cli("ingest", write_csv(tmp_path / "c.csv", header, rows))
    assert taken == [True, False]  # block 1 by columns; block 2 (s3 has no metadata) by rows
    assert stored_style(engine) == EXPECTED


@pytest.mark.parametrize("sub_columns", [False, True])
def test_rows_without_metadata_stay_on_the_column_path(
    run_cli, engine, tmp_path, monkeypatch, sub_columns
):
    """A block where some rows have all style cells empty (LMArena's battles without
    metadata) is still validated by columns, and stores what the row path stores; a
    row with only some cells empty goes to the row path, which names its field."""
    import arena.ingest.records as records

    taken = []
    real = records.parse_columns
    monkeypatch.setattr(
        records, "parse_columns", lambda *a: taken.append(real(*a) is not None) or real(*a)
    )
    base = ("id", "model_a", "model_b", "winner")
    header, rows = flat_rows(RECORDS, sub_columns=sub_columns, base=base)
    header, rows = header[:-2], [row[:-2] for row in rows]  # no user covariate
    rows.append(["s5", "y", "x", "tie", *[""] * (len(header) - 4)])  # a second one without
    run_cli("ingest", write_csv(tmp_path / "c.csv", header, rows))
    assert taken == [True]
    assert stored_style(engine) == EXPECTED[:3]
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Battle)).scalar_one() == 5
    half = [list(row) for row in rows]
    half[2][5] = 4  # s3: one cell of side a given, the rest empty
    half[0][0], half[1][0], half[3][0] = "h1", "h2", "h4"
    taken.clear()
    res = run_cli("ingest", write_csv(tmp_path / "h.csv", header, half), ok=False)
    assert taken == [False]
    assert "line 4" in res.output and "missing (style metadata needs both sides)" in res.output


@pytest.mark.parametrize(
    ("mutate", "field", "fragment"),
    [
        (lambda m: m.update(sum_assistant_b_tokens=-1), "conv_metadata.sum_assistant_b_tokens", "between 0"),
        (lambda m: m.update(sum_assistant_a_tokens="many"), "conv_metadata.sum_assistant_a_tokens", "not a whole number"),
        (lambda m: m.update(sum_assistant_a_tokens=2.5), "conv_metadata.sum_assistant_a_tokens", "not a whole number"),
        (lambda m: m["header_count_b"].update(h2=True), "conv_metadata.header_count_b.h2", "not a whole number"),
        (lambda m: m.pop("list_count_b"), "conv_metadata.list_count_b", "missing"),
        (lambda m: m.pop("sentiment_b"), "conv_metadata.sentiment_b", "missing"),
        (lambda m: m.update(sentiment_a="nan"), "conv_metadata.sentiment_a", "not a finite number"),
        (lambda m: m.update(sentiment_a="happy"), "conv_metadata.sentiment_a", "not a number"),
    ],
)  # fmt: skip
def test_bad_style_values_name_line_and_field(run_cli, engine, tmp_path, mutate, field, fragment):
    records = json.loads(json.dumps(RECORDS))
    mutate(records[1]["conv_metadata"])
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    res = run_cli("ingest", path, ok=False)
    assert res.exit_code == 1
    assert f"bad.jsonl: line 2: field '{field}'" in res.output and fragment in res.output
    assert "Traceback" not in res.output
    assert count(engine, Battle) == 0 and count(engine, BattleStyle) == 0


def test_bad_flat_style_cell_names_the_column(run_cli, engine, tmp_path):
    header, rows = flat_rows(RECORDS, sub_columns=False)
    rows[3][header.index("bold_count_b")] = "-3"
    res = run_cli("ingest", write_csv(tmp_path / "f.csv", header, rows), ok=False)
    assert "f.csv: line 5: field 'bold_count_b'" in res.output and "between 0" in res.output
    rows[3][header.index("bold_count_b")] = ""  # one side of one feature missing
    res = run_cli("ingest", write_csv(tmp_path / "g.csv", header, rows), ok=False)
    assert "g.csv: line 5: field 'bold_count_b': missing" in res.output
    header2 = [h for h in header if h != "conv_metadata.sentiment_b"]
    rows2 = [
        [v for h, v in zip(header, r, strict=True) if h != "conv_metadata.sentiment_b"]
        for r in rows
    ]
    res = run_cli("ingest", write_csv(tmp_path / "h.csv", header2, rows2), ok=False)
    assert "line 1: field 'conv_metadata.sentiment_b': missing" in res.output
    assert count(engine, Battle) == 0


def test_skip_invalid_keeps_style_of_the_good_rows(run_cli, engine, tmp_path):
    records = json.loads(json.dumps(RECORDS))
    records[1]["conv_metadata"]["bold_count_a"] = {"**": -1}
    rejects = tmp_path / "rejects.csv"
    run_cli("ingest", write_jsonl(tmp_path / "b.jsonl", records), "--skip-invalid",
            "--rejects", str(rejects))  # fmt: skip
    assert "conv_metadata.bold_count_a.**" in rejects.read_text()
    assert [r[0] for r in stored_style(engine)] == ["s1", "s4", "s1"]


def test_read_style_battles_filters_like_the_rebuild(run_cli, engine, tmp_path):
    records = json.loads(json.dumps(RECORDS))
    records.append(dict(records[0], id="s5", model_b="x"))  # self-play: not rated
    records[3]["math"] = True
    records[0]["math"] = True
    run_cli("ingest", write_jsonl(tmp_path / "b.jsonl", records), "--source", "judge-1")
    with engine.connect() as conn:
        top = conn.execute(select(func.max(Battle.id))).scalar_one()
        ids = dict(conn.execute(select(Model.name, Model.id)).all())
        full = read_style_battles(conn, Sel(), watermark=top)
        assert len(full) == 3 and full.n_missing == 1  # s3 has no metadata; s5 is self-play
        assert full.features == ("tokens", "headers", "lists", "bold")
        assert list(full.model_a) == [ids["x"], ids["y"], ids["z"]]
        assert list(full.outcome) == [
            OUTCOME_CODES[Outcome.A_WINS], OUTCOME_CODES[Outcome.TIE], OUTCOME_CODES[Outcome.TIE_BOTH_BAD]
        ]  # fmt: skip
        np.testing.assert_array_equal(full.features_a[0], [10, 1, 2, 0])
        np.testing.assert_array_equal(full.features_b[2], [2, 4, 6, 8])
        assert full.cluster is None and full.weight.tolist() == [1.0, 1.0, 1.0]

        math = read_style_battles(conn, Sel(category="math"), watermark=top)
        assert math.battle_id.tolist() == [full.battle_id[0], full.battle_id[2]]
        window = read_style_battles(
            conn,
            Sel(since=datetime(2026, 1, 15, tzinfo=UTC), until=datetime(2026, 4, 1, tzinfo=UTC)),
            watermark=top,
        )
        assert len(window) == 1 and window.n_missing == 1  # s2 kept; s3 missing; s4 at `until`
        assert len(read_style_battles(conn, Sel(), watermark=full.battle_id[1])) == 2
        assert len(read_style_battles(conn, Sel(source="other"), watermark=top)) == 0

        senti = read_style_battles(conn, Sel(), watermark=top, features=("sentiment", "tokens"))
        assert len(senti) == 2 and senti.n_missing == 2
        np.testing.assert_array_equal(senti.features_a, [[0.5, 10], [1.0, 300]])
        np.testing.assert_array_equal(senti.features_b, [[-0.25, 20], [2.0, 7]])

        by_model = read_style_battles(conn, Sel(cluster="source"), watermark=top)
        assert by_model.cluster.tolist() == [0, 0, 0]
        with pytest.raises(StyleDataError, match="emoji"):
            read_style_battles(conn, Sel(), watermark=top, features=("emoji",))


@pytest.mark.slow
def test_ko_arena_hard_style_metadata(run_cli, engine):
    """The shared arena-hard file: 75,999 games, 4,000 without conv_metadata."""
    path = shared_path("data", "ko-arena-hard", "battles.jsonl.gz")
    run_cli("ingest", str(path), "-q")
    assert count(engine, BattleStyle) == 71_999
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        first = json.loads(fh.readline())
    m = first["conv_metadata"]
    with engine.connect() as conn:
        top = conn.execute(select(func.max(Battle.id))).scalar_one()
        board = read_style_battles(conn, Sel(), watermark=top)
        row = conn.execute(
            select(BattleStyle)
            .join(Battle, Battle.id == BattleStyle.battle_id)
            .where(Battle.external_id == first["id"])
        ).one()
    assert (row.tokens_a, row.tokens_b) == (
        m["sum_assistant_a_tokens"],
        m["sum_assistant_b_tokens"],
    )
    assert row.headers_a == sum(m["header_count_a"].values())
    assert row.lists_b == sum(m["list_count_b"].values())
    assert row.bold_b == sum(m["bold_count_b"].values())
    # 1,000 self-play games are not rated; every rated game without metadata is counted
    assert len(board) + board.n_missing == 74_999 and board.n_missing == 4_000
    assert set(np.unique(board.weight)) == {1.0, 3.0}


@pytest.mark.parametrize(
    ("odd", "by_columns"),
    [
        ({"h1": True, "h2": 0}, False),
        ({"h1": 1.0}, False),
        ({"h1": -1, "h2": 5}, False),
        ({"h1": {"x": 1}}, False),
        ({}, False),
        ({"h1": 2_000_000_000, "h2": 1}, False),
        ({"h1": "1"}, False),
        # fewer sub-counts than its neighbours: the row path decides, since a line's key
        # count is checked against its block's first record (a key twice could hide)
        ({"h1": 1, "h2": 2, "h3": 3}, False),
        ({"h1": 1, "h2": 2, "h3": 3, "h4": 0, "h5": 0, "h6": 0}, True),  # as many: fine
    ],
)
def test_column_counts_take_only_what_the_row_rule_takes(odd, by_columns):
    """style_column (a block's counts by columns) gives a block's counts only when the
    row rule gives each record the same counts; any odd sub-count sends it back."""
    from arena.ingest.style import StyleShape, style_column

    shape = StyleShape(nested="conv_metadata")
    metas = [conv_metadata((10, 20), (1, 0), (2, 3), (0, 4)) for _ in range(5)]
    metas[3] = {**metas[3], "header_count_a": odd}
    got = style_column(shape, lambda name: metas)
    assert (got is not None) == by_columns
    if got is not None:
        assert got == [shape.parse({"conv_metadata": meta}.get).counts for meta in metas]
        assert got[3][2] == 6  # headers_a: the sum of the odd sub-counts
