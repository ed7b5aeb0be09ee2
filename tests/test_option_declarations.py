"""One declaration per option: every layer reads its default, choices and bounds from it.

The declarations are :mod:`arena.core.options` (defaults and allowed values in
:mod:`arena.core.defaults`). A default written again as a literal somewhere
else drifts the day one of the copies changes; these tests find such copies in
the source and check that the command line, the front door, the rebuild's
options and the engine's signatures all hold the declared values.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from dataclasses import MISSING, fields

import click
import pytest

from arena.api import Arena
from arena.cli import cli
from arena.cli.options import DeclaredType
from arena.core.options import OPTIONS, RATING, option
from tests.helpers.paths import ROOT

#: Where the declarations live: the only files allowed to spell the values.
DECLARATION_FILES = {"arena/core/defaults.py", "arena/core/options.py"}
#: Option values that are never anything but an option's value: a parameter or
#: field defaulting to one of them copies a declared default, whatever its name.
OPTION_WORDS = {"half", "tie", "bootstrap", "battle", "largest", "simultaneous", "leader", "paper"}
#: Names that mean something else in some functions (a function's own count
#: ``n``, a table's ``top`` rows, a plot's ``power``): not checked by name there;
#: their declared defaults are None or read from arena.core.defaults anyway.
#: ``component=1`` of a board key or a job is the main board (the readers' None);
#: ``rule`` is also a derived category's rule text.
OTHER_MEANINGS = {"n", "top", "power", "alpha", "source", "category", "host", "port", "workers"}
OTHER_MEANINGS |= {"component", "rule"}


def _sources():
    for path in sorted((ROOT / "arena").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in DECLARATION_FILES:
            yield rel, ast.parse(path.read_text(encoding="utf-8"))


def _defaults(tree: ast.AST):
    """(name, default node, line) of every parameter default, class field and click default."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(
                zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
            )
            pairs += [
                (a, d)
                for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                if d is not None
            ]
            for arg, default in pairs:
                yield arg.arg, default, default.lineno
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                    if isinstance(stmt.target, ast.Name):
                        yield stmt.target.id, stmt.value, stmt.lineno
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "option":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
            longs = [f for f in flags if isinstance(f, str) and f.startswith("--")]
            name = longs[0][2:].replace("-", "_") if longs else ""
            for kw in node.keywords:
                if kw.arg == "default":
                    yield name, kw.value, kw.value.lineno


def _literal(node: ast.AST) -> bool:
    """A number or text written out (``-1`` and ``8 * 1024`` too), not None or a bool."""
    if isinstance(node, ast.Constant):
        return node.value is not None and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) and _literal(node.right)
    return False


def test_no_option_default_is_written_outside_the_declaration():
    copies = []
    for rel, tree in _sources():
        for name, default, line in _defaults(tree):
            if not _literal(default):
                continue
            value = ast.literal_eval(default) if not isinstance(default, ast.BinOp) else None
            named = name in OPTIONS and name not in OTHER_MEANINGS
            if named or (isinstance(value, str) and value in OPTION_WORDS):
                copies.append(f"{rel}:{line}: {name} = {ast.unparse(default)}")
    assert copies == [], "defaults written again instead of read from arena.core.defaults:\n" + (
        "\n".join(copies)
    )


def test_the_level_fallback_is_never_a_literal():
    """``0.95`` was the fallback of six readers; each reads DEFAULT_LEVEL now."""
    found = [
        f"{rel}:{node.lineno}"
        for rel, tree in _sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == 0.95 and type(node.value) is float
    ]
    assert found == []


def test_the_literal_finder_sees_each_form():
    tree = ast.parse(
        "def f(*, ties='half', rounds=1000, seed=None, position=False, x=1):\n    pass\n"
        "class C:\n    min_battles: int = 50\n    both_bad: str = 'tie'\n"
        "click.option('--max-body', default=8 * 1024)\n"
    )
    found = {name for name, default, _ in _defaults(tree) if _literal(default) and name != "x"}
    assert found == {"ties", "rounds", "min_battles", "both_bad", "max_body"}


# ---------------------------------------------------------------- every layer


def _commands(group: click.Group, prefix=("arena",)):
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


#: Click destinations that differ from the declared name.
DESTINATIONS = {"snapshot_id": "snapshot", "n_draws": "n", "target": "power"}


def test_click_options_are_generated_from_the_declarations():
    checked = set()
    for path, command in _commands(cli):
        for param in command.params:
            name = DESTINATIONS.get(param.name, param.name)
            if not isinstance(param, click.Option) or name not in OPTIONS or param.hidden:
                continue
            if (path, name) == (("arena", "eval"), "components"):  # variance components
                continue
            declared = option(name)
            where = f"{' '.join(path)} {param.opts[0]}"
            if name == "style_control":  # --style-control [on|off]: unset is each command's own
                continue
            if declared.kind in (int, float) or declared.choices:
                assert isinstance(param.type, DeclaredType), where
                assert param.type.declared is declared, where
                assert param.default == declared.default, where
            elif declared.kind is bool:
                assert param.is_flag and param.default is declared.default, where
            if name not in ("source", "category", "snapshot", "top", "n"):
                assert param.help == declared.help, where  # per-command help on purpose
            checked.add(name)
    # every declared option but the library-only ones appears on the command line
    assert set(OPTIONS) - checked <= {"style_control", "style_features", "since", "until"} | {
        "anchor",
        "prior",
        "style_reg",
        "attribution",
        "base_url",
        "host",
    }


def test_click_reports_the_librarys_message_for_a_bad_value():
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["rebuild", "--rounds", "3"])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: --rounds must be at least 10"


#: Parameters of the readers that share a name with a rebuild option but not its meaning.
READER_STYLE = {"leaderboard", "compare", "diff"}


@pytest.mark.parametrize(
    "method",
    [
        "rebuild",
        "nightly",
        "publish",
        "ingest",
        "leaderboard",
        "compare",
        "diff",
        "audit",
        "plan",
        "plan_power",
        "prune_snapshots",
        "agreement",
    ],
)
def test_front_door_defaults_are_the_declared_ones(method):
    signature = inspect.signature(getattr(Arena, method))
    compared = 0
    for name, param in signature.parameters.items():
        if name not in OPTIONS or (name == "style_control" and method in READER_STYLE):
            continue
        assert param.kind is param.KEYWORD_ONLY, (method, name)
        assert param.default == option(name).default, (method, name)
        compared += 1
    assert compared


def test_rebuild_and_nightly_take_every_rating_option():
    for method in ("rebuild", "nightly"):
        params = inspect.signature(getattr(Arena, method)).parameters
        assert set(RATING) <= set(params), method


def test_rebuild_options_and_engine_defaults_are_the_declared_ones():
    from arena.engine.board import BoardOptions
    from arena.engine.options import FitOptions
    from arena.jobs.rebuild import RebuildOptions

    for cls in (RebuildOptions, BoardOptions, FitOptions):
        for f in fields(cls):
            if f.name in OPTIONS and f.default is not MISSING:
                assert f.default == option(f.name).default, (cls.__name__, f.name)
    from arena.engine.fitting.design import make_design
    from arena.engine.inference.tiers import tiers_paired
    from arena.engine.rate import rate
    from arena.engine.sets.components import components
    from arena.engine.sparse.tiers import tiers_bounded
    from arena.engine.style.rate import rate_style

    aliases = {"rule": "tier_rule"}
    for fn in (rate, rate_style, make_design, components, tiers_paired, tiers_bounded):
        for name, param in inspect.signature(fn).parameters.items():
            name = aliases.get(name, name)
            if name in OTHER_MEANINGS or param.default is param.empty:
                continue
            if name in OPTIONS:
                assert param.default == option(name).default, (fn.__name__, name)


def test_the_engine_checks_against_the_declared_choices():
    from arena.boards.split import COMPONENT_MODES
    from arena.engine.board import TIER_METHODS, TIER_RULES
    from arena.engine.fitting.design import TIE_MODELS
    from arena.engine.inference.intervals import CI_METHODS
    from arena.ingest.sources import FORMATS
    from arena.store.read import READS

    for name, allowed in (
        ("ci", CI_METHODS),
        ("ties", TIE_MODELS),
        ("tiers", TIER_METHODS),
        ("tier_rule", TIER_RULES),
        ("components", COMPONENT_MODES),
        ("read", READS),
        ("input_format", FORMATS),
    ):
        assert allowed is option(name).choices, name


def test_every_default_passes_its_own_check():
    for declared in OPTIONS.values():
        assert declared.check(declared.default) == declared.default, declared.name


def test_declarations_load_no_numerics_or_database():
    """``arena --help`` reads the declarations: they must stay light."""
    code = (
        "import sys, arena.core.options, arena.cli.options; "
        "print(sorted(m for m in ('numpy', 'scipy', 'sqlalchemy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stderr
