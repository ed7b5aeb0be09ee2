"""Model metadata for the published page: display name, organisation, licence, link, hidden.

Metadata lives on the ``models`` row, not in snapshots, so editing it never
changes a rating; the next ``arena publish`` simply shows it. Hiding a model
takes it off the page but keeps its battles in every fit.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, update

from arena.core.errors import ArenaError
from arena.core.text import text_problem
from arena.core.vocabulary import is_web_url, parse_bool
from arena.db.models import Model
from arena.store.records import unknown_models

#: Settable fields; ``None`` in an update means "leave unchanged", "" means "clear".
FIELDS = ("display_name", "organisation", "licence", "link", "hidden")
_TEXT_LIMITS = {"display_name": 512, "organisation": 255, "licence": 255, "link": 1024}
# Beside the yes/no words, the hidden column may say what it means.
_HIDDEN_WORDS = {"hidden": True, "hide": True, "shown": False, "show": False}


class AnnotateError(ArenaError, ValueError):
    """Bad input (unknown model, malformed file); the message is for the user."""


@dataclass(frozen=True)
class Annotation:
    model: str
    display_name: str | None = None
    organisation: str | None = None
    licence: str | None = None
    link: str | None = None
    hidden: bool | None = None

    def changes(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in FIELDS:
            v = getattr(self, f)
            if v is None:
                continue
            if f != "hidden":
                v = v.strip() or None  # an empty cell clears the field
                problem = None if v is None else text_problem(v, limit=_TEXT_LIMITS[f])
                if problem is not None:
                    raise AnnotateError(f"{f} for model {self.model!r}: {problem}")
                if f == "link" and v is not None and not is_web_url(v):
                    # The page would not link it anyway (javascript: and friends).
                    raise AnnotateError(
                        f"link for model {self.model!r} must be an http(s) URL, not {v!r}"
                    )
            out[f] = v
        return out


def _bool(value: Any, where: str) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if not text:
        return None
    word = _HIDDEN_WORDS.get(text, parse_bool(text))
    if word is not None:
        return word
    raise AnnotateError(f"{where}: hidden must be true or false, not {value!r}")


def _from_mapping(rec: Mapping[str, Any], where: str) -> Annotation:
    name = rec.get("model")
    if not isinstance(name, str) or not name:
        raise AnnotateError(f"{where}: missing model name")
    unknown = set(rec) - {"model", *FIELDS}
    if unknown:
        raise AnnotateError(
            f"{where}: unknown column(s) {', '.join(sorted(unknown))}; "
            f"expected model, {', '.join(FIELDS)}"
        )
    text = {}
    for f in FIELDS[:-1]:
        v = rec.get(f)
        if v is not None and not isinstance(v, str):
            raise AnnotateError(f"{where}: {f} must be text")
        text[f] = v
    return Annotation(model=name, hidden=_bool(rec.get("hidden"), where), **text)


def read_annotations(path: str | os.PathLike[str]) -> list[Annotation]:
    """A CSV (header ``model,display_name,organisation,licence,link,hidden``, any
    subset after ``model``) or a JSON list of objects with the same keys."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise AnnotateError(f"cannot read {path}: {exc}") from exc
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AnnotateError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise AnnotateError(f"{path}: expected a JSON list of objects")
        return [_from_mapping(d, f"{path} item {i + 1}") for i, d in enumerate(data)]
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "model" not in reader.fieldnames:
        raise AnnotateError(f"{path}: the CSV header must have a 'model' column")
    # CSV cells are text: an empty cell means "leave as is", not "clear".
    return [
        _from_mapping(
            {k: (v if v != "" else None) for k, v in row.items() if k is not None},
            f"{path} line {i + 2}",
        )
        for i, row in enumerate(reader)
    ]


def annotate(conn: Connection, annotations: Iterable[Annotation]) -> int:
    """Apply every annotation, or none: an unknown model name fails the whole batch.

    Returns the number of models changed. Runs in the caller's transaction.
    """
    items = list(annotations)
    problem = unknown_models(conn, {a.model for a in items})
    if problem is not None:
        raise AnnotateError(problem)
    changed = 0
    for a in items:
        values = a.changes()
        if values:
            conn.execute(update(Model).where(Model.name == a.model).values(**values))
            changed += 1
    return changed
