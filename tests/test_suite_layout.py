"""The test suite's own habits: helpers come from tests/helpers, files say what they test.

A test module is collected by pytest, not imported as a library: importing one from
another runs its module code twice under two names and hides which file a helper
belongs to. A conftest holds fixtures, which pytest injects; plain helpers live in
:mod:`tests.helpers`.
"""

from __future__ import annotations

import ast
import re

from tests.helpers.paths import ROOT

TESTS = ROOT / "tests"
PYTHON_FILES = sorted(p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts)


def imported_modules(source: str, package: str) -> list[str]:
    """Every module an ``import`` or ``from ... import`` in ``source`` names, made absolute
    (``package`` is the dotted package the source lives in)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            out.append(module)
            out += [f"{module}.{alias.name}" for alias in node.names]
    return out


def forbidden_imports(source: str, package: str) -> list[str]:
    """Test modules and conftests that ``source`` imports."""
    return [
        m
        for m in imported_modules(source, package)
        if re.fullmatch(r"tests(\.\w+)*\.(test_\w+|conftest)", m)
    ]


def test_no_test_module_or_conftest_is_imported():
    bad = {}
    for path in PYTHON_FILES:
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        if found := forbidden_imports(path.read_text(encoding="utf-8"), package):
            bad[str(path.relative_to(ROOT))] = found
    assert bad == {}, f"move these helpers to tests/helpers: {bad}"


def test_forbidden_imports_sees_relative_and_absolute_forms():
    source = (
        "from .conftest import simulate\n"
        "from tests.test_a import y\n"
        "import tests.engine.test_b\n"
        "from tests.helpers.files import write_csv\n"
        "from . import style_data, conftest\n"
    )
    assert forbidden_imports(source, "tests.engine") == [
        "tests.engine.conftest",
        "tests.test_a",
        "tests.engine.test_b",
        "tests.engine.conftest",
    ]


def test_test_files_are_not_named_after_issues():
    named = [
        str(p.relative_to(TESTS))
        for p in PYTHON_FILES
        if re.search(r"issue|hardening|_qa\b|\d+\.py$", p.name)
    ]
    assert named == [], f"name test files by the behaviour they check: {named}"


def test_readme_test_command_is_the_ci_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if "pip install '.[test]'" in line]
    assert len(commands) == 1, commands
    assert commands[0] in ci.splitlines(), f"README's test command is not in .ci/run: {commands[0]}"
