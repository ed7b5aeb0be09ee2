"""``arena rebuild --components separate``: one board per comparable set, and every
reader of boards working with them (SQLite and PostgreSQL)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from arena.boards.snapshots import load_board, load_samples
from arena.cli import cli
from arena.db.session import open_engine
from tests.helpers.cli import cli_for as cli_for_url

ROOT = Path(__file__).resolve().parents[1]
# ../shared from the project root (one more level up from a git worktree in wt/)
SHARED = next(
    (d / "shared" / "data" for d in (ROOT.parent, ROOT.parent.parent) if (d / "shared").is_dir()),
    ROOT.parent / "shared" / "data",
)
ROUNDS = "200"  # the step-down needs more than 40 draws to clear its Monte-Carlo margin
GROUP_A = [f"alpha-{i}" for i in range(5)]
GROUP_B = [f"beta-{i}" for i in range(3)]


def _json(run_cli, *args):
    return json.loads(run_cli(*args, "--format", "json").stdout)


def _votes(path: Path, seed: int = 3) -> Path:
    """Two groups that never met (5 and 3 models), every battle tagged category ``x``."""
    rng = np.random.default_rng(seed)
    rows = []
    for group, n in ((GROUP_A, 900), (GROUP_B, 400)):
        strength = {m: i * 0.4 for i, m in enumerate(group)}
        for _ in range(n):
            a, b = rng.choice(group, 2, replace=False)
            p = 1 / (1 + np.exp(strength[b] - strength[a]))
            u = rng.random()
            winner = "tie" if u < 0.1 else ("model_a" if u < 0.1 + 0.9 * p else "model_b")
            rows.append((len(rows) + 1, a, b, winner, "x"))
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "model_a", "model_b", "winner", "category"])
        w.writerows(rows)
    return path


@pytest.fixture
def split_db(run_cli, tmp_path):
    run_cli("ingest", str(_votes(tmp_path / "votes.csv")), "-q")
    return run_cli


def _rebuild(run_cli, *extra):
    return run_cli("rebuild", "--rounds", ROUNDS, "--min-battles", "10", *extra)


def _ratings(doc):
    return {r["model"]: (r["rating"], r["ci_low"], r["ci_high"], r["tier"]) for r in doc["rows"]}


def test_separate_writes_one_board_per_set_main_board_unchanged(split_db):
    run_cli = split_db
    _rebuild(run_cli)
    largest = _json(run_cli, "leaderboard")
    out = _rebuild(run_cli, "--components", "separate", "--all-categories").output
    assert "overall|component:2" in out and "category:x|component:2" in out
    boards = [s["board"] for s in _json(run_cli, "snapshots")["snapshots"]]
    assert boards[-4:] == ["overall", "overall|component:2", "category:x", "category:x|component:2"]
    main = _json(run_cli, "leaderboard")
    # the main board is what --components largest writes, plus the list of other sets
    assert _ratings(main) == _ratings(largest)
    assert main["snapshot"]["component"] == 1
    assert main["snapshot"]["component_boards"] == ["overall|component:2"]
    assert all(main["rows"][i]["flags"] == ["disconnected"] for i in range(5, 8))
    second = _json(run_cli, "leaderboard", "--component", "2")
    assert second["snapshot"]["board"] == "overall|component:2"
    assert second["snapshot"]["main_board"] == "overall"
    assert {r["model"] for r in second["rows"]} == set(GROUP_B)
    assert all(r["rank_ub"] is not None and r["rating"] is not None for r in second["rows"])
    per_category = _json(run_cli, "leaderboard", "--category", "x", "--component", "2")
    assert per_category["snapshot"]["board"] == "category:x|component:2"
    assert _ratings(per_category) == _ratings(second)
    text = run_cli("leaderboard").output
    assert "other comparable sets" in text and "overall|component:2" in text
    text = run_cli("leaderboard", "--component", "2").output
    assert "not comparable with it" in text
    # --component 1 is the main board
    assert _json(run_cli, "leaderboard", "--component", "1")["snapshot"]["board"] == "overall"


def test_unknown_component_lists_the_sets(split_db):
    run_cli = split_db
    _rebuild(run_cli)
    result = run_cli("leaderboard", "--component", "2", ok=False)
    assert result.exit_code != 0 and "--components separate" in result.output
    assert "Traceback" not in result.output
    _rebuild(run_cli, "--components", "separate")
    result = run_cli("leaderboard", "--component", "3", ok=False)
    assert "no comparable set 3" in result.output and "sets 1, 2" in result.output
    # a later rebuild that did not split: the set's old board is not current any more
    _rebuild(run_cli)
    result = run_cli("leaderboard", "--component", "2", ok=False)
    assert result.exit_code != 0 and "--components separate" in result.output


def test_compare_within_and_across_sets(split_db):
    run_cli = split_db
    _rebuild(run_cli, "--components", "separate")
    within = _json(run_cli, "compare", "beta-2", "beta-0")
    assert within["board"] == "overall|component:2" and within["reason"] is None
    assert within["difference"] is not None and within["verdict"] != "no verdict"
    across = _json(run_cli, "compare", "alpha-4", "beta-2")
    assert across["verdict"].startswith("no verdict") and across["difference"] is None
    assert across["met_through_others"] is False and across["significant"] is False
    text = run_cli("compare", "beta-2", "alpha-4").output
    assert "never met, directly or through other models" in text
    assert "better" not in text.split("verdict:")[1]
    # asked on the main board explicitly: no verdict there for beta models
    pinned = _json(run_cli, "compare", "beta-2", "beta-0", "--component", "1")
    assert pinned["verdict"].startswith("no verdict") and pinned["board"] == "overall"


def test_plan_for_a_set(split_db):
    run_cli = split_db
    _rebuild(run_cli, "--components", "separate")
    main = _json(run_cli, "plan")
    assert {m for p in main["pairs"] for m in (p["model_a"], p["model_b"])} == set(GROUP_A)
    second = _json(run_cli, "plan", "--component", "2")
    assert {m for p in second["pairs"] for m in (p["model_a"], p["model_b"])} == set(GROUP_B)
    assert second["snapshot"] == _json(run_cli, "leaderboard", "--component", "2")["snapshot"]["id"]
    power = _json(run_cli, "plan", "power", "beta-0", "beta-2", "--component", "2")
    assert power["snapshot"] == second["snapshot"] and len(power["pairs"]) == 1
    assert power["pairs"][0]["model_b"] == "beta-2" and power["pairs"][0]["se"] > 0


def test_audit_of_a_set(split_db):
    run_cli = split_db
    _rebuild(run_cli, "--components", "separate")
    doc = _json(run_cli, "audit", "--component", "2", "--probe", "coverage", "--rounds", "20")
    assert doc["board"] == "overall|component:2"
    assert doc["models"] == len(GROUP_B) and doc["votes"] == 400


def test_diff_of_set_boards(split_db, tmp_path):
    run_cli = split_db
    _rebuild(run_cli, "--components", "separate")
    _rebuild(run_cli, "--components", "separate", "--seed", "9")
    ids = {}
    for s in _json(run_cli, "snapshots")["snapshots"]:
        ids.setdefault(s["board"], []).append(s["id"])
    old, new = ids["overall|component:2"]
    rows = _json(run_cli, "diff", str(old), str(new))["rows"]
    assert {r["model"] for r in rows} == set(GROUP_B) and all(
        r["status"] not in ("new", "gone")
        for r in rows  # every model in both snapshots
    )
    # a set's board against the main board: different boards, refused
    result = run_cli("diff", str(ids["overall"][0]), str(new), ok=False)
    assert result.exit_code != 0 and "different boards" in result.output


def test_diff_refuses_set_boards_with_no_model_in_common(run_cli, engine, tmp_path):
    """Sets are numbered anew by each rebuild: set 2 may become other models."""
    run_cli("ingest", str(_votes(tmp_path / "votes.csv")), "-q")
    _rebuild(run_cli, "--components", "separate")
    # a third group with more battles than beta's: it becomes set 2, beta set 3
    extra = tmp_path / "gamma.csv"
    rng = np.random.default_rng(5)
    with extra.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "model_a", "model_b", "winner"])
        for i in range(600):
            a, b = rng.choice(["gamma-0", "gamma-1", "gamma-2"], 2, replace=False)
            w.writerow([10_000 + i, a, b, rng.choice(["model_a", "model_b", "tie"])])
    run_cli("ingest", str(extra), "-q")
    _rebuild(run_cli, "--components", "separate")
    snaps = [
        s for s in _json(run_cli, "snapshots")["snapshots"] if s["board"] == "overall|component:2"
    ]
    result = run_cli("diff", str(snaps[0]["id"]), str(snaps[1]["id"]), ok=False)
    assert result.exit_code != 0 and "different comparable sets" in result.output
    assert _json(run_cli, "leaderboard", "--component", "3")["rows"][0]["model"].startswith("beta")
    # the published set-2 page (gamma now) compares with nothing: its previous snapshot
    # is beta's set, so no arrows, nobody "new", and the facts line says why
    site = tmp_path / "site"
    run_cli("publish", str(site), "-q")
    (page,) = site.glob("board-overall-component-2-*.html")
    html = page.read_text()
    assert "gamma-0" in html and "beta-0" not in html
    assert "badge-new" not in html and 'class="chg' not in html
    assert "the previous snapshot of this board holds another comparable set" in html


def test_site_has_a_page_per_set_only_beside_its_main_board(split_db, tmp_path):
    run_cli = split_db
    _rebuild(run_cli, "--components", "separate")
    site = tmp_path / "site"
    run_cli("publish", str(site))
    pages = sorted(p.name for p in site.glob("board-overall-component-2-*.html"))
    assert len(pages) == 1
    page = (site / pages[0]).read_text()
    assert "comparable set 2" in page and "not comparable with it" in page
    assert "beta-2" in page and "alpha-4" not in page
    # every page names at most a few boards; the shared board menu lists them all
    assert pages[0] in (site / "boards.html").read_text()
    # rebuilt without splitting: the set's page goes (its numbers may be stale)
    _rebuild(run_cli)
    run_cli("publish", str(site))
    assert not list(site.glob("board-overall-component-*"))


def _shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"shared data missing: {path}")
    return path


def test_llmfao_and_mt_bench_each_rated_as_if_alone(run_cli, engine, tmp_path):
    """The MT-Bench set's board is byte for byte MT-Bench rebuilt alone (same seed)."""
    crowd = _shared("llmfao", "crowd-comparisons.csv")
    mtbench = _shared("mt-bench-human", "human_judgments_turn1.jsonl")
    run_cli("ingest", str(crowd), "--source", "crowd", "-q")
    run_cli("ingest", str(mtbench), "--source", "mtbench", "-q")
    run_cli("rebuild", "--rounds", ROUNDS, "--cluster", "judge", "--components", "separate")
    second = _json(run_cli, "leaderboard", "--component", "2")
    assert {r["model"] for r in second["rows"]} == {
        "gpt-4",
        "claude-v1",
        "gpt-3.5-turbo",
        "vicuna-13b-v1.2",
        "alpaca-13b",
        "llama-13b",
    }
    alone_url = f"sqlite:///{tmp_path / 'mtbench_only.db'}"
    runner = CliRunner()
    for args in (
        ["db", "upgrade"],
        ["ingest", str(mtbench), "--source", "mtbench", "-q"],
        ["rebuild", "--rounds", ROUNDS, "--cluster", "judge"],
    ):
        result = runner.invoke(cli, ["--db", alone_url, *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    alone_engine = open_engine(alone_url)
    sid = second["snapshot"]["id"]
    with engine.connect() as conn, alone_engine.connect() as other:
        both, alone = load_board(conn, sid), load_board(other, 1)
        s_both, s_alone = load_samples(conn, sid), load_samples(other, 1)
    alone_engine.dispose()

    def key(r):
        return (r.model, r.rating, r.ci_low, r.ci_high, r.rank_ub, r.rank_lb, r.tier)

    assert [key(r) for r in both.rows] == [key(r) for r in alone.rows]
    order = [r.position for r in both.rows]
    assert s_both[:, order].tobytes() == s_alone[:, [r.position for r in alone.rows]].tobytes()


def _style_votes(path: Path, groups, seed: int = 4) -> Path:
    """Battles with LMArena style metadata (every 10th without), for ``groups`` of models."""
    from tests.helpers.files import conv_metadata, write_jsonl

    rng = np.random.default_rng(seed)
    records = []
    for group, n in groups:
        for _ in range(n):
            a, b = rng.choice(group, 2, replace=False)
            tokens, headers, lists, bold = (
                tuple(int(x) for x in rng.integers(lo, hi, 2))
                for lo, hi in ((50, 900), (0, 4), (0, 6), (0, 8))
            )
            u = rng.random() + (0.15 if tokens[0] > tokens[1] else 0.0)  # longer answers win more
            winner = "tie" if u < 0.15 else ("model_a" if u > 0.6 else "model_b")
            info = conv_metadata(tokens, headers, lists, bold)
            records.append(
                {
                    "id": f"s{len(records)}",
                    "model_a": str(a),
                    "model_b": str(b),
                    "winner": winner,
                    "conv_metadata": None if len(records) % 10 == 9 else info,
                }
            )
    return Path(write_jsonl(path, records))


def test_style_controlled_board_per_set(run_cli, tmp_path):
    """A set's style-controlled board: only its battles with metadata, as if alone."""
    groups = ((GROUP_A, 900), (GROUP_B, 500))
    run_cli("ingest", str(_style_votes(tmp_path / "both.jsonl", groups)), "-q")
    _rebuild(run_cli, "--components", "separate")
    boards = {s["board"] for s in _json(run_cli, "snapshots")["snapshots"]}
    assert {"overall|style", "overall|component:2", "overall|component:2|style"} <= boards
    styled = _json(run_cli, "leaderboard", "--component", "2", "--style-control")
    assert styled["snapshot"]["board"] == "overall|component:2|style"
    assert {r["model"] for r in styled["rows"]} == set(GROUP_B)
    # group B's battles are records 900..1399: every 10th of them has no metadata
    assert styled["snapshot"]["counts"]["excluded"] == 50
    assert styled["snapshot"]["counts"]["battles"] == 450
    assert (
        styled["snapshot"]["paired_snapshot"]
        == _json(run_cli, "leaderboard", "--component", "2")["snapshot"]["id"]
    )

    # group B ingested alone (same records, same ids): the same style board
    alone = tmp_path / "alone.db"
    run_alone = cli_for_url(f"sqlite:///{alone}")
    records = (tmp_path / "both.jsonl").read_text().splitlines(keepends=True)[900:]
    (tmp_path / "b.jsonl").write_text("".join(records))
    run_alone("ingest", str(tmp_path / "b.jsonl"), "-q")
    _rebuild(run_alone)
    by_itself = _json(run_alone, "leaderboard", "--style-control")
    assert _ratings(by_itself) == _ratings(styled)
    assert by_itself["snapshot"]["style_coefficients"] == styled["snapshot"]["style_coefficients"]


def test_compare_on_a_board_with_models_outside_the_set(split_db, engine):
    """Models outside the comparable set have no samples (NaN columns): they must not
    poison the verdicts of the others (it once failed for every pair: "samples must be
    finite")."""
    from arena.boards.inference import board_separated_pairs

    _rebuild(split_db)
    board = _json(split_db, "leaderboard")
    ranked = [r["model"] for r in board["rows"] if r["rank_low"] is not None]
    assert sorted(ranked) == GROUP_A
    with engine.connect() as conn:
        separated = set(board_separated_pairs(conn, board["snapshot"]["id"]))
    assert ("alpha-4", "alpha-0") in separated  # 1.6 logits apart, 900 battles
    for i, a in enumerate(GROUP_A):
        for b in GROUP_A[i + 1 :]:
            h = _json(split_db, "compare", a, b)
            assert h["significant"] == ((a, b) in separated or (b, a) in separated)
            assert ("is better" in h["verdict"]) == h["significant"]
            assert set(h["uncorrected"]) == {"ci_low", "ci_high", "verdict"}
    h = _json(split_db, "compare", "alpha-0", "beta-0")
    assert h["verdict"].startswith("no verdict") and not h["significant"]
