"""Turning one input record into one normalised battle, or a field-level error.

Accepted shapes (column names are matched case-sensitively, first alias wins):

- LMArena battle records: ``model_a, model_b, winner`` with winner in
  ``model_a | model_b | tie | tie (bothbad) | both_bad``; optional ``id``,
  ``question_id``, ``tstamp``, ``judge``, ``language``, ``category`` and boolean
  tag columns (``math=True``) that become categories.
- Arena-hard judge verdicts: ``model_a, model_b, verdict`` with ``A>>B``, ``A>B``,
  ``A=B``, ``B>A``, ``B>>A``; a strong verdict weighs 3 (as arena-hard-auto counts it).
- LLMFAO comparisons: ``left, right, winner`` (``left | right | tie``), ``worker``
  as judge and ``prompt`` as question. Its ``id`` names the pair of answers, not
  the vote, so it is not used as an external id.
- Sports results (:data:`RESULT_SHAPES`) and aggregated win counts
  (:data:`COUNT_SHAPE`), as in the classic Bradley-Terry data sets.
- Anything else through ``--map FIELD=COLUMN``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import compress
from operator import eq
from typing import Any, NamedTuple

from arena.db.models import MODEL_NAME_MAX
from arena.ingest.errors import RowError
from arena.ingest.style import Style, StyleShape, resolve_style
from arena.outcomes import Outcome

__all__ = ["RowError", "ParsedBattle", "Schema", "resolve_schema", "parse_record"]

FIELDS = (
    "id",
    "model_a",
    "model_b",
    "winner",
    "verdict",
    "weight",
    "question",
    "judge",
    "language",
    "tstamp",
    "category",
)
REQUIRED = ("model_a", "model_b")

ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "battle_id", "external_id"),
    "model_a": ("model_a",),
    "model_b": ("model_b",),
    "winner": ("winner",),
    "verdict": ("verdict",),
    "weight": ("weight",),
    "question": ("question_id", "question", "prompt_id", "prompt"),
    "judge": ("judge", "worker", "annotator", "judge_id"),
    "language": ("language",),
    "tstamp": ("tstamp", "timestamp"),
    "category": ("category", "categories"),
}

WINNERS: dict[str, Outcome] = {
    "model_a": Outcome.A_WINS,
    "model_b": Outcome.B_WINS,
    "tie": Outcome.TIE,
    "tie (bothbad)": Outcome.TIE_BOTH_BAD,
    "both_bad": Outcome.TIE_BOTH_BAD,
    "tie_both_bad": Outcome.TIE_BOTH_BAD,
}
LLMFAO_WINNERS = {"left": Outcome.A_WINS, "right": Outcome.B_WINS, "tie": Outcome.TIE}
#: Arena-hard verdicts: outcome and weight (a strong preference counts three times).
VERDICTS: dict[str, tuple[Outcome, float]] = {
    "A>>B": (Outcome.A_WINS, 3.0),
    "A>B": (Outcome.A_WINS, 1.0),
    "A=B": (Outcome.TIE, 1.0),
    "B>A": (Outcome.B_WINS, 1.0),
    "B>>A": (Outcome.B_WINS, 3.0),
}
# Plain strings from here on: the enum's ``.value`` descriptor cost ~2 us a row
# in the ingest loop, and drivers should never see an Enum object.
WINNERS = {k: str(v) for k, v in WINNERS.items()}
LLMFAO_WINNERS = {k: str(v) for k, v in LLMFAO_WINNERS.items()}
VERDICTS = {k: (str(o), w) for k, (o, w) in VERDICTS.items()}
#: Sports-style result columns (the shared classic data sets), recognised by their
#: column names when there is no model_a column: (columns, field mapping, result values).
RESULT_SHAPES: tuple[tuple[frozenset[str], dict[str, str], dict[str, str]], ...] = (
    # football_epl.csv: result from the home side's view, 1 win, -1 loss, 0 draw.
    (
        frozenset({"home", "away", "result"}),
        {"model_a": "home", "model_b": "away", "winner": "result"},
        {
            "1": "a_wins",
            "1.0": "a_wins",
            "-1": "b_wins",
            "-1.0": "b_wins",
            "0": "tie",
            "0.0": "tie",
        },
    ),
    # icehockey.csv: result from the visitor's view, 1 win, 0 loss, 0.5 tie.
    (
        frozenset({"visitor", "opponent", "result"}),
        {"model_a": "visitor", "model_b": "opponent", "winner": "result"},
        {"1": "a_wins", "1.0": "a_wins", "0": "b_wins", "0.0": "b_wins", "0.5": "tie"},
    ),
)
#: Aggregated records (baseball.csv): each row stands for that many battles of each kind.
COUNT_SHAPE = (
    frozenset({"home.team", "away.team", "home.wins", "away.wins"}),
    {"model_a": "home.team", "model_b": "away.team"},
    ("home.wins", "away.wins"),
)
_MAX_COUNT = 1_000_000

_TRUE = frozenset({"true", "True", "TRUE"})
_TEXT_MAX = 255
SELF_PLAY = "self_play"


class ParsedBattle(NamedTuple):
    external_id: str | None
    model_a: str
    model_b: str
    outcome: str  # an Outcome value, e.g. "a_wins"
    weight: float
    question: str | None
    judge: str | None
    language: str | None
    occurred_at: datetime | None
    categories: tuple[str, ...]
    excluded_reason: str | None
    style: Style | None = None


@dataclass(frozen=True)
class Schema:
    """Which input column feeds each field; resolved once per header."""

    columns: Mapping[str, str]  # field -> column name
    winners: Mapping[str, str]
    tag_columns: tuple[str, ...]
    #: (a-wins column, b-wins column) for aggregated records, else None
    counts: tuple[str, str] | None = None
    #: where the records keep style metadata (conv_metadata), if they do
    style: StyleShape | None = None

    @property
    def shape(self) -> str:
        if "verdict" in self.columns:
            return "arena-hard"
        return "llmfao" if self.winners is LLMFAO_WINNERS else "lmarena"


def resolve_schema(names: Sequence[str], mapping: Mapping[str, str]) -> Schema:
    """Decide which column feeds each field.

    ``mapping`` is the user's ``--map FIELD=COLUMN`` (an empty COLUMN switches a
    field off, e.g. ``id=`` to ignore a non-unique id column).

    Raises
    ------
    RowError
        A required field has no column.
    """
    present = set(names)
    columns: dict[str, str] = {}
    winners: Mapping[str, str] = WINNERS
    llmfao = "model_a" not in present and {"left", "right", "winner"} <= present
    if llmfao:
        columns.update(model_a="left", model_b="right", winner="winner")
        winners = LLMFAO_WINNERS
    fixed_shape = False
    counts = None
    if "model_a" not in present and not llmfao and not mapping:
        for needed, mapped, values in RESULT_SHAPES:
            if needed <= present:
                columns.update(mapped)
                winners = values
                fixed_shape = True
                break
        if not fixed_shape and COUNT_SHAPE[0] <= present:
            columns.update(COUNT_SHAPE[1])
            counts = COUNT_SHAPE[2]
            fixed_shape = True
    for field, aliases in ALIASES.items():
        if field in columns or (llmfao and field == "id"):
            continue
        for alias in aliases:
            if alias in present:
                columns[field] = alias
                break
    for field, column in mapping.items():
        if column:
            columns[field] = column
        else:
            columns.pop(field, None)
    for field in REQUIRED:
        if field not in columns or columns[field] not in present:
            raise RowError(field, "missing (no such column; use --map FIELD=COLUMN)")
    if "winner" not in columns and "verdict" not in columns and counts is None:
        raise RowError("winner", "missing (need a winner or verdict column)")
    style = resolve_style(names)
    used = set(columns.values())
    if style is not None:
        used |= style.columns
    # Columns that LMArena's tagged exports use for scores and ids, never categories;
    # the sports shapes' other columns (home.ice, conference, ...) are not categories either.
    tags = (
        ()
        if fixed_shape
        else tuple(n for n in names if n not in used and n not in ("model_x", "model_y"))
    )
    return Schema(columns, winners, tags, counts, style)


def _text(value: Any, field: str, *, limit: int = _TEXT_MAX) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    if text == "":
        return None
    if len(text) > limit:
        raise RowError(field, f"longer than {limit} characters")
    return text


_CONTROL = re.compile(r"[\x00-\x1f\x7f]").search
# Names repeat on almost every row: remember the ones already validated.
_VALID_NAMES: dict[str, str] = {}


def _model_name(value: Any, field: str) -> str:
    if value.__class__ is str and value in _VALID_NAMES:
        return value
    if not isinstance(value, str):
        if value is None or isinstance(value, (dict, list, bool)):
            raise RowError(field, "missing or not a string")
        value = str(value)
    if not value.strip():
        raise RowError(field, "empty model name")
    if len(value) > MODEL_NAME_MAX:
        raise RowError(field, f"model name longer than {MODEL_NAME_MAX} characters")
    if _CONTROL(value):
        raise RowError(field, "model name contains a control character")
    if len(_VALID_NAMES) < 100_000:
        _VALID_NAMES[value] = value
    return value


def _timestamp(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = None
    if seconds is not None:
        if not math.isfinite(seconds):
            raise RowError("tstamp", f"not a finite number: {value!r}")
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise RowError("tstamp", f"out of range: {value!r}") from None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise RowError("tstamp", f"not a Unix time or ISO 8601 date: {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _weight(value: Any) -> float:
    if value is None or value == "":
        return 1.0
    try:
        weight = float(value)
    except (TypeError, ValueError):
        raise RowError("weight", f"not a number: {value!r}") from None
    if not (math.isfinite(weight) and weight > 0):
        raise RowError("weight", f"must be a positive number, got {value!r}")
    return weight


def _outcome(schema: Schema, get) -> tuple[str, float]:
    if "winner" in schema.columns:
        raw = get("winner")
        if raw is None or raw == "":
            raise RowError(schema.columns["winner"], "missing")
        outcome = schema.winners.get(str(raw).strip())
        if outcome is None:
            allowed = " | ".join(schema.winners)
            raise RowError(schema.columns["winner"], f"unknown value {raw!r} (expected {allowed})")
        return outcome, 1.0
    raw = get("verdict")
    if raw is None or raw == "":
        raise RowError(schema.columns["verdict"], "missing")
    key = str(raw).strip().strip("[]")
    if key not in VERDICTS:
        raise RowError(
            schema.columns["verdict"],
            f"unknown verdict {raw!r} (expected A>>B, A>B, A=B, B>A, B>>A)",
        )
    return VERDICTS[key]


def _flatten_true(prefix: str, value: Any, out: list[str]) -> None:
    if value is True or (isinstance(value, str) and value in _TRUE):
        out.append(prefix)
    elif isinstance(value, dict):
        for key, inner in value.items():
            _flatten_true(f"{prefix}.{key}", inner, out)


def _expand_counts(schema: Schema, get, model_a: str, model_b: str) -> list[ParsedBattle]:
    """An aggregated record (``home.wins=4, away.wins=3``) as that many single battles,
    so that resampling battles stays exact."""
    out: list[ParsedBattle] = []
    excluded = SELF_PLAY if model_a == model_b else None
    for column, outcome in zip(schema.counts, ("a_wins", "b_wins"), strict=True):
        raw = get(column)
        try:
            n = int(str(raw).strip())
        except (TypeError, ValueError):
            raise RowError(column, f"not a whole number: {raw!r}") from None
        if not 0 <= n <= _MAX_COUNT:
            raise RowError(column, f"must be between 0 and {_MAX_COUNT}, got {n}")
        out.extend(
            [
                ParsedBattle(
                    None, model_a, model_b, outcome, 1.0, None, None, None, None, (), excluded
                )
            ]
            * n
        )
    return out


def parse_record(schema: Schema, get, tag_values, column=None) -> ParsedBattle | list[ParsedBattle]:
    """Normalise one record. ``get(field)`` returns the raw value of a mapped field;
    ``tag_values`` yields (column, value) pairs of unmapped columns; ``column(name)``
    the raw value of any column (needed when the schema has style metadata)."""
    cols = schema.columns
    model_a = _model_name(get("model_a"), cols["model_a"])
    model_b = _model_name(get("model_b"), cols["model_b"])
    if schema.counts is not None:
        return _expand_counts(schema, get, model_a, model_b)
    outcome, weight = _outcome(schema, get)
    if "weight" in cols:
        weight *= _weight(get("weight"))
    categories: list[str] = []
    if "category" in cols:
        raw = get("category")
        if isinstance(raw, list):
            categories.extend(str(c) for c in raw if str(c))
        elif raw not in (None, ""):
            categories.append(str(raw))
    for tag, value in tag_values:
        _flatten_true(tag, value, categories)
    for name in categories:
        if len(name) > _TEXT_MAX:
            raise RowError("category", f"category name longer than {_TEXT_MAX} characters")
    return ParsedBattle(
        external_id=_text(get("id"), cols.get("id", "id")) if "id" in cols else None,
        model_a=model_a,
        model_b=model_b,
        outcome=outcome,
        weight=weight,
        question=_text(get("question"), cols.get("question", "question"))
        if "question" in cols
        else None,
        judge=_text(get("judge"), cols.get("judge", "judge")) if "judge" in cols else None,
        language=_text(get("language"), "language", limit=64) if "language" in cols else None,
        occurred_at=_timestamp(get("tstamp")) if "tstamp" in cols else None,
        categories=tuple(dict.fromkeys(categories)),
        excluded_reason=SELF_PLAY if model_a == model_b else None,
        style=schema.style.parse(column) if schema.style is not None else None,
    )


def csv_parser(schema: Schema, header: Sequence[str]):
    """A row parser specialised to one CSV header: the hot loop of an ingest.

    The common case (names already validated, known winner, no optional
    fields) is handled inline; anything unusual falls back to
    :func:`parse_record`, which produces the precise error.
    """
    index = {f: header.index(c) for f, c in schema.columns.items() if c in header}
    counts = {c: header.index(c) for c in schema.counts or () if c in header}
    tag_index = [(n, header.index(n)) for n in schema.tag_columns]
    width_needed = max(index.values()) + 1
    ia, ib = index["model_a"], index["model_b"]
    iw = index.get("winner")
    simple = (
        set(index) <= {"model_a", "model_b", "winner", "id"}
        and iw is not None
        and schema.style is None
    )
    positions = {name: i for i, name in enumerate(header)}
    iid = index.get("id")
    winners = schema.winners
    valid = _VALID_NAMES

    def slow(row: Sequence[str]) -> ParsedBattle:
        width = len(row)

        def get(field: str) -> str | None:
            i = index.get(field, counts.get(field))
            return row[i] if i is not None and i < width else None

        def column(name: str) -> str | None:
            i = positions.get(name)
            return row[i] if i is not None and i < width else None

        tags = ((name, row[i]) for name, i in tag_index if i < width and row[i] in _TRUE)
        return parse_record(schema, get, tags, column)

    def parse(row: Sequence[str]) -> ParsedBattle:
        if not simple or len(row) < width_needed:
            return slow(row)
        a, b = row[ia], row[ib]
        outcome = winners.get(row[iw])
        if outcome is None or a not in valid or b not in valid:
            return slow(row)
        ext = row[iid] if iid is not None else None
        if ext is not None and (ext == "" or len(ext) > _TEXT_MAX):
            return slow(row)
        cats = tuple(name for name, i in tag_index if row[i] in _TRUE) if tag_index else ()
        return ParsedBattle(
            ext, a, b, outcome, 1.0, None, None, None, None, cats, SELF_PLAY if a == b else None
        )

    return parse


@dataclass
class ColumnBlock:
    """A block of plain CSV rows, validated and normalised column by column.

    Only for the common shape (model names, winner, optional id and boolean tag
    columns): every value was checked, so the writer can bind whole columns.
    """

    n: int
    model_a: Sequence[str]
    model_b: Sequence[str]
    outcome: list[str]
    external_id: Sequence[str] | None
    #: (category name, positions of the battles it tags)
    tags: list[tuple[str, list[int]]]
    #: positions of self-play battles (stored, excluded from ratings)
    self_play: list[int]

    @property
    def names(self) -> set[str]:
        found = set(self.model_a)
        found.update(self.model_b)
        return found


def csv_block_parser(schema: Schema, header: Sequence[str]):
    """Column-wise parser for blocks of rows, or None when the shape needs per-row parsing.

    The returned function gives a :class:`ColumnBlock`, or None when anything in
    the block is unusual (a bad value, a short row); the caller then parses that
    block row by row, which names the offending line and field.  Validation is
    the same as :func:`parse_record`'s, applied to whole columns at C speed.
    """
    index = {f: header.index(c) for f, c in schema.columns.items() if c in header}
    if (
        schema.counts is not None
        or schema.style is not None
        or "winner" not in index
        or not set(index) <= {"model_a", "model_b", "winner", "id"}
    ):
        return None
    ia, ib, iw, iid = index["model_a"], index["model_b"], index["winner"], index.get("id")
    tag_index = [(n, header.index(n)) for n in schema.tag_columns]
    width = len(header)
    winners = schema.winners
    valid = _VALID_NAMES
    truthy = _TRUE.__contains__

    def block(raw) -> ColumnBlock | None:
        """``raw``: a :class:`arena.ingest.sources.CsvBlock`."""
        n = len(raw)
        if not n:
            return None
        if raw.columns is not None:
            cols = raw.columns
        else:
            if set(map(len, raw.rows)) != {width}:
                return None
            cols = list(zip(*raw.rows, strict=True))
        ca, cb = cols[ia], cols[ib]
        outcome = list(map(winners.get, cols[iw]))
        if None in outcome:
            return None
        names = set(ca)
        names.update(cb)
        for name in names:
            if name not in valid:
                try:
                    _model_name(name, "model")
                except RowError:
                    return None
        ext = cols[iid] if iid is not None else None
        if ext is not None and ("" in ext or max(map(len, ext)) > _TEXT_MAX):
            return None
        positions = range(n)
        tags = []
        for name, i in tag_index:
            hit = list(compress(positions, map(truthy, cols[i])))
            if hit:
                if len(name) > _TEXT_MAX:
                    return None
                tags.append((name, hit))
        self_play = list(compress(positions, map(eq, ca, cb)))
        return ColumnBlock(n, ca, cb, outcome, ext, tags, self_play)

    return block


def parse_json_object(schema: Schema, obj: Mapping[str, Any]) -> ParsedBattle:
    cols = schema.columns

    def get(field: str) -> Any:
        return obj.get(cols.get(field, field))

    tags = ((name, obj.get(name)) for name in schema.tag_columns if name in obj)
    return parse_record(schema, get, tags, obj.get)
