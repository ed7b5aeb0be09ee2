"""What the front door's methods return: one frozen result per command.

Each result keeps the library's typed objects (``result.board``,
``result.head_to_head``, ...) and gives ``to_dict()``: the document that the
command's ``--format json`` prints, byte for byte once written with
:func:`arena.core.formats.to_json`. Floats of the rating commands are rounded
as their JSON is (:func:`arena.core.formats.tidy`); the typed objects keep
full precision.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from arena.core.defaults import DEFAULT_RANKS
from arena.core.formats import count, iso_utc, tidy

if TYPE_CHECKING:
    from arena.audit.report import AuditReport
    from arena.boards.compare import HeadToHead
    from arena.boards.diff import BoardDiff, DiffRow
    from arena.boards.snapshots import Board, BoardRow, SnapshotInfo
    from arena.ingest.loader import IngestReport
    from arena.jobs.nightly import NightlyResult
    from arena.jobs.provisional import Refit
    from arena.jobs.rebuild import RebuildResult
    from arena.jobs.retention import PruneResult
    from arena.publish.site import PublishReport
    from arena.store.categories import CategoryRecord
    from arena.store.records import ModelRecord

__all__ = [
    "Annotated",
    "AuditResult",
    "Categories",
    "Comparison",
    "DiffResult",
    "Ingested",
    "Labelled",
    "Leaderboard",
    "Models",
    "NightResult",
    "PlanDraws",
    "PlanPower",
    "PlanWeights",
    "Published",
    "Pruned",
    "Rebuilt",
    "Refitted",
    "Snapshots",
]


def _tidy(doc: dict[str, Any]) -> dict[str, Any]:
    """:func:`arena.core.formats.tidy` of a document (a dict stays a dict of the same keys)."""
    out: dict[str, Any] = tidy(doc)
    return out


@dataclass(frozen=True)
class Ingested:
    """``arena ingest``: one report per file, in the order given."""

    files: tuple[IngestReport, ...]

    @property
    def inserted(self) -> int:
        """Battles stored by this call."""
        return sum(f.inserted for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {"inserted": self.inserted, "files": [f.to_dict() for f in self.files]}


@dataclass(frozen=True)
class Rebuilt:
    """``arena rebuild``: the snapshots written, one per board."""

    result: RebuildResult
    #: judges left out by ``exclude_flagged`` (empty without it)
    excluded_judges: tuple[str, ...] = ()
    #: whether ``exclude_flagged`` was asked (an empty list then says "none flagged")
    exclude_flagged: bool = False

    @property
    def snapshot_ids(self) -> list[int]:
        return list(self.result.snapshot_ids)

    @property
    def boards(self) -> list[str]:
        return list(self.result.boards)

    @property
    def warnings(self) -> list[str]:
        return list(self.result.warnings)

    @property
    def watermark(self) -> int:
        """The largest battle id the rebuild read: every snapshot covers battles up to it."""
        return self.result.watermark

    @property
    def seconds(self) -> float:
        return self.result.seconds

    @property
    def read(self) -> str:
        """Where the counts came from: the count table, or battles aggregated in SQL."""
        return self.result.read

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {
            "run_id": r.run_id,
            "watermark": r.watermark,
            "snapshots": [
                {"id": sid, "board": board}
                for sid, board in zip(r.snapshot_ids, r.boards, strict=True)
            ],
            "read": r.read,
            "seconds": round(r.seconds, 3),
            "warnings": list(r.warnings),
            "excluded_judges": list(self.excluded_judges) if self.exclude_flagged else None,
        }


@dataclass(frozen=True)
class Leaderboard:
    """``arena leaderboard``: one snapshot of one board."""

    board: Board
    include_hidden: bool = False
    #: asked for the provisional board: the document has ``provisional`` (null when
    #: the board shown is the latest full snapshot, no vote having come since)
    provisional: bool = False

    @property
    def snapshot(self) -> SnapshotInfo:
        return self.board.snapshot

    @property
    def rows(self) -> tuple[BoardRow, ...]:
        """The rows shown: every row with ``include_hidden``, else the visible ones."""
        return self.board.rows if self.include_hidden else self.board.visible_rows()

    def to_dict(self) -> dict[str, Any]:
        doc = self.board.to_dict(include_hidden=self.include_hidden)
        if self.provisional:
            doc.setdefault("provisional", None)
        return _tidy(doc)

    @staticmethod
    def row_fields() -> list[str]:
        """The fields of each row of :meth:`to_dict`, in column order (the CSV's header)."""
        from arena.boards.snapshots import ROW_FIELDS

        return list(ROW_FIELDS)

    def options_summary(self) -> str:
        """The snapshot's rating options in one line (``options: ...``)."""
        from arena.boards.snapshots import options_summary

        return options_summary(self.snapshot.options)

    def rank_legend(self, ranks: str = DEFAULT_RANKS) -> str:
        """What the rank column means: the simultaneous rank sets, or LMArena's overlap rank."""
        from arena.boards.words import rank_legend

        return rank_legend(self.snapshot.options, ranks)

    def draws_note(self) -> str | None:
        """The board's Monte-Carlo error when its draws check failed, else None (issue 41)."""
        from arena.boards.words import draws_note

        return draws_note(self.snapshot.diagnostics)

    def tier_sentence(self) -> str:
        """The one sentence true of every tier of this board (empty if it has none)."""
        from arena.boards.words import tier_sentence

        return tier_sentence(self.snapshot.options)


@dataclass(frozen=True)
class Refitted:
    """``Arena.refit_provisional``: one look at a board for its provisional board."""

    refit: Refit

    @property
    def provisional_id(self) -> int | None:
        """The stored provisional board, or None when nothing was refitted."""
        return self.refit.provisional_id

    @property
    def reason(self) -> str:
        """Why nothing was refitted ("" when it was)."""
        return self.refit.reason

    def to_dict(self) -> dict[str, Any]:
        return self.refit.to_dict()


@dataclass(frozen=True)
class Comparison:
    """``arena compare``: the head-to-head verdict of two models on one snapshot."""

    head_to_head: HeadToHead

    @property
    def verdict(self) -> str:
        """The board's verdict in words (all its pairs tested at once)."""
        return self.head_to_head.verdict

    @property
    def significant(self) -> bool:
        """Whether the board's one inference tells the two apart."""
        return self.head_to_head.significant

    @property
    def difference(self) -> float | None:
        """Rating of A minus rating of B (None if either is unrated)."""
        return self.head_to_head.difference

    def to_dict(self) -> dict[str, Any]:
        return _tidy(self.head_to_head.to_dict())


#: A diff row's position is its column in the snapshot's samples (model order): it
#: reads like a rank, which it is not, so it stays out of the output (rank_low..rank_high
#: is the rank).
_DIFF_HIDDEN = ("position", "old_position")


@dataclass(frozen=True)
class DiffResult:
    """``arena diff``: what moved between two snapshots of one board."""

    diff: BoardDiff

    @property
    def rows(self) -> tuple[DiffRow, ...]:
        return self.diff.rows

    @property
    def options_differ(self) -> tuple[str, ...]:
        return self.diff.options_differ

    def row_dicts(self) -> list[dict[str, Any]]:
        """The rows as output (full precision), without the sample positions."""
        return [
            {k: v for k, v in asdict(r).items() if k not in _DIFF_HIDDEN} for r in self.diff.rows
        ]

    def to_dict(self) -> dict[str, Any]:
        return _tidy(
            {
                "old": self.diff.old.id,
                "new": self.diff.new.id,
                "board": self.diff.new.board,
                "old_board": self.diff.old.board,
                "compared": self.diff.compared,
                "options_differ": list(self.diff.options_differ),
                "rows": self.row_dicts(),
            }
        )


@dataclass(frozen=True)
class Snapshots:
    """``arena snapshots``: every snapshot, oldest first."""

    snapshots: tuple[SnapshotInfo, ...]

    def row_dicts(self) -> list[dict[str, Any]]:
        from arena.boards.snapshots import options_summary

        return [
            dict(
                id=s.id,
                created_at=iso_utc(s.created_at),
                board=s.board,
                models=s.n_models,
                battles=count(s.n_battles),
                watermark=s.watermark,
                method=s.options.get("ci"),
                # the rounds or draws the board used (chosen by the data when not given)
                rounds=s.diagnostics.get("rounds", s.options.get("rounds")),
                seed=s.seed,
                options=options_summary(s.options),
            )
            for s in self.snapshots
        ]

    def to_dict(self) -> dict[str, Any]:
        return {"snapshots": self.row_dicts()}


@dataclass(frozen=True)
class AuditResult:
    """``arena audit``: the probes' report on the votes behind one snapshot."""

    snapshot: SnapshotInfo
    report: AuditReport

    def to_dict(self) -> dict[str, Any]:
        return _tidy(
            {"snapshot": self.snapshot.id, "board": self.snapshot.board, **self.report.to_dict()}
        )


@dataclass(frozen=True)
class PlanWeights:
    """``arena plan``: every pair's sampling probability (the ``top`` most probable)."""

    snapshot: SnapshotInfo
    rule: str
    #: one dict per pair, most probable first: model_a, model_b, battles, probability
    pairs: tuple[dict[str, Any], ...]
    top: int | None = None
    pairs_total: int | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "snapshot": self.snapshot.id,
            "rule": self.rule,
            "pairs": [dict(p) for p in self.pairs],
        }
        if self.top is not None:
            doc = {**doc, "top": self.top, "pairs_total": self.pairs_total}
        return _tidy(doc)


@dataclass(frozen=True)
class PlanDraws:
    """``arena plan --n N``: N battles drawn from the plan's probabilities."""

    snapshot: SnapshotInfo
    rule: str
    seed: int
    #: (model_a, model_b) per battle, in shown order
    battles: tuple[tuple[str, str], ...]

    def row_dicts(self) -> list[dict[str, str]]:
        return [{"model_a": a, "model_b": b} for a, b in self.battles]

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshot": self.snapshot.id,
            "rule": self.rule,
            "seed": self.seed,
            "battles": self.row_dicts(),
        }


@dataclass(frozen=True)
class PlanPower:
    """``arena plan power``: battles needed to separate pairs of models."""

    snapshot: SnapshotInfo
    level: float
    power: float
    #: one dict per pair: model_a, model_b, difference, se, power_now, battles_needed
    pairs: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return _tidy(
            {
                "snapshot": self.snapshot.id,
                "level": self.level,
                "power": self.power,
                "pairs": [dict(p) for p in self.pairs],
            }
        )


@dataclass(frozen=True)
class Published:
    """``arena publish``: the site written."""

    report: PublishReport

    def to_dict(self) -> dict[str, Any]:
        r = self.report
        return {
            "out_dir": str(r.out_dir),
            "snapshot": r.snapshot_id,
            "board": r.board,
            "boards": list(r.boards),
            "model_pages": r.model_pages,
            "visible_models": r.visible_models,
            "hidden_models": r.hidden_models,
            "index_bytes": r.index_bytes,
            "total_bytes": r.total_bytes,
            "files": list(r.files),
        }


@dataclass(frozen=True)
class NightResult:
    """``arena nightly``: what the night did (``exit_code`` for monitoring)."""

    result: NightlyResult

    @property
    def exit_code(self) -> int:
        return self.result.exit_code

    def to_dict(self) -> dict[str, Any]:
        return self.result.to_dict()


@dataclass(frozen=True)
class Pruned:
    """``arena snapshots prune``: the detail dropped (or that would be, on a dry run)."""

    result: PruneResult

    def to_dict(self) -> dict[str, Any]:
        return self.result.to_dict()


@dataclass(frozen=True)
class Models:
    """``arena models``: every model with its record, battles split by source."""

    models: tuple[ModelRecord, ...]
    #: the sources counted (each model's ``by_source`` keys come from these)
    sources: tuple[str, ...] = ()
    #: the one source selected, or None for all
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "sources": list(self.sources),
            "models": [m.to_dict() for m in self.models],
        }

    def row_dicts(self) -> list[dict[str, Any]]:
        """Flat rows: one ``source:NAME`` column of battles per source, after ``battles``."""
        rows = []
        for m in self.models:
            d = m.to_dict()
            per = d.pop("by_source")
            row = {k: d[k] for k in ("model", "battles")}
            row.update({f"source:{s}": per.get(s, 0) for s in self.sources})
            row.update({k: v for k, v in d.items() if k not in row})
            rows.append(row)
        return rows


@dataclass(frozen=True)
class Categories:
    """``arena categories``: category keys, their labels and battles."""

    categories: tuple[CategoryRecord, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"categories": [c.to_dict() for c in self.categories]}


@dataclass(frozen=True)
class Annotated:
    """``arena models annotate``: how many models changed."""

    changed: int

    def to_dict(self) -> dict[str, Any]:
        return {"changed": self.changed}


@dataclass(frozen=True)
class Labelled:
    """``arena categories label``: the label a category key is now shown as."""

    key: str
    label: str

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label}
