"""``import arena`` is enough: the front door gives what the command line prints.

Every command's ``--format json`` is its front-door result's ``to_dict()``,
byte for byte, on SQLite and PostgreSQL; the same data and options give the
same ratings through either door.
"""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys

import numpy as np
import pytest

import arena
from arena.core.defaults import DEFAULT_HEATMAP_TOP, DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.core.errors import OptionError
from arena.core.formats import to_json
from tests.helpers.cli import cli_for
from tests.helpers.paths import ROOT

ROUNDS = 60


def write_battles(path, *, n=1200, models=6, seed=3):
    """Battles from known strengths (Elo spacing 40), ties, a judge and one category tag."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(0, 40 * (models - 1), models)[::-1] * np.log(10) / 400
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "model_a", "model_b", "winner", "judge", "math"])
        for k in range(n):
            a, b = rng.choice(models, size=2, replace=False)
            p = 1 / (1 + np.exp(strength[b] - strength[a]))
            u = rng.random()
            winner = "tie" if u < 0.1 else ("model_a" if u < 0.1 + 0.9 * p else "model_b")
            w.writerow(
                [f"b{k}", f"m-{a}", f"m-{b}", winner, f"j{rng.integers(12)}", rng.random() < 0.5]
            )
    return path


@pytest.fixture
def front(db_url, tmp_path):
    """An arena with two rebuilds (so diff has a pair) of the synthetic battles."""
    db = arena.open(db_url)
    db.ingest(write_battles(tmp_path / "battles.csv"))
    db.rebuild(rounds=ROUNDS, all_categories=True)
    db.rebuild(rounds=ROUNDS, seed=7)
    yield db
    db.close()


def _same(run, args, result) -> None:
    out = run(*args, "--format", "json").stdout
    assert out == to_json(result.to_dict()) + "\n", f"arena {' '.join(args)}"


def test_cli_json_is_the_front_doors_to_dict(front, db_url):
    run = cli_for(db_url)
    cases = [
        (["leaderboard"], front.leaderboard()),
        (["leaderboard", "--category", "math"], front.leaderboard(category="math")),
        (["leaderboard", "--snapshot", "1", "--all"], front.leaderboard(snapshot=1, include_hidden=True)),
        (["compare", "m-0", "m-1"], front.compare("m-0", "m-1")),
        (["compare", "m-2", "m-4", "--snapshot", "1"], front.compare("m-2", "m-4", snapshot=1)),
        (["plan"], front.plan()),
        (["plan", "--rule", "tiers", "--top", "3"], front.plan(rule="tiers", top=3)),
        (["plan", "power"], front.plan_power()),
        (["plan", "power", "m-0", "m-3", "--power", "0.9"], front.plan_power(["m-0", "m-3"], power=0.9)),
        (["snapshots", "prune", "--keep-last", "1", "--dry-run"], front.prune_snapshots(keep_last=1, dry_run=True)),
        (["plan", "--n", "5", "--seed", "2"], front.plan(n=5, seed=2)),
        (["snapshots"], front.snapshots()),
        (["diff"], front.diff()),
        (["diff", "1", "3"], front.diff(1, 3)),
        (["models"], front.models()),
        (["categories"], front.categories()),
        (["audit", "--rounds", "20", "--probe", "ties", "--probe", "coverage", "--seed", "3"], front.audit(rounds=20, probes=("ties", "coverage"), seed=3)),
        (["audit", "--rounds", "20", "--no-store"], front.audit(rounds=20, store=False)),
    ]  # fmt: skip
    for args, result in cases:
        _same(run, args, result)


def test_same_data_and_options_give_the_same_ratings(db_url, tmp_path):
    """A rebuild through the CLI and one through the front door: the same rows and options."""
    path = write_battles(tmp_path / "battles.csv")
    db = arena.open(db_url)
    db.ingest(path)
    cli_for(db_url)("rebuild", "--rounds", "50", "--seed", "11", "--ties", "davidson", "-q")
    db.rebuild(rounds=50, seed=11, ties="davidson")
    first = db.leaderboard(snapshot=1).to_dict()
    second = db.leaderboard(snapshot=2).to_dict()
    db.close()
    assert first["rows"] == second["rows"]
    assert first["snapshot"]["options"] == second["snapshot"]["options"]
    assert first["rows"][0]["rating"] is not None


def test_defaults_are_the_clis(front):
    """No option given: the front door uses the defaults the CLI shows."""
    opts = front.leaderboard().to_dict()["snapshot"]["options"]
    assert opts["seed"] == 7  # the second rebuild's
    first = front.leaderboard(snapshot=1).to_dict()["snapshot"]["options"]
    assert first["seed"] == DEFAULT_SEED and first["level"] == DEFAULT_LEVEL
    assert first["min_battles"] == 50 and first["rounds"] == ROUNDS
    assert DEFAULT_ROUNDS == 1000 and DEFAULT_HEATMAP_TOP == 15


def test_errors_name_the_parameter_and_the_cli_the_flag(front, db_url):
    with pytest.raises(OptionError) as err:
        front.rebuild(rounds=3)
    assert str(err.value).startswith("rounds must be at least 10") and err.value.name == "rounds"
    with pytest.raises(OptionError, match="^ci must be one of"):
        front.rebuild(ci="nope")
    with pytest.raises(OptionError, match="^anchor: 'x': expected MODEL=RATING"):
        front.rebuild(anchor="x")
    with pytest.raises(OptionError, match="^heatmap_top must be at least 2"):
        front.publish("site", heatmap_top=1)
    with pytest.raises(OptionError, match="^give keep_days, keep_last or both"):
        front.prune_snapshots()
    bad = cli_for(db_url)("rebuild", "--rounds", "3", ok=False)
    assert bad.exit_code != 0 and "--rounds must be at least 10" in bad.output


@pytest.mark.parametrize(
    ("kwargs", "args", "library", "cli"),
    [
        (
            {"read": "counts", "since": "2024-01-01"},
            ("rebuild", "--read", "counts", "--since", "2024-01-01"),
            "read counts: since/until select battles by time; use read battles (or auto)",
            "--read counts: --since/--until select battles by time; use --read battles (or auto)",
        ),
        (
            {"all_sources": True, "source": "human"},
            ("rebuild", "--all-sources", "--source", "human"),
            "all_sources rates every source: give it without source",
            "--all-sources rates every source: give it without --source",
        ),
    ],
)
def test_messages_naming_several_parameters_name_flags_on_the_cli(
    front, db_url, kwargs, args, library, cli
):
    """A message may name more than one option: each is a parameter in Python, a flag in the CLI."""
    with pytest.raises(OptionError) as err:
        front.rebuild(rounds=ROUNDS, **kwargs)
    assert str(err.value).startswith(library), str(err.value)
    assert "--" not in str(err.value)
    bad = cli_for(db_url)(*args, "--rounds", str(ROUNDS), ok=False)
    assert bad.exit_code == 1 and f"Error: {cli}" in bad.output, bad.output


def test_methods_own_their_transaction_and_lock(front):
    """Write methods commit by themselves: a second object sees the change."""
    assert front.annotate("m-1", organisation="Acme").changed == 1
    assert front.label_category("math", "Mathematics").label == "Mathematics"
    other = arena.open(front.url)
    try:
        models = {m.model: m for m in other.models().models}
        assert models["m-1"].organisation == "Acme"
        labels = {c.key: c.label for c in other.categories().categories}
        assert labels["math"] == "Mathematics"
        pruned = other.prune_snapshots(keep_last=1)
        assert pruned.to_dict()["pruned"] >= 1 and not pruned.to_dict()["dry_run"]
    finally:
        other.close()


def test_publish_and_diff_through_the_front_door(front, tmp_path):
    published = front.publish(tmp_path / "site", attribution="synthetic")
    assert (tmp_path / "site" / "index.html").exists()
    assert published.to_dict()["snapshot"] == front.leaderboard().snapshot.id
    moved = front.diff()
    assert moved.to_dict()["old"] == 1 and moved.to_dict()["new"] == 3
    assert {r["model"] for r in moved.to_dict()["rows"]} == {f"m-{k}" for k in range(6)}


@pytest.mark.slow
def test_the_readme_one_liner_works(tmp_path):
    """The issue's "done when": import, open, ingest, rebuild, print the leaderboard."""
    path = write_battles(tmp_path / "b.csv", n=400)
    code = (
        "import arena; db = arena.open('sqlite:///x.db'); db.ingest('b.csv'); db.rebuild(); "
        "print(db.leaderboard().to_dict())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    printed = ast.literal_eval(out.stdout)
    assert path.exists() and {r["model"] for r in printed["rows"]} == {f"m-{k}" for k in range(6)}
    # rounds left to the data (issue 41): stored unset, the draws the board chose
    assert printed["snapshot"]["options"]["rounds"] is None
    shown = cli_for(f"sqlite:///{tmp_path / 'x.db'}")("leaderboard", "--format", "json").stdout
    db = arena.open(f"sqlite:///{tmp_path / 'x.db'}")
    assert json.loads(shown) == db.leaderboard().to_dict() == printed
    db.close()


def test_evaluate_is_arena_eval(tmp_path):
    """``arena.evaluate`` (no database) gives ``arena eval --format json``, on either path."""
    from tests.helpers.cli import run_file_command
    from tests.helpers.paths import ROOT as root

    path = str(root / "tests" / "data" / "eval_results.csv")
    for args, kwargs in [
        ([], {}),
        (["--rounds", "200", "--seed", "4", "--correction", "bh"], dict(rounds=200, seed=4, correction="bh")),
        (["--test", "permutation", "--rounds", "200"], dict(test="permutation", rounds=200)),
        (["--item-only", "--rounds", "100"], dict(item_only=True, rounds=100)),
    ]:  # fmt: skip
        out = run_file_command(["eval", path, *args, "--format", "json", "-q"]).stdout
        result = arena.evaluate([path], **kwargs)
        assert out == to_json(result.to_dict()) + "\n", args
    assert arena.evaluate([path]).accuracy is not None
    assert arena.evaluate([path], test="permutation").scores is not None
    with pytest.raises(OptionError, match="^to_battles needs plain 0/1 scores"):
        arena.evaluate([path], test="t", to_battles=str(tmp_path / "b.csv"))


@pytest.mark.slow  # several seconds: the full run only (pytest --durations)
def test_the_readmes_python_example_runs(tmp_path):
    """README.md's "From Python" block, as printed there, on the bundled votes."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### From Python") :]
    block = section[section.index("```python\n") + 10 : section.index("```\n", 10)]
    assert "import arena\n" in block and "from arena." not in block  # the front door only
    out = subprocess.run(
        [sys.executable, "-c", block],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    model, rating, *rest = out.stdout.split()
    assert model and 1000 < int(rating) < 1500 and rest


#: Each front-door method and the command it is.
METHOD_COMMANDS = {
    "ingest": ("ingest",),
    "rebuild": ("rebuild",),
    "leaderboard": ("leaderboard",),
    "compare": ("compare",),
    "diff": ("diff",),
    "snapshots": ("snapshots",),
    "prune_snapshots": ("snapshots", "prune"),
    "audit": ("audit",),
    "plan": ("plan",),
    "plan_power": ("plan", "power"),
    "publish": ("publish",),
    "nightly": ("nightly",),
    "models": ("models",),
    "annotate": ("models", "annotate"),
    "categories": ("categories",),
    "label_category": ("categories", "label"),
}
#: Python-only parameters (callbacks and typed inputs with no flag).
PYTHON_ONLY = {"self", "progress", "on_file", "annotations"}


@pytest.mark.parametrize("method", sorted(METHOD_COMMANDS))
def test_every_parameter_is_a_flag_of_its_command_with_the_same_default(method):
    """One vocabulary: each keyword of a method is its command's flag (cli.errors.flag_for),
    with the same default, so the CLI can name any parameter an error names."""
    import inspect

    from arena.cli import cli
    from arena.cli.errors import flag_for

    command = cli
    for part in METHOD_COMMANDS[method]:
        command = command.commands[part]
    spelled = {}
    for p in command.params:
        for name in (*p.opts, *p.secondary_opts):
            spelled[name] = p
        spelled[p.name] = p
    signature = inspect.signature(getattr(arena.Arena, method))
    for name, param in signature.parameters.items():
        if name in PYTHON_ONLY:
            continue
        flag = flag_for(name)
        option = spelled.get(flag) or spelled.get(flag.split("/")[0]) or spelled.get(name)
        assert option is not None, (
            f"{method}({name}=): no {flag} in arena {' '.join(METHOD_COMMANDS[method])}"
        )
        if param.default is inspect.Parameter.empty or option.default is None:
            continue
        if isinstance(option.default, (int, float)) and not isinstance(option.default, bool):
            assert param.default == option.default, f"{method}({name}=) default differs"
