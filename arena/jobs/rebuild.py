"""The nightly rebuild: battle store -> count table -> rating engine -> snapshot.

This module only orchestrates: :func:`rebuild` runs the named steps of one
:class:`RebuildJob` (read, check, plan, rate, write), each of which fills in
the job (it passes ~500 lines because it sequences raw, style-controlled and
per-component boards and the choice of what to read; every read, fit and write
it calls lives elsewhere). The store reads each
board's counts from the count table (:func:`arena.store.read.read_count_boards`)
or aggregates the battles in SQL (:func:`arena.store.read.read_boards`), so memory
does not grow with the number of battles; the engine (:func:`arena.engine.board.rate_board`) turns each
board's count table into ratings, ranks and tiers; the snapshot layer
(:func:`arena.boards.write.write_snapshot`) stores them. All snapshots of one
run are written in one transaction: a rebuild that fails or is interrupted
writes nothing and the previous snapshot stays the latest.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import Connection, Engine, distinct, func, select

from arena.boards.keys import BoardKey
from arena.boards.split import StyleBoard, split_board
from arena.boards.write import write_snapshot
from arena.core.defaults import (
    ANCHOR_MAX,
    DEFAULT_CLUSTER,
    DEFAULT_COMPONENTS,
    DEFAULT_MAX_BOARDS,
    DEFAULT_MAX_MODELS,
    DEFAULT_READ,
    DEFAULT_SEED,
)
from arena.core.errors import ArenaError, OptionError, escape
from arena.core.options import OPTIONS, checked
from arena.core.words import board_warnings, too_many_boards
from arena.db.models import BattleCount
from arena.db.session import take_write_lock
from arena.db.tables import ALL_BATTLES, STYLE_FEATURES
from arena.engine.board import (
    BoardOptions,
    BoardRating,
    rate_board,
    rate_style_board,
)
from arena.engine.options import FitOptions
from arena.engine.sparse.fit import SPARSE_MIN_MODELS
from arena.engine.style.rate import cpu_seconds
from arena.store.read import (
    BattleSelection,
    BoardData,
    counts_unusable,
    hidden_model_ids,
    missing_cluster_key,
    model_names,
    read_boards,
    read_count_boards,
    what_to_read,
)
from arena.store.sources import mixing_warning, source_infos
from arena.store.style import StyleDataError, has_style_rows, read_style_battles


class RebuildError(ArenaError):
    """A rebuild that cannot run (no battles, unknown anchor model, bad option)."""


class RebuildOptionError(RebuildError, OptionError):
    """A bad rebuild option, named by its parameter (the CLI names the flag)."""


@dataclass(frozen=True)
class RebuildOptions(BoardOptions):
    """Everything that determines a snapshot besides the data (all stored with it).

    The rating options are those of :class:`arena.engine.board.BoardOptions`
    (``fit`` holds the model); on top come the battles to read and the anchor
    by model name (``fit.anchor``, by table index, is set per board).
    """

    seed: int = DEFAULT_SEED
    category: str | None = None
    source: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    cluster: str = DEFAULT_CLUSTER
    anchor: tuple[str, float] | None = None
    #: Also write a style-controlled board for every board whose battles carry style metadata.
    style_control: bool = True
    #: User covariates (ingested per side) added to the four standard style features.
    style_features: tuple[str, ...] = ()
    #: LMArena's L2 penalty on the style fit (None: the exact MLE).
    style_reg: float | None = None
    #: Judges left out (flagged by the stored audit); recorded with the snapshot.
    exclude_judges: tuple[str, ...] = ()
    #: ``largest``: rank the largest comparable set; ``separate``: also one board per other set.
    components: str = DEFAULT_COMPONENTS

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> RebuildOptions:
        """Checked options from flat values named as the front door's keywords.

        ``ties``, ``both_bad``, ``position`` and ``prior`` go into ``fit``; the
        others are fields of this class (``anchor`` as ``(model, rating)``,
        ``since``/``until`` as datetimes). Values not given keep the declared defaults.

        Raises
        ------
        RebuildOptionError
            A bad value (see :meth:`validate`).
        TypeError
            A name that is no option of a rebuild.
        """
        unknown = sorted(set(values) - _FIT_FIELDS - _OWN_FIELDS)
        if unknown:
            raise TypeError(f"unknown rebuild option(s): {', '.join(unknown)}")
        own: dict[str, Any] = {
            k: tuple(v) if k in _TUPLES else v for k, v in values.items() if k in _OWN_FIELDS
        }
        fit = FitOptions(**{k: v for k, v in values.items() if k in _FIT_FIELDS})
        opts = cls(fit=fit, **own)
        opts.validate()
        return opts

    def validate(self) -> None:
        """Raise :class:`RebuildOptionError` (naming the parameter) for a bad option.

        Every declared option is checked by its declaration
        (:mod:`arena.core.options`): types, NaN, bounds, choices.
        """
        values = {name: getattr(self, name) for name in _OWN_FIELDS if name in OPTIONS}
        values.update((name, getattr(self.fit, name)) for name in _FIT_FIELDS)
        try:
            checked(values)
        except OptionError as exc:
            raise RebuildOptionError(exc.name, exc.template, also=exc.also) from None
        if self.fit.anchor is not None:
            raise RebuildError("give the anchor by model name (anchor=), not fit.anchor")
        if self.anchor is not None:
            model, value = self.anchor
            if not (isinstance(value, int | float) and math.isfinite(value)) or (
                abs(value) > ANCHOR_MAX
            ):
                raise RebuildOptionError(
                    "anchor",
                    "{name} "
                    + escape(
                        f"{model}={value!r}: the rating must be a finite number from "
                        f"{-ANCHOR_MAX:,.0f} to {ANCHOR_MAX:,.0f} (ratings are stored as "
                        "32-bit floats; beyond that every model would show the same rating)"
                    ),
                )

    def selection(self) -> BattleSelection:
        """The battles this rebuild reads."""
        return BattleSelection(
            category=self.category,
            source=self.source,
            since=self.since,
            until=self.until,
            cluster=self.cluster,
            exclude_judges=tuple(self.exclude_judges),
        )

    def to_dict(self) -> dict[str, Any]:
        """The options as stored with the snapshot: one flat JSON object."""
        d = asdict(self)
        fit = d.pop("fit")
        del fit["anchor"]
        d.update(fit)
        for key in ("since", "until"):
            if d[key] is not None:
                d[key] = d[key].isoformat()
        if self.anchor is not None:
            d["anchor"] = {"model": self.anchor[0], "rating": self.anchor[1]}
        return d


#: The model options a rebuild's flat values carry into ``fit`` (the anchor is set per board).
_FIT_FIELDS = frozenset(f.name for f in fields(FitOptions)) - {"anchor"}
#: The rebuild's own options (all fields but ``fit``).
_OWN_FIELDS = frozenset(f.name for f in fields(RebuildOptions)) - {"fit"}
_TUPLES = frozenset({"style_features", "exclude_judges"})


def rebuild_option_names() -> frozenset[str]:
    """The names :meth:`RebuildOptions.from_values` takes (the stored options' keys)."""
    return _FIT_FIELDS | _OWN_FIELDS


@dataclass
class RebuildResult:
    run_id: str
    watermark: int
    #: what was read: "counts" (the count table) or "battles"
    read: str
    snapshot_ids: list[int] = field(default_factory=list)
    boards: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class PlannedBoard:
    """One board the run rates: a raw board, or one comparable set's own board.

    The style-controlled board paired with it is rated from ``style`` (its
    battles that carry style metadata), when there are any.
    """

    key: BoardKey
    data: BoardData
    style: StyleBoard | None
    #: stored with the snapshot beside the fit's diagnostics (component numbering)
    extra: dict[str, Any]
    rating: BoardRating | None = None
    style_rating: BoardRating | None = None


@dataclass
class RebuildJob:
    """One rebuild: its options, then what each step read, rated and wrote.

    :func:`rebuild` runs the steps in order: :meth:`read` (one consistent
    read transaction), :meth:`check`, :meth:`plan`, :meth:`rate` (no
    transaction, no lock), :meth:`write` (one write transaction).
    """

    opts: RebuildOptions
    all_categories: bool = False
    max_models: int | None = None
    #: most boards (overall + categories) to build (``--max-boards``)
    max_boards: int | None = None
    #: the read asked for (:data:`arena.store.read.READS`)
    read_mode: str = DEFAULT_READ
    progress: Callable[[str], None] | None = None
    #: warn when the overall board pools votes and judge verdicts (a scan of the
    #: battles' sources; the provisional refit, every few seconds, skips it)
    warn_mixing: bool = True
    started: float = field(default_factory=time.perf_counter)
    # -- read
    #: what was read: "counts" (the count table) or "battles"
    source: str = "battles"
    watermark: int = 0
    boards: list[BoardData] = field(default_factory=list)
    styles: list[StyleBoard | None] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)
    hidden: set[int] = field(default_factory=set)
    #: battles without the cluster key, of ``n_battles_clustered`` (cluster != battle)
    missing_cluster: int = 0
    n_battles_clustered: int = 0
    # -- plan and rate
    planned: list[PlannedBoard] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: (board, sentence) of each written snapshot's own warnings, said once per sentence
    board_notes: list[tuple[str, str]] = field(default_factory=list)
    # -- write
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    snapshot_ids: list[int] = field(default_factory=list)
    written: list[str] = field(default_factory=list)

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)

    def key(self, data: BoardData, component: int = 1) -> BoardKey:
        return BoardKey(category=data.category, source=self.opts.source, component=component)

    def _check_board_count(self, conn: Connection) -> None:
        """``--max-boards`` from the count table, before reading thousands of boards
        (5,000 categories took minutes to read only to be refused)."""
        if not self.all_categories or self.max_boards is None:
            return
        n = conn.execute(
            select(func.count(distinct(BattleCount.category_id))).where(
                BattleCount.rated.is_(True), BattleCount.category_id != ALL_BATTLES
            )
        ).scalar_one()
        if n + 1 > self.max_boards:
            raise RebuildOptionError("max_boards", too_many_boards(n + 1, self.max_boards))

    def read(self, engine: Engine) -> None:
        """Every board's counts, the model names and the style battles, up to one watermark."""
        opts = self.opts
        try:
            self.source = what_to_read(opts.selection(), self.read_mode)
        except OptionError as exc:
            raise RebuildOptionError(exc.name, exc.template, also=exc.also) from None
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                # One consistent view for the watermark and every read.
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                if conn.dialect.name == "sqlite":
                    # One read transaction (WAL: a snapshot from the first read to the end),
                    # so the count table and the watermark describe the same battles.
                    conn.exec_driver_sql("BEGIN")
                if self.source == "counts":
                    self._check_board_count(conn)
                    self.say(
                        "aggregate: reading the count table (battles per board, pair, outcome)"
                    )
                    self.watermark, self.boards = read_count_boards(
                        conn, opts.selection(), all_categories=self.all_categories
                    )
                else:
                    why = counts_unusable(opts.selection()) or "read='battles'"
                    self.say(f"aggregate: counting battles per board in the database ({why})")
                    self.watermark, self.boards = read_boards(
                        conn, opts.selection(), all_categories=self.all_categories
                    )
                self.names = model_names(conn)
                self.hidden = hidden_model_ids(conn)
                if opts.cluster != "battle" and self.boards:
                    self.missing_cluster, self.n_battles_clustered = missing_cluster_key(
                        conn, opts.selection(), self.watermark
                    )
                # every style board joins battle_style: none to build when it has no row
                styled = opts.style_control and has_style_rows(conn)
                self.styles = [
                    self.read_style(conn, data) if styled else None for data in self.boards
                ]
                # votes and judge verdicts pooled on one board: say so (arena.store.sources)
                if (
                    self.warn_mixing
                    and opts.source is None
                    and opts.category is None
                    and self.boards
                ):
                    infos = source_infos(
                        conn, watermark=self.watermark, exclude_judges=opts.exclude_judges
                    )
                    mixing = mixing_warning(infos, str(BoardKey()))
                    if mixing is not None:
                        self.warnings.append(mixing)

    def read_style(self, conn: Connection, data: BoardData) -> StyleBoard | None:
        """The board's battles that carry style metadata, or None when none does."""
        opts = self.opts
        t0, c0 = time.perf_counter(), cpu_seconds()
        try:
            sb = read_style_battles(
                conn,
                replace(opts.selection(), category=data.category),
                watermark=self.watermark,
                features=(*STYLE_FEATURES, *opts.style_features),
                total=round(data.table.n_battles),
            )
        except StyleDataError as exc:
            raise RebuildOptionError.about("style_features", str(exc)) from None
        self.say(
            f"{self.key(data)}: style: read {len(sb):,} battles with style metadata "
            f"in {time.perf_counter() - t0:.2f} s ({cpu_seconds() - c0:.2f} s CPU)"
        )
        return StyleBoard.of(sb) if len(sb) else None

    def check(self) -> None:
        """Refuse, before any fit, what cannot or should not be rated."""
        opts = self.opts
        if not self.boards:
            what = str(BoardKey(category=opts.category, source=opts.source))
            raise RebuildError(f"no rated battles for board {what!r}: ingest battles first")
        total, missing = self.n_battles_clustered, self.missing_cluster
        if total and missing == total:
            raise RebuildOptionError(
                "cluster",
                "{name} "
                + escape(
                    f"{opts.cluster}: none of the {total} battles has a {opts.cluster}, "
                    f"so there is nothing to cluster by; ingest the {opts.cluster} field or use "
                )
                + "{name} battle",
            )
        if self.max_boards is not None and len(self.boards) > self.max_boards:
            raise RebuildOptionError(
                "max_boards", too_many_boards(len(self.boards), self.max_boards)
            )
        if self.max_models is not None:
            for data in self.boards:
                if data.table.n_models > self.max_models:
                    raise RebuildOptionError(
                        "max_models",
                        escape(
                            f"board {str(self.key(data))!r} has {data.table.n_models:,} models, "
                            "more than "
                        )
                        + "{name} "
                        + escape(
                            f"{self.max_models:,}; rating it takes long and needs much memory: "
                        )
                        + "give a larger {name} to build it anyway",
                    )
        self.say(f"read {len(self.boards)} board(s) up to battle {self.watermark}")

    def plan(self) -> None:
        """Every board to rate: each raw board, then (``components="separate"``) its other sets."""
        separate = self.opts.components == "separate"
        for data, style in zip(self.boards, self.styles, strict=True):
            parts = split_board(data, self.opts.fit, style) if separate else []
            main = self.key(data)
            listed = {"component_boards": [str(self.key(data, p.number)) for p in parts]}
            self.planned.append(PlannedBoard(main, data, style, listed if separate else {}))
            self.planned += [
                PlannedBoard(
                    self.key(p.data, p.number),
                    p.data,
                    p.style,
                    {"component": {"number": p.number, "main_board": str(main), "group": p.group}},
                )
                for p in parts
            ]
            if parts:
                self.say(f"{main}: {len(parts)} other comparable set(s) get their own board")

    def rate(self) -> None:
        """Rate every planned board and its style-controlled pair (no transaction open)."""
        for board in self.planned:
            key, data, style = board.key, board.data, board.style
            board.rating = self.rate_raw(board)
            self.say(
                f"rated {key}: {data.table.n_models} models, {int(data.table.n.sum())} battles"
            )
            if style is not None and style.model_ids.size >= SPARSE_MIN_MODELS:
                # the style fit is dense (models + features)^2: not at this size
                self.warnings.append(
                    f"{key}: no style-controlled board: {style.model_ids.size:,} models is "
                    f"beyond the dense style fit ({SPARSE_MIN_MODELS:,} models or more take the "
                    "sparse path, which has no style control)"
                )
                board.style = style = None
            if style is None:
                continue
            board.style_rating = self.rate_style(board)
            self.say(
                f"rated {key} with style control: {style.model_ids.size} models, "
                f"{len(style.battles)} battles ({style.battles.n_missing} without style metadata "
                "left out)"
            )

    def board_options(self, data: BoardData, key: BoardKey) -> BoardOptions:
        """The engine's options for one board: the anchor's name becomes its table index.

        A comparable set's own board (``component`` > 1) without the anchor model
        keeps the default scale (mean 1000): the anchor cannot reach it.
        """
        opts = self.opts
        if opts.anchor is None:
            return opts
        name, value = opts.anchor
        ids = [i for i, mid in enumerate(data.model_ids) if self.names[int(mid)] == name]
        if not ids and key.component > 1:
            return opts
        if not ids:
            raise RebuildOptionError.about(
                "anchor", f"model {name!r} has no battles on board {str(key)!r}"
            )
        return replace(opts, fit=replace(opts.fit, anchor=(ids[0], value)))

    def rate_raw(self, board: PlannedBoard) -> BoardRating:
        """Rate one board read by :func:`arena.store.read.read_boards` (or one comparable set)."""
        key = board.key
        try:
            return rate_board(
                board.data.table,
                self.board_options(board.data, board.key),
                clusters=board.data.clusters,
                progress=lambda msg: self.say(f"{key}: {msg}"),
            )
        except ValueError as exc:
            raise RebuildError(f"board {str(key)!r}: {exc}") from exc

    def rate_style(self, board: PlannedBoard) -> BoardRating:
        """Rate the style-controlled board of one raw board's battles."""
        style, data = board.style, board.data
        assert style is not None
        sb, model_ids = style.battles, style.model_ids
        a = np.searchsorted(model_ids, sb.model_a)
        b = np.searchsorted(model_ids, sb.model_b)
        style_data = replace(data, model_ids=model_ids)
        try:
            result, _ = rate_style_board(
                a,
                b,
                sb.outcome.astype(np.intp),
                sb.features_a,
                sb.features_b,
                self.board_options(style_data, board.key.with_style()),
                n_models=model_ids.size,
                features=sb.features,
                weight=sb.weight,
                cluster_ids=sb.cluster,
                style_reg=self.opts.style_reg,
                progress=lambda msg: self.say(f"{board.key.with_style()}: {msg}"),
            )
        except ValueError as exc:
            raise RebuildError(f"board {str(board.key.with_style())!r}: {exc}") from exc
        return result

    def write(self, engine: Engine) -> None:
        """Every snapshot in one transaction: raw boards first, then their style-controlled pairs."""
        if self.missing_cluster:
            self.warnings.append(
                f"resampling by {self.opts.cluster}: {self.missing_cluster} of "
                f"{self.n_battles_clustered} battles have no {self.opts.cluster}; each of them "
                "is resampled as its own cluster"
            )
        n = sum(1 for b in self.planned if b.rating is not None)
        self.say(f"write: {n} snapshot(s)")
        with engine.begin() as conn:
            take_write_lock(conn, "write the snapshots")
            for board in self.planned:
                assert board.rating is not None
                data = board.data
                self.write_one(
                    conn,
                    board.key,
                    data,
                    data.model_ids,
                    data.n_excluded,
                    board.rating,
                    board.extra,
                )
            for board in self.planned:
                if board.style_rating is None:
                    continue
                assert board.style is not None
                missing = board.style.battles.n_missing
                self.write_one(
                    conn,
                    board.key.with_style(),
                    board.data,
                    board.style.model_ids,
                    # battles without style metadata are left out of this board
                    board.data.n_excluded + missing,
                    board.style_rating,
                    {"n_without_style": missing, **board.extra},
                )

    def write_one(
        self,
        conn: Connection,
        key: BoardKey,
        data: BoardData,
        model_ids: np.ndarray,
        n_excluded: int,
        rating: BoardRating,
        extra: dict[str, Any],
    ) -> None:
        # models named by name (at most 10 per sentence), never by index
        warned = rating.ratings.named_warnings([self.names[int(m)] for m in model_ids])
        sid = write_snapshot(
            conn,
            board=key,
            run_id=self.run_id,
            options=replace(self.opts, category=data.category).to_dict(),
            seed=self.opts.seed,
            watermark=self.watermark,
            model_ids=model_ids,
            n_excluded=n_excluded,
            result=rating,
            hidden=self.hidden,
            diagnostics={
                "seconds": round(time.perf_counter() - self.started, 3),
                "warnings": warned,
                "read": self.source,
                **extra,
            },
        )
        self.snapshot_ids.append(sid)
        self.written.append(str(key))
        self.board_notes.extend((str(key), w) for w in warned)

    def result(self) -> RebuildResult:
        return RebuildResult(
            run_id=self.run_id,
            watermark=self.watermark,
            snapshot_ids=list(self.snapshot_ids),
            boards=list(self.written),
            warnings=[*self.warnings, *board_warnings(self.board_notes)],
            seconds=time.perf_counter() - self.started,
            read=self.source,
        )


def rebuild(
    engine: Engine,
    opts: RebuildOptions,
    *,
    all_categories: bool = False,
    progress: Callable[[str], None] | None = None,
    max_models: int | None = DEFAULT_MAX_MODELS,
    read: str = DEFAULT_READ,
    max_boards: int | None = DEFAULT_MAX_BOARDS,
) -> RebuildResult:
    """Read battles up to a watermark, rate every requested board, write snapshots.

    The numerics run between two short transactions (a consistent read, then
    the write), so no lock is held while boards are rated.  ``max_models``
    refuses, before any fitting, a board with more models than that (an
    accidental huge board would run for a long time).  ``read`` (see
    :data:`arena.store.read.READS`): the count table or the battles; the same snapshot.
    The steps are those of :class:`RebuildJob`.

    Raises
    ------
    RebuildError
        Nothing to rate, a bad option, a board over ``max_models``, or a board
        whose fit cannot exist (``prior=0`` without an MLE). Nothing is written then.
    """
    opts.validate()
    job = RebuildJob(
        opts,
        all_categories=all_categories,
        max_models=max_models,
        max_boards=max_boards,
        read_mode=read,
        progress=progress,
    )
    job.read(engine)
    job.check()
    job.plan()
    job.rate()
    job.write(engine)
    return job.result()


__all__ = [
    "RebuildError",
    "RebuildOptions",
    "PlannedBoard",
    "RebuildJob",
    "RebuildResult",
    "rebuild",
]
