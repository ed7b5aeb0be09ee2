"""The ``arena`` command line: parse, open a session, call the library, format.

Each command lives in its own module and is registered below.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from arena import __version__

DEFAULT_URL = "sqlite:///arena.db"


@dataclass
class AppContext:
    """What every command receives: the database URL and a lazily opened engine."""

    url: str
    #: seconds to wait for another command's lock on the database (--wait)
    wait: float = 300.0
    _engine: object | None = field(default=None, repr=False)

    def engine(self, *, create: bool = False):
        """Return a ready SQLAlchemy engine (schema checked).

        Only commands that store battles (ingest, demo) pass ``create``: they
        create the schema in an empty database; every other command refuses an
        empty or foreign database rather than writing arena's tables into it.
        """
        if self._engine is None:
            from arena.db.session import DatabaseError, open_engine

            try:
                self._engine = open_engine(self.url, migrate_new=create, wait=self.wait)
            except DatabaseError as exc:
                raise click.ClickException(str(exc)) from exc
        return self._engine


class _Group(click.Group):
    """Turns failures of the environment (disk full, lock held too long, server
    gone, ...) into one-line messages instead of tracebacks (see arena.db.errors)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            from arena.db.errors import describe

            message = describe(exc)
            if message is None:
                raise
            raise click.ClickException(message) from exc


def _say_waiting(message: str) -> None:
    click.echo(message, err=True)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    "db_url",
    envvar="ARENA_DATABASE_URL",
    default=DEFAULT_URL,
    show_default=True,
    help="SQLAlchemy database URL (env ARENA_DATABASE_URL).",
)
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    envvar="ARENA_WAIT",
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for another command's lock on the database (env ARENA_WAIT).",
)
@click.version_option(__version__, prog_name="arena")
@click.pass_context
def cli(ctx: click.Context, db_url: str, wait: float) -> None:
    """Arena leaderboards: store pairwise battles, rate models with honest
    intervals, group them into tiers and publish a static page.

    Example:

        arena demo out/

        arena ingest battles.csv.gz && arena models
    """
    from arena.db import session

    session.wait_notice = _say_waiting
    ctx.obj = AppContext(url=db_url, wait=wait)


def main() -> None:
    cli(prog_name="arena")


def _register() -> None:
    # Command modules import their heavy libraries (numpy, scipy, the engine)
    # inside the command functions, so `arena --help` stays fast.
    from arena.cli import (
        audit_cmd,
        db_cmd,
        demo_cmd,
        eval_cmd,
        ingest_cmd,
        models_cmd,
        publish_cmd,
        rebuild_cmd,
    )

    for mod in (
        db_cmd,
        ingest_cmd,
        models_cmd,
        rebuild_cmd,
        publish_cmd,
        eval_cmd,
        demo_cmd,
        audit_cmd,
    ):
        for command in mod.COMMANDS:
            cli.add_command(command)


_register()
__all__ = ["cli", "main", "AppContext"]
