"""Reading per-item benchmark results: lm-evaluation-harness samples or ``model,item,score`` CSV.

Two input shapes, told apart by the file name (``.jsonl``/``.json`` vs ``.csv``,
optionally ``.gz``) or, failing that, by the first non-blank character:

- lm-evaluation-harness ``--log_samples`` output: JSON lines, one record per
  document with ``doc_id`` and a per-item metric such as ``acc`` or
  ``exact_match``. One file holds one model on one task. The model name is
  taken from a ``PATH=NAME`` argument, else (for harness-named files
  ``samples_<task>_<timestamp>.jsonl``) from the parent directory, which the
  harness names after the model, else from the file stem.
- CSV with a header containing ``model``, ``item`` and ``score`` (other
  columns ignored), any number of models per file.

Scores must be 0 or 1 (yes/no words of :mod:`arena.core.vocabulary` accepted).
Gzip-compressed files are recognised by their content. Errors name the file,
the line and the field.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from arena.core.errors import ArenaError
from arena.core.vocabulary import is_gzip, parse_bool

__all__ = ["ItemFileError", "ItemScores", "parse_spec", "read_results", "item_sort_key"]

_HARNESS_NAME = re.compile(r"^samples_(?P<task>.+?)_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9:.\-]+)$")


class ItemFileError(ArenaError, ValueError):
    """A malformed input file; the message names file, line and field."""

    def __init__(self, path: str | os.PathLike, line: int | None, fieldname: str | None, msg: str):
        where = f"{path}" + (f":{line}" if line is not None else "")
        what = f" field {fieldname!r}:" if fieldname else ""
        super().__init__(f"{where}:{what} {msg}")
        self.path, self.line, self.field = str(path), line, fieldname


@dataclass
class ItemScores:
    """Per-item 0/1 scores of several models.

    Attributes
    ----------
    scores : dict
        ``scores[model][item] = 0 or 1``; items are strings.
    benchmarks : set of str
        Benchmark names seen (harness task names, else file stems).
    origin : dict
        ``origin[(model, item)] = "file:line"`` for error messages.
    """

    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    benchmarks: set[str] = field(default_factory=set)
    origin: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        return list(self.scores)

    def add(self, model: str, item: str, value: int, path: str, line: int) -> None:
        where = f"{path}:{line}"
        previous = self.origin.get((model, item))
        if previous is not None:
            raise ItemFileError(
                path,
                line,
                None,
                f"duplicate item {item!r} for model {model!r} (first at {previous})",
            )
        self.scores.setdefault(model, {})[item] = value
        self.origin[model, item] = where


def item_sort_key(item: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order first, then the rest alphabetically."""
    return (0, int(item), "") if item.isdigit() else (1, 0, item)


def parse_spec(spec: str) -> tuple[Path, str | None]:
    """Split ``PATH=NAME`` (an existing file whose name contains ``=`` wins)."""
    if os.path.exists(spec) or "=" not in spec:
        return Path(spec), None
    path, name = spec.rsplit("=", 1)
    if not name.strip():
        raise ItemFileError(spec, None, None, "empty model name after '='")
    return Path(path), name.strip()


def name_without_gz(path: Path) -> str:
    name = path.name
    return name[:-3] if name.endswith(".gz") else name


def _open_text(path: Path) -> io.TextIOBase:
    if not path.is_file():
        raise ItemFileError(path, None, None, "no such file")
    if is_gzip(path):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def detect_kind(path: Path) -> str:
    name = name_without_gz(path).lower()
    if name.endswith((".jsonl", ".json")):
        return "jsonl"
    if name.endswith(".csv"):
        return "csv"
    with _open_text(path) as fh:
        for line in fh:
            if line.strip():
                return "jsonl" if line.lstrip().startswith("{") else "csv"
    return "csv"


def harness_names(path: Path) -> tuple[str, str]:
    """(model, benchmark) implied by a harness samples file's path."""
    stem = name_without_gz(path).rsplit(".", 1)[0]
    match = _HARNESS_NAME.match(stem)
    if match:
        parent = path.resolve().parent.name or stem
        return parent, match["task"]
    return stem, stem


def _binary(raw: object, path: Path, line: int, fieldname: str) -> int:
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, (int, float)) and raw in (0, 1):
        return int(raw)
    if isinstance(raw, str):
        word = parse_bool(raw)
        if word is not None:
            return int(word)
    raise ItemFileError(path, line, fieldname, f"score must be 0 or 1, got {raw!r}")


def _json_records(path: Path) -> Iterator[tuple[int, dict]]:
    with _open_text(path) as fh:
        text = fh.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        # A JSON array of records (some harness versions / hand-made files).
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ItemFileError(path, exc.lineno, None, f"invalid JSON: {exc.msg}") from None
        for i, rec in enumerate(records, 1):
            if not isinstance(rec, dict):
                raise ItemFileError(path, None, None, f"record {i} is not an object")
            yield i, rec
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ItemFileError(path, lineno, None, f"invalid JSON: {exc.msg}") from None
        if not isinstance(rec, dict):
            raise ItemFileError(path, lineno, None, "expected a JSON object per line")
        yield lineno, rec


def harness_rows(path: Path, metric: str, filter_name: str | None) -> list[tuple[int, str, object]]:
    """``(line, doc_id, value of metric)`` of an lm-evaluation-harness samples file.

    Records of another filter than ``filter_name`` are skipped; a file with
    several filters needs one chosen.  Raises :class:`ItemFileError` naming
    the line and field.
    """
    filters: set[str] = set()
    rows = []
    for lineno, rec in _json_records(path):
        if "doc_id" not in rec:
            raise ItemFileError(path, lineno, "doc_id", "missing")
        filt = rec.get("filter")
        if filter_name is not None and filt is not None and filt != filter_name:
            continue
        if filt is not None:
            filters.add(str(filt))
        if metric not in rec:
            numeric = sorted(
                k for k, v in rec.items() if isinstance(v, (int, float)) and k != "doc_id"
            )
            hint = f" (numeric fields: {', '.join(numeric)})" if numeric else ""
            raise ItemFileError(path, lineno, metric, f"missing; choose the metric{hint}")
        rows.append((lineno, str(rec["doc_id"]), rec[metric]))
    if len(filters) > 1:
        raise ItemFileError(
            path,
            None,
            "filter",
            f"records from several filters ({', '.join(sorted(filters))}); choose one",
        )
    if filter_name is not None and not rows:
        raise ItemFileError(path, None, "filter", f"no records with filter {filter_name!r}")
    if not rows:
        raise ItemFileError(path, None, None, "no records")
    return rows


def _read_jsonl(
    path: Path, out: ItemScores, *, model: str | None, metric: str, filter_name: str | None
) -> None:
    default_model, benchmark = harness_names(path)
    model = model or default_model
    out.benchmarks.add(benchmark)
    rows = harness_rows(path, metric, filter_name)
    for lineno, item, raw in rows:
        out.add(model, item, _binary(raw, path, lineno, metric), str(path), lineno)


def csv_records(
    path: Path,
    *,
    required: list[str],
    optional: tuple[str, ...] = (),
    aliases: dict[str, str] | None = None,
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line, {column: stripped cell})`` for each non-blank data row of a CSV.

    Header names are matched case-insensitively (a BOM is ignored; ``aliases``
    renames some). A ``required`` column missing from the header, or empty in
    a row, is an :class:`ItemFileError` naming file, line and field; so are an
    empty file, malformed CSV and a file without data rows. ``optional``
    columns are yielded when the header has them (possibly empty).
    """
    aliases = aliases or {}
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise ItemFileError(
                path, 1, None, f"empty file (expected a header {','.join(required)})"
            ) from None
        except csv.Error as exc:
            raise ItemFileError(path, 1, None, f"bad CSV: {exc}") from None
        names = [h.strip().lstrip("\ufeff").lower() for h in header]
        names = [aliases.get(h, h) for h in names]
        for col in required:
            if col not in names:
                raise ItemFileError(
                    path, 1, col, f"missing column (header must contain {', '.join(required)})"
                )
        pos = {c: names.index(c) for c in (*required, *optional) if c in names}
        seen = 0
        try:
            for row in reader:
                line = reader.line_num
                if not any(cell.strip() for cell in row):
                    continue
                cells = {}
                for col, i in pos.items():
                    cell = row[i].strip() if i < len(row) else ""
                    if not cell and col in required:
                        raise ItemFileError(path, line, col, "missing")
                    cells[col] = cell
                seen += 1
                yield line, cells
        except csv.Error as exc:
            raise ItemFileError(path, reader.line_num, None, f"bad CSV: {exc}") from None
    if not seen:
        raise ItemFileError(path, None, None, "no data rows after the header")


def _read_csv(path: Path, out: ItemScores, *, model: str | None) -> None:
    out.benchmarks.add(name_without_gz(path).rsplit(".", 1)[0])
    need = ["item", "score"] if model else ["model", "item", "score"]
    for line, cells in csv_records(path, required=need):
        out.add(
            model or cells["model"],
            cells["item"],
            _binary(cells["score"], path, line, "score"),
            str(path),
            line,
        )


def read_results(
    specs: list[str], *, metric: str = "acc", filter_name: str | None = None
) -> ItemScores:
    """Read every result file named in ``specs`` (``PATH`` or ``PATH=NAME``).

    For CSV, ``=NAME`` assigns all rows to model NAME and the ``model`` column
    becomes optional.

    Raises
    ------
    ItemFileError
        Unreadable or malformed input, duplicate (model, item).
    """
    out = ItemScores()
    for spec in specs:
        path, name = parse_spec(spec)
        kind = detect_kind(path) if path.is_file() else None
        if kind is None:
            raise ItemFileError(path, None, None, "no such file")
        try:
            if kind == "jsonl":
                _read_jsonl(path, out, model=name, metric=metric, filter_name=filter_name)
            else:
                _read_csv(path, out, model=name)
        except UnicodeDecodeError as exc:
            raise ItemFileError(path, None, None, f"not UTF-8 text ({exc.reason})") from None
        except (OSError, EOFError) as exc:
            raise ItemFileError(path, None, None, f"cannot read: {exc}") from None
    return out
