"""One vocabulary: a shared option has one name, type and default on every command."""

from __future__ import annotations

import json
from collections import defaultdict

import click
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.jobs.rebuild import RebuildOptions
from tests.helpers.files import synth_battles

#: Options whose meaning is fixed project-wide (see the README's option list).
SHARED = (
    "--rounds",
    "--seed",
    "--level",
    "--format",
    "--db",
    "--quiet",
    "--category",
    "--snapshot",
)
#: Option names used by several commands for different things, on purpose.
DIFFERENT_MEANING: set[str] = {
    # `arena irt select --n`: subset size, as issue 15 names it; `arena plan --n`: draws.
    "--n",
    # `arena eval --components`: variance components of scores; `arena rebuild|nightly
    # --components largest|separate`: comparable sets of the battle graph (issue 11's name).
    "--components",
}


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


ALL = [(("arena",), cli), *(((("arena", *p)), c) for p, c in _commands(cli))]


#: Newer click marks "no default given" with a sentinel; older click with None.
_NO_DEFAULT = getattr(click.core, "UNSET", None)


def _signature(param: click.Option) -> tuple:
    return (
        tuple(sorted(param.opts + param.secondary_opts)),
        param.name,
        json.dumps(param.type.to_info_dict(), sort_keys=True, default=str),
        None if param.default is _NO_DEFAULT else param.default,
        param.is_flag,
        param.multiple,
    )


def _options():
    """{long option name: {command path: signature}} over every visible option."""
    seen: dict[str, dict[str, tuple]] = defaultdict(dict)
    for path, command in ALL:
        for param in command.params:
            if not isinstance(param, click.Option) or param.hidden:
                continue
            longs = [o for o in param.opts if o.startswith("--")]
            if longs and longs[0] not in ("--help", "--version"):
                seen[longs[0]][" ".join(path)] = _signature(param)
    return seen


def test_options_shared_by_commands_have_one_name_type_and_default():
    clashes = []
    for name, by_command in sorted(_options().items()):
        if len(by_command) < 2 or name in DIFFERENT_MEANING:
            continue
        if len(set(by_command.values())) > 1:
            clashes.append(f"{name}: " + "; ".join(f"{c} {s}" for c, s in by_command.items()))
    assert not clashes, "\n".join(clashes)


def test_every_command_accepts_the_global_options():
    options = _options()
    for name in ("--db", "--quiet"):
        assert set(options[name]) == {" ".join(p) for p, _ in ALL}, name


def test_shared_defaults_are_the_library_defaults():
    options = _options()
    for name, expected in (
        # unset: each reader's rule (DEFAULT_ROUNDS; a board's analytic draws by the data)
        ("--rounds", None),
        ("--seed", DEFAULT_SEED),
        ("--level", DEFAULT_LEVEL),
        ("--format", "table"),
    ):
        assert {s[3] for s in options[name].values()} == {expected}, name
    opts = RebuildOptions()
    assert (opts.rounds, opts.seed, opts.level) == (None, DEFAULT_SEED, DEFAULT_LEVEL)
    assert opts.interval_options()["rounds"] == DEFAULT_ROUNDS
    assert set(SHARED) <= set(options)


def test_bootstrap_commands_take_rounds_and_seed():
    options = _options()
    for command in ("arena rebuild", "arena eval"):
        for name in ("--rounds", "--seed", "--level"):
            assert command in options[name], (command, name)
    assert "arena demo" in options["--rounds"]


def test_no_option_names_an_input_format_format():
    # `--format` is always the output format (table|json|csv).
    for command, sig in _options()["--format"].items():
        assert json.loads(sig[2])["choices"] == ["table", "json", "csv"], command


def test_db_and_quiet_after_the_command(db_url, tmp_path):
    path = tmp_path / "battles.csv"
    synth_battles(path, n=400, models=4)
    runner = CliRunner()

    def run(*args):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result

    run("ingest", str(path), "--db", db_url, "-q")
    run("rebuild", "--rounds", "20", "--db", db_url, "-q")
    after = run("leaderboard", "--db", db_url, "--format", "json").stdout
    before = run("--db", db_url, "leaderboard", "--format", "json").stdout
    assert after == before and json.loads(after)["snapshot"]["counts"]["battles"] == 400
    assert isinstance(json.loads(after)["snapshot"]["counts"]["battles"], int)
    models = json.loads(run("models", "--db", db_url, "--format", "json").stdout)["models"]
    assert {m["model"] for m in models} == {f"model-{i}" for i in range(4)}
    run("models", "annotate", "model-1", "--hide", "--db", db_url)
    table = run("models", "--db", db_url).stdout
    hidden = {line.split()[0]: line.split()[-1] for line in table.splitlines()[2:]}
    assert hidden["model-1"] == "yes" and hidden["model-0"] == "no"


def test_ingest_format_is_a_deprecated_alias_of_input_format(run_cli, tmp_path):
    path = tmp_path / "battles.txt"
    path.write_text("model_a,model_b,winner\nx,y,model_a\n")
    old = run_cli("ingest", str(path), "--format", "csv", "-q")
    assert "--format is deprecated" in old.stderr and "--input-format" in old.stderr
    assert "1 inserted" in old.stdout
    other = tmp_path / "more.txt"
    other.write_text("model_a,model_b,winner\nx,y,model_b\n")
    new = run_cli("ingest", str(other), "--input-format", "jsonl", ok=False)
    assert new.exit_code == 1  # the input format is really used: this CSV is not JSON lines
    help_text = run_cli("ingest", "--help").output
    assert "--input-format" in help_text and "--format" not in help_text


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_hides_the_eval_progress_line(where):
    from tests.helpers.paths import DATA

    path = str(DATA / "eval_results.csv")
    args = ["-q", "eval", path] if where == "before" else ["eval", path, "-q"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and "resamples" not in result.stderr
    loud = CliRunner().invoke(cli, ["eval", path])
    assert "resamples" in loud.stderr
