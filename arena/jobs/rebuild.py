"""The nightly rebuild: battle store -> count table -> rating engine -> snapshot.

This module only orchestrates (it passes ~400 lines because it sequences raw,
style-controlled and per-component boards and the choice of what to read;
every read, fit and write it calls lives elsewhere). The store reads each
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
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime

import numpy as np
from sqlalchemy import Engine

from arena.boards.snapshots import board_key
from arena.boards.split import COMPONENT_MODES, split_board
from arena.boards.write import write_snapshot
from arena.core.defaults import DEFAULT_SEED
from arena.db.models import STYLE_FEATURES
from arena.db.session import take_write_lock
from arena.engine.board import (
    TIER_METHODS,
    TIER_RULES,
    BoardOptions,
    BoardRating,
    rate_board,
    rate_style_board,
)
from arena.engine.rate import CI_METHODS
from arena.engine.sparse.fit import SPARSE_MIN_MODELS
from arena.engine.validate import check_level
from arena.store.read import (
    CLUSTERS,
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
from arena.store.style import StyleBattles, StyleDataError, has_style_rows, read_style_battles


class RebuildError(Exception):
    """A rebuild that cannot run (no battles, unknown anchor model, bad option)."""


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
    cluster: str = "battle"
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
    components: str = "largest"

    def validate(self) -> None:
        if self.ci not in CI_METHODS:
            raise RebuildError(f"--ci must be one of {', '.join(CI_METHODS)}")
        if self.tiers not in TIER_METHODS:
            raise RebuildError(f"--tiers must be one of {', '.join(TIER_METHODS)}")
        if self.tier_rule not in TIER_RULES:
            raise RebuildError(f"--tier-rule must be one of {', '.join(TIER_RULES)}")
        if self.components not in COMPONENT_MODES:
            raise RebuildError(f"--components must be one of {', '.join(COMPONENT_MODES)}")
        if self.cluster not in CLUSTERS:
            raise RebuildError(f"--cluster must be one of {', '.join(CLUSTERS)}")
        try:
            check_level(self.level)
        except ValueError as exc:
            raise RebuildError(f"--level: {exc} (e.g. 0.95)") from None
        if self.rounds < 10:
            raise RebuildError("--rounds must be at least 10")
        if self.min_battles < 0:
            raise RebuildError("--min-battles must be >= 0")
        if self.style_reg is not None and not (
            math.isfinite(self.style_reg) and self.style_reg >= 0
        ):
            raise RebuildError("--style-reg must be a finite number >= 0 (LMArena uses 0.5)")
        if self.fit.anchor is not None:
            raise RebuildError("give the anchor by model name (anchor=), not fit.anchor")

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

    def as_json(self) -> dict:
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


@dataclass
class RebuildResult:
    run_id: str
    watermark: int
    snapshot_ids: list[int] = field(default_factory=list)
    boards: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: what was read: "counts" (the count table) or "battles"
    read: str = "battles"


def _key(opts: RebuildOptions, data: BoardData, component: int = 1, style: bool = False) -> str:
    return board_key(category=data.category, source=opts.source, style=style, component=component)


def _board_options(
    opts: RebuildOptions, data: BoardData, names: dict[int, str], component: int = 1
) -> BoardOptions:
    """The engine's options for one board: the anchor's name becomes its table index.

    A comparable set's own board (``component`` > 1) without the anchor model
    keeps the default scale (mean 1000): the anchor cannot reach it.
    """
    if opts.anchor is None:
        return opts
    name, value = opts.anchor
    ids = [i for i, mid in enumerate(data.model_ids) if names[int(mid)] == name]
    if not ids and component > 1:
        return opts
    if not ids:
        key = _key(opts, data, component)
        raise RebuildError(f"--anchor: model {name!r} has no battles on board {key!r}")
    return replace(opts, fit=replace(opts.fit, anchor=(ids[0], value)))


def rate_one(
    opts: RebuildOptions,
    data: BoardData,
    names: dict[int, str],
    progress: Callable[[str], None] | None = None,
    component: int = 1,
) -> BoardRating:
    """Rate one board read by :func:`arena.store.read.read_boards` (or one comparable set of it)."""
    try:
        return rate_board(
            data.table,
            _board_options(opts, data, names, component),
            clusters=data.clusters,
            progress=progress,
        )
    except ValueError as exc:
        key = _key(opts, data, component)
        raise RebuildError(f"board {key!r}: {exc}") from exc


def read_style(
    conn, opts: RebuildOptions, data: BoardData, watermark: int
) -> tuple[StyleBattles, np.ndarray] | None:
    """The board's battles that carry style metadata, or None when none does."""
    try:
        sb = read_style_battles(
            conn,
            replace(opts.selection(), category=data.category),
            watermark=watermark,
            features=(*STYLE_FEATURES, *opts.style_features),
            total=round(data.table.n_battles),
        )
    except StyleDataError as exc:
        raise RebuildError(f"--style-feature: {exc}") from None
    if len(sb) == 0:
        return None
    model_ids = np.unique(np.concatenate([sb.model_a, sb.model_b]))
    return sb, model_ids


def rate_style_one(
    opts: RebuildOptions,
    sb: StyleBattles,
    model_ids: np.ndarray,
    data: BoardData,
    names,
    component: int = 1,
) -> BoardRating:
    """Rate the style-controlled board of one raw board's battles."""
    a = np.searchsorted(model_ids, sb.model_a)
    b = np.searchsorted(model_ids, sb.model_b)
    style_data = replace(data, model_ids=model_ids)
    key = _key(opts, data, component, style=True)
    try:
        result, _ = rate_style_board(
            a,
            b,
            sb.outcome.astype(np.intp),
            sb.features_a,
            sb.features_b,
            _board_options(opts, style_data, names, component),
            n_models=model_ids.size,
            features=sb.features,
            weight=sb.weight,
            cluster_ids=sb.cluster,
            style_reg=opts.style_reg,
        )
    except ValueError as exc:
        raise RebuildError(f"board {key!r}: {exc}") from exc
    return result


def rebuild(
    engine: Engine,
    opts: RebuildOptions,
    *,
    all_categories: bool = False,
    progress: Callable[[str], None] | None = None,
    max_models: int | None = None,
    read: str = "auto",
) -> RebuildResult:
    """Read battles up to a watermark, rate every requested board, write snapshots.

    The numerics run between two short transactions (a consistent read, then
    the write), so no lock is held while boards are rated.  ``max_models``
    refuses, before any fitting, a board with more models than that (an
    accidental huge board would run for a long time).  ``read`` (see
    :data:`arena.store.read.READS`): the count table or the battles; the same snapshot.

    Raises
    ------
    RebuildError
        Nothing to rate, a bad option, a board over ``max_models``, or a board
        whose fit cannot exist (``prior=0`` without an MLE). Nothing is written then.
    """
    opts.validate()
    started = time.perf_counter()
    say = progress or (lambda _msg: None)
    try:
        source = what_to_read(opts.selection(), read)
    except ValueError as exc:
        raise RebuildError(str(exc)) from None
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            # One consistent view for the watermark and every read.
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            if conn.dialect.name == "sqlite":
                # One read transaction (WAL: a snapshot from the first read to the end),
                # so the count table and the watermark describe the same battles.
                conn.exec_driver_sql("BEGIN")
            if source == "counts":
                say("aggregate: reading the count table (battles per board, pair, outcome)")
                watermark, boards = read_count_boards(
                    conn, opts.selection(), all_categories=all_categories
                )
            else:
                why = counts_unusable(opts.selection()) or "--read battles"
                say(f"aggregate: counting battles per board in the database ({why})")
                watermark, boards = read_boards(
                    conn, opts.selection(), all_categories=all_categories
                )
            names = model_names(conn)
            hidden = hidden_model_ids(conn)
            missing = total = 0
            if opts.cluster != "battle" and boards:
                missing, total = missing_cluster_key(conn, opts.selection(), watermark)
            # every style board joins battle_style: none to build when it has no row
            styled = opts.style_control and has_style_rows(conn)
            styles = [
                read_style(conn, opts, data, watermark) if styled else None for data in boards
            ]
    if not boards:
        what = board_key(category=opts.category, source=opts.source)
        raise RebuildError(f"no rated battles for board {what!r}: ingest battles first")
    if total and missing == total:
        raise RebuildError(
            f"--cluster {opts.cluster}: none of the {total} battles has a {opts.cluster}, so "
            f"there is nothing to cluster by; ingest the {opts.cluster} field or use "
            "--cluster battle"
        )
    if max_models is not None:
        for data in boards:
            if data.table.n_models > max_models:
                key = _key(opts, data)
                raise RebuildError(
                    f"board {key!r} has {data.table.n_models:,} models, more than "
                    f"--max-models {max_models:,}; rating it takes long and needs much "
                    "memory: give a larger --max-models to build it anyway"
                )
    say(f"read {len(boards)} board(s) up to battle {watermark}")
    # (component number, data, style battles, extra diagnostics) of every raw board
    entries: list[tuple[int, BoardData, tuple | None, dict]] = []
    for data, style in zip(boards, styles, strict=True):
        parts = split_board(data, opts.fit, style) if opts.components == "separate" else []
        main = _key(opts, data)
        listed = {"component_boards": [_key(opts, data, p.number) for p in parts]}
        entries.append((1, data, style, listed if opts.components == "separate" else {}))
        entries += [
            (
                p.number,
                p.data,
                p.style,
                {"component": {"number": p.number, "main_board": main, "group": p.group}},
            )
            for p in parts
        ]
        if parts:
            say(f"{main}: {len(parts)} other comparable set(s) get their own board")
    results, style_results, notes = [], [], []
    for number, data, style, _extra in entries:
        key = _key(opts, data, number)
        results.append(
            rate_one(opts, data, names, lambda msg, key=key: say(f"{key}: {msg}"), number)
        )
        say(f"rated {key}: {data.table.n_models} models, {int(data.table.n.sum())} battles")
        if style is not None and style[1].size >= SPARSE_MIN_MODELS:
            # the style fit is dense (models + features)^2: not at this size
            notes.append(
                f"{key}: no style-controlled board: {style[1].size:,} models is beyond the "
                f"dense style fit ({SPARSE_MIN_MODELS:,} models or more take the sparse path, "
                "which has no style control)"
            )
            style = None
        if style is None:
            style_results.append(None)
            continue
        sb, model_ids = style
        style_results.append(rate_style_one(opts, sb, model_ids, data, names, number))
        say(
            f"rated {key} with style control: {model_ids.size} models, {len(sb)} battles "
            f"({sb.n_missing} without style metadata left out)"
        )
    run_id = uuid.uuid4().hex
    out = RebuildResult(run_id=run_id, watermark=watermark, read=source, warnings=notes)
    if missing:
        out.warnings.append(
            f"--cluster {opts.cluster}: {missing} of {total} battles have no {opts.cluster}; "
            "each of them is resampled as its own cluster"
        )
    say(f"write: {len(results)} snapshot(s)")
    with engine.begin() as conn:
        take_write_lock(conn, "write the snapshots")
        # raw boards first, then their style-controlled pairs: (key, data, model ids,
        # battles kept but not rated, result, extra diagnostics)
        written = [
            (_key(opts, d, n), d, d.model_ids, d.n_excluded, r, extra)
            for (n, d, _st, extra), r in zip(entries, results, strict=True)
        ]
        written += [
            (
                _key(opts, d, n, style=True),
                d,
                st[1],
                # battles without style metadata are left out of this board
                d.n_excluded + st[0].n_missing,
                r,
                {"n_without_style": st[0].n_missing, **extra},
            )
            for (n, d, st, extra), r in zip(entries, style_results, strict=True)
            if r is not None
        ]
        for key, data, model_ids, n_excluded, res, extra in written:
            # models named by name (at most 10 per sentence), never by index
            warned = res.ratings.named_warnings([names[int(m)] for m in model_ids])
            sid = write_snapshot(
                conn,
                board=key,
                category=data.category,
                source=opts.source,
                run_id=run_id,
                options=replace(opts, category=data.category).as_json(),
                seed=opts.seed,
                watermark=watermark,
                model_ids=model_ids,
                n_excluded=n_excluded,
                result=res,
                hidden=hidden,
                diagnostics={
                    "seconds": round(time.perf_counter() - started, 3),
                    "warnings": warned,
                    "read": source,
                    **extra,
                },
            )
            out.snapshot_ids.append(sid)
            out.boards.append(key)
            out.warnings.extend(f"{key}: {w}" for w in warned)
    out.seconds = time.perf_counter() - started
    return out


__all__ = [
    "CLUSTERS",
    "DEFAULT_SEED",
    "TIER_METHODS",
    "RebuildError",
    "RebuildOptions",
    "RebuildResult",
    "rate_one",
    "rebuild",
]
