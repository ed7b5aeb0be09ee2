"""The README's Tour, as a test: every command, in order, on the database ``arena demo`` wrote.

Each command's output is checked for the facts the README's comment beside it
claims (issue 39 item 5). The demo runs on the bundled data (fewer bootstrap
rounds than the README's, the only difference), so this is a slow test.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from arena.core.resources import demo_aliases
from arena.store.aliases import read_aliases
from tests.helpers.cli import cli_for
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow  # the demo on 211,633 battles, then 14 commands (~1 min)


def tour_commands() -> list[list[str]]:
    """The Tour's commands, as README.md writes them (comments dropped), in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Tour\n.*?```sh\n(.*?)```", text, re.S | re.M)
    assert block is not None, "README.md has no Tour block"
    out = []
    for line in block.group(1).splitlines():
        args = shlex.split(line, comments=True)
        if args:
            assert args[0] == "arena", line
            out.append(args[1:])
    return out


def _table_head(out: str) -> list[str]:
    """The header of the first table of ``out`` (the line above the dashes)."""
    lines = out.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("---"))
    return re.split(r"\s{2,}", lines[i - 1].strip())


def _check_models(out, args):
    if args[1:2] == ["aliases"]:
        assert _table_head(out) == ["alias", "canonical", "reason"]
        bundled = [a for a in read_aliases(demo_aliases())]
        assert len(bundled) >= 8
        for a in bundled:  # both models of every bundled alias are in the demo data
            assert re.search(rf"^{re.escape(a.alias)}\s+{re.escape(a.canonical)}\s+\S", out, re.M)
        return
    head = _table_head(out)
    assert head[:2] == ["model", "battles"] and {"wins", "losses", "ties", "organisation"} <= set(
        head
    )
    assert "source:lmarena-140k" in head and "source:ko-arena-hard" in head


def _check_categories(out, _):
    assert "hard_prompts" in out and "Hard Prompts" in out and "at least 6 of the 7" in out


def _check_leaderboard(out, args):
    board = "overall"
    if "--category" in args:
        board = "category:hard_prompts"
    if "--source" in args:
        board = "source:ko-arena-hard|style"
    assert out.startswith("snapshot ") and f"({board})" in out.splitlines()[0]
    assert _table_head(out)[:6] == ["rank", "tier", "model", "rating", "minus", "plus"]
    if board == "overall":  # the human votes alone: the judge's verdicts are not pooled in
        assert " 135,624 battles" in out.splitlines()[0]


def _check_diff(out, args):
    named = out.splitlines()[0]
    if "--style-control" in args:  # raw vs style: the two boards of one rebuild
        assert "board source:ko-arena-hard (" in named and "source:ko-arena-hard|style" in named
    else:  # the rebuild just before: its latest snapshot against the one before
        assert named.count("board category:math") == 2
    assert _table_head(out)[:4] == ["model", "status", "rank", "old rank"]


def _check_compare(out, _):
    assert "P(gemini-2.5-pro better)" in out and "direct record:" in out
    assert "rank sets on the board (all models at once)" in out


def _check_rebuild(out, _):
    assert re.search(r"snapshot \d+: category:math", out)


def _check_audit(out, _):
    assert "audit of snapshot" in out and "(source:ko-arena-hard)" in out
    probes = {"position", "ties", "intransitivity"}
    assert probes <= {ln.split()[0] for ln in out.splitlines() if ln.strip()}


def _check_plan(out, args):
    head = _table_head(out)
    assert head[:2] == ["model A", "model B"]
    if args[:2] == ["plan", "power"]:
        assert "battles needed" in head
    else:
        lines = out.strip().splitlines()
        assert len(lines) == 2 + 5 + 1  # --top 5 pairs, then what the columns mean
        assert lines[-1].startswith("probability: the share of the next battles")


def _check_agreement(out, args):
    assert "reference: snapshot" in out and "(board source:lmarena-140k)" in out
    assert "(board source:ko-arena-hard)" in out and "shared ranked models" in out
    assert "Spearman" in out and "models left out" in out
    assert "only on the candidate board (" in out  # the unmatched names, listed
    doc = json.loads(RUN[0](*args, "--format", "json").stdout)
    listed = "\n".join(ln for ln in out.splitlines() if ln.startswith("  "))
    assert f"{len(doc['models'])} shared ranked models: " in out
    assert f"{len(doc['left_out'])} models left out" in out
    assert all(d["model"] in listed for d in doc["left_out"])
    # every bundled alias whose two models both boards rank is compared as one model
    matched = {(d["reference"], d["candidate"]) for d in doc["aliased"]}
    assert f"{len(matched)} of them matched by alias" in out
    assert ("claude-3-7-sonnet-20250219", "claude-3.7-sonnet") in matched
    apart = {d["model"] for d in doc["left_out"] if d["reason"].startswith("only on")}
    assert not apart & {n for a in read_aliases(demo_aliases()) for n in (a.alias, a.canonical)}


def _check_sampling(out, args):
    assert out.splitlines()[0] == "135,624 battles of source lmarena-140k"
    head = _table_head(out)
    assert head[:4] == ["name", "models", "battles", "share"]
    doc = json.loads(RUN[0](*args, "--format", "json").stdout)
    assert sum(r["battles"] for r in doc["organisations"]) == 2 * doc["battles"]


def _check_publish(out, _):
    assert "published snapshot" in out and "index.html" in out


#: the test's runner, for checks that read a command's JSON too
RUN: list = []

CHECKS = {
    "models": _check_models,
    "categories": _check_categories,
    "leaderboard": _check_leaderboard,
    "diff": _check_diff,
    "compare": _check_compare,
    "rebuild": _check_rebuild,
    "audit": _check_audit,
    "plan": _check_plan,
    "agreement": _check_agreement,
    "sampling": _check_sampling,
    "publish": _check_publish,
}


def test_every_tour_command_runs_in_order_and_says_what_the_readme_claims(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = cli_for(f"sqlite:///{tmp_path / 'arena.db'}")
    run("demo", "site", "--rounds", "100", "-q")
    RUN[:] = [run]
    commands = tour_commands()
    assert len(commands) >= 14 and {c[0] for c in commands} == set(CHECKS)
    for args in commands:
        result = run(*args)  # exit 0, or the assertion names the command
        # publish says what it wrote on stderr (progress), the rest on stdout
        CHECKS[args[0]](result.output if args[0] == "publish" else result.stdout, args)
    # the site the Tour published: absolute link previews, as the comment says
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'content="https://example.org/arena/' in page
    assert 'href="sampling.html"' in page and (tmp_path / "site" / "sampling.html").is_file()
    doc = json.loads((tmp_path / "site" / "leaderboard.json").read_text(encoding="utf-8"))
    assert doc["snapshot"]["board"] == "overall"
