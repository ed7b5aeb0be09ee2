"""Writing a command's rows to stdout in the ``--format`` chosen (see :mod:`arena.core.formats`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

from arena.cli.options import format_option, quiet_option
from arena.core.formats import render_csv, render_table, tidy, to_json
from arena.core.words import column_word

__all__ = ["emit", "format_option", "quiet_option", "warn"]


def warn(message: str) -> None:
    """One ``warning:`` line on stderr (never hidden by ``-q``)."""
    click.echo(f"warning: {message}", err=True)


def emit(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    fmt: str,
    *,
    json_obj: Any = None,
    rounded: bool = False,
    wrap: bool = False,
) -> None:
    """Write ``rows`` to stdout in ``fmt``.

    ``json_obj`` replaces the plain list of rows in JSON output when a command
    has a richer document to offer (a snapshot header plus rows, say).
    ``rounded``: floats to :data:`arena.core.formats.DIGITS` significant digits in
    JSON and CSV (the rating commands; tables have their own short formats).
    ``wrap``: a table's last column (long sentences) wraps to fit the terminal.
    """
    if rounded and fmt != "table":
        rows = [tidy(dict(r)) for r in rows]
        json_obj = tidy(json_obj)
    if fmt == "json":
        click.echo(to_json(json_obj if json_obj is not None else [dict(r) for r in rows]))
    elif fmt == "csv":
        sys.stdout.write(render_csv(rows, columns))
        sys.stdout.flush()
    else:
        # words for people (the site's), keys for machines (JSON, CSV)
        width = terminal_width() if wrap else None
        click.echo(render_table(rows, columns, [column_word(c) for c in columns], width=width))


def terminal_width() -> int:
    """The terminal's columns ($COLUMNS, else the terminal, else 100 when piped)."""
    import shutil

    return max(shutil.get_terminal_size((100, 24)).columns, 60)
