"""The count table (``battle_counts``): what a rebuild needs, kept beside the battles.

A rebuild needs, per board (all battles, and each category), the number of
battles in each ``(model_a, model_b, outcome, weight)`` cell -- a table that
grows with the number of pairs, not with the battles.  It is kept exact:

* every ingest adds its new battles to it in its own transaction
  (:func:`add_battles`, called by :meth:`BattleWriter.finish
  <arena.ingest.writer.BattleWriter.finish>` on the row path and the column
  path alike, both engines), so it never differs from ``battles`` as any
  reader sees them;
* ``arena db recount`` (:func:`recount`) rebuilds it from the battles in one
  transaction, e.g. after battles were changed by hand in SQL.

Ingest is the only code in arena that writes ``battles`` or
``battle_categories`` (hiding a model, retention and audits change neither;
nothing deletes battles).  :func:`arena.store.counts_unusable` says which
rebuild selections the table cannot answer (time windows, sources, judge
exclusions, cluster keys); those rebuilds read the battles, and
:func:`arena.store.read_count_boards` reads the table.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, and_, delete, func, literal, select

from arena.db.models import ALL_BATTLES, Battle, BattleCategory, BattleCount, Category
from arena.ingest.dialects import dialect_insert, hold_battle_ids

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


def recount(conn: Connection, progress: Callable[[str], None] | None = None) -> int:
    """Rebuild the count table from the battles in the caller's transaction; returns its rows."""
    say = progress or (lambda _msg: None)
    if conn.dialect.name == "postgresql":
        # no ingest between the DELETE and the INSERT (SQLite: the caller's write lock)
        hold_battle_ids(conn, "an ingest")
    say("recount: clearing the count table")
    conn.execute(delete(BattleCount))
    for kind, query in zip(("all battles", "categories"), _aggregates([], None), strict=True):
        say(f"recount: counting {kind}")
        conn.execute(BattleCount.__table__.insert().from_select(_COLUMNS, query))
    return conn.execute(select(func.count()).select_from(BattleCount)).scalar_one()
