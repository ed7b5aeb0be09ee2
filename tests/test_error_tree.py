"""One exception tree: every error a user can cause is an ``arena.ArenaError``.

A caller catches one class; the command line catches it once and prints one
``Error: ...`` line with flags where the library names parameters; and no
library message names a command-line flag (the CLI spells them).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re

import numpy as np
import pytest
from click.testing import CliRunner

import arena
from arena.cli import cli
from arena.core.errors import ArenaError, ArgumentError, OptionError
from tests.helpers.paths import ROOT

#: Exceptions arena raises and catches itself, never reaching a user, each with why.
INTERNAL = {
    "BulkConflict": "a bulk load falls back to row by row",
    "_GiveUp": "the bounded max-t falls back to the exact step-down",
    "_AlreadyIngested": "an ingest of a stored file ends as 'seen'",
    "QueueFull": "the server answers 503 with Retry-After",
    "ApiError": "the server's own HTTP answer (status and body)",
    "_HeadRefused": "a refused request head is answered 431 or 400 by the server",
}


def _arena_modules():
    for info in pkgutil.walk_packages(arena.__path__, "arena."):
        if info.name != "arena.__main__":  # runs the command line
            yield importlib.import_module(info.name)


def test_every_exception_class_is_an_arena_error_or_named_internal():
    outside = {}
    for module in _arena_modules():
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, Exception)
                and obj.__module__ == module.__name__
                and not issubclass(obj, ArenaError)
                and not issubclass(obj, Warning)
                and name not in INTERNAL
            ):
                outside[f"{module.__name__}.{name}"] = [b.__name__ for b in obj.__mro__[1:3]]
    assert outside == {}, f"subclass arena.core.errors.ArenaError (or list as internal): {outside}"


def test_the_root_is_exported_and_carries_its_parameter():
    assert arena.ArenaError is ArenaError and "ArenaError" in arena.__all__
    err = OptionError("rounds", "{name} must be at least 10")
    assert isinstance(err, arena.ArenaError) and isinstance(err, ValueError)
    assert err.parameter == "rounds" and str(err) == "rounds must be at least 10"
    assert issubclass(ArgumentError, ValueError)


def test_a_bad_argument_to_a_library_function_is_an_arena_error():
    with pytest.raises(arena.ArenaError, match="n_boot must be at least 1"):
        arena.bootstrap_ci([0, 1, 1], np.random.default_rng(0), n_boot=0)
    with pytest.raises(ValueError):  # still what Python code written before expects
        arena.significant(0.1, -0.1)


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (OptionError("heatmap_top", "{name} must be at least 2"), "Error: --heatmap-top must"),
        (ArgumentError("low (0.1) is greater than high (-0.1)"), "Error: low (0.1) is greater"),
    ],
)
def test_the_cli_prints_any_arena_error_as_one_line(monkeypatch, error, line):
    """One catch in the command group: no command translates errors on its own."""

    def boom(self, **_kwargs):
        raise error

    monkeypatch.setattr(arena.Arena, "models", boom)
    result = CliRunner().invoke(cli, ["models", "--db", "sqlite://"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(line), result.output
    assert "Traceback" not in result.output


#: A flag as the command line spells it: ``--max-boards`` (not ``a--b`` nor ``---``).
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
#: Library strings that show a flag on purpose, each with why.
FLAGS_ALLOWED = {
    "arena/publish/agreement_view.py": "the page shows the command that reproduces a table",
    "arena/publish/heatmaps.py": "CSS custom properties (--dk), not flags",
    "arena/core/options.py": "each option's help, which `--help` shows beside its flags",
    "arena/serve/errors.py": "an HTTP answer naming the operator's own `arena serve --wait`",
}


def _strings_outside_docstrings(tree: ast.AST):
    docs = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            docs.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node


def test_no_library_message_names_a_flag():
    """Messages name parameters (``max_boards``); only the CLI spells them ``--max-boards``."""
    found = []
    for path in sorted((ROOT / "arena").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("arena/cli/") or rel in FLAGS_ALLOWED:
            continue
        for node in _strings_outside_docstrings(ast.parse(path.read_text(encoding="utf-8"))):
            if FLAG.search(node.value):
                found.append(f"{rel}:{node.lineno}: {node.value[:80]!r}")
    assert found == [], "\n".join(found)


def test_the_scan_sees_a_flag_in_a_message():
    tree = ast.parse('"""Doc --ok."""\nraise ValueError(f"give a larger --max-boards {n}")\n')
    assert [n.value for n in _strings_outside_docstrings(tree)] == ["give a larger --max-boards "]
