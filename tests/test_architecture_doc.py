"""docs/architecture.md accounts for every module of the package, and only for real ones."""

from __future__ import annotations

import re

from tests.helpers.paths import ROOT

DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "arena"


def modules() -> set[str]:
    """Every module below a room of ``arena/`` as ``room/.../name.py`` (no ``__init__``)."""
    return {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py" and p.parent != PACKAGE
    }


def listed() -> set[str]:
    """The module paths the doc's index names (lines ``- `room/name.py`: ...``)."""
    return set(re.findall(r"^- `([\w/]+\.py)`:", DOC.read_text(encoding="utf-8"), re.M))


def test_every_module_is_listed_in_the_architecture_doc():
    missing = sorted(modules() - listed())
    assert missing == [], f"add these modules to docs/architecture.md's index: {missing}"


def test_the_architecture_doc_lists_no_module_that_is_gone():
    gone = sorted(listed() - modules())
    assert gone == [], f"docs/architecture.md lists modules that do not exist: {gone}"


def test_every_room_has_a_row_in_the_layer_table():
    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    text = DOC.read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| \*\*(\w+)\*\* \| `arena/(\w+)/`", text, re.M))
    assert {path for _, path in rows} == rooms - {"data"}
