"""``arena db``: schema migrations."""

from __future__ import annotations

import click


@click.group("db")
def db_group() -> None:
    """Database schema: show the revision, apply migrations.

    \b
    Example:
        arena --db postgresql+psycopg://postgres@127.0.0.1/arena db upgrade
    """


@db_group.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
@click.pass_obj
def upgrade_command(app, revision: str) -> None:
    """Migrate the database schema to the newest (or given) revision.

    \b
    Example:
        arena db upgrade
    """
    from arena.db.session import DatabaseError, create_db_engine, current_revision, upgrade

    engine = create_db_engine(app.url)
    try:
        before = current_revision(engine)
        upgrade(engine, app.url, revision)
        after = current_revision(engine)
    except DatabaseError as exc:
        raise click.ClickException(str(exc)) from exc
    except Exception as exc:  # alembic/SQL errors: one line, not a traceback
        raise click.ClickException(f"migration failed: {exc}") from exc
    click.echo(f"schema revision: {before or 'none'} -> {after}")


@db_group.command("current")
@click.pass_obj
def current_command(app) -> None:
    """Show the schema revision of the database and the newest one known.

    \b
    Example:
        arena db current
    """
    from arena.db.session import create_db_engine, current_revision, head_revision

    engine = create_db_engine(app.url)
    try:
        rev = current_revision(engine)
    except Exception as exc:
        raise click.ClickException(f"cannot read schema revision: {exc}") from exc
    head = head_revision()
    state = "up to date" if rev == head else "run `arena db upgrade`" if rev else "empty database"
    click.echo(f"{rev or 'none'} (head {head}: {state})")


COMMANDS = [db_group]
