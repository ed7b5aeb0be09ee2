"""The count table (``battle_counts``): what a rebuild needs, kept beside the battles.

A rebuild needs, per board (all battles, and each category), the number of
battles in each ``(model_a, model_b, outcome, weight)`` cell -- a table that
grows with the number of pairs, not with the battles.  It is kept exact:

* every ingest adds its new battles to it in its own transaction, so it
  never differs from ``battles`` as any reader sees them: the writer counts
  each chunk's stored battles in memory (:class:`CountAccumulator`, numpy,
  on the row path and the column path alike) and merges the totals into the
  table before the commit (:meth:`CountAccumulator.flush`, an upsert, both
  engines).  Where the counts cannot be packed (ids beyond 2**24, thousands
  of distinct weights) it aggregates the new rows in SQL instead
  (:func:`add_battles`): slower, equally exact;
* ``arena db recount`` (:func:`arena.ingest.recount.recount`) makes it equal
  to the battles again in one transaction, after battles were changed by hand.

Ingest is the only code in arena that writes ``battles`` or
``battle_categories`` (hiding a model, retention and audits change neither;
nothing deletes battles).  :func:`arena.store.counts_unusable` says which
rebuild selections the table cannot answer (time windows, sources, judge
exclusions, cluster keys); those rebuilds read the battles, and
:func:`arena.store.read_count_boards` reads the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat

import numpy as np
from sqlalchemy import Connection, and_, func, literal, select

from arena.db.models import ALL_BATTLES, Battle, BattleCategory, BattleCount, Category
from arena.ingest.dialects import dialect_insert

_CELL = (Battle.model_a_id, Battle.model_b_id, Battle.outcome, Battle.weight)
_COLUMNS = ["category_id", "model_a_id", "model_b_id", "outcome", "weight", "rated", "n"]


def _aggregates(conds: list, category_ids: list[int] | None) -> list:
    """SELECTs of (category_id, cell, rated, count) over the battles meeting ``conds``:
    all battles first, then those of each category (of ``category_ids``, or all)."""
    rated = Battle.excluded_reason.is_(None)
    overall = (
        select(literal(ALL_BATTLES), *_CELL, rated, func.count())
        .where(and_(True, *conds))
        .group_by(*_CELL, rated)
    )
    link_conds = list(conds)
    if category_ids is not None:
        if not category_ids:
            return [overall]
        link_conds.append(BattleCategory.category_id.in_(category_ids))
    per_category = (
        select(BattleCategory.category_id, *_CELL, rated, func.count())
        .select_from(BattleCategory)
        .join(Battle, Battle.id == BattleCategory.battle_id)
        .where(and_(True, *link_conds))
        .group_by(BattleCategory.category_id, *_CELL, rated)
    )
    return [overall, per_category]


def add_battles(conn: Connection, *, first_id: int, last_id: int, batch_id: int) -> None:
    """Add the battles of one ingest batch (ids ``first_id..last_id``) to the counts.

    Set-wise, in the caller's transaction: one aggregation of the new rows per
    board kind, merged into the table with an upsert.  Category links are
    found by the (category, battle) primary key, one range per category.
    """
    if last_id < first_id:
        return
    conds = [Battle.id.between(first_id, last_id), Battle.batch_id == batch_id]
    category_ids = list(conn.execute(select(Category.id)).scalars())
    insert = dialect_insert(conn)
    for query in _aggregates(conds, category_ids):
        stmt = insert(BattleCount).from_select(_COLUMNS, query)
        stmt = stmt.on_conflict_do_update(
            index_elements=_COLUMNS[:-1], set_={"n": BattleCount.n + stmt.excluded.n}
        )
        conn.execute(stmt)


_OUTCOMES = ("a_wins", "b_wins", "tie", "tie_both_bad")
_OUTCOME_CODE = {name: code for code, name in enumerate(_OUTCOMES)}
#: bits of a packed key: model a, model b, outcome, not rated, weight index (63 in all)
_ID_BITS, _WEIGHT_BITS = 24, 12
_ID_LIMIT, _WEIGHT_LIMIT = 1 << _ID_BITS, 1 << _WEIGHT_BITS
#: merge the per-chunk counts once this many keys are pending (bounds memory)
_COMPACT_AT = 2_000_000


class CountAccumulator:
    """The battles one ingest stored, counted per (board, cell), merged at the end.

    Each cell is packed into one int64 (model ids < 2**24, up to 4096
    distinct weights), so a chunk costs a few vectorised numpy calls.  When a
    chunk does not fit, :attr:`exact` turns False and :meth:`flush` falls back
    to :func:`add_battles` (SQL over the new rows).
    """

    def __init__(self) -> None:
        self.weights: dict[float, int] = {1.0: 0}
        #: category id (ALL_BATTLES for all) -> [(keys, counts), ...]
        self.parts: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.pending = 0
        self.exact = True

    def _weight_index(self, weight: float) -> int:
        return self.weights.setdefault(weight, len(self.weights))

    def add(
        self,
        a_ids: Sequence[int],
        b_ids: Sequence[int],
        outcomes: Sequence[str],
        *,
        not_rated: Iterable[int] = (),
        weights: Sequence[float] | None = None,
        stored: np.ndarray | None = None,
        tags: Iterable[tuple[int, Sequence[int]]] = (),
    ) -> None:
        """One chunk: battle ``i`` is ``a_ids[i]`` vs ``b_ids[i]``; ``not_rated`` and the
        positions of each ``(category id, positions)`` tag index the chunk; only the
        battles where ``stored`` (a boolean mask, None = all) was true are counted."""
        if not self.exact:
            return
        n = len(a_ids)
        a = np.fromiter(a_ids, dtype=np.int64, count=n)
        b = np.fromiter(b_ids, dtype=np.int64, count=n)
        if n and max(a.max(), b.max()) >= _ID_LIMIT:
            self.exact = False
            return
        key = (a << _ID_BITS | b) << 2 | np.fromiter(
            map(_OUTCOME_CODE.__getitem__, outcomes), dtype=np.int64, count=n
        )
        flag = np.zeros(n, dtype=np.int64)
        flag[list(not_rated)] = 1
        key = (key << 1 | flag) << _WEIGHT_BITS
        if weights is not None:
            key |= np.fromiter(map(self._weight_index, weights), dtype=np.int64, count=n)
            if len(self.weights) > _WEIGHT_LIMIT:
                self.exact = False
                return
        self._add(ALL_BATTLES, key if stored is None else key[stored])
        for category_id, positions in tags:
            pos = np.fromiter(positions, dtype=np.intp, count=len(positions))
            self._add(category_id, key[pos] if stored is None else key[pos[stored[pos]]])
        if self.pending > _COMPACT_AT:
            self._compact()

    def _add(self, category_id: int, keys: np.ndarray) -> None:
        """Keep a chunk's keys as they are (one battle each); merged by :meth:`_compact`."""
        if keys.size:
            self.parts.setdefault(category_id, []).append((keys, np.ones(keys.size, np.int64)))
            self.pending += keys.size

    def _compact(self) -> None:
        """Merge each board's pending keys: one sort, then sums over runs of equal keys."""
        for category_id, parts in self.parts.items():
            if len(parts) == 1 and self.pending == 0:
                continue  # merged already
            keys = np.concatenate([k for k, _ in parts])
            counts = np.concatenate([c for _, c in parts])
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            self.parts[category_id] = [(keys[starts], np.add.reduceat(counts[order], starts))]
        self.pending = 0

    def rows(self) -> list[tuple]:
        """The merged counts as ``battle_counts`` rows."""
        self._compact()
        weight_of = np.array(sorted(self.weights, key=self.weights.__getitem__))
        out: list[tuple] = []
        for category_id, parts in self.parts.items():
            for keys, counts in parts:
                w = weight_of[keys & (_WEIGHT_LIMIT - 1)].tolist()
                keys = keys >> _WEIGHT_BITS
                rated = (keys & 1 == 0).tolist()
                keys = keys >> 1
                outcome = [_OUTCOMES[o] for o in (keys & 3).tolist()]
                keys = keys >> 2
                b = (keys & (_ID_LIMIT - 1)).tolist()
                a = (keys >> _ID_BITS).tolist()
                out.extend(
                    zip(repeat(category_id), a, b, outcome, w, rated, counts.tolist(), strict=False)
                )
        return out

    def flush(self, conn: Connection, merge, **battles) -> None:
        """Merge into ``battle_counts`` in the caller's transaction.

        ``merge(rows)`` is the engine's upsert (``merge_counts`` of
        :mod:`arena.ingest.dialects`); ``battles``: the arguments of
        :func:`add_battles`, used when the counts could not be packed.
        """
        if not self.exact:
            add_battles(conn, **battles)
            return
        rows = self.rows()
        if rows:
            merge(rows)
