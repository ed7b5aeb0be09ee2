"""Output options shared by every listing command: one ``--format`` style for all."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click

FORMATS = ("table", "json", "csv")

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format.",
)

quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress output on stderr.")

# Spreadsheet programs execute cells that start with these characters.
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """Neutralise a text cell that a spreadsheet would read as a formula.

    Numbers pass through unchanged (a negative rating is not a formula).
    """
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 1 else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def render_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Plain aligned text table; numbers right-aligned."""
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(r.get(c), (int, float)) or r.get(c) is None for r in rows) and rows
        for c in columns
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(columns)), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def render_csv(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow(
            [
                csv_safe(",".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
                for v in (r.get(c) for c in columns)
            ]
        )
    return buf.getvalue()


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False)


def emit(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    fmt: str,
    *,
    json_obj: Any = None,
) -> None:
    """Write ``rows`` to stdout in ``fmt``.

    ``json_obj`` replaces the plain list of rows in JSON output when a command
    has a richer document to offer (a snapshot header plus rows, say).
    """
    if fmt == "json":
        click.echo(to_json(json_obj if json_obj is not None else [dict(r) for r in rows]))
    elif fmt == "csv":
        sys.stdout.write(render_csv(rows, columns))
    else:
        click.echo(render_table(rows, columns))
