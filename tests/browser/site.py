"""A published site that looks like the real one, for the browser test.

LMArena's own model names (the longest ones: they are what breaks a phone
layout), two overall snapshots (so the page has changes and a history), LMArena's
category keys as boards (so the navigation is as long as the real one), and a
few hostile names from :data:`tests.publish_fixtures.EVIL_NAMES`. The main
snapshot carries a stored vote audit (run for real on synthetic votes, one judge
with a long name always picking the first-shown answer), so the site has its
audit page, and a judge's board of a baseline design (every model against one).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np

from arena.audit.read import save_audit
from arena.audit.report import run_audit
from arena.audit.setup import AuditOptions
from arena.audit.votes import Votes
from arena.db.models import DerivedCategory, Model
from arena.db.session import open_engine
from arena.publish import publish_site
from arena.store.derived import HARD_PROMPTS
from tests.publish_fixtures import BASE_TIME, EVIL_NAMES, add_snapshot

__all__ = ["REAL_NAMES", "CATEGORIES", "GROK_DISPLAY", "ORGANISATIONS", "build_browser_site"]

#: From LMArena's arena-human-preference-140k, longest first.
REAL_NAMES = (
    "gemini-2.5-flash-lite-preview-06-17-thinking",
    "claude-3-7-sonnet-20250219-thinking-32k",
    "claude-opus-4-20250514-thinking-16k",
    "gemini-2.5-pro-preview-05-06",
    "gemini-2.5-pro-preview-03-25",
    "llama-4-maverick-17b-128e-instruct",
    "amazon-nova-experimental-chat-05-14",
    "mistral-small-3.1-24b-instruct-2503",
    "qwen3-235b-a22b-no-thinking",
    "chatgpt-4o-latest-20250326",
    "deepseek-r1-0528",
    "o3-2025-04-16",
    "grok-4-0709",
    "amazon.nova-pro-v1:0",
    "gpt-4.1-mini-2025-04-14",
    "gemma-3-27b-it",
    "qwq-32b",
    "minimax-m1",
)
CATEGORIES = ("math", "creative_writing", "if", "criteria.domain_knowledge", "hard_prompts")
#: more boards than the header menu holds: the rest are on boards.html
MORE = tuple(c for c in HARD_PROMPTS.tags if c != "criteria.domain_knowledge")
#: Organisation by model-name prefix (``arena models annotate NAME --organisation``).
ORGANISATIONS = {"gemini-": "Google", "claude-": "Anthropic", "o3-": "OpenAI"}
GROK_DISPLAY = "Grok 4"


def _audit(names: list[str], rng: np.random.Generator) -> dict:
    """A real audit document of synthetic votes with judges and questions."""
    m, n = len(names), 1500
    strength = np.linspace(1.0, -1.0, m)
    a = rng.integers(m, size=n)
    b = (a + rng.integers(1, m, size=n)) % m
    judge = [f"judge-{int(j):02d}" for j in rng.integers(25, size=n)]
    judge[::6] = ["annotator-with-a-rather-long-identifier-0007"] * len(judge[::6])
    biased = np.array([j.startswith("annotator") for j in judge])
    a_wins = biased | (rng.random(n) < 1 / (1 + np.exp(strength[b] - strength[a])))
    votes = Votes.build(
        names,
        a,
        b,
        np.where(a_wins, 0, 1).astype(np.int8),
        judge=judge,
        question=[f"q{int(q)}" for q in rng.integers(40, size=n)],
    )
    return run_audit(votes, AuditOptions(rounds=30)).to_dict()


def build_browser_site(db_path: Path, out: Path) -> dict[str, Path]:
    """Write the database and publish it; returns the pages the test visits by kind."""
    engine = open_engine(f"sqlite:///{db_path}")
    rng = np.random.default_rng(13)
    names = list(REAL_NAMES[:6]) + list(EVIL_NAMES[:3]) + list(REAL_NAMES[6:])
    strength = 1250 - 12.0 * np.arange(len(names)) + rng.normal(0, 4, len(names))
    diag = {"attribution": "LMArena arena-human-preference-140k (CC-BY-4.0)"}
    try:
        with engine.begin() as conn:
            for k in range(2):
                main = add_snapshot(
                    conn,
                    names=names,
                    strength=strength + rng.normal(0, 8, len(names)),
                    when=BASE_TIME + timedelta(days=7 * k),
                    rng=rng,
                    diagnostics=diag,
                )
            # the latest run also wrote the style-controlled overall board: the site
            # opens on it (index.html), the raw board one click away
            add_snapshot(
                conn,
                names=names,
                strength=strength + rng.normal(0, 8, len(names)),
                when=BASE_TIME + timedelta(days=7),
                board="overall|style",
                rng=rng,
                diagnostics=diag,
            )
            # LMArena's Hard Prompts, a derived category whose rule the page states
            conn.execute(
                DerivedCategory.__table__.insert().values(
                    name=HARD_PROMPTS.key,
                    tags=json.dumps(list(HARD_PROMPTS.tags)),
                    at_least=HARD_PROMPTS.at_least,
                    note=HARD_PROMPTS.note,
                )
            )
            for j, cat in enumerate(CATEGORIES):
                sub = names[: 10 + j]
                add_snapshot(
                    conn,
                    names=sub,
                    strength=strength[: len(sub)][::-1].copy(),
                    when=BASE_TIME + timedelta(days=8 + j),
                    board=f"category:{cat}",
                    category=cat,
                    rng=rng,
                    unranked=1,
                    diagnostics=diag,
                )
            for j, cat in enumerate(MORE):
                add_snapshot(
                    conn,
                    names=names[:8],
                    strength=strength[:8].copy(),
                    when=BASE_TIME + timedelta(days=20 + j),
                    board=f"category:{cat}",
                    category=cat,
                    rng=rng,
                    unranked=0,
                    diagnostics=diag,
                )
            # an LLM judge's board of a baseline design (every model against one, as
            # Arena-Hard): the page draws scores against the baseline, not heatmaps
            add_snapshot(
                conn,
                names=names,
                strength=strength.copy(),
                when=BASE_TIME + timedelta(days=30),
                board="source:ko-arena-hard",
                rng=rng,
                unranked=1,
                diagnostics=diag,
                baseline=3,
            )
            save_audit(conn, main, {"snapshot": main, **_audit(names[:8], rng)})
            conn.execute(
                Model.__table__.update().where(Model.name == names[-1]).values(hidden=True)
            )
            # organisations and one display name, as `arena models annotate` sets them:
            # the board's name filter finds a model by either, and by its key
            for prefix, org in ORGANISATIONS.items():
                conn.execute(
                    Model.__table__.update()
                    .where(Model.name.startswith(prefix))
                    .values(organisation=org)
                )
            conn.execute(
                Model.__table__.update()
                .where(Model.name == "grok-4-0709")
                .values(display_name=GROK_DISPLAY)
            )
        report = publish_site(engine, out)
    finally:
        engine.dispose()
    category = next(f for f in report.files if f.startswith("board-category-hard-prompts"))
    raw = next(f for f in report.files if f.startswith("board-overall-") and f.endswith(".html"))
    model = next(f for f in report.files if f.startswith("models/gemini-2-5-flash-lite"))
    judge = next(f for f in report.files if f.startswith("board-source-ko-arena-hard-") and f.endswith(".html"))  # fmt: skip
    return {
        "board": out / "index.html",
        "category": out / category,
        "model": out / model,
        "audit": out / "audit.html",
        "raw": out / raw,
        "boards": out / "boards.html",
        "baseline": out / judge,
    }
