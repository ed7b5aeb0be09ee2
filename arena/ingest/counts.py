"""The count table (``battle_counts``): what a rebuild needs, kept beside the battles.

A rebuild needs, per board (all battles, and each category), the number of
battles in each ``(model_a, model_b, outcome, weight)`` cell -- a table that
grows with the number of pairs, not with the battles.  It is kept exact:

* every ingest adds its new battles to it in its own transaction, so it
  never differs from ``battles`` as any reader sees them: the writer counts
  each chunk's stored battles in memory (:class:`CountAccumulator`: a
  Counter, numpy past 200k battles; on the row path and the column path
  alike) and merges the totals into the table before the commit (:meth:`CountAccumulator.flush`, an upsert, both
  engines).  Where the counts cannot be packed (ids beyond 2**24, thousands
  of distinct weights) it aggregates the new rows in SQL instead
  (:func:`add_battles`): slower, equally exact;
* ``arena db recount`` (:func:`arena.ingest.recount.recount`) makes it equal
  to the battles again in one transaction, after battles were changed by hand.

Ingest is the only code in arena that writes ``battles`` or
``battle_categories`` (hiding a model, retention and audits change neither;
nothing deletes battles).  :func:`arena.store.read.counts_unusable` says which
rebuild selections the table cannot answer (time windows, sources, judge
exclusions, cluster keys); those rebuilds read the battles, and
:func:`arena.store.read.read_count_boards` reads the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, repeat
from operator import and_ as bit_and
from operator import lshift, rshift
from operator import or_ as bit_or
from types import ModuleType
from typing import Any

from sqlalchemy import Connection, and_, func, literal, select

from arena.db.models import Battle, BattleCategory, BattleCount, Category
from arena.db.tables import ALL_BATTLES
from arena.ingest.dialects import dialect_insert

_CELL = (Battle.model_a_id, Battle.model_b_id, Battle.outcome, Battle.weight)
COUNT_COLUMNS = ["category_id", "model_a_id", "model_b_id", "outcome", "weight", "rated", "n"]


def count_aggregates(conds: list[Any], category_ids: list[int] | None) -> list[Any]:
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
    for query in count_aggregates(conds, category_ids):
        stmt = insert(BattleCount).from_select(COUNT_COLUMNS, query)
        stmt = stmt.on_conflict_do_update(
            index_elements=COUNT_COLUMNS[:-1], set_={"n": BattleCount.n + stmt.excluded.n}
        )
        conn.execute(stmt)


_OUTCOMES = ("a_wins", "b_wins", "tie", "tie_both_bad")
#: bits of a packed cell, low to high: weight index, not rated, outcome, model b, model a
_ID_BITS, _WEIGHT_BITS = 24, 12
_ID_LIMIT, _WEIGHT_LIMIT = 1 << _ID_BITS, 1 << _WEIGHT_BITS
_ID_MASK = (1 << _ID_BITS) - 1
_NOT_RATED = 1 << _WEIGHT_BITS
#: the bits shared by every cell of one merge group (weight index and rating flag)
_GROUP_MASK = (_NOT_RATED << 1) - 1
_OUTCOME_SHIFT = _WEIGHT_BITS + 1
_B_SHIFT = _OUTCOME_SHIFT + 2
_A_SHIFT = _B_SHIFT + _ID_BITS
_OUTCOME_BITS = {name: code << _OUTCOME_SHIFT for code, name in enumerate(_OUTCOMES)}
#: battles counted with a Counter before numpy takes over: importing numpy costs
#: ~0.13 s (a tenth of a 135k-row ingest); a Counter costs 0.15-0.4 us a battle more
_NUMPY_AT = 200_000
#: numpy mode: merge the per-chunk keys once this many are pending (bounds memory)
_COMPACT_AT = 2_000_000


class CountAccumulator:
    """The battles one ingest stored, counted per (board, cell), merged at the end.

    Each cell is packed into one integer below 2**63 (model ids < 2**24, up to
    4096 distinct weights).  The first :data:`_NUMPY_AT` battles are counted in
    a :class:`~collections.Counter` per board (C-level ``map`` and ``update``,
    no numpy: a nightly file never pays numpy's import); a larger ingest moves
    the counts into numpy arrays and counts each chunk with a few vectorised
    calls.  When a chunk does not fit, :attr:`exact` turns False and
    :meth:`flush` falls back to :func:`add_battles` (SQL over the new rows).
    """

    def __init__(self) -> None:
        self.weights: dict[float, int] = {1.0: 0}
        #: Counter mode: category id (ALL_BATTLES for all) -> packed cell -> battles
        self.tallies: dict[int, Counter[int]] = {}
        #: numpy mode (``self.np`` set): category id -> [(keys, counts or None), ...]
        self.parts: dict[int, list[Any]] = {}
        self.np: ModuleType | None = None
        self.counted = 0
        self.pending = 0
        self.exact = True

    def expect(self, rows: float) -> None:
        """The file should hold about ``rows`` battles (the loader's estimate from its
        first block): a large one goes to numpy at once (a Counter of many cells
        costs ~0.6 us a battle, numpy ~0.2 us)."""
        if rows > _NUMPY_AT and self.np is None:
            self._to_numpy()

    def add(
        self,
        a_ids: Sequence[int],
        b_ids: Sequence[int],
        outcomes: Sequence[str],
        *,
        not_rated: Sequence[int] = (),
        weights: Sequence[float] | None = None,
        stored: Sequence[bool] | None = None,
        tags: Iterable[tuple[int, Sequence[int]]] = (),
    ) -> None:
        """One chunk: battle ``i`` is ``a_ids[i]`` vs ``b_ids[i]``; ``not_rated`` and the
        positions of each ``(category id, positions)`` tag index the chunk; only the
        battles where ``stored`` (one bool a battle, None = all) was true are counted."""
        if not self.exact or not a_ids:
            return
        if weights is not None:
            for w in set(weights):
                self.weights.setdefault(w, len(self.weights))
            if len(self.weights) > _WEIGHT_LIMIT:
                self.exact = False
                return
        self.counted += len(a_ids)
        if self.np is None and self.counted > _NUMPY_AT:
            self._to_numpy()
        add = self._add_counter if self.np is None else self._add_numpy
        if not add(a_ids, b_ids, outcomes, not_rated, weights, stored, tags):
            self.exact = False  # a model id beyond the packed key's range

    def _add_counter(
        self,
        a_ids: Sequence[int],
        b_ids: Sequence[int],
        outcomes: Sequence[str],
        not_rated: Sequence[int],
        weights: Sequence[float] | None,
        stored: Sequence[bool] | None,
        tags: Iterable[tuple[int, Sequence[int]]],
    ) -> bool:
        """Pack each battle's cell with C-level maps; one ``Counter.update`` per board."""
        if max(max(a_ids), max(b_ids)) >= _ID_LIMIT:
            return False
        packed = map(
            bit_or,
            map(bit_or, map(lshift, a_ids, repeat(_A_SHIFT)), map(lshift, b_ids, repeat(_B_SHIFT))),
            map(_OUTCOME_BITS.__getitem__, outcomes),
        )
        if weights is not None:
            packed = map(bit_or, packed, map(self.weights.__getitem__, weights))
        keys = list(packed)
        for pos in not_rated:
            keys[pos] |= _NOT_RATED
        tally = self.tallies.setdefault(ALL_BATTLES, Counter())
        tally.update(keys if stored is None else compress(keys, stored))
        for category_id, positions in tags:
            kept: Iterable[int] = positions
            if stored is not None:
                kept = compress(positions, map(stored.__getitem__, positions))
            tally = self.tallies.setdefault(category_id, Counter())
            tally.update(map(keys.__getitem__, kept))
        return True

    def _to_numpy(self) -> None:
        """Move the Counter totals into numpy arrays (a large ingest)."""
        import numpy as np  # only here: most ingests never need it

        self.np = np
        for category_id, tally in self.tallies.items():
            n = len(tally)
            keys = np.fromiter(tally.keys(), dtype=np.int64, count=n)
            counts = np.fromiter(tally.values(), dtype=np.int64, count=n)
            order = np.argsort(keys)
            self.parts[category_id] = [(keys[order], counts[order])]
        self.tallies = {}

    def _add_numpy(
        self,
        a_ids: Sequence[int],
        b_ids: Sequence[int],
        outcomes: Sequence[str],
        not_rated: Sequence[int],
        weights: Sequence[float] | None,
        stored: Sequence[bool] | None,
        tags: Iterable[tuple[int, Sequence[int]]],
    ) -> bool:
        np = self.np
        assert np is not None  # numpy mode
        n = len(a_ids)
        a = np.fromiter(a_ids, dtype=np.int64, count=n)
        b = np.fromiter(b_ids, dtype=np.int64, count=n)
        if max(a.max(), b.max()) >= _ID_LIMIT:
            return False
        key = (a << _A_SHIFT) | (b << _B_SHIFT)
        key |= np.fromiter(map(_OUTCOME_BITS.__getitem__, outcomes), dtype=np.int64, count=n)
        if weights is not None:
            key |= np.fromiter(map(self.weights.__getitem__, weights), dtype=np.int64, count=n)
        if not_rated:
            key[list(not_rated)] |= _NOT_RATED
        mask = None if stored is None else np.fromiter(stored, dtype=bool, count=n)
        self._add_keys(ALL_BATTLES, key if mask is None else key[mask])
        for category_id, positions in tags:
            pos = np.fromiter(positions, dtype=np.intp, count=len(positions))
            self._add_keys(category_id, key[pos] if mask is None else key[pos[mask[pos]]])
        if self.pending > _COMPACT_AT:
            self._compact()
        return True

    def _add_keys(self, category_id: int, keys: Any) -> None:
        """Keep a chunk's keys as they are (one battle each); merged by :meth:`_compact`."""
        if keys.size:
            self.parts.setdefault(category_id, []).append((keys, None))
            self.pending += keys.size

    def _compact(self) -> None:
        """Merge each board's pending keys: one sort and run lengths, then the sorted
        merge with the board's earlier totals (one array per board afterwards)."""
        np = self.np
        assert np is not None  # numpy mode
        for category_id, parts in self.parts.items():
            raw = [k for k, c in parts if c is None]
            if not raw:
                continue  # merged already
            keys = np.sort(np.concatenate(raw))
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            keys, counts = keys[starts], np.diff(np.r_[starts, keys.size])
            for old_keys, old_counts in (p for p in parts if p[1] is not None):
                keys = np.concatenate([old_keys, keys])
                counts = np.concatenate([old_counts, counts])
                order = np.argsort(keys, kind="stable")
                keys, counts = keys[order], counts[order]
                starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
                keys, counts = keys[starts], np.add.reduceat(counts, starts)
            self.parts[category_id] = [(keys, counts)]
        self.pending = 0

    def groups(self) -> list[tuple[Any, ...]]:
        """The merged counts as ``battle_counts`` columns, one group per board, weight
        and rating flag: ``(category_id, weight, rated, a_ids, b_ids, outcomes, n)``,
        each group's cells in key order (the table's primary-key order)."""
        weight_of = sorted(self.weights, key=self.weights.__getitem__)
        out = []
        for category_id, low, keys, counts in self._groups():
            out.append(
                (category_id, weight_of[low & (_WEIGHT_LIMIT - 1)], not (low & _NOT_RATED))
                + _decode(keys, counts)
            )
        return out

    def _groups(self) -> Iterator[tuple[int, int, Any, Any]]:
        """(category id, low bits, keys, counts) of each group, keys sorted."""
        if self.np is None:
            for category_id, tally in self.tallies.items():
                if not tally:
                    continue  # a category none of whose battles was stored
                keys = sorted(tally)
                counts = list(map(tally.__getitem__, keys))
                for low, (k, n) in _split(keys, counts).items():
                    yield category_id, low, k, n
            return
        self._compact()
        for category_id, [(keys, counts)] in self.parts.items():
            low = keys & _GROUP_MASK
            if not low.any():
                yield category_id, 0, keys, counts
                continue
            for group in self.np.unique(low).tolist():
                sel = low == group
                yield category_id, group, keys[sel], counts[sel]

    def flush(
        self, conn: Connection, merge: Callable[[list[tuple[Any, ...]]], None], **battles: Any
    ) -> None:
        """Merge into ``battle_counts`` in the caller's transaction.

        ``merge(groups)`` is the engine's upsert (``merge_counts`` of
        :mod:`arena.ingest.dialects`) of :meth:`groups`; ``battles``: the
        arguments of :func:`add_battles`, used when the counts could not be packed.
        """
        if not self.exact:
            add_battles(conn, **battles)
            return
        groups = self.groups()
        if groups:
            merge(groups)


def _decode(keys: Any, counts: Any) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """Model a, model b, outcome and count columns of packed cells (lists, or numpy
    arrays: shifted as whole arrays, then made lists)."""
    if not isinstance(keys, list):
        return (
            (keys >> _A_SHIFT).tolist(),
            ((keys >> _B_SHIFT) & _ID_MASK).tolist(),
            list(map(_OUTCOMES.__getitem__, ((keys >> _OUTCOME_SHIFT) & 3).tolist())),
            counts.tolist(),
        )
    b = map(bit_and, map(rshift, keys, repeat(_B_SHIFT)), repeat(_ID_MASK))
    outcome = map(bit_and, map(rshift, keys, repeat(_OUTCOME_SHIFT)), repeat(3))
    return (
        list(map(rshift, keys, repeat(_A_SHIFT))),
        list(b),
        list(map(_OUTCOMES.__getitem__, outcome)),
        counts,
    )


def _split(keys: list[int], counts: list[int]) -> dict[int, tuple[list[int], list[int]]]:
    """Sorted cells by their low bits (weight index and rating flag), order kept."""
    low = list(map(bit_and, keys, repeat(_GROUP_MASK)))
    if not any(low):
        return {0: (keys, counts)}
    out: dict[int, tuple[list[int], list[int]]] = {}
    for key, n, group in zip(keys, counts, low, strict=True):
        k, c = out.setdefault(group, ([], []))
        k.append(key)
        c.append(n)
    return out
