"""Locate the files the design keeps at the repository top level.

In a wheel they live inside the package (``arena/migrations``, ``arena/templates``,
``arena/alembic.ini``); in a source checkout or an editable install they sit one
level above the package. Both layouts are searched, package first.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = (
    Path(__file__).resolve().parents[1]
)  # the arena package (this file is arena/core/resources.py)


def _find(name: str) -> Path:
    for base in (_PACKAGE, _PACKAGE.parent):
        candidate = base / name
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"arena installation is missing {name!r} (looked in {_PACKAGE})")


def alembic_ini() -> Path:
    return _find("alembic.ini")


def migrations_dir() -> Path:
    return _find("migrations")


def templates_dir() -> Path:
    return _find("templates")


def demo_data() -> Path:
    return _PACKAGE / "data" / "lmarena-140k-battles.csv.gz"


def demo_judge_data() -> Path:
    """The demo's second source: ko-arena-hard LLM-judge battles with style metadata."""
    return _PACKAGE / "data" / "ko-arena-hard-battles.jsonl.gz"


def demo_models() -> Path:
    """Organisation, licence and link of every model of the demo data (``models.csv``)."""
    return _PACKAGE / "data" / "models.csv"


#: The demo's sources: (source name, file) -- human votes first, then judge verdicts.
def demo_aliases() -> Path:
    """The demo's model aliases: one model spelled two ways by its two sources (``model-aliases.csv``)."""
    return _PACKAGE / "data" / "model-aliases.csv"


DEMO_SOURCES = (("lmarena-140k", demo_data), ("ko-arena-hard", demo_judge_data))

#: The judge of the ko-arena-hard battles (left out of the demo's human-vote boards).
DEMO_JUDGE = "ensemble"

#: Shown wherever the bundled demo data is used (CC-BY-4.0 and Apache-2.0 require attribution).
DEMO_ATTRIBUTION = (
    "Demo data: LMArena, arena-human-preference-140k (135,634 human votes), licensed "
    "CC-BY-4.0; ko-arena-hard-auto LLM-judge battles (75,999 verdicts of the judge "
    "ensemble), licensed Apache-2.0; model organisations and licences compiled by the "
    "arena project."
)
