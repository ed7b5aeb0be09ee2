"""The nightly rebuild: battle store -> SQL aggregation -> rating engine -> snapshot.

Data flows one way. The aggregation to (pair, outcome) counts runs in SQL, so
memory does not grow with the number of battles; the engine sees cells only.
All snapshots of one run are written in one transaction: a rebuild that fails
or is interrupted writes nothing and the previous snapshot stays the latest.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime

import numpy as np
from sqlalchemy import Connection, Engine, String, and_, cast, func, insert, literal, select

from arena import __version__
from arena.db.models import (
    Battle,
    BattleCategory,
    Category,
    Model,
    Snapshot,
    SnapshotPair,
    SnapshotRow,
    SnapshotSamples,
)
from arena.db.session import take_write_lock
from arena.engine.counts import CountTable, cluster_matrix, from_cells
from arena.engine.rate import CI_METHODS, Ratings, rate
from arena.engine.tiers import rank_ub, tiers_leader_overlap, tiers_paired
from arena.outcomes import OUTCOME_CODES, Outcome
from arena.snapshots import board_key

TIER_METHODS = ("maxt", "holm", "bh", "overlap")
TIER_RULES = ("leader", "cut")
CLUSTERS = ("battle", "judge", "question", "source")
DEFAULT_SEED = 20240501
_OUTCOME_CODE = {o.value: code for o, code in OUTCOME_CODES.items()}


class RebuildError(Exception):
    """A rebuild that cannot run (no battles, unknown anchor model, bad option)."""


@dataclass(frozen=True)
class RebuildOptions:
    """Everything that determines a snapshot besides the data (all stored with it)."""

    category: str | None = None
    source: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    rounds: int = 1000
    seed: int = DEFAULT_SEED
    level: float = 0.95
    ci: str = "bootstrap"
    simultaneous: bool = False
    ties: str = "half"
    both_bad: str = "tie"
    position: bool = False
    anchor: tuple[str, float] | None = None
    prior: float | None = None
    min_battles: int = 50
    tiers: str = "maxt"
    tier_rule: str = "leader"
    cluster: str = "battle"

    def validate(self) -> None:
        if self.ci not in CI_METHODS:
            raise RebuildError(f"--ci must be one of {', '.join(CI_METHODS)}")
        if self.tiers not in TIER_METHODS:
            raise RebuildError(f"--tiers must be one of {', '.join(TIER_METHODS)}")
        if self.tier_rule not in TIER_RULES:
            raise RebuildError(f"--tier-rule must be one of {', '.join(TIER_RULES)}")
        if self.cluster not in CLUSTERS:
            raise RebuildError(f"--cluster must be one of {', '.join(CLUSTERS)}")
        if not 0 < self.level < 1:
            raise RebuildError("--level must be between 0 and 1 (e.g. 0.95)")
        if self.rounds < 10:
            raise RebuildError("--rounds must be at least 10")
        if self.min_battles < 0:
            raise RebuildError("--min-battles must be >= 0")

    def as_json(self) -> dict:
        d = asdict(self)
        for key in ("since", "until"):
            if d[key] is not None:
                d[key] = d[key].isoformat()
        if self.anchor is not None:
            d["anchor"] = {"model": self.anchor[0], "rating": self.anchor[1]}
        return d


@dataclass
class BoardData:
    """One board's aggregated data, read in the rebuild's transaction."""

    key: str
    category: str | None
    model_ids: np.ndarray  # index -> models.id
    table: CountTable
    clusters: object | None = None  # scipy.sparse (K, C) or None
    n_excluded: int = 0


@dataclass
class RebuildResult:
    run_id: str
    watermark: int
    snapshot_ids: list[int] = field(default_factory=list)
    boards: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


# ---------------------------------------------------------------- SQL side
def _filters(opts: RebuildOptions, watermark: int) -> list:
    conds = [Battle.excluded_reason.is_(None), Battle.id <= watermark]
    if opts.source is not None:
        conds.append(Battle.source == opts.source)
    if opts.since is not None:
        conds.append(Battle.occurred_at >= opts.since)
    if opts.until is not None:
        conds.append(Battle.occurred_at < opts.until)
    return conds


def _cluster_column(opts: RebuildOptions):
    if opts.cluster == "battle":
        return None
    column = {"judge": Battle.judge, "question": Battle.question, "source": Battle.source}[
        opts.cluster
    ]
    # A battle without the key is its own cluster, never pooled with other such battles.
    return func.coalesce(column, literal("battle:", String) + cast(Battle.id, String))


def _aggregate(
    conn: Connection, opts: RebuildOptions, watermark: int, *, by_category: bool
) -> dict[str | None, list[tuple]]:
    """GROUP BY (category?, cluster?, model_a, model_b, outcome, weight) -> rows per board."""
    cluster = _cluster_column(opts)
    keys = [Battle.model_a_id, Battle.model_b_id, Battle.outcome, Battle.weight]
    if cluster is not None:
        keys = [cluster.label("cluster"), *keys]
    conds = _filters(opts, watermark)
    if by_category:
        query = (
            _join_categories(select(Category.name, *keys, func.count()))
            .where(and_(*conds))
            .group_by(Category.name, *keys)
        )
    elif opts.category is not None:
        query = (
            _join_categories(select(*keys, func.count()))
            .where(and_(Category.name == opts.category, *conds))
            .group_by(*keys)
        )
    else:
        query = select(*keys, func.count()).where(and_(*conds)).group_by(*keys)
    out: dict[str | None, list[tuple]] = {}
    for row in conn.execute(query):
        if by_category:
            out.setdefault(row[0], []).append(tuple(row[1:]))
        else:
            out.setdefault(opts.category, []).append(tuple(row))
    return out


def _excluded_counts(
    conn: Connection, opts: RebuildOptions, watermark: int, *, by_category: bool
) -> dict[str | None, int]:
    """Battles kept but not rated (a model playing itself), per board."""
    conds = [Battle.excluded_reason.is_not(None), *_filters(opts, watermark)[1:]]
    if not by_category and opts.category is None:
        return {None: conn.execute(select(func.count()).where(*conds)).scalar_one()}
    query = _join_categories(select(Category.name, func.count())).where(*conds)
    if not by_category:
        query = query.where(Category.name == opts.category)
    return dict(conn.execute(query.group_by(Category.name)).all())


def _join_categories(query):
    return (
        query.select_from(BattleCategory)
        .join(Battle, Battle.id == BattleCategory.battle_id)
        .join(Category, Category.id == BattleCategory.category_id)
    )


def _board_data(
    key: str, category: str | None, rows: Sequence[tuple], clustered: bool, n_excluded: int
) -> BoardData:
    if clustered:
        cluster_keys = [r[0] for r in rows]
        rows = [r[1:] for r in rows]
    a_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    b_ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    outcome = np.fromiter((_OUTCOME_CODE[r[2]] for r in rows), dtype=np.int8, count=len(rows))
    weight = np.fromiter((r[3] for r in rows), dtype=np.float64, count=len(rows))
    n = np.fromiter((r[4] for r in rows), dtype=np.float64, count=len(rows))
    model_ids, inverse = np.unique(np.concatenate([a_ids, b_ids]), return_inverse=True)
    a, b = inverse[: len(rows)], inverse[len(rows) :]
    clusters = None
    if clustered:
        # Cells repeat across clusters: find unique cells, then the (cluster, cell) counts.
        cell_keys = np.stack([a, b, outcome.astype(np.int64)], axis=1)
        _, w_idx = np.unique(weight, return_inverse=True)
        cell_keys = np.concatenate([cell_keys, w_idx.reshape(-1, 1)], axis=1)
        uniq, cell_index = np.unique(cell_keys, axis=0, return_inverse=True)
        cell_index = cell_index.ravel()
        n_cell = np.bincount(cell_index, weights=n, minlength=len(uniq))
        first = np.full(len(uniq), -1, dtype=np.int64)
        first[cell_index[::-1]] = np.arange(len(rows))[::-1]
        table = from_cells(
            a[first],
            b[first],
            outcome[first],
            n_cell,
            n_models=len(model_ids),
            weight=weight[first],
        )
        _, cluster_idx = np.unique(
            np.asarray(cluster_keys, dtype=object).astype(str), return_inverse=True
        )
        clusters = cluster_matrix(cluster_idx.ravel(), cell_index, n_cells=len(uniq), n=n)
    else:
        table = from_cells(a, b, outcome, n, n_models=len(model_ids), weight=weight)
    return BoardData(key, category, model_ids, table, clusters, n_excluded)


def read_boards(
    conn: Connection, opts: RebuildOptions, *, all_categories: bool = False
) -> tuple[int, list[BoardData]]:
    """Watermark and aggregated boards, read in the caller's (snapshot) transaction."""
    watermark = conn.execute(select(func.coalesce(func.max(Battle.id), 0))).scalar_one()
    clustered = opts.cluster != "battle"
    boards: list[BoardData] = []
    main = _aggregate(conn, opts, watermark, by_category=False).get(opts.category, [])
    if main:
        excluded = _excluded_counts(conn, opts, watermark, by_category=False)
        boards.append(
            _board_data(
                board_key(category=opts.category, source=opts.source),
                opts.category,
                main,
                clustered,
                excluded.get(opts.category, 0),
            )
        )
    if all_categories and opts.category is None:
        per_cat = _aggregate(conn, opts, watermark, by_category=True)
        excluded = _excluded_counts(conn, opts, watermark, by_category=True)
        for name in sorted(per_cat):
            boards.append(
                _board_data(
                    board_key(category=name, source=opts.source),
                    name,
                    per_cat[name],
                    clustered,
                    excluded.get(name, 0),
                )
            )
    return watermark, boards


# ------------------------------------------------------------- engine side
@dataclass
class BoardResult:
    data: BoardData
    ratings: Ratings
    per_model: np.ndarray  # (M, 4): battles, wins, losses, ties
    ranked: np.ndarray
    rank: np.ndarray
    rank_ub: np.ndarray
    tier: np.ndarray
    flags: list[tuple[str, ...]]
    tier_info: dict


def model_record(table: CountTable) -> np.ndarray:
    """Per model (battles, wins, losses, ties) in battle counts (ties: both kinds)."""
    m = table.n_models
    out = np.zeros((m, 4))
    n = table.n
    a_win = table.outcome == OUTCOME_CODES[Outcome.A_WINS]
    b_win = table.outcome == OUTCOME_CODES[Outcome.B_WINS]
    tie = ~(a_win | b_win)
    for side, win, lose in ((table.a, a_win, b_win), (table.b, b_win, a_win)):
        out[:, 0] += np.bincount(side, weights=n, minlength=m)
        out[:, 1] += np.bincount(side, weights=n * win, minlength=m)
        out[:, 2] += np.bincount(side, weights=n * lose, minlength=m)
        out[:, 3] += np.bincount(side, weights=n * tie, minlength=m)
    return out


def rate_board(data: BoardData, opts: RebuildOptions, names: dict[int, str]) -> BoardResult:
    anchor = None
    if opts.anchor is not None:
        name, value = opts.anchor
        ids = [i for i, mid in enumerate(data.model_ids) if names[int(mid)] == name]
        if not ids:
            raise RebuildError(f"--anchor: model {name!r} has no battles on board {data.key!r}")
        anchor = (ids[0], value)
    try:
        ratings = rate(
            data.table,
            ci=opts.ci,
            level=opts.level,
            rounds=opts.rounds,
            seed=opts.seed,
            simultaneous=opts.simultaneous,
            clusters=data.clusters,
            ties=opts.ties,
            both_bad=opts.both_bad,
            position=opts.position,
            prior=opts.prior,
            anchor=anchor,
            # One joint fit until the snapshot can hold models with no rating
            # on the common scale; disconnected models are left unranked below.
            components="joint",
        )
    except ValueError as exc:
        raise RebuildError(f"board {data.key!r}: {exc}") from exc
    per_model = model_record(data.table)
    m = data.table.n_models
    flags = [tuple(f) for f in ratings.flags]
    # a model that never met the largest group has no rating on its scale
    ranked = (per_model[:, 0] >= max(opts.min_battles, 1)) & np.array(
        ["disconnected" not in f for f in flags], dtype=bool
    )
    flags = [
        tuple(
            dict.fromkeys(
                (*f, *(("few_battles",) if per_model[i, 0] < max(opts.min_battles, 1) else ()))
            )
        )
        for i, f in enumerate(flags)
    ]
    rank = np.full(m, -1)
    ub = np.full(m, -1)
    tier = np.full(m, -1)
    idx = np.flatnonzero(ranked)
    info: dict = {"method": opts.tiers}
    if idx.size:
        r, lo, hi = ratings.rating[idx], ratings.ci_low[idx], ratings.ci_high[idx]
        order = np.lexsort((idx, -r))
        rank[idx[order]] = np.arange(1, idx.size + 1)
        ub[idx] = rank_ub(lo, hi)
        if opts.tiers == "overlap" or idx.size == 1:
            tier[idx] = tiers_leader_overlap(r, lo, hi)
        else:
            res = tiers_paired(
                r,
                ratings.samples[:, idx],
                level=opts.level,
                correction=opts.tiers,
                rule=opts.tier_rule,
                # Percentile p-values bottom out at 2/(rounds+1), too coarse
                # for Holm/BH over M(M-1)/2 pairs; max-t ignores this.
                pvalues="normal",
            )
            tier[idx] = res.tiers
            info.update(
                critical_t=None if np.isnan(res.critical_t) else float(res.critical_t),
                n_comparisons=int(res.n_comparisons),
                rule=res.rule,
                pvalues=res.pvalues,
            )
    return BoardResult(data, ratings, per_model, ranked, rank, ub, tier, flags, info)


# ------------------------------------------------------------ write side
def _write_snapshot(
    conn: Connection,
    result: BoardResult,
    opts: RebuildOptions,
    run_id: str,
    watermark: int,
    hidden: set[int],
    extra_diag: dict,
) -> int:
    data, ratings = result.data, result.ratings
    diagnostics = {
        **ratings.diagnostics,
        "warnings": ratings.warnings,
        "n_cells": int(data.table.n_cells),
        "tiers": result.tier_info,
        **extra_diag,
    }
    snapshot_id = conn.execute(
        insert(Snapshot)
        .values(
            board=data.key,
            category=data.category,
            source=opts.source,
            run_id=run_id,
            options_json=json.dumps(opts.as_json(), sort_keys=True),
            seed=opts.seed,
            code_version=__version__,
            watermark=watermark,
            n_battles=float(data.table.n.sum()),
            n_excluded=data.n_excluded,
            n_models=int(data.table.n_models),
            diagnostics_json=json.dumps(diagnostics, sort_keys=True, default=float),
        )
        .returning(Snapshot.id)
    ).scalar_one()
    rows = []
    for i, mid in enumerate(data.model_ids.tolist()):
        flags = result.flags[i] + (("hidden",) if mid in hidden else ())
        rows.append(
            dict(
                snapshot_id=snapshot_id,
                model_id=mid,
                position=i,
                rating=float(ratings.rating[i]),
                ci_low=float(ratings.ci_low[i]),
                ci_high=float(ratings.ci_high[i]),
                rank=int(result.rank[i]) if result.ranked[i] else None,
                rank_ub=int(result.rank_ub[i]) if result.ranked[i] else None,
                tier=int(result.tier[i]) if result.ranked[i] else None,
                battles=float(result.per_model[i, 0]),
                wins=float(result.per_model[i, 1]),
                losses=float(result.per_model[i, 2]),
                ties=float(result.per_model[i, 3]),
                flags=",".join(flags)[:255],
                ranked=bool(result.ranked[i]),
            )
        )
    conn.execute(insert(SnapshotRow), rows)
    conn.execute(insert(SnapshotPair), _pair_rows(snapshot_id, data))
    samples = np.ascontiguousarray(ratings.samples, dtype="<f4")
    conn.execute(
        insert(SnapshotSamples).values(
            snapshot_id=snapshot_id,
            rounds=samples.shape[0],
            n_models=samples.shape[1],
            data=samples.tobytes(),
        )
    )
    return snapshot_id


def _pair_rows(snapshot_id: int, data: BoardData) -> list[dict]:
    t = data.table
    lo, hi = np.minimum(t.a, t.b), np.maximum(t.a, t.b)
    flipped = t.a != lo
    code = t.outcome
    a_win = code == OUTCOME_CODES[Outcome.A_WINS]
    b_win = code == OUTCOME_CODES[Outcome.B_WINS]
    lo_wins = np.where(flipped, b_win, a_win) * t.n
    hi_wins = np.where(flipped, a_win, b_win) * t.n
    ties = (~(a_win | b_win)) * t.n
    m = t.n_models
    key = lo * m + hi
    uniq, inv = np.unique(key, return_inverse=True)
    sums = [np.bincount(inv, weights=w, minlength=uniq.size) for w in (lo_wins, hi_wins, ties)]
    ids = data.model_ids
    return [
        dict(
            snapshot_id=snapshot_id,
            model_a_id=int(ids[k // m]),
            model_b_id=int(ids[k % m]),
            a_wins=float(sums[0][j]),
            b_wins=float(sums[1][j]),
            ties=float(sums[2][j]),
        )
        for j, k in enumerate(uniq.tolist())
    ]


def rebuild(
    engine: Engine,
    opts: RebuildOptions,
    *,
    all_categories: bool = False,
    progress: Callable[[str], None] | None = None,
    max_models: int | None = None,
) -> RebuildResult:
    """Read battles up to a watermark, rate every requested board, write snapshots.

    The numerics run between two short transactions (a consistent read, then
    the write), so no lock is held while boards are rated.  ``max_models``
    refuses, before any fitting, a board with more models than that (an
    accidental huge board would run for a long time).

    Raises
    ------
    RebuildError
        Nothing to rate, a bad option, a board over ``max_models``, or a board
        whose fit cannot exist (``prior=0`` without an MLE). Nothing is written then.
    """
    opts.validate()
    started = time.perf_counter()
    say = progress or (lambda _msg: None)
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            # One consistent view for the watermark and every aggregation.
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        # On SQLite each read sees committed data as of that statement; the
        # `id <= watermark` filter in every aggregation keeps them consistent.
        with conn.begin():
            watermark, boards = read_boards(conn, opts, all_categories=all_categories)
            names = dict(conn.execute(select(Model.id, Model.name)).all())
            hidden = set(conn.execute(select(Model.id).where(Model.hidden.is_(True))).scalars())
    if not boards:
        what = board_key(category=opts.category, source=opts.source)
        raise RebuildError(f"no rated battles for board {what!r}: ingest battles first")
    if max_models is not None:
        for data in boards:
            if data.table.n_models > max_models:
                raise RebuildError(
                    f"board {data.key!r} has {data.table.n_models:,} models, more than "
                    f"--max-models {max_models:,}; rating it takes long and needs much "
                    "memory: give a larger --max-models to build it anyway"
                )
    say(f"read {len(boards)} board(s) up to battle {watermark}")
    results = []
    for data in boards:
        results.append(rate_board(data, opts, names))
        say(f"rated {data.key}: {data.table.n_models} models, {int(data.table.n.sum())} battles")
    run_id = uuid.uuid4().hex
    out = RebuildResult(run_id=run_id, watermark=watermark)
    with engine.begin() as conn:
        take_write_lock(conn, "write the snapshots")
        for res in results:
            board_opts = replace(opts, category=res.data.category)
            sid = _write_snapshot(
                conn,
                res,
                board_opts,
                run_id,
                watermark,
                hidden,
                {"seconds": round(time.perf_counter() - started, 3)},
            )
            out.snapshot_ids.append(sid)
            out.boards.append(res.data.key)
            out.warnings.extend(f"{res.data.key}: {w}" for w in res.ratings.warnings)
    out.seconds = time.perf_counter() - started
    return out


__all__ = [
    "RebuildOptions",
    "RebuildError",
    "RebuildResult",
    "rebuild",
    "read_boards",
    "rate_board",
    "model_record",
    "TIER_METHODS",
    "CLUSTERS",
]
