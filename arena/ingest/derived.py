"""Derived categories, write side: a rule stored and every battle it matches linked.

The rules themselves (what a derived category is, how a battle's tags match
one) are :mod:`arena.store.derived`; defining or dropping one writes battle
links and count-table cells, which is the ingest side's job (the same tables
an ingest keeps current, under the same hold on new battle ids).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqlalchemy import Connection, Integer, delete, func, literal, select

from arena.core.words import unknown
from arena.db.models import BattleCategory, BattleCount, Category, DerivedCategory
from arena.ingest.counts import COUNT_COLUMNS, count_aggregates
from arena.ingest.dialects import hold_battle_ids
from arena.store.derived import DerivedError, Rule, load_rules

__all__ = ["Defined", "define", "drop"]


@dataclass(frozen=True)
class Defined:
    """What :func:`define` stored: the rule and the battles now in its category."""

    rule: Rule
    battles: int
    replaced: bool


def define(conn: Connection, rule: Rule) -> Defined:
    """Store ``rule`` (replacing one of the same key) and link every stored battle it
    matches, with the count table's cells of that category, in the caller's transaction.

    Raises :class:`DerivedError` when ``rule.key`` is a tag that ingested battles
    carry (a derived category would overwrite what the data says).
    """
    if conn.dialect.name == "postgresql":
        hold_battle_ids(conn, "an ingest")  # no ingest adds battles between the two steps
    old = conn.execute(select(DerivedCategory.name).where(DerivedCategory.name == rule.key)).first()
    cid = conn.execute(select(Category.id).where(Category.name == rule.key)).scalar()
    if cid is not None and old is None:
        tagged = conn.execute(
            select(func.count())
            .select_from(BattleCategory)
            .where(BattleCategory.category_id == cid)
        ).scalar()
        if tagged:
            raise DerivedError(
                f"{rule.key!r} is a category of {tagged:,} ingested battles; "
                "give the derived category another name"
            )
    if cid is None:
        inserted = conn.execute(Category.__table__.insert().values(name=rule.key))
        key = inserted.inserted_primary_key
        assert key is not None  # a single-row INSERT
        cid = key[0]
    conn.execute(delete(BattleCategory).where(BattleCategory.category_id == cid))
    conn.execute(delete(BattleCount).where(BattleCount.category_id == cid))
    conn.execute(delete(DerivedCategory).where(DerivedCategory.name == rule.key))
    conn.execute(
        DerivedCategory.__table__.insert().values(
            name=rule.key, tags=json.dumps(list(rule.tags)), at_least=rule.at_least, note=rule.note
        )
    )
    tag_ids = select(Category.id).where(Category.name.in_(rule.tags))
    matching = (
        select(BattleCategory.battle_id)
        .where(BattleCategory.category_id.in_(tag_ids))
        .group_by(BattleCategory.battle_id)
        .having(func.count() >= rule.at_least)
    )
    conn.execute(
        BattleCategory.__table__.insert().from_select(
            ["category_id", "battle_id"],
            select(literal(cid, Integer), matching.subquery().c.battle_id),
        )
    )
    # the count table's cells of the new category (it had none: deleted above)
    per_category = count_aggregates([], [cid])[1]
    conn.execute(BattleCount.__table__.insert().from_select(COUNT_COLUMNS, per_category))
    n = conn.execute(
        select(func.count()).select_from(BattleCategory).where(BattleCategory.category_id == cid)
    ).scalar_one()
    return Defined(rule=rule, battles=int(n), replaced=old is not None)


def drop(conn: Connection, key: str) -> None:
    """Forget the rule of ``key``, its links and its counts (its snapshots stay)."""
    known = [r.key for r in load_rules(conn)]
    if key not in known:
        raise DerivedError(unknown("derived category", key, known, list_known=True))
    cid = conn.execute(select(Category.id).where(Category.name == key)).scalar()
    if cid is not None:
        conn.execute(delete(BattleCategory).where(BattleCategory.category_id == cid))
        conn.execute(delete(BattleCount).where(BattleCount.category_id == cid))
    conn.execute(delete(DerivedCategory).where(DerivedCategory.name == key))
