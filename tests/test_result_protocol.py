"""One result protocol: every front-door method returns a frozen result with ``to_dict()``.

No proxying ``__getattr__`` (type checkers cannot see through it) and one name
for serialising across the package: ``to_dict``.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing

import arena
from arena.api import Arena
from tests.helpers.paths import ROOT

#: Methods that are not commands: the connection's own life cycle.
NOT_COMMANDS = {"engine", "close"}
#: Other names a serialiser was once given; ``to_dict`` is the one name now.
OLD_NAMES = {"as_dict", "document", "as_json", "facts"}


def _commands():
    for name, fn in inspect.getmembers(Arena, inspect.isfunction):
        if not name.startswith("_") and name not in NOT_COMMANDS:
            yield name, fn


def test_every_command_returns_a_frozen_result_with_to_dict():
    wrong = {}
    for name, fn in _commands():
        # the return annotation only (parameters name types imported for checkers only)
        namespace = vars(inspect.getmodule(fn)) | {n: getattr(arena, n) for n in arena.__all__}
        returned = eval(fn.__annotations__["return"], namespace)  # noqa: S307 - our own annotation
        for result in typing.get_args(returned) or (returned,):  # plan: weights or draws
            if not (
                inspect.isclass(result)
                and dataclasses.is_dataclass(result)
                and result.__dataclass_params__.frozen
                and callable(getattr(result, "to_dict", None))
                and "__getattr__" not in vars(result)
            ):
                wrong[name] = result
    assert wrong == {}


def test_the_commands_are_many_and_include_the_new_ones():
    names = {name for name, _ in _commands()}
    assert {"ingest", "rebuild", "leaderboard", "agreement", "demo", "derive_category"} <= names


def test_one_name_for_serialising():
    found = []
    for path in sorted((ROOT / "arena").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name in OLD_NAMES:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}")
    assert found == []
