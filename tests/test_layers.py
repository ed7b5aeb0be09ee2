"""The import contract of ``docs/architecture.md``: each room imports only the rooms its
row lists, so the data flow the diagram draws is the one the code has.

Every import counts, at the top of a module or inside a function (a lazy import
is still a dependency); only ``TYPE_CHECKING`` blocks, which never run, are left
out.
"""

from __future__ import annotations

import ast
import re

from tests.helpers.paths import ROOT

ARENA = ROOT / "arena"
DOC = ROOT / "docs" / "architecture.md"
#: ``arena/__init__.py``: ``arena.open`` and the flat export list.
TOP_LEVEL_ALLOWED = {"api", "core", "evals"}


def contract() -> dict[str, set[str]]:
    """Room -> the rooms it may import, from the table's last column (parentheses are
    reasons, not rooms)."""
    rooms = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| \*\*(\w+)\*\* \| `arena/\w+/` \|.*\| ([^|]+) \|$", line)
        if m:
            listed = re.sub(r"\([^)]*\)", "", m.group(2))
            names = {w.strip() for w in listed.split(",")} - {"nothing of arena"}
            rooms[m.group(1)] = {n for n in names if n}
    return rooms


def imported_rooms(source: str) -> set[tuple[str, int]]:
    """(room, line) of every ``arena.<room>`` import outside ``TYPE_CHECKING`` blocks."""
    tree = ast.parse(source)
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(sub) for sub in ast.walk(node))
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "arena":  # from arena import x: x is a room or a name
                names = [f"arena.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "arena":
                found.add((parts[1] if len(parts) > 1 else "arena", node.lineno))
    return found


def violations() -> list[str]:
    allowed = contract()
    out = []
    for path in sorted(ARENA.rglob("*.py")):
        rel = path.relative_to(ARENA)
        room = rel.parts[0] if len(rel.parts) > 1 else None
        if room is None:
            may = TOP_LEVEL_ALLOWED | {"cli"} if rel.name == "__main__.py" else TOP_LEVEL_ALLOWED
        else:
            may = allowed.get(room, set()) | {room}
        for target, line in sorted(imported_rooms(path.read_text(encoding="utf-8"))):
            if target not in may and not (room is None and target == "core"):
                out.append(f"arena/{rel.as_posix()}:{line}: {room or 'arena'} imports {target}")
    return out


def test_the_table_names_every_room():
    rooms = {p.name for p in ARENA.iterdir() if (p / "__init__.py").exists()}
    assert set(contract()) == rooms
    for room, may in contract().items():
        assert may <= rooms, f"{room} lists unknown rooms {may - rooms}"


def test_every_import_follows_the_table():
    assert violations() == [], "\n".join(violations())


def test_nothing_imports_the_cli_and_only_the_top_imports_the_front_door():
    contract_ = contract()
    assert not any("cli" in may for may in contract_.values())
    assert {room for room, may in contract_.items() if "api" in may} == {"cli", "serve"}


def test_the_rooms_form_no_loop():
    """Imports run one way: no room reaches itself through the table."""
    graph = contract()

    def reach(room: str, seen: set[str]) -> set[str]:
        for nxt in graph[room] - seen:
            seen.add(nxt)
            reach(nxt, seen)
        return seen

    assert [room for room in graph if room in reach(room, set())] == []


def test_the_scan_sees_lazy_imports_and_skips_type_checking():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from arena.api import Arena\n"
        "def f():\n    from arena.publish.site import x\n"
        "import arena.store.read\n"
        "from arena import __version__\n"
    )
    assert {r for r, _ in imported_rooms(source)} == {"publish", "store", "__version__"}
