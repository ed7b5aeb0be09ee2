"""Options shared by several commands: one name, type, default and help each.

Commands take them from here rather than declaring their own, so ``--rounds``,
``--seed``, ``--level``, ``--format``, ``--category``, ``--snapshot``,
``--db`` and ``-q/--quiet`` mean the same thing everywhere
(``tests/test_cli_options.py`` walks every command to check it). An option the
library declares (:mod:`arena.core.options`) is generated from its declaration
by :func:`declared`: its default, choices, bounds and help are the library's,
and a bad value gets the library's own message (``Error: --rounds must be at
least 10``), so the command line adds no rule of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from arena.cli.errors import flag_for
from arena.core.defaults import DEFAULT_URL, URL_ENV
from arena.core.errors import OptionError
from arena.core.formats import FORMATS
from arena.core.options import Option, option

if TYPE_CHECKING:
    from click.types import ParamTypeInfoDict

    class DeclaredInfoDict(ParamTypeInfoDict):
        option: str
        choices: list[str]


class DeclaredType(click.ParamType):
    """The click type of a declared option: the declaration reads and checks the value.

    A bad value is the library's :class:`~arena.core.errors.OptionError`, said
    with the flag (one line, exit 1, as when the front door refuses it), not
    click's own range or choice message.
    """

    def __init__(self, declared: Option) -> None:
        self.declared = declared
        self.name = {int: "integer", float: "float"}.get(declared.kind, "text")

    def convert(self, value, param, ctx):
        try:
            if isinstance(value, str):
                value = self.declared.parse(value)
            return self.declared.check(value)
        except OptionError as exc:
            opts = [o for o in (param.opts if param else ()) if o.startswith("--")]
            flag = opts[0] if opts else flag_for(exc.name)
            # one line, exit 1: the same as an option the front door refuses
            raise click.ClickException(exc.spelled(lambda _name: flag)) from None

    def get_metavar(self, param, ctx=None) -> str:
        d = self.declared
        if d.choices:
            return "[" + "|".join(d.choices) + "]"
        bounds = d.bounds_text()
        return self.name.upper() + (f" RANGE [{bounds}]" if bounds else "")

    def to_info_dict(self) -> DeclaredInfoDict:
        return {
            **super().to_info_dict(),
            "option": self.declared.name,
            "choices": list(self.declared.choices),
        }

    def shell_complete(self, ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        return [CompletionItem(c) for c in self.declared.choices if c.startswith(incomplete)]


def declared(name: str, *decls: str, help: str | None = None, **click_args):
    """``--NAME``: the click option generated from the declaration of option ``name``.

    ``decls`` replace the flag and destination (``"--snapshot", "snapshot_id"``);
    ``help`` says what the option selects in one command; other keywords go to
    :func:`click.option` (a callback, a metavar). A boolean option is a flag, a
    list option repeatable.
    """
    d = option(name)
    if not decls:
        decls = (flag_for(name), name)
    if d.kind is bool:
        kind: dict = {"is_flag": True, "default": d.default}
    elif d.kind is tuple:
        kind = {"multiple": True}
    elif d.kind is object or (d.kind is str and not d.choices):
        kind = {"type": str, "default": d.default}  # any text; its reader parses it
    else:
        kind = {"type": DeclaredType(d), "default": d.default}
        kind["show_default"] = d.default is not None
    return click.option(*decls, help=help or d.help, **kind, **click_args)


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

rounds_option = declared("rounds", callback=alias_target)
seed_option = declared("seed")
level_option = declared("level")
snapshot_option = declared("snapshot", "--snapshot", "snapshot_id")
component_option = declared("component")


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
    return declared("source", help=help)


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
        envvar=URL_ENV,
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
    decorator = declared(
        "wait",
        envvar="ARENA_WAIT",
        metavar="SECONDS",
        expose_value=expose_value,
        callback=_set_wait,
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
    return declared("max_boards")(command)
