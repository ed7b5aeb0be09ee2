"""A published site that looks like the real one, for the browser test.

LMArena's own model names (the longest ones: they are what breaks a phone
layout), two overall snapshots (so the page has changes and a history), LMArena's
category keys as boards (so the navigation is as long as the real one), and a
few hostile names from :data:`tests.publish_fixtures.EVIL_NAMES`.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np

from arena.db.models import Model
from arena.db.session import open_engine
from arena.publish import publish_site
from tests.publish_fixtures import BASE_TIME, EVIL_NAMES, add_snapshot

__all__ = ["REAL_NAMES", "CATEGORIES", "build_browser_site"]

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
CATEGORIES = ("math", "creative_writing", "if", "criteria.domain_knowledge")


def build_browser_site(db_path: Path, out: Path) -> dict[str, Path]:
    """Write the database and publish it; returns ``{"board", "category", "model"}`` pages."""
    engine = open_engine(f"sqlite:///{db_path}")
    rng = np.random.default_rng(13)
    names = list(REAL_NAMES[:6]) + list(EVIL_NAMES[:3]) + list(REAL_NAMES[6:])
    strength = 1250 - 12.0 * np.arange(len(names)) + rng.normal(0, 4, len(names))
    diag = {"attribution": "LMArena arena-human-preference-140k (CC-BY-4.0)"}
    try:
        with engine.begin() as conn:
            for k in range(2):
                add_snapshot(
                    conn,
                    names=names,
                    strength=strength + rng.normal(0, 8, len(names)),
                    when=BASE_TIME + timedelta(days=7 * k),
                    rng=rng,
                    diagnostics=diag,
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
            conn.execute(
                Model.__table__.update().where(Model.name == names[-1]).values(hidden=True)
            )
        report = publish_site(engine, out)
    finally:
        engine.dispose()
    category = next(f for f in report.files if f.startswith("board-category-math"))
    model = next(f for f in report.files if f.startswith("models/gemini-2-5-flash-lite"))
    return {"board": out / "index.html", "category": out / category, "model": out / model}
