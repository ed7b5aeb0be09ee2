"""The provisional board: a board's latest snapshot refitted on every battle stored since.

:class:`Refitter` does one refit of one board: it reads the board's count table
(``battle_counts``, which every ingest and every vote keeps current in its own
transaction) up to a watermark in one consistent read, exactly as a rebuild
reads it, so the provisional board rates the same battles a full rebuild at
that watermark would; fits the maximum-likelihood estimate warm-started from
its previous fit (the same estimate, fewer Newton steps); puts analytic
intervals on it (sandwich or Fisher) and draws the board's one inference (rank
sets and tiers) from the engine's fixed normal draws mapped by that covariance
(no seed enters, as on the full board); and stores it as the board's provisional snapshot
(:mod:`arena.boards.provisional`).  Every option but the interval method and
style control is the latest full snapshot's.

Reading the whole count table rather than folding the battles with ids above
the last watermark is on purpose: on PostgreSQL ids are handed out before
commit, so a battle with a lower id can become visible after one with a
higher id, and a fold by id range would miss it.

``arena serve`` runs the refits (:mod:`arena.serve.provisional`); nothing here
holds a lock while it fits, and the write is one short transaction.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy import Engine, func, select

from arena.boards.keys import OVERALL, BoardKey
from arena.boards.provisional import provisional_watermark, write_provisional
from arena.boards.snapshots import SnapshotInfo, latest_snapshot_id, snapshot_info
from arena.core.defaults import DEFAULT_PROVISIONAL_METHOD, DEFAULT_ROUNDS, PROVISIONAL_METHODS
from arena.core.errors import ArenaError, OptionError
from arena.db.models import Battle, BattleCategory, Category
from arena.db.session import take_write_lock
from arena.engine.board import BoardRating, rate_board
from arena.engine.scale import BASE, SCALE
from arena.engine.sparse.fit import SPARSE_MIN_MODELS
from arena.jobs.kept import stored_options
from arena.jobs.rebuild import RebuildJob, RebuildOptions
from arena.store.read import BattleSelection, selection_filters

__all__ = ["Refit", "Refitter", "provisional_options"]


@dataclass(frozen=True)
class Refit:
    """What one look at a board did: refitted it (``provisional_id``) or why not."""

    board: str
    #: the stored provisional board, or None when nothing was refitted
    provisional_id: int | None
    #: the full snapshot it was built on (None: the board has none)
    since_snapshot: int | None
    watermark: int
    battles_since: int
    method: str
    seconds: float
    #: why nothing was refitted ("" when it was)
    reason: str = ""
    #: Newton iterations of the point fit (fewer when warm-started)
    iterations: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def provisional_options(
    stored: dict[str, Any], board: BoardKey, method: str, draws: int | None = None
) -> RebuildOptions:
    """The options of ``board``'s provisional board: the full snapshot's stored options
    with analytic intervals (``method``), no style-controlled pair and one comparable set.

    ``draws``: the full snapshot's draws, used when its rounds were chosen by
    the data, so a refit every few seconds does not choose them again.
    """
    opts = stored_options(stored)
    return replace(
        opts,
        rounds=opts.rounds if opts.rounds is not None else draws or DEFAULT_ROUNDS,
        ci=method,
        style_control=False,
        components="largest",
        category=board.category,
        source=board.source,
    )


def _battles_since(engine: Engine, sel: BattleSelection, since: int, watermark: int) -> int:
    """Rated battles of the selection with ids in ``(since, watermark]``."""
    query = select(func.count()).select_from(Battle)
    if sel.category is not None:
        query = (
            query.join(BattleCategory, BattleCategory.battle_id == Battle.id)
            .join(Category, Category.id == BattleCategory.category_id)
            .where(Category.name == sel.category)
        )
    query = query.where(*selection_filters(sel, watermark), Battle.id > since)
    with engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


class Refitter:
    """Refits provisional boards, remembering each board's last fit to warm-start the next.

    One per process; not thread-safe (one refitting thread).
    """

    def __init__(self, engine: Engine, *, method: str = DEFAULT_PROVISIONAL_METHOD) -> None:
        if method not in PROVISIONAL_METHODS:
            raise OptionError("provisional_method", "{name} must be sandwich or fisher")
        self.engine = engine
        self.method = method
        #: per board: log-strengths by model id of the last fit
        self._warm: dict[str, dict[int, float]] = {}

    def _latest(self, board: BoardKey) -> tuple[SnapshotInfo | None, int, int | None]:
        """(latest full snapshot, largest battle id, watermark of its provisional board)."""
        with self.engine.connect() as conn:
            sid = latest_snapshot_id(conn, board)
            info = snapshot_info(conn, sid) if sid is not None else None
            top = int(conn.execute(select(func.coalesce(func.max(Battle.id), 0))).scalar_one())
            done = provisional_watermark(conn, info) if info is not None else None
        return info, top, done

    def refit(
        self,
        board: BoardKey = OVERALL,
        *,
        force: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Refit:
        """Refit ``board`` if battles were stored since its last (provisional or full) board.

        ``force``: refit even then. Never raises for a board that cannot have a
        provisional one (no snapshot yet, options the read or the check refuses,
        too many models for analytic intervals): the result says why.
        """
        t0 = time.perf_counter()
        key = str(board)
        info, top, done = self._latest(board)

        def skip(reason: str, since: int | None = None, watermark: int = top) -> Refit:
            return Refit(key, None, since, watermark, 0, self.method, 0.0, reason)

        if board.style_controlled or board.component != 1:
            return skip("provisional boards are raw boards of the main comparable set")
        if info is None:
            return skip(f"board {key!r} has no snapshot yet")
        last = info.watermark if done is None else max(done, info.watermark)
        if top <= last and not force:
            return skip("no battle stored since the last board", info.id, last)
        try:
            opts = provisional_options(
                info.options, board, self.method, info.diagnostics.get("rounds")
            )
            if not force and not _battles_since(self.engine, opts.selection(), last, top):
                # the battles since were another board's (another category or source)
                return skip("no battle of this board stored since its last board", info.id, last)
            # read: the count table where it serves the options, else the battles (a
            # board that leaves a judge out, as the demo's overall board does);
            # warn_mixing: the full snapshot's warnings stand, and a scan of every
            # battle's source would be a fifth of a refit of the bundled board
            job = RebuildJob(opts, read_mode="auto", warn_mixing=False)
            job.read(self.engine)
            job.check()
        except ArenaError as exc:  # options the read or the check refuses, a board now empty
            return skip(f"cannot refit {key!r}: {exc}", info.id)
        data = job.boards[0]
        if data.table.n_models >= SPARSE_MIN_MODELS:
            return skip(
                f"board {key!r} has {data.table.n_models:,} models: analytic intervals need the "
                f"models x models covariance (below {SPARSE_MIN_MODELS:,} models)",
                info.id,
            )
        warm = self._warm.get(key, {})
        start = np.array([warm.get(int(m), np.nan) for m in data.model_ids], dtype=np.float64)
        names = [job.names[int(m)] for m in data.model_ids]
        try:
            rating = rate_board(
                data.table,
                job.board_options(data, board),
                names=names,
                path="dense",
                start=start if warm else None,
                progress=progress,
                # the full snapshot's draws, checked by its rebuild
                check_draws=False,
            )
        except (ValueError, ArenaError) as exc:
            return skip(f"cannot refit {key!r}: {exc}", info.id)
        since = _battles_since(self.engine, opts.selection(), info.watermark, job.watermark)
        iterations = _iterations(rating)
        pid = self._write(job, info, board, rating, since, t0, bool(warm), iterations)
        self._warm[key] = {
            int(m): (float(r) - BASE) / SCALE
            for m, r in zip(data.model_ids, rating.ratings.rating, strict=True)
            if np.isfinite(r)
        }
        return Refit(
            key,
            pid,
            info.id,
            job.watermark,
            since,
            self.method,
            time.perf_counter() - t0,
            iterations=iterations,
        )

    def _write(
        self,
        job: RebuildJob,
        info: SnapshotInfo,
        board: BoardKey,
        rating: BoardRating,
        since: int,
        t0: float,
        warm: bool,
        iterations: int,
    ) -> int:
        data = job.boards[0]
        warned = rating.ratings.named_warnings([job.names[int(m)] for m in data.model_ids])
        with self.engine.begin() as conn:
            take_write_lock(conn, "write the provisional board")
            return write_provisional(
                conn,
                board=board,
                since=info,
                method=self.method,
                watermark=job.watermark,
                battles_since=since,
                options=job.opts.to_dict(),
                model_ids=data.model_ids,
                n_excluded=data.n_excluded,
                result=rating,
                hidden=job.hidden,
                diagnostics={
                    "seconds": round(time.perf_counter() - t0, 3),
                    "warnings": warned,
                    "read": job.source,
                    "warm_start": warm,
                    "iterations": iterations,
                    # which process refitted (arena serve: the worker holding the lock)
                    "pid": os.getpid(),
                },
            )


def _iterations(rating: BoardRating) -> int:
    fit = getattr(rating.ratings, "fit", None)
    return int(getattr(fit, "iterations", 0) or 0)
