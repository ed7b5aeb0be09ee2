"""``arena db recount``: the tables derived from the battles, made equal to them again.

Every ingest keeps two tables in step with ``battles`` in its own transaction:
the count table (:mod:`arena.ingest.counts`) and ``battle_keys`` (external id ->
battle id, the de-duplication).  Only battles changed by hand in SQL can put
them out of step; :func:`recount` repairs both in the caller's transaction:

* counts: the aggregates go to a temporary table, and only the differences
  are written (cells whose count changed, vanished cells, new cells).  The old
  way, DELETE then INSERT of every cell, left a dead copy of each row on
  PostgreSQL: 269,100 cells took 75 MB instead of 38, and a plain VACUUM
  cannot hand that back, since the live copies sit at the end of the file;
* keys: keys whose battle is gone are dropped (else re-ingesting that battle
  is refused), battles with an external id but no key get one.

:func:`vacuum_after_recount` then runs ``VACUUM (ANALYZE)`` on PostgreSQL,
after the commit (VACUUM cannot run in a transaction): the few dead rows of
the changed cells are reclaimed and the planner's statistics are fresh.
SQLite needs nothing: a deleted row's page space is reused in place, and a
VACUUM there would rewrite the whole database file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Column, Connection, Engine, MetaData, Table, func, select
from sqlalchemy.types import BigInteger, Boolean, Float, Integer, String

from arena.db.models import BattleCount
from arena.ingest.counts import COUNT_COLUMNS, count_aggregates
from arena.ingest.dialects import hold_battle_ids


def _match(table: str) -> str:
    """A recounted cell ``r`` is the cell of ``table``: the key columns are equal."""
    return " AND ".join(f"r.{c} = {table}.{c}" for c in COUNT_COLUMNS[:-1])


# the recounted cells, keyed like battle_counts (SQLite looks cells up by its key)
_STAGE = Table(
    "arena_recount",
    MetaData(),
    Column("category_id", Integer, primary_key=True),
    Column("model_a_id", Integer, primary_key=True),
    Column("model_b_id", Integer, primary_key=True),
    Column("outcome", String(16), primary_key=True),
    Column("weight", Float, primary_key=True),
    Column("rated", Boolean, primary_key=True),
    Column("n", BigInteger),
    prefixes=["TEMPORARY"],
    sqlite_with_rowid=False,
)


@dataclass
class Recount:
    """What :func:`recount` found and changed."""

    #: rows of the count table after the recount
    cells: int
    #: cells whose count was wrong, missing or had no battles left
    changed: int
    #: keys of battles no longer stored, dropped
    keys_dropped: int
    #: battles with an external id and no key, given one (unless another battle has it)
    keys_added: int


def recount(conn: Connection, progress: Callable[[str], None] | None = None) -> Recount:
    """Make the count table and ``battle_keys`` equal to the battles, in the caller's
    transaction (PostgreSQL: under the ingest lock, so no ingest runs in between)."""
    say = progress or (lambda _msg: None)
    pg = conn.dialect.name == "postgresql"
    if pg:
        hold_battle_ids(conn, "an ingest")
    _STAGE.create(conn)
    for kind, query in zip(("all battles", "categories"), count_aggregates([], None), strict=True):
        say(f"recount: counting {kind}")
        conn.execute(_STAGE.insert().from_select(COUNT_COLUMNS, query))
    say("recount: writing the cells that differ")
    changed = conn.exec_driver_sql(
        f"DELETE FROM battle_counts WHERE NOT EXISTS (SELECT 1 FROM arena_recount r "
        f"WHERE {_match('battle_counts')})"
    ).rowcount
    if pg:
        update = (
            f"UPDATE battle_counts c SET n = r.n FROM arena_recount r WHERE {_match('c')} "
            "AND c.n <> r.n"
        )
    else:  # no UPDATE ... FROM before SQLite 3.33: a lookup by the stage's key
        match = _match("battle_counts")
        update = (
            f"UPDATE battle_counts SET n = (SELECT r.n FROM arena_recount r WHERE {match}) "
            f"WHERE EXISTS (SELECT 1 FROM arena_recount r WHERE {match} "
            "AND r.n <> battle_counts.n)"
        )
    changed += conn.exec_driver_sql(update).rowcount
    columns = ", ".join(COUNT_COLUMNS)
    changed += conn.exec_driver_sql(
        f"INSERT INTO battle_counts ({columns}) SELECT {columns} FROM arena_recount r "
        f"WHERE NOT EXISTS (SELECT 1 FROM battle_counts c WHERE {_match('c')})"
    ).rowcount
    _STAGE.drop(conn)
    say("recount: checking battle keys")
    # a key is right if its battle is stored with that external id (SQLite may give
    # the id of a battle deleted by hand to a new one)
    dropped = conn.exec_driver_sql(
        "DELETE FROM battle_keys WHERE NOT EXISTS (SELECT 1 FROM battles b "
        "WHERE b.id = battle_keys.battle_id AND b.external_id = battle_keys.external_id)"
    ).rowcount
    added = conn.exec_driver_sql(  # two battles by hand with one external id: the first
        "INSERT INTO battle_keys (external_id, battle_id) SELECT b.external_id, min(b.id) "
        "FROM battles b WHERE b.external_id IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM battle_keys k WHERE k.external_id = b.external_id) "
        "GROUP BY b.external_id"
    ).rowcount
    cells = conn.execute(select(func.count()).select_from(BattleCount)).scalar_one()
    return Recount(cells, changed, dropped, added)


def vacuum_after_recount(engine: Engine) -> None:
    """PostgreSQL: ``VACUUM (ANALYZE)`` the tables a recount wrote (after its commit)."""
    if engine.dialect.name != "postgresql":
        return
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM (ANALYZE) battle_counts, battle_keys")
