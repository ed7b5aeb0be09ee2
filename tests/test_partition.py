"""PostgreSQL: the battles table partitioned by RANGE (id), or by time (ingest time or
event time) as docs/scale.md describes, takes ingests and rebuilds like the plain table,
and de-duplicates external ids across partitions exactly as the plain table does."""

from __future__ import annotations

import json
import random
import re

import pytest
from sqlalchemy import text
from sqlalchemy.schema import AddConstraint, CreateIndex, CreateTable, DropConstraint

from arena.db.models import Battle, BattleCategory, BattleCovariate, BattleStyle
from arena.db.session import open_engine
from tests.helpers.cli import cli_for
from tests.helpers.db import counts, leaderboards, recounted
from tests.helpers.files import csv_rows, weighted_jsonl, write_csv
from tests.helpers.postgres import pg_schema

pytestmark = pytest.mark.slow  # partitioned PostgreSQL tables, several ingests and rebuilds

BOUND = 250  # battle ids below go to battles_p0, the rest to battles_p1
#: the tables whose battle_id references battles(id) (a time-partitioned table has no unique id)
REFERENCING = ("battle_categories", "battle_style", "battle_covariates")
HEADER = ["id", "model_a", "model_b", "winner", "tstamp", "math", "creative"]
MODELS = ["m0", "m1", "m2", "m3", "m4", "m5"]
#: the event-time partition bound: half the battles of each file fall before it
EVENT_BOUND = "2024-07-01"


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
        for index in Battle.__table__.indexes:  # no unique one: battle_keys holds it
            conn.execute(CreateIndex(index))
        for fk in referencing:
            conn.execute(AddConstraint(fk))
    engine.dispose()


def time_partition_sql(key: str, bound: str) -> list[str]:
    """docs/scale.md's procedure: ``battles`` partitioned by RANGE (``key``), where ``key``
    is ``ingested_at`` (a new column: the ingest's time) or ``occurred_at`` (event time)."""
    ingest_time = key == "ingested_at"
    column = ", ingested_at TIMESTAMPTZ NOT NULL DEFAULT now()" if ingest_time else ""
    rows = (
        "b.*, i.started_at FROM battles_old b JOIN ingest_batches i ON i.id = b.batch_id"
        if ingest_time
        else "* FROM battles_old"
    )
    return [
        *(f"ALTER TABLE {t} DROP CONSTRAINT fk_{t}_battle_id_battles" for t in REFERENCING),
        "ALTER TABLE battles RENAME TO battles_old",
        "ALTER INDEX pk_battles RENAME TO pk_battles_old",
        "ALTER INDEX ix_battles_pair_outcome RENAME TO ix_battles_pair_outcome_old",
        "CREATE TABLE battles (LIKE battles_old INCLUDING DEFAULTS INCLUDING CONSTRAINTS"
        f"{column}, CONSTRAINT pk_battles PRIMARY KEY (id, {key})) PARTITION BY RANGE ({key})",
        "ALTER SEQUENCE battles_id_seq OWNED BY battles.id",
        f"CREATE TABLE battles_p0 PARTITION OF battles FOR VALUES FROM (MINVALUE) TO ('{bound}')",
        f"CREATE TABLE battles_p1 PARTITION OF battles FOR VALUES FROM ('{bound}') TO (MAXVALUE)",
        f"INSERT INTO battles SELECT {rows}",
        "CREATE INDEX ix_battles_pair_outcome ON battles (model_a_id, model_b_id, outcome, "
        "weight) INCLUDE (id) WHERE excluded_reason IS NULL",
        *(
            f"ALTER TABLE battles ADD CONSTRAINT fk_battles_{c}_{t} FOREIGN KEY ({c}) "
            f"REFERENCES {t} (id)"
            for c, t in (
                ("model_a_id", "models"),
                ("model_b_id", "models"),
                ("batch_id", "ingest_batches"),
            )
        ),
        "DROP TABLE battles_old",
    ]


def partition_by_time(url: str, key: str) -> str:
    """Convert ``battles`` (see :func:`time_partition_sql`); returns the partition bound:
    the conversion's time for ingest time, so what is stored goes to battles_p0."""
    engine = open_engine(url)
    with engine.begin() as conn:
        bound = (
            conn.exec_driver_sql("SELECT clock_timestamp()::text").scalar()
            if key == "ingested_at"
            else EVENT_BOUND
        )
        for statement in time_partition_sql(key, bound):
            conn.exec_driver_sql(statement)
    engine.dispose()
    return bound


def rows_with_time(seed: int, n: int, prefix: str) -> list[list[str]]:
    """Tagged battles with an event time in June or July 2024 (row path: tstamp)."""
    rng = random.Random(seed)
    return [
        [
            f"{prefix}{i}",
            *rng.sample(MODELS, 2),
            rng.choice(["model_a", "model_b", "tie"]),
            f"2024-{rng.choice(['06', '07'])}-{rng.randint(1, 28):02d}T12:00:00Z",
            str(rng.random() < 0.4),
            str(rng.random() < 0.3),
        ]
        for i in range(n)
    ]


def overlapping_jsonl(path, first: list[list[str]]) -> str:
    """Row path: 100 new battles, 40 re-sent from the first file (duplicates), 5 of its
    ids with other content (conflicts) and one id twice (a repeat): all rejected or
    skipped the same way on any store."""

    def record(r: list[str]) -> dict:
        return {**dict(zip(HEADER[:5], r[:5], strict=True)), "math": r[5] == "True"}

    records = [record(r) for r in rows_with_time(8, 100, "b") + first[:40]]
    records += [record([r[0], r[2], r[1], *r[3:]]) for r in first[40:45]]
    records.append(dict(records[0]))
    with open(path, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    return str(path)


def store_of(url: str) -> list[tuple]:
    """Every stored battle: external id, models, outcome, time, and its categories."""
    engine = open_engine(url)
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT b.external_id, ma.name, mb.name, b.outcome, b.occurred_at, "
            "(SELECT string_agg(c.name, ',' ORDER BY c.name) FROM battle_categories bc "
            "JOIN categories c ON c.id = bc.category_id WHERE bc.battle_id = b.id) "
            "FROM battles b JOIN models ma ON ma.id = b.model_a_id "
            "JOIN models mb ON mb.id = b.model_b_id ORDER BY b.external_id"
        ).all()
        keys = conn.exec_driver_sql(
            "SELECT count(*) FROM battle_keys k JOIN battles b ON b.id = k.battle_id "
            "AND b.external_id = k.external_id"
        ).scalar()
    engine.dispose()
    assert keys == len(rows)  # every battle has its key, pointing at it
    return [tuple(r) for r in rows]


def partition_sizes(url: str) -> tuple[int, int]:
    engine = open_engine(url)
    with engine.connect() as conn:
        kind = conn.exec_driver_sql(
            "SELECT relkind FROM pg_class WHERE relname = 'battles' "
            "AND relnamespace = current_schema()::regnamespace"
        ).scalar()
        assert kind == "p"
        sizes = tuple(
            conn.exec_driver_sql(f"SELECT count(*) FROM battles_p{i}").scalar() for i in (0, 1)
        )
    engine.dispose()
    return sizes


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_partitioned_battles_ingest_and_rebuild(db_url, run_cli, tmp_path):
    partition_battles(db_url)
    header = ["id", "model_a", "model_b", "winner", "math", "creative"]
    run_cli("ingest", write_csv(tmp_path / "a.csv", header, csv_rows(11, 200, "a")))
    run_cli("ingest", weighted_jsonl(tmp_path / "b.jsonl", 12, 150, "b"))
    assert partition_sizes(db_url) == (BOUND - 1, 350 - (BOUND - 1))
    kept = counts(db_url)
    assert recounted(run_cli, db_url) == kept
    from_counts = leaderboards(run_cli, "counts")
    assert from_counts == leaderboards(run_cli, "battles") and len(from_counts) >= 3


@pytest.mark.parametrize("key", ["ingested_at", "occurred_at"])
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_time_partitioned_battles_deduplicate_like_the_plain_table(
    db_url, run_cli, tmp_path, key, monkeypatch
):
    """The same four ingests into a plain store and into one converted to time partitions
    after the first: the same reports, rejected rows, battles, keys and counts; the
    later ingests' duplicates of battles in the other partition are skipped."""
    import arena.ingest.bulk as bulk
    import arena.ingest.writer as writer

    first = rows_with_time(7, 200, "a")
    files = [
        write_csv(tmp_path / "a.csv", HEADER, first),
        overlapping_jsonl(tmp_path / "b.jsonl", first),
        # column path (no tstamp): 50 of the first file again, 60 new (event time: only
        # for the ingest-time store, as an event-time partition key may not be empty)
        write_csv(
            tmp_path / "c.csv",
            ["id", "model_a", "model_b", "winner"],
            [r[:4] for r in first[150:]] + [r[:4] for r in rows_with_time(9, 60, "c")],
        ),
        # bulk loads (their indexes dropped and built again): with duplicates, which
        # the built key index finds (the file is then redone row by row), and without
        write_csv(tmp_path / "d.csv", HEADER, rows_with_time(10, 120, "d") + first[:10]),
        write_csv(tmp_path / "e.csv", HEADER, rows_with_time(11, 300, "e")),
    ]
    bulk_files = set(files[-2:])
    if key == "occurred_at":
        files.pop(2)
    plain_schema = pg_schema()
    plain = next(plain_schema)
    try:
        reports = {}
        for url in (plain, db_url):
            run = cli_for(url)
            out = []
            for n, path in enumerate(files):
                if n == 1 and url == db_url:
                    bound = partition_by_time(db_url, key)
                if path in bulk_files:
                    monkeypatch.setattr(bulk, "BULK_MIN_ROWS", 1)
                    monkeypatch.setattr(bulk, "BULK_RATIO", 0.0)
                    built: list[bool] = []

                    def spy(conn, built=built, **kwargs):
                        built.append(False)
                        bulk.build_indexes(conn, **kwargs)
                        built[-1] = True

                    monkeypatch.setattr(writer, "build_indexes", spy)
                rejects = tmp_path / f"rejects-{n}.csv"
                got = run("ingest", path, "--skip-invalid", "--rejects", str(rejects)).output
                # (an ingest elsewhere on the server may hold the id lock: a notice)
                got = "".join(x for x in got.splitlines(True) if not x.startswith("waiting for"))
                out.append(re.sub(r"\S*/", "", got) + rejects.read_text())
                if path in bulk_files:  # d: the key index found duplicates; e: bulk load
                    out.append(built)
                monkeypatch.undo()
            reports[url] = out
        assert reports[db_url] == reports[plain]
        joined = "\n".join(r for r in reports[plain] if isinstance(r, str))
        assert "appears twice in this file" in joined and "already stored with other" in joined
        assert "40 duplicates skipped" in joined and "10 duplicates skipped" in joined
        assert reports[plain][-3:] == [
            [False],
            "e.csv (csv): 300 rows read, 300 inserted, "
            "0 duplicates skipped, 0 rejected\nfile,location,field,error,record\n",
            [True],
        ]
        assert store_of(db_url) == store_of(plain)
        assert counts(db_url) == counts(plain)
    finally:
        next(plain_schema, None)
    p0, p1 = partition_sizes(db_url)
    if key == "ingested_at":  # the first file's battles in p0, every later one in p1
        assert (p0, p1) == (200, len(store_of(db_url)) - 200) and bound
    else:
        engine = open_engine(db_url)
        with engine.connect() as conn:
            early = conn.exec_driver_sql(
                f"SELECT count(*) FROM battles WHERE occurred_at < '{EVENT_BOUND}'"
            ).scalar()
        engine.dispose()
        assert (p0, p1) == (early, len(store_of(db_url)) - early) and 0 < early < p0 + p1
    kept = counts(db_url)
    assert recounted(run_cli, db_url) == kept
    from_counts = leaderboards(run_cli, "counts")
    assert from_counts == leaderboards(run_cli, "battles") and len(from_counts) >= 3
    # a battle without a partition (by event time: one without a time) stops the ingest
    # with one line naming the cause; nothing of the file is stored
    late = [["late1", "m1", "m2", "tie", "2031-01-01T00:00:00Z" if key == "ingested_at" else ""]]
    if key == "ingested_at":
        engine = open_engine(db_url)
        with engine.begin() as conn:  # the current partition ends now: ingest time is later
            conn.exec_driver_sql("ALTER TABLE battles DETACH PARTITION battles_p1")
            conn.exec_driver_sql(
                f"ALTER TABLE battles ATTACH PARTITION battles_p1 FOR VALUES FROM ('{bound}') "
                "TO (clock_timestamp())"
            )
        engine.dispose()
    result = run_cli("ingest", write_csv(tmp_path / "late.csv", HEADER[:5], late), ok=False)
    assert result.exit_code == 1 and "falls into no partition" in result.output, result.output
    assert f"({key})" in result.output and counts(db_url) == kept
