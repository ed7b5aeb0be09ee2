"""Read-side queries over the battle store (no rating logic here).

* :func:`read_boards` -- the rebuild's input: battles aggregated in SQL to
  (cluster?, model_a, model_b, outcome, weight) counts per board, handed to
  the engine as count tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    String,
    and_,
    case,
    cast,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.orm import InstrumentedAttribute

from arena.core.defaults import DEFAULT_CLUSTER, READS
from arena.core.errors import OptionError, escape
from arena.core.outcomes import OUTCOME_CODES
from arena.db.models import Battle, BattleCategory, Category, Model
from arena.db.tables import ALL_BATTLES

if TYPE_CHECKING:
    import numpy as np
    import scipy.sparse as sp

    from arena.engine.counts import CountTable

_OUTCOME_CODE = {o.value: code for o, code in OUTCOME_CODES.items()}


# ------------------------------------------------------------ rebuild input
@dataclass(frozen=True)
class BattleSelection:
    """Which rated battles a rebuild reads, and how they cluster.

    Attributes
    ----------
    category, source : str or None
        Only battles of this category / source.
    since, until : datetime or None
        ``since <= occurred_at < until``.
    cluster : {"battle", "judge", "question", "source"}
        Resampling unit; a battle without the key is its own cluster.
    exclude_judges : tuple of str
        Judges whose votes are left out (``rebuild --exclude-flagged``);
        battles without a judge are kept.
    """

    category: str | None = None
    source: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    cluster: str = DEFAULT_CLUSTER
    exclude_judges: tuple[str, ...] = ()


@dataclass
class BoardData:
    """One board's aggregated battles, ready for the engine.

    Attributes
    ----------
    category : str or None
        The board's category (``None``: all battles of the selection).
    model_ids : ndarray of int64
        ``models.id`` of each table index.
    table : CountTable
    clusters : scipy.sparse matrix (K, C) or None
        Clusters x cells counts when the selection clusters.
    n_excluded : int
        Battles kept but not rated (a model playing itself).
    """

    category: str | None
    model_ids: np.ndarray
    table: CountTable
    clusters: sp.csr_matrix | None = None
    n_excluded: int = 0


def selection_filters(sel: BattleSelection, watermark: int) -> list[ColumnElement[bool]]:
    """The rated battles of a selection up to ``watermark`` (the category join aside)."""
    conds: list[ColumnElement[bool]] = [Battle.excluded_reason.is_(None), Battle.id <= watermark]
    if sel.source is not None:
        conds.append(Battle.source == sel.source)
    if sel.since is not None:
        conds.append(Battle.occurred_at >= sel.since)
    if sel.until is not None:
        conds.append(Battle.occurred_at < sel.until)
    if sel.exclude_judges:
        conds.append(or_(Battle.judge.is_(None), Battle.judge.not_in(sel.exclude_judges)))
    return conds


def cluster_key(sel: BattleSelection) -> ColumnElement[str | None] | None:
    """The selection's cluster key as an SQL expression, or None for ``battle``."""
    if sel.cluster == "battle":
        return None
    column = {"judge": Battle.judge, "question": Battle.question, "source": Battle.source}[
        sel.cluster
    ]
    # A battle without the key is its own cluster, never pooled with other such battles.
    return func.coalesce(column, literal("battle:", String) + cast(Battle.id, String))


def _join_categories(query: Select[*tuple[Any, ...]]) -> Select[*tuple[Any, ...]]:
    return (
        query.select_from(BattleCategory)
        .join(Battle, Battle.id == BattleCategory.battle_id)
        .join(Category, Category.id == BattleCategory.category_id)
    )


def _aggregate(
    conn: Connection, sel: BattleSelection, watermark: int, *, by_category: bool
) -> dict[str | None, list[tuple[Any, ...]]]:
    """GROUP BY (category?, cluster?, model_a, model_b, outcome, weight) -> rows per board."""
    cluster = cluster_key(sel)
    keys: list[ColumnElement[Any] | InstrumentedAttribute[Any]] = [
        Battle.model_a_id,
        Battle.model_b_id,
        Battle.outcome,
        Battle.weight,
    ]
    if cluster is not None:
        keys = [cluster.label("cluster"), *keys]
    conds = selection_filters(sel, watermark)
    if by_category:
        query = (
            _join_categories(select(Category.name, *keys, func.count()))
            .where(and_(*conds))
            .group_by(Category.name, *keys)
        )
    elif sel.category is not None:
        query = (
            _join_categories(select(*keys, func.count()))
            .where(and_(Category.name == sel.category, *conds))
            .group_by(*keys)
        )
    else:
        query = select(*keys, func.count()).where(and_(*conds)).group_by(*keys)
    out: dict[str | None, list[tuple[Any, ...]]] = {}
    for row in conn.execute(query):
        if by_category:
            out.setdefault(row[0], []).append(tuple(row[1:]))
        else:
            out.setdefault(sel.category, []).append(tuple(row))
    return out


def _excluded_counts(
    conn: Connection, sel: BattleSelection, watermark: int, *, by_category: bool
) -> dict[str | None, int]:
    """Battles kept but not rated (a model playing itself), per board."""
    conds = [Battle.excluded_reason.is_not(None), *selection_filters(sel, watermark)[1:]]
    if not by_category and sel.category is None:
        return {None: conn.execute(select(func.count()).where(*conds)).scalar_one()}
    query = _join_categories(select(Category.name, func.count())).where(*conds)
    if not by_category:
        query = query.where(Category.name == sel.category)
    return dict(conn.execute(query.group_by(Category.name)).all())


def _board_data(
    category: str | None, rows: Sequence[tuple[Any, ...]], clustered: bool, n_excluded: int
) -> BoardData:
    # Imported here: `arena models` reads this module and need not load numpy/scipy.
    import numpy as np

    cluster_keys = None
    if clustered:
        cluster_keys = np.asarray([r[0] for r in rows], dtype=object).astype(str)
        rows = [r[1:] for r in rows]
    count = len(rows)
    a_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=count)
    b_ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=count)
    outcome = np.fromiter((_OUTCOME_CODE[r[2]] for r in rows), dtype=np.int8, count=count)
    weight = np.fromiter((r[3] for r in rows), dtype=np.float64, count=count)
    n = np.fromiter((r[4] for r in rows), dtype=np.float64, count=count)
    return _board_arrays(category, a_ids, b_ids, outcome, weight, n, n_excluded, cluster_keys)


def _board_arrays(
    category: str | None,
    a_ids: np.ndarray,
    b_ids: np.ndarray,
    outcome: np.ndarray,
    weight: np.ndarray,
    n: np.ndarray,
    n_excluded: int,
    cluster_keys: np.ndarray | None = None,
) -> BoardData:
    """A board from its cells as columns (``models.id``, outcome codes, weight, battles)."""
    import numpy as np

    from arena.engine.counts import clustered_cells, from_cells

    count = a_ids.size
    n = n.astype(np.float64)
    model_ids, inverse = np.unique(np.concatenate([a_ids, b_ids]), return_inverse=True)
    a, b = inverse[:count], inverse[count:]
    m = len(model_ids)
    if cluster_keys is None:
        table, clusters = from_cells(a, b, outcome, n, n_models=m, weight=weight), None
    else:
        table, clusters = clustered_cells(a, b, outcome, n, cluster_keys, n_models=m, weight=weight)
    return BoardData(category, model_ids, table, clusters, n_excluded)


def missing_cluster_key(conn: Connection, sel: BattleSelection, watermark: int) -> tuple[int, int]:
    """(battles of the selection without its ``--cluster`` key, battles of the selection)."""
    column = {"judge": Battle.judge, "question": Battle.question, "source": Battle.source}[
        sel.cluster
    ]
    missing = func.sum(case((or_(column.is_(None), column == ""), 1), else_=0))
    query = select(func.count(), missing).select_from(Battle)
    if sel.category is not None:
        query = _join_categories(select(func.count(), missing)).where(Category.name == sel.category)
    total, n_missing = conn.execute(query.where(and_(*selection_filters(sel, watermark)))).one()
    return int(n_missing or 0), int(total)


def read_boards(
    conn: Connection, sel: BattleSelection, *, all_categories: bool = False
) -> tuple[int, list[BoardData]]:
    """Watermark and aggregated boards, read in the caller's transaction.

    The watermark is the largest battle id; every aggregation is limited to
    ``id <= watermark``, so battles ingested meanwhile are left for the next
    rebuild.  The first board is the selection itself (absent when it has no
    rated battles); with ``all_categories`` one board per category follows, in
    name order.
    """
    watermark = conn.execute(select(func.coalesce(func.max(Battle.id), 0))).scalar_one()
    clustered = sel.cluster != "battle"
    boards: list[BoardData] = []
    main = _aggregate(conn, sel, watermark, by_category=False).get(sel.category, [])
    if main:
        excluded = _excluded_counts(conn, sel, watermark, by_category=False)
        boards.append(_board_data(sel.category, main, clustered, excluded.get(sel.category, 0)))
    if all_categories and sel.category is None:
        per_cat = _aggregate(conn, sel, watermark, by_category=True)
        excluded = _excluded_counts(conn, sel, watermark, by_category=True)
        # keyed by category name here (None is the main board's key)
        for name in sorted(n for n in per_cat if n is not None):
            boards.append(_board_data(name, per_cat[name], clustered, excluded.get(name, 0)))
    return watermark, boards


@dataclass(frozen=True)
class CountsUnusable:
    """Why the count table cannot answer a selection, naming the parameters that ask for more.

    ``template`` names each of ``params`` as ``{param}`` (an
    :class:`~arena.core.errors.OptionError` template), so the command line
    can spell them as flags.
    """

    template: str
    params: tuple[str, ...]

    def __str__(self) -> str:
        return self.template.format(**{p: p for p in self.params})


def counts_unusable(sel: BattleSelection) -> CountsUnusable | None:
    """Why the count table cannot answer ``sel`` (naming the parameters), or None if it can."""
    if sel.since is not None or sel.until is not None:
        return CountsUnusable("{since}/{until} select battles by time", ("since", "until"))
    if sel.source is not None:
        return CountsUnusable("{source} selects battles by source", ("source",))
    if sel.exclude_judges:
        return CountsUnusable("{exclude_flagged} leaves out judges", ("exclude_flagged",))
    if sel.cluster != "battle":
        return CountsUnusable(
            "{cluster} "
            + escape(sel.cluster)
            + " resamples by a key the count table does not keep",
            ("cluster",),
        )
    return None


# What a rebuild reads (READS): ``counts`` (the count table), ``battles``
# (aggregated in SQL), or ``auto`` (counts when :func:`counts_unusable` allows).


def what_to_read(sel: BattleSelection, read: str) -> str:
    """``counts`` or ``battles`` for ``read`` (one of :data:`READS`); OptionError if impossible."""
    if read not in READS:
        raise OptionError("read", "{name} must be one of " + escape(", ".join(READS)))
    why_not = counts_unusable(sel)
    if read == "counts" and why_not is not None:
        raise OptionError(
            "read",
            "{name} counts: " + why_not.template + "; use {name} battles (or auto)",
            also=why_not.params,
        )
    return "battles" if read == "battles" or why_not is not None else "counts"


def read_count_boards(
    conn: Connection, sel: BattleSelection, *, all_categories: bool = False
) -> tuple[int, list[BoardData]]:
    """:func:`read_boards` from the count table (``battle_counts``), not the battles.

    Same result for any selection that :func:`counts_unusable` accepts; the caller reads in
    one transaction that sees a single state (the ingest that wrote a battle updated the
    counts in its transaction).  The rows go through the driver's own cursor straight
    into one numpy block: 785,000 cells through SQLAlchemy's rows and a Python loop per
    column cost 1.9 s of CPU, this 0.9 s (most of it the driver's fetch).
    """
    import numpy as np

    watermark = conn.execute(select(func.coalesce(func.max(Battle.id), 0))).scalar_one()
    where = "n > 0"
    wanted: int | None
    if not (all_categories and sel.category is None):
        if sel.category is None:
            wanted = ALL_BATTLES
        else:
            wanted = conn.execute(select(Category.id).where(Category.name == sel.category)).scalar()
            if wanted is None:
                return watermark, []
        where += f" AND category_id = {int(wanted)}"
    # the outcome's engine code in SQL (an unknown name gives -1, which from_cells refuses)
    code = " ".join(f"WHEN '{o.value}' THEN {c}" for o, c in OUTCOME_CODES.items())
    cursor = conn.connection.cursor()
    try:
        cursor.execute(
            f"SELECT category_id, CASE WHEN rated THEN 1 ELSE 0 END, model_a_id, model_b_id, "
            f"CASE outcome {code} ELSE -1 END, weight, n FROM battle_counts WHERE {where}"
        )
        rows = cursor.fetchall()
    finally:
        cursor.close()
    # one float64 block (ids, codes and counts are integers far below 2^53: exact),
    # converted by numpy in C rather than a Python loop per row
    block = np.array(rows, dtype=np.float64).reshape(len(rows), 7)
    del rows
    category_id = block[:, 0].astype(np.int64)
    rated = block[:, 1] != 0
    a_ids, b_ids = block[:, 2].astype(np.int64), block[:, 3].astype(np.int64)
    outcome = block[:, 4].astype(np.int8)
    weight, n = block[:, 5].copy(), block[:, 6].copy()
    del block
    unrated = ~rated
    excluded = {
        int(c): int(n[unrated & (category_id == c)].sum()) for c in np.unique(category_id[unrated])
    }
    # rated rows grouped by board (stable: each board keeps the rows' order)
    picked = np.flatnonzero(rated)
    picked = picked[np.argsort(category_id[picked], kind="stable")]
    ids, starts = np.unique(category_id[picked], return_index=True)
    segment = {
        int(c): picked[lo:hi]
        for c, lo, hi in zip(ids, starts, [*starts[1:], picked.size][: ids.size], strict=True)
    }
    rated_ids = set(segment)

    def board(name: str | None, cid: int) -> BoardData:
        k = segment[cid]
        return _board_arrays(
            name, a_ids[k], b_ids[k], outcome[k], weight[k], n[k], excluded.get(cid, 0)
        )

    names = dict(conn.execute(select(Category.id, Category.name)).all())
    boards: list[BoardData] = []
    main_id = ALL_BATTLES if sel.category is None else next(iter(sorted(rated_ids)), None)
    if main_id in rated_ids:
        boards.append(board(sel.category, main_id))
    if all_categories and sel.category is None:
        for name, cid in sorted((names[c], c) for c in rated_ids if c != ALL_BATTLES):
            boards.append(board(name, cid))
    return watermark, boards


def model_names(conn: Connection) -> dict[int, str]:
    """``models.id`` -> name, for every model."""
    return dict(conn.execute(select(Model.id, Model.name)).all())


def hidden_model_ids(conn: Connection) -> set[int]:
    """Ids of the models hidden from public boards."""
    return set(conn.execute(select(Model.id).where(Model.hidden.is_(True))).scalars())
