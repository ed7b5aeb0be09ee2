"""Options shared by several commands: one name, type, default and help each.

Commands take them from here rather than declaring their own, so ``--rounds``,
``--seed``, ``--level``, ``--format``, ``--category``, ``--snapshot``,
``--db`` and ``-q/--quiet`` mean the same thing everywhere
(``tests/test_cli_options.py`` walks every command to check it).
"""

from __future__ import annotations

import click
from click.core import ParameterSource

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS, DEFAULT_SEED
from arena.core.formats import FORMATS

DEFAULT_URL = "sqlite:///arena.db"
#: seconds (the same as arena.db.session.DEFAULT_WAIT, which this module does not
#: import: it would load SQLAlchemy for `arena --help`)
DEFAULT_WAIT = 300.0


def alias_target(ctx: click.Context, param: click.Parameter, value):
    """Callback of an option with a :func:`hidden_alias`: the alias fills in a default.

    Click processes the options given on the command line before the ones left
    at their default, so the alias has been seen by the time this runs.
    """
    if ctx.get_parameter_source(param.name) is ParameterSource.DEFAULT:
        return ctx.meta.get("arena.aliases", {}).get(param.name, value)
    return value


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format.",
)

rounds_option = click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=DEFAULT_ROUNDS,
    show_default=True,
    callback=alias_target,
    help="Bootstrap rounds (resamples).",
)

seed_option = click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=DEFAULT_SEED,
    show_default=True,
    help="Random seed (fixed by default: same data, same numbers).",
)

level_option = click.option(
    "--level",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=DEFAULT_LEVEL,
    show_default=True,
    help="Confidence level of intervals and tests.",
)

snapshot_option = click.option(
    "--snapshot", "snapshot_id", type=int, default=None, help="Snapshot id [default: latest]."
)
component_option = click.option(
    "--component",
    type=click.IntRange(min=1),
    default=None,
    help="The board of comparable set N from the same rebuild (`arena rebuild --components "
    "separate`; 1 is the main board, 2, 3, ... the sets that never met it).",
)


def style_control_option(help: str):
    """``--style-control [on|off]``: one option for rebuild and the commands that read boards.

    Given alone it means ``on``; unset (None) each command keeps its default
    (rebuild writes style boards, leaderboard/compare/diff show raw boards).
    """
    return click.option(
        "--style-control",
        "style_control",
        type=click.Choice(["on", "off"]),
        is_flag=False,
        flag_value="on",
        default=None,
        help=help,
    )


def category_option(help: str):
    """``--category NAME``; the help says what the category selects in this command."""
    return click.option(
        "--category", type=str, default=None, help=f"{help} A key or its label, any case."
    )


def source_option(help: str):
    """``--source NAME``: the board of battles of one source (``arena rebuild --source NAME``)."""
    return click.option("--source", type=str, default=None, help=help)


def _app(ctx: click.Context):
    from arena.cli import AppContext

    return ctx.find_object(AppContext)


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    app = _app(ctx)
    if app is None:
        return value
    app.quiet = app.quiet or value
    return app.quiet


def _set_db(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # After the command name only a URL given as a flag replaces the one
    # before it (the environment variable was already read by the group).
    app = _app(ctx)
    if app is not None and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE:
        app.url = value
    return value


def quiet_option(f=None, *, expose_value: bool = True):
    """``-q/--quiet``: no progress on stderr; also honoured when given before the command."""
    decorator = click.option(
        "-q",
        "--quiet",
        is_flag=True,
        default=False,
        expose_value=expose_value,
        callback=_set_quiet,
        help="No progress output on stderr.",
    )
    return decorator(f) if f is not None else decorator


def db_option(f=None, *, expose_value: bool = True):
    """``--db URL``: the database; accepted before or after the command name."""
    decorator = click.option(
        "--db",
        "db_url",
        envvar="ARENA_DATABASE_URL",
        default=DEFAULT_URL,
        show_default=True,
        expose_value=expose_value,
        callback=_set_db,
        help="SQLAlchemy database URL (env ARENA_DATABASE_URL); before or after the command.",
    )
    return decorator(f) if f is not None else decorator


def _set_wait(ctx: click.Context, param: click.Parameter, value: float) -> float:
    app = _app(ctx)
    if app is not None and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE:
        app.wait = value
    return value


def wait_option(f=None, *, expose_value: bool = True):
    """``--wait SECONDS``: how long to wait for another command's lock; before or after."""
    decorator = click.option(
        "--wait",
        type=click.FloatRange(min=0),
        envvar="ARENA_WAIT",
        default=DEFAULT_WAIT,
        show_default=True,
        metavar="SECONDS",
        expose_value=expose_value,
        callback=_set_wait,
        help="How long to wait for another command's lock on the database, then give up "
        "(env ARENA_WAIT); before or after the command.",
    )
    return decorator(f) if f is not None else decorator


def hidden_alias(old: str, new: str, dest: str, *, type=None, is_flag: bool = False):
    """A deprecated spelling of option ``new``, hidden from ``--help``, kept for one release.

    Using it prints one deprecation line on stderr and sets parameter ``dest``
    unless ``new`` itself was given. The option for ``new`` must be declared
    with ``callback=alias_target`` (or call :func:`alias_target` itself).
    """

    def callback(ctx: click.Context, param: click.Parameter, value):
        if value is None or (is_flag and not value):
            return
        click.echo(f"warning: {old} is deprecated and will be removed; use {new}", err=True)
        ctx.meta.setdefault("arena.aliases", {})[dest] = value

    return click.option(
        old,
        f"_alias_{dest}",
        type=type,
        default=None,
        is_flag=is_flag,
        hidden=True,
        expose_value=False,
        callback=callback,
    )


def max_boards_option(command):
    """``--max-boards`` (rebuild, publish, nightly): refuse more boards than this."""
    from arena.core.defaults import DEFAULT_MAX_BOARDS

    return click.option(
        "--max-boards",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_BOARDS,
        show_default=True,
        help="Refuse to build or publish more boards (overall + one per category) than this "
        "(a guard against a category column holding something else, such as prompt ids).",
    )(command)
