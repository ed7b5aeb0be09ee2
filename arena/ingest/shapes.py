"""The input shapes ingest accepts, described once: columns, aliases, outcomes, weights, tags.

A :class:`Shape` says which columns identify it, which column feeds each field,
its outcome vocabulary and weights, whether other fields are found by their
aliases and whether the remaining columns are category tags.
:func:`resolve_schema` picks the shape of a header (and applies ``--map``) into
a :class:`Schema`, which both the row path and the column fast path of
:mod:`arena.ingest.records` read.

Accepted shapes (column names are matched case-sensitively, first alias wins):

- LMArena battle records: ``model_a, model_b, winner`` with winner in
  ``model_a | model_b | tie | tie (bothbad) | both_bad``; optional ``id``,
  ``question_id``, ``tstamp``, ``judge``, ``language``, ``category``, ``weight``
  and boolean tag columns (``math=True``) that become categories.
- Arena-hard judge verdicts: ``model_a, model_b, verdict`` with ``A>>B``, ``A>B``,
  ``A=B``, ``B>A``, ``B>>A``; a strong verdict weighs 3 (as arena-hard-auto counts it).
- LLMFAO comparisons: ``left, right, winner`` (``left | right | tie``), ``worker``
  as judge and ``prompt`` as question. Its ``id`` names the pair of answers, not
  the vote, so it is not used as an external id.
- Sports results (``home, away, result``; ``visitor, opponent, result``) and
  aggregated win counts (``home.team, away.team, home.wins, away.wins``), as in
  the classic Bradley-Terry data sets.
- Anything else through ``--map FIELD=COLUMN``.
- In every shape, style metadata (:mod:`arena.ingest.style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arena.core.outcomes import Outcome
from arena.ingest.errors import RowError
from arena.ingest.fields import EXPAND_MAX, ModelNames, Vocabulary
from arena.ingest.style import StyleShape, resolve_style

#: Fields a record can carry (``--map FIELD=COLUMN``), with the columns that feed them.
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
FIELDS = tuple(ALIASES)
REQUIRED = ("model_a", "model_b")

A, B, TIE, BOTH_BAD = (str(o) for o in Outcome)  # plain strings: drivers never see an Enum
WINNERS = Vocabulary(
    {
        "model_a": (A, 1.0),
        "model_b": (B, 1.0),
        "tie": (TIE, 1.0),
        "tie (bothbad)": (BOTH_BAD, 1.0),
        "both_bad": (BOTH_BAD, 1.0),
        "tie_both_bad": (BOTH_BAD, 1.0),
    }
)
#: Arena-hard verdicts (a strong preference counts three times), also as ``[[A>B]]``.
VERDICTS = Vocabulary(
    {"A>>B": (A, 3.0), "A>B": (A, 1.0), "A=B": (TIE, 1.0), "B>A": (B, 1.0), "B>>A": (B, 3.0)},
    strip="[]",
)


@dataclass(frozen=True)
class Shape:
    """One accepted input shape."""

    name: str
    #: columns that must all be present for the shape to apply
    needs: frozenset[str]
    #: field -> column, fixed by the shape
    columns: Mapping[str, str]
    #: the outcome vocabulary of the ``winner`` field (None: aggregated counts)
    winners: Vocabulary | None = WINNERS
    #: other fields found by their aliases (else only ``columns``)
    aliases: bool = True
    #: fields this shape never takes from its aliases
    skip: frozenset[str] = frozenset()
    #: columns not used by a field are boolean category tags
    tags: bool = True
    #: (a-wins column, b-wins column) of an aggregated-count shape
    counts: tuple[str, str] | None = None
    #: not recognised when the file has a model_a column or the user gave --map
    only_unmapped: bool = True


def _result(name: str, a: str, b: str, values: dict[str, str]) -> Shape:
    """A sports result from one side's view: no aliases, no tags (home.ice is not a category)."""
    vocabulary = Vocabulary({raw: (outcome, 1.0) for raw, outcome in values.items()})
    return Shape(
        name,
        frozenset({a, b, "result"}),
        {"model_a": a, "model_b": b, "winner": "result"},
        vocabulary,
        aliases=False,
        tags=False,
    )


#: Recognised by their columns, in this order; LMArena's (with its aliases) otherwise.
SHAPES = (
    Shape(
        "llmfao",
        frozenset({"left", "right", "winner"}),
        {"model_a": "left", "model_b": "right", "winner": "winner"},
        Vocabulary({"left": (A, 1.0), "right": (B, 1.0), "tie": (TIE, 1.0)}),
        skip=frozenset({"id"}),
        only_unmapped=False,
    ),
    # football_epl.csv: result from the home side's view, 1 win, -1 loss, 0 draw.
    _result(
        "home-result",
        "home",
        "away",
        {"1": A, "1.0": A, "-1": B, "-1.0": B, "0": TIE, "0.0": TIE},
    ),
    # icehockey.csv: result from the visitor's view, 1 win, 0 loss, 0.5 tie.
    _result(
        "visitor-result",
        "visitor",
        "opponent",
        {"1": A, "1.0": A, "0": B, "0.0": B, "0.5": TIE},
    ),
    # baseball.csv: each row stands for that many battles of each kind.
    Shape(
        "counts",
        frozenset({"home.team", "away.team", "home.wins", "away.wins"}),
        {"model_a": "home.team", "model_b": "away.team"},
        None,
        aliases=False,
        tags=False,
        counts=("home.wins", "away.wins"),
    ),
)
LMARENA = Shape("lmarena", frozenset(), {})
#: Columns of LMArena's tagged exports that are scores or ids, never categories.
NOT_TAGS = frozenset({"model_x", "model_y"})


@dataclass(frozen=True)
class Schema:
    """Which input column feeds each field, and the rules that read them; one per header."""

    shape: str
    columns: Mapping[str, str]  # field -> column name
    #: outcome vocabulary of the ``winner`` field, or VERDICTS for ``verdict``
    outcomes: Vocabulary | None
    tag_columns: tuple[str, ...]
    counts: tuple[str, str] | None = None
    style: StyleShape | None = None
    #: most battles one aggregated-count row may stand for
    max_expand: int = EXPAND_MAX
    names: ModelNames = field(default_factory=ModelNames, compare=False)

    @property
    def outcome_field(self) -> str | None:
        if self.counts is not None:
            return None
        return "winner" if "winner" in self.columns else "verdict"


def _shape_of(present: set[str], mapping: Mapping[str, str]) -> Shape:
    if "model_a" in present:
        return LMARENA
    for shape in SHAPES:
        if shape.needs <= present and (not mapping or not shape.only_unmapped):
            return shape
    return LMARENA


def resolve_schema(
    names: Sequence[str], mapping: Mapping[str, str], *, max_expand: int = EXPAND_MAX
) -> Schema:
    """Decide which column feeds each field.

    ``mapping`` is the user's ``--map FIELD=COLUMN`` (an empty COLUMN switches a
    field off, e.g. ``id=`` to ignore a non-unique id column).

    Raises
    ------
    RowError
        A required field has no column, ``--map`` names a column that is not
        there, or style columns are incomplete.
    """
    present = set(names)
    shape = _shape_of(present, mapping)
    columns = dict(shape.columns)
    if shape.aliases:
        for fld, aliases in ALIASES.items():
            if fld in columns or fld in shape.skip:
                continue
            found = next((a for a in aliases if a in present), None)
            if found is not None:
                columns[fld] = found
    for fld, column in mapping.items():
        if not column:
            columns.pop(fld, None)
        elif column not in present:
            listed = ", ".join(names)
            raise RowError(fld, f"no column {column} to map it to (columns: {listed})")
        else:
            columns[fld] = column
    for fld in REQUIRED:
        if fld not in columns or columns[fld] not in present:
            raise RowError(fld, f"missing (no such column; map one to it: {fld}=COLUMN)")
    if shape.counts is not None:
        outcomes = None
    elif "winner" in columns:
        outcomes = shape.winners
    elif "verdict" in columns:
        outcomes = VERDICTS
    else:
        raise RowError("winner", "missing (need a winner or verdict column)")
    style = resolve_style(names)
    used = set(columns.values()) | (style.columns if style is not None else set())
    tags = tuple(n for n in names if n not in used and n not in NOT_TAGS) if shape.tags else ()
    name = "arena-hard" if outcomes is VERDICTS else shape.name
    return Schema(name, columns, outcomes, tags, shape.counts, style, max_expand)
