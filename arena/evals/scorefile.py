"""Reading per-item scores of any metric, with the design columns of repeated runs.

CSV: a header with ``model``, ``item`` and ``score`` (any real number), plus
optional ``seed`` (or ``run``), ``prompt`` (template), ``judge`` and ``group``
(the document an item belongs to). With ``numerator``/``denominator`` column
names (bits and bytes, say) those two columns are read instead of ``score``.

lm-evaluation-harness ``--log_samples`` files: one model per file, named as in
:mod:`arena.evals.itemfile`. Several files of one model on one task are runs
(one per seed) and are joined on ``doc_id``; each file is a run, labelled by
its path. A metric given as a two-element list ``[numerator, denominator]``
(how the harness logs ``bits_per_byte`` and the perplexities) is read as such.

Every row keeps its ``file:line`` so that later errors can name it. A design
cell (model, item, seed, prompt, judge) given twice is an error naming both
lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from arena.core.vocabulary import parse_bool
from arena.evals.itemfile import (
    ItemFileError,
    csv_records,
    detect_kind,
    harness_names,
    harness_rows,
    name_without_gz,
    parse_spec,
)

__all__ = ["DESIGN_COLUMNS", "ScoreTable", "read_scores"]

#: Optional columns, in the order used for design cells.
DESIGN_COLUMNS = ("seed", "prompt", "judge")
_ALIASES = {"run": "seed"}
_LN2 = math.log(2.0)


@dataclass
class ScoreTable:
    """Long-format scores: one row per (model, item, seed, prompt, judge) cell.

    Attributes
    ----------
    model, item : list of str
    score : list of float
        The metric (``numerator / denominator`` of the row for ratio data).
    numerator, denominator : list of float or None
        Present for ratio metrics.
    seed, prompt, judge, group : list of str or None
        The design columns the input had (None when absent).
    origin : list of str
        ``file:line`` of each row.
    files : dict
        Model -> files it was read from.
    """

    model: list[str] = field(default_factory=list)
    item: list[str] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    numerator: list[float] | None = None
    denominator: list[float] | None = None
    seed: list[str] | None = None
    prompt: list[str] | None = None
    judge: list[str] | None = None
    group: list[str] | None = None
    origin: list[str] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)
    _cells: dict[tuple, str] = field(default_factory=dict, repr=False)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.model))

    @property
    def axes(self) -> list[str]:
        """Design columns with more than one level."""
        return [
            c
            for c in DESIGN_COLUMNS
            if getattr(self, c) is not None and len(set(getattr(self, c))) > 1
        ]

    @property
    def binary(self) -> bool:
        return self.numerator is None and all(s in (0.0, 1.0) for s in self.score)

    def column(self, name: str) -> np.ndarray:
        values = getattr(self, name)
        return np.asarray(values if values is not None else [""] * len(self.model), dtype=object)

    def rows_of(self, model: str) -> np.ndarray:
        return np.flatnonzero(np.asarray(self.model, dtype=object) == model)

    def add(self, path, line, model, item, score, design, group, ratio=None) -> None:
        key = (model, item, *(design.get(c, "") for c in DESIGN_COLUMNS))
        where = f"{path}:{line}"
        first = self._cells.get(key)
        if first is not None:
            cell = ", ".join(f"{c} {design[c]!r}" for c in DESIGN_COLUMNS if design.get(c))
            if not cell:
                raise ItemFileError(path, line, None, f"duplicate item {item!r} for model {model!r} (first at {first}); several runs of one item need a seed (or run) column")  # fmt: skip
            raise ItemFileError(
                path,
                line,
                None,
                f"design cell repeated: model {model!r}, item {item!r}"
                + (f", {cell}" if cell else "")
                + f" already at {first}",
            )
        self._cells[key] = where
        n = len(self.model)
        for col in DESIGN_COLUMNS:
            if col in design:
                if getattr(self, col) is None:
                    setattr(self, col, [""] * n)
                getattr(self, col).append(design[col])
            elif getattr(self, col) is not None:
                getattr(self, col).append("")
        if group is not None:
            if self.group is None:
                self.group = [""] * n
            self.group.append(group)
        elif self.group is not None:
            self.group.append("")
        if ratio is not None:
            if self.numerator is None:
                if n:
                    raise ItemFileError(path, line, None, "mixes ratio and plain scores")
                self.numerator, self.denominator = [], []
            assert self.denominator is not None  # set with the numerator
            self.numerator.append(ratio[0])
            self.denominator.append(ratio[1])
        elif self.numerator is not None:
            raise ItemFileError(path, line, None, "mixes ratio and plain scores")
        self.model.append(model)
        self.item.append(item)
        self.score.append(score)
        self.origin.append(where)
        files = self.files.setdefault(model, [])
        if str(path) not in files:
            files.append(str(path))


def _number(raw: object, path, line, name: str) -> float:
    if isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, (int, float)):
        value = float(raw)
    else:
        text = str(raw).strip()
        word = parse_bool(text)  # the yes/no words every reader accepts; "1", "0.0" as numbers
        if word is not None:
            return float(word)
        try:
            value = float(text)
        except ValueError:
            raise ItemFileError(path, line, name, f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise ItemFileError(path, line, name, f"not a finite number: {raw!r}")
    return value


def _read_csv(path: Path, out: ScoreTable, *, model, numerator, denominator) -> None:
    values = [numerator, denominator] if numerator else ["score"]
    need = ([] if model else ["model"]) + ["item", *values]
    optional = (*DESIGN_COLUMNS, "group")
    for line, cells in csv_records(path, required=need, optional=optional, aliases=_ALIASES):
        if numerator:
            num = _number(cells[numerator], path, line, numerator)
            den = _number(cells[denominator], path, line, denominator)
            if den <= 0:
                raise ItemFileError(path, line, denominator, f"must be positive, got {den!r}")
            score, ratio = num / den, (num, den)
        else:
            score, ratio = _number(cells["score"], path, line, "score"), None
        design = {c: cells[c] for c in DESIGN_COLUMNS if c in cells}
        name = model or cells["model"]
        out.add(path, line, name, cells["item"], score, design, cells.get("group"), ratio)


def _read_jsonl(path: Path, out: ScoreTable, *, model, metric, filter_name, run) -> None:
    default_model, _ = harness_names(path)
    model = model or default_model
    rows = harness_rows(path, metric, filter_name)
    for line, item, raw in rows:
        if isinstance(raw, list):
            if len(raw) != 2:
                raise ItemFileError(path, line, metric, f"expected a number or [numerator, denominator], got {raw!r}")  # fmt: skip
            num = _number(raw[0], path, line, metric)
            den = _number(raw[1], path, line, metric)
            if den <= 0:
                raise ItemFileError(
                    path, line, metric, f"denominator must be positive, got {den!r}"
                )
            if metric == "bits_per_byte":
                # The harness logs (log-likelihood in nats, bytes): bits = -ll / ln 2.
                num = -num / _LN2
            out.add(path, line, model, item, num / den, {"seed": run}, None, (num, den))
        else:
            out.add(path, line, model, item, _number(raw, path, line, metric), {"seed": run}, None)


def read_scores(
    specs: list[str],
    *,
    metric: str = "acc",
    filter_name: str | None = None,
    numerator: str | None = None,
    denominator: str | None = None,
) -> ScoreTable:
    """Read every result file in ``specs`` (``PATH`` or ``PATH=NAME``) into one table.

    Raises
    ------
    ItemFileError
        Unreadable or malformed input, a value that is not a number, a design
        cell given twice; the message names file, line and field.
    """
    if (numerator is None) != (denominator is None):
        raise ItemFileError("numerator/denominator", None, None, "give both or neither")
    out = ScoreTable()
    parsed = [parse_spec(s) for s in specs]
    runs_of: dict[str, int] = {}
    for path, _ in parsed:
        if not path.is_file():
            raise ItemFileError(path, None, None, "no such file")
    for path, name in parsed:
        try:
            if detect_kind(path) == "jsonl":
                model = name or harness_names(path)[0]
                runs_of[model] = runs_of.get(model, 0) + 1
                run = name_without_gz(path)
                _read_jsonl(path, out, model=name, metric=metric, filter_name=filter_name, run=str(path.parent / run))  # fmt: skip
            else:
                _read_csv(path, out, model=name, numerator=numerator, denominator=denominator)
        except UnicodeDecodeError as exc:
            raise ItemFileError(path, None, None, f"not UTF-8 text ({exc.reason})") from None
        except (OSError, EOFError) as exc:
            raise ItemFileError(path, None, None, f"cannot read: {exc}") from None
    if (
        out.seed is not None
        and all(n == 1 for n in runs_of.values())
        and len(runs_of) == len(out.files)
    ):
        # One harness file per model: the "run" column carries no design information.
        out.seed = None
    return out
