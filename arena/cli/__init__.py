"""The ``arena`` command line: parse, open a session, call the library, format.

Each command group lives in its own module and is registered below. The
global options ``--db``, ``--wait`` and ``-q/--quiet`` are added to every command, so they
work before or after the command name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click

from arena.cli.options import db_option, quiet_option, wait_option
from arena.core.defaults import DEFAULT_URL, DEFAULT_WAIT
from arena.core.version import __version__

if TYPE_CHECKING:
    from arena.api import Arena


@dataclass
class AppContext:
    """What every command receives: the database URL, quietness and a lazily opened arena."""

    url: str
    quiet: bool = False
    #: seconds to wait for another command's lock on the database (--wait)
    wait: float = DEFAULT_WAIT
    _arena: Arena | None = field(default=None, repr=False)

    def arena(self) -> Arena:
        """The front door (:class:`arena.api.Arena`) on ``--db``; every command calls one method."""
        if self._arena is None:
            from arena.api import Arena

            self._arena = Arena(self.url, wait=self.wait, notice=_waiting_notice(self))
        return self._arena

    def engine(self, *, create: bool = False):
        """Return a ready SQLAlchemy engine (schema checked).

        Only commands that store battles (ingest, demo) pass ``create``: they
        create the schema in an empty database; every other command refuses an
        empty or foreign database rather than writing arena's tables into it.
        """
        return self.arena().engine(create=create)


def _waiting_notice(app: AppContext):
    """Print the first lock-wait notice of the command on stderr (none with -q)."""
    told: list[str] = []

    def say(message: str) -> None:
        if not app.quiet and not told:
            told.append(message)
            click.echo(f"{message} (see --wait)", err=True)

    return say


def _add_global_options(command: click.Command) -> None:
    """Give ``command`` (and its subcommands) ``--db`` and ``-q`` unless it has them."""
    names = {p.name for p in command.params}
    if "db_url" not in names:
        db_option(expose_value=False)(command)
    if "quiet" not in names:
        quiet_option(expose_value=False)(command)
    if "wait" not in names:
        wait_option(expose_value=False)(command)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _add_global_options(sub)


class ArenaGroup(click.Group):
    """A group whose commands all accept the global options after their name.

    It also turns the library's user errors (every
    :class:`arena.core.errors.ArenaError`: a bad option, a malformed file, a
    missing snapshot, ...) and failures of
    the environment (disk full, lock held too long, server gone, ...; see
    arena.db.errors) into one-line messages instead of tracebacks; parameter
    names in messages become flags (:func:`arena.cli.errors.flag_for`).
    """

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            from arena.api import describe_failure as describe
            from arena.cli.errors import as_click_error
            from arena.core.errors import ArenaError

            if isinstance(exc, ArenaError):
                raise as_click_error(exc) from exc

            message = describe(exc)
            if message is None:
                raise
            raise click.ClickException(message) from exc

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _add_global_options(cmd)
        name = name or cmd.name
        if name is None:
            raise TypeError("Command has no name.")
        self._commands[name] = cmd

    # Commands load on demand (COMMAND_MODULES): click's own lookups go through
    # list_commands and get_command; ``commands`` read from outside is every command.

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        """Every command, by name (imports every command module)."""
        for name in COMMAND_MODULES:
            self._load(name)
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value

    def _load(self, name: str) -> None:
        module = COMMAND_MODULES.get(name)
        if name not in self._commands and module is not None:
            import importlib

            for command in importlib.import_module(f"arena.cli.{module}").COMMANDS:
                self.add_command(command)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._load(cmd_name)
        return self._commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self._commands, *COMMAND_MODULES})


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@db_option
@quiet_option
@wait_option
@click.version_option(__version__, prog_name="arena")
@click.pass_context
def cli(ctx: click.Context, db_url: str, quiet: bool, wait: float) -> None:
    """Arena leaderboards: store pairwise battles, rate models with honest
    intervals, group them into tiers and publish a static page.

    --db and -q may be given before or after the command name.

    Example:

        arena demo out/

        arena ingest battles.csv.gz && arena models --db sqlite:///arena.db
    """
    ctx.obj = AppContext(url=db_url, quiet=quiet, wait=wait)


def main() -> None:
    # One OpenBLAS thread unless the user chose otherwise, set before numpy loads:
    # the engine limits BLAS to one thread while it works anyway (its matrices are
    # small and its rounds already run in parallel: engine/resampling/blas.py), and
    # starting OpenBLAS's thread pool costs a short command ~60 ms of wall time
    # (benchmarks/bench_cli_latency.py).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    cli(prog_name="arena")


#: Every command of ``arena``, by name: the module of :mod:`arena.cli` defining it
#: (in its ``COMMANDS``). A command's module is imported when the command runs or
#: ``arena --help`` lists it, so ``arena leaderboard`` does not load the other
#: seventeen (``tests/test_cli_imports.py`` checks this table against the modules).
COMMAND_MODULES = {
    "agreement": "agreement_cmd",
    "audit": "audit_cmd",
    "categories": "categories_cmd",
    "compare": "compare_cmd",
    "db": "db_cmd",
    "demo": "demo_cmd",
    "diff": "snapshots_cmd",
    "eval": "eval_cmd",
    "ingest": "ingest_cmd",
    "irt": "irt_cmd",
    "keys": "serve_cmd",
    "leaderboard": "leaderboard_cmd",
    "models": "models_cmd",
    "nightly": "nightly_cmd",
    "plan": "plan_cmd",
    "publish": "publish_cmd",
    "rebuild": "rebuild_cmd",
    "sampling": "sampling_cmd",
    "serve": "serve_cmd",
    "snapshots": "snapshots_cmd",
}

__all__ = ["cli", "main", "AppContext", "COMMAND_MODULES", "DEFAULT_URL"]
