"""Where the repository, ../shared and the bundled test data are."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
#: Small data files committed under tests/data.
DATA = ROOT / "tests" / "data"
HARNESS = DATA / "eval_harness"
#: Two lm-evaluation-harness sample files of one task (models x and y).
X_FILE = next((HARNESS / "model-x").glob("samples_*.jsonl"))
Y_FILE = next((HARNESS / "model-y").glob("samples_*.jsonl"))


def shared_path(*parts: str) -> Path:
    """A file under ../shared.

    Skipped loudly when the ../shared directory is absent (a bare clone); a
    missing file inside a present ../shared is a failure, not a skip. Tests of
    the LMArena 140k export use the bundled copy (:func:`bundled_lmarena`)
    instead, so they run without ../shared.
    """
    if not SHARED.is_dir():
        pytest.skip(f"SHARED DATA MISSING: {SHARED} (CI provides ../shared beside the repo)")
    path = SHARED.joinpath(*parts)
    assert path.exists(), f"expected shared data file {path}"
    return path


def bundled_lmarena() -> Path:
    """The bundled LMArena 140k export (byte-identical to
    ../shared/data/lmarena-140k/battles_with_category_tags.csv.gz)."""
    from arena.core import resources

    return resources.demo_data()
