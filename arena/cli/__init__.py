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
    _engine: object | None = field(default=None, repr=False)

    def engine(self, *, migrate_new: bool = True):
        """Return a ready SQLAlchemy engine (schema checked, new databases initialised)."""
        if self._engine is None:
            from arena.db.session import DatabaseError, open_engine

            try:
                self._engine = open_engine(self.url, migrate_new=migrate_new)
            except DatabaseError as exc:
                raise click.ClickException(str(exc)) from exc
        return self._engine


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    "db_url",
    envvar="ARENA_DATABASE_URL",
    default=DEFAULT_URL,
    show_default=True,
    help="SQLAlchemy database URL (env ARENA_DATABASE_URL).",
)
@click.version_option(__version__, prog_name="arena")
@click.pass_context
def cli(ctx: click.Context, db_url: str) -> None:
    """Arena leaderboards: store pairwise battles, rate models with honest
    intervals, group them into tiers and publish a static page.

    Example:

        arena demo out/

        arena ingest battles.csv.gz && arena models
    """
    ctx.obj = AppContext(url=db_url)


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
        irt_cmd,
        models_cmd,
        publish_cmd,
        rebuild_cmd,
    )

    for mod in (
        db_cmd,
        ingest_cmd,
        irt_cmd,
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
