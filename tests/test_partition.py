"""PostgreSQL: the battles table partitioned by RANGE (id), as docs/scale.md describes,
takes ingests and rebuilds like the plain table."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.schema import AddConstraint, CreateIndex, CreateTable, DropConstraint

from arena.db.models import Battle, BattleCategory, BattleCovariate, BattleStyle
from arena.db.session import open_engine
from tests.test_counts import counts, csv_rows, jsonl, leaderboards, recounted
from tests.test_ingest import write_csv

BOUND = 250  # battle ids below go to battles_p0, the rest to battles_p1


def partition_battles(url: str) -> None:
    """Replace ``battles`` with a table partitioned by id range, built from the metadata DDL."""
    engine = open_engine(url)
    referencing = [
        fk
        for table in (BattleCategory, BattleStyle, BattleCovariate)
        for fk in table.__table__.foreign_key_constraints
        if fk.referred_table is Battle.__table__
    ]
    with engine.begin() as conn:
        for fk in referencing:
            conn.execute(DropConstraint(fk))
        conn.execute(text("DROP TABLE battles"))
        ddl = str(CreateTable(Battle.__table__).compile(dialect=conn.dialect)).strip()
        conn.exec_driver_sql(f"{ddl} PARTITION BY RANGE (id)")
        conn.exec_driver_sql(
            f"CREATE TABLE battles_p0 PARTITION OF battles FOR VALUES FROM (MINVALUE) TO ({BOUND})"
        )
        conn.exec_driver_sql(
            f"CREATE TABLE battles_p1 PARTITION OF battles FOR VALUES FROM ({BOUND}) TO (MAXVALUE)"
        )
        for index in Battle.__table__.indexes:
            if index.unique:
                # a unique index of a partitioned table must hold the partition key
                conn.exec_driver_sql(
                    f"CREATE UNIQUE INDEX {index.name} ON battles (external_id, id)"
                )
            else:
                conn.execute(CreateIndex(index))
        for fk in referencing:
            conn.execute(AddConstraint(fk))
    engine.dispose()


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_partitioned_battles_ingest_and_rebuild(db_url, run_cli, tmp_path):
    partition_battles(db_url)
    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    run_cli("ingest", write_csv(tmp_path / "a.csv", header, csv_rows(11, 200, "a")))
    run_cli("ingest", jsonl(tmp_path / "b.jsonl", 12, 150, "b"))
    engine = open_engine(db_url)
    with engine.connect() as conn:
        assert (
            conn.exec_driver_sql(
                "SELECT relkind FROM pg_class WHERE relname = 'battles' "
                "AND relnamespace = current_schema()::regnamespace"
            ).scalar()
            == "p"
        )
        p0 = conn.exec_driver_sql("SELECT count(*) FROM battles_p0").scalar()
        p1 = conn.exec_driver_sql("SELECT count(*) FROM battles_p1").scalar()
    engine.dispose()
    assert (p0, p1) == (BOUND - 1, 350 - (BOUND - 1))
    kept = counts(db_url)
    assert recounted(run_cli, db_url) == kept
    from_counts = leaderboards(run_cli, "counts")
    assert from_counts == leaderboards(run_cli, "battles") and len(from_counts) >= 3
