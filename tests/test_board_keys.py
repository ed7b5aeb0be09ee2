"""Board keys data cannot forge: ``BoardKey`` text, the 0011 -> 0012 migration of stored
keys, and categories and sources named like key parts getting boards of their own.

Before, ``board_key`` joined names as they were: a category named ``code|style`` had
the key of the style-controlled board of ``code``, so one of the two boards hid the
other on the site and ``arena leaderboard --category 'code|style'`` returned another
board (issue 24, part 3). The end-to-end test runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from alembic import command
from sqlalchemy import text

from arena.boards.keys import OVERALL, BoardKey, BoardKeyError
from arena.db.session import alembic_config, create_db_engine
from arena.store.categories import label_for
from tests.helpers.files import conv_metadata, write_jsonl

#: category names that wrote another board's key before
FORGING = ["code|style", "x|component:2", "a|source:human"]
ODD = ["a/b", "..", "../../etc/passwd", "ünïcødé 数学", "%7C", "100%", "a:b", "|", "x" * 255]


# ---------------------------------------------------------------- the key itself


def _keys() -> list[BoardKey]:
    names = [None, "code", "a", "human", *FORGING, *ODD, "style", "component:2", "overall"]
    return [
        BoardKey(category=c, source=s, component=n, style_controlled=st)
        for c in names
        for s in (None, "human", "a|source:human", "source:x")
        for n in (1, 2, 13)
        for st in (False, True)
    ]


def test_every_key_round_trips_and_no_two_keys_share_a_text():
    keys = _keys()
    texts = [str(k) for k in keys]
    assert len(set(texts)) == len(set(keys)) == len(keys)
    for key, t in zip(keys, texts, strict=True):
        assert BoardKey.parse(t) == key


def test_ordinary_keys_read_as_before():
    assert str(OVERALL) == "overall"
    assert str(BoardKey("math")) == "category:math"
    assert str(BoardKey("math", style_controlled=True)) == "category:math|style"
    assert str(BoardKey(source="judge-1", component=2)) == "source:judge-1|component:2"
    assert str(BoardKey("math", "judge-1")) == "category:math|source:judge-1"
    assert str(BoardKey("ünïcødé 数学")) == "category:ünïcødé 数学"


def test_forging_names_are_their_own_boards():
    code_style = BoardKey("code").with_style()
    assert BoardKey.parse(str(code_style)) == code_style
    forged = BoardKey("code|style")
    assert str(forged) == "category:code%7Cstyle" != str(code_style)
    assert not BoardKey.parse(str(forged)).style_controlled
    assert BoardKey.parse(str(BoardKey("x|component:2"))).component == 1
    src = BoardKey.parse(str(BoardKey("a|source:human")))
    assert (src.category, src.source) == ("a|source:human", None)
    assert BoardKey.parse("category:a|source:human") == BoardKey("a", "human")


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "category:",
        "Overall",
        "overall|category:a",
        "source:a|category:b",  # out of order
        "category:a|component:1",  # set 1 is written without a part
        "category:a|component:02",
        "category:a|style|component:2",
        "category:%7c",  # not the one escape of |
        "category:a%2Fb",  # / is not escaped
        "category:a|judge:b",
        "overall|style|style",
    ],
)
def test_texts_that_are_not_keys_are_refused(bad):
    with pytest.raises(BoardKeyError, match="not a board key"):
        BoardKey.parse(bad)


def test_key_helpers_follow_the_fields():
    key = BoardKey("code|style", "human", component=3, style_controlled=True)
    assert key.main == BoardKey("code|style", "human")
    assert key.paired == BoardKey("code|style", "human", 3, False) == key.raw
    assert key.with_component(1).with_style(False) == key.main
    assert BoardKey("") == OVERALL and OVERALL.is_overall
    with pytest.raises(BoardKeyError):
        BoardKey(component=0)
    with pytest.raises(BoardKeyError):
        BoardKey(component=True)


# ---------------------------------------------------------------- the migration

#: (id, old key, category, source): old keys as 0011 stored them, forged ones included
OLD_SNAPSHOTS = [
    (1, "overall", None, None),
    (2, "overall|style", None, None),
    (3, "category:code", "code", None),
    (4, "category:code|style", "code", None),  # code's style board
    (5, "category:code|style", "code|style", None),  # the raw board of "code|style"
    (6, "category:code|style|style", "code|style", None),
    (7, "category:x|component:2", "x", None),  # set 2 of x
    (8, "category:x|component:2", "x|component:2", None),  # the raw board of "x|component:2"
    (9, "category:x|component:2|component:3|style", "x|component:2", None),
    (10, "category:a|source:human", "a", "human"),
    (11, "category:a|source:human", "a|source:human", None),
    (12, "source:a|source:human|style", None, "a|source:human"),
    (13, "category:100%|source:s:1", "100%", "s:1"),
]
NEW_KEYS = {
    1: OVERALL,
    2: OVERALL.with_style(),
    3: BoardKey("code"),
    4: BoardKey("code", style_controlled=True),
    5: BoardKey("code|style"),
    6: BoardKey("code|style", style_controlled=True),
    7: BoardKey("x", component=2),
    8: BoardKey("x|component:2"),
    9: BoardKey("x|component:2", component=3, style_controlled=True),
    10: BoardKey("a", "human"),
    11: BoardKey("a|source:human"),
    12: BoardKey(source="a|source:human", style_controlled=True),
    13: BoardKey("100%", "s:1"),
}


def _insert_old_snapshots(engine) -> None:
    with engine.begin() as conn:
        for sid, board, category, source in OLD_SNAPSHOTS:
            diag = {"seconds": 1.0}
            if sid == 7:
                diag["component"] = {"number": 2, "main_board": "category:x", "group": 0}
            if sid == 9:
                diag["component"] = {"number": 3, "main_board": "category:x|component:2"}
            if sid == 8:
                diag["component_boards"] = ["category:x|component:2|component:3"]
            conn.execute(
                text(
                    "INSERT INTO snapshots (id, created_at, board, category, source, run_id, "
                    "options_json, seed, code_version, watermark, n_battles, n_excluded, "
                    "n_models, diagnostics_json) VALUES (:id, '2026-01-01', :board, :category, "
                    ":source, 'r', '{}', 1, '0', 1, 1, 0, 1, :diag)"
                ),
                dict(id=sid, board=board, category=category, source=source, diag=json.dumps(diag)),
            )


def _stored(engine) -> dict[int, tuple[str, dict]]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, board, diagnostics_json FROM snapshots")).all()
    return {sid: (board, json.loads(diag)) for sid, board, diag in rows}


def test_upgrade_0012_rewrites_stored_keys_from_the_snapshots_own_columns(db_url):
    cfg = alembic_config(db_url)
    command.upgrade(cfg, "0011")
    engine = create_db_engine(db_url)
    try:
        _insert_old_snapshots(engine)
        command.upgrade(cfg, "0012")
        stored = _stored(engine)
        assert {sid: BoardKey.parse(board) for sid, (board, _) in stored.items()} == NEW_KEYS
        assert {sid: board for sid, (board, _) in stored.items()} == {
            sid: str(k) for sid, k in NEW_KEYS.items()
        }
        assert stored[7][1]["component"]["main_board"] == "category:x"
        assert stored[9][1]["component"]["main_board"] == "category:x%7Ccomponent%3A2"
        assert stored[8][1]["component_boards"] == ["category:x%7Ccomponent%3A2|component:3"]
        # the longest key fits the widened column on PostgreSQL too
        with engine.begin() as conn:
            long = str(BoardKey("|" * 255, "|" * 255, component=99, style_controlled=True))
            conn.execute(text("UPDATE snapshots SET board = :b WHERE id = 1"), {"b": long})
            conn.execute(text("UPDATE snapshots SET board = 'overall' WHERE id = 1"))
        command.downgrade(cfg, "0011")
        assert {sid: board for sid, (board, _) in _stored(engine).items()} == {
            sid: board for sid, board, _, _ in OLD_SNAPSHOTS
        }
        assert _stored(engine)[9][1]["component"]["main_board"] == "category:x|component:2"
    finally:
        engine.dispose()


# ---------------------------------------------------------------- end to end


def _records(n: int, seed: int, prefix: str, categories: list[str]) -> list[dict]:
    """Battles of five models with style metadata, each tagged with a random half of
    ``categories`` (every category gets enough battles for a board)."""
    rng = np.random.default_rng(seed)
    strength = np.array([0.8, 0.4, 0.0, -0.4, -0.8])
    out = []
    for k in range(n):
        a, b = rng.choice(5, size=2, replace=False)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random()
        winner = "tie" if u < 0.1 else ("model_a" if u < 0.1 + 0.9 * p else "model_b")
        tok = rng.integers(50, 900, 2).tolist()
        meta = conv_metadata(tok, rng.integers(0, 5, 2).tolist(), [1, 0], [0, 2])
        out.append(
            {
                "id": f"{prefix}{k}",
                "model_a": f"m{a}",
                "model_b": f"m{b}",
                "winner": winner,
                "conv_metadata": meta,
                **{c: bool(rng.random() < 0.6) for c in categories},
            }
        )
    return out


STEM = re.compile(r"board-[a-z0-9-]+-[0-9a-f]{8}")


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_categories_named_like_key_parts_get_their_own_labelled_boards(run_cli, db_url, tmp_path):
    cats = ["code", *FORGING, "x", "a"]
    run_cli("ingest", write_jsonl(tmp_path / "b.jsonl", _records(500, 1, "b", cats)), "-q")
    for src, seed in (("a|source:human", 2), ("human", 3)):
        path = write_jsonl(tmp_path / f"{seed}.jsonl", _records(300, seed, f"s{seed}-", ["a"]))
        run_cli("ingest", path, "--source", src, "-q")
    run_cli("rebuild", "--all-categories", "--rounds", "20", "-q")
    run_cli("rebuild", "--source", "a|source:human", "--rounds", "20", "-q")
    run_cli("rebuild", "--source", "human", "--category", "a", "--rounds", "20", "-q")

    def board(*args: str) -> dict:
        return json.loads(run_cli("leaderboard", *args, "--format", "json").output)["snapshot"]

    seen = {}
    for name in ["code", *FORGING]:
        raw = board("--category", name)
        style = board("--category", name, "--style-control")
        assert (raw["category"], raw["source"], raw["component"]) == (name, None, 1)
        assert not raw["style_controlled"] and style["style_controlled"]
        assert style["category"] == name and style["paired_board"] == raw["board"]
        assert BoardKey.parse(raw["board"]) == BoardKey(name)
        seen[name] = raw["id"]
    assert len(set(seen.values())) == len(seen)  # four boards, none another's
    src = board("--source", "a|source:human")
    assert (src["category"], src["source"]) == (None, "a|source:human")
    both = board("--source", "human", "--category", "a")
    assert (both["category"], both["source"]) == ("a", "human")
    assert both["board"] == "category:a|source:human" != board("--category", "a|source:human")

    out = tmp_path / "site"
    run_cli("publish", str(out), "-q")
    docs = {}
    for page in out.glob("*.json"):
        if page.name == "status.json":
            continue
        doc = json.loads(page.read_text(encoding="utf-8"))["snapshot"]
        docs[doc["board"]] = (page, doc)
        if page.name != "leaderboard.json":
            assert STEM.fullmatch(page.stem) and page.with_suffix(".html").is_file()
    engine = create_db_engine(db_url)
    with engine.connect() as conn:
        stored = {b for (b,) in conn.execute(text("SELECT DISTINCT board FROM snapshots"))}
    engine.dispose()
    assert set(docs) == stored  # every board published, each under its own file
    for name in FORGING:
        _, raw = docs[str(BoardKey(name))]
        _, style = docs[str(BoardKey(name, style_controlled=True))]
        assert raw["board_label"] == label_for(name)  # no ", style-controlled"
        assert style["board_label"] == f"{label_for(name)}, style-controlled"
    _, code_style = docs["category:code|style"]
    assert code_style["category"] == "code" and code_style["board_label"].endswith(
        ", style-controlled"
    )
    _, src_doc = docs[str(BoardKey(source="a|source:human"))]
    # the site names a source's board by what it measures (votes / judge verdicts)
    assert src_doc["board_label"] == "a|source:human (votes)"
    _, both_doc = docs["category:a|source:human"]
    assert both_doc["board_label"] == f"{label_for('a')} \u00b7 human (votes)"
