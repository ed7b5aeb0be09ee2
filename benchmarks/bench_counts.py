"""Rebuilds that read the count table: time flat in the number of battles (issue 17).

Run: python benchmarks/bench_counts.py [--steps 10000000,100000000] [--models 300]
     [--rounds 1000] [--compare-battles] [--skip-indexes]

One PostgreSQL schema (dropped at the end) grows step by step to each total in
``--steps``: synthetic battles (Bradley-Terry outcomes from known strengths,
10% ties, every pair of ``--models`` models played) are bulk loaded with COPY
straight into ``battles`` (the two secondary indexes dropped and the
foreign-key triggers off while loading, as a bulk ingest does), then
``arena db recount`` rebuilds the count table from all battles, then
``arena rebuild --rounds N`` runs twice in a fresh process (it reads the count
table).  Prints the load rate, the recount time and the rebuild times per
step, and the table sizes.  With ``--compare-battles`` the first step also
times ``arena rebuild --read battles`` (the aggregation of every battle) with
the aggregation index built, as a reference.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import time

import numpy as np
from _util import pg_schema_url, run_arena, synthetic_batch_and_models
from sqlalchemy import text

from arena.db.session import open_engine

OUTCOMES = ("a_wins", "b_wins", "tie")
BLOCK = 1_000_000
#: the indexes a bulk load drops (arena.ingest.bulk.BULK_INDEXES), built after the last step
INDEXES = ("ix_battles_pair_outcome",)


def setup(url: str, models: int) -> None:
    engine = open_engine(url)
    with engine.begin() as conn:
        synthetic_batch_and_models(conn, models)
        for name in INDEXES:
            conn.execute(text(f"DROP INDEX {name}"))
    engine.dispose()


def load(url: str, start: int, stop: int, models: int, seed: int) -> float:
    """COPY battles ``start+1 .. stop`` into the table; returns seconds."""
    rng = np.random.default_rng(seed)
    strength = np.random.default_rng(0).normal(0, 1, models)
    # one text tail per (a, b, outcome): a row is its id plus one of these
    tails = [
        f"\t{a + 1}\t{b + 1}\t{o}\t1\n"
        for a in range(models)
        for b in range(models)
        for o in OUTCOMES
    ]
    engine = open_engine(url)
    t0 = time.perf_counter()
    with engine.begin() as conn:
        conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
        cursor = conn.connection.cursor()
        for lo in range(start, stop, BLOCK):
            k = min(BLOCK, stop - lo)
            a = rng.integers(0, models, k)
            b = (a + rng.integers(1, models, k)) % models
            p = 1 / (1 + np.exp(strength[b] - strength[a]))
            u = rng.random(k)
            outcome = np.where(u < 0.1, 2, np.where(u < 0.1 + 0.9 * p, 0, 1))
            key = ((a * models + b) * 3 + outcome).tolist()
            payload = "".join(
                map(str.__add__, map(str, range(lo + 1, lo + k + 1)), map(tails.__getitem__, key))
            )
            with cursor.copy(
                "COPY battles (id, model_a_id, model_b_id, outcome, batch_id) FROM STDIN"
            ) as cp:
                cp.write(payload)
        conn.execute(
            text("SELECT setval(pg_get_serial_sequence('battles', 'id'), :n)"), {"n": stop}
        )
    seconds = time.perf_counter() - t0
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE battles"))
    engine.dispose()
    return seconds


def build_indexes(url: str) -> float:
    from sqlalchemy.schema import CreateIndex

    from arena.db.models import Battle

    engine = open_engine(url)
    t0 = time.perf_counter()
    with engine.begin() as conn:
        conn.exec_driver_sql("SET LOCAL maintenance_work_mem = '256MB'")
        for index in Battle.__table__.indexes:
            if index.name in INDEXES:
                conn.execute(CreateIndex(index))
    engine.dispose()
    return time.perf_counter() - t0


def sizes(url: str) -> str:
    engine = open_engine(url)
    with engine.connect() as conn:
        out = []
        for table in ("battles", "battle_counts"):
            size = conn.execute(
                text("SELECT pg_size_pretty(pg_total_relation_size(:t))"), {"t": table}
            ).scalar()
            rows = conn.execute(text(f"SELECT count(*) FROM {table}")).scalar()
            out.append(f"{table} {rows:,} rows {size}")
    engine.dispose()
    return "; ".join(out)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rebuild(url: str, rounds: int, *extra: str) -> str:
    """One ``arena rebuild`` in a fresh process: wall seconds, the seconds it reports,
    and the CPU seconds of the process and its bootstrap workers (the machine is shared:
    CPU time is what load from other jobs disturbs least)."""
    cpu0 = _children_cpu()
    # bootstrap rounds by name: the default --ci is the sandwich since issue 41
    secs, _, out = run_arena(
        ["rebuild", "--ci", "bootstrap", "--rounds", str(rounds), *extra, "-q"], db=url
    )
    cpu = _children_cpu() - cpu0
    inner = float(re.search(r"in ([\d.]+)s", out).group(1))
    return f"{secs:.2f} s wall ({inner:.2f} s in rebuild, CPU {cpu:.2f} s)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", default="10000000,100000000")
    ap.add_argument("--models", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--compare-battles", action="store_true")
    ap.add_argument(
        "--skip-indexes", action="store_true", help="do not build the secondary indexes at the end"
    )
    args = ap.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    url, drop = pg_schema_url("counts")
    try:
        setup(url, args.models)
        have = 0
        for i, total in enumerate(steps):
            free = shutil.disk_usage("/").free / 2**30
            secs = load(url, have, total, args.models, seed=i + 1)
            added = total - have
            have = total
            load_avg = os.getloadavg()[0]
            print(
                f"{total:,} battles: COPY of {added:,} in {secs:.1f} s = "
                f"{added / secs / 1e3:.0f}k rows/s (load {load_avg:.1f}, {free:.0f} GiB free before)",
                flush=True,
            )
            recount_s, _, out = run_arena(["db", "recount", "-q"], db=url)
            print(f"  arena db recount: {recount_s:.1f} s ({out.strip()})", flush=True)
            times = [rebuild(url, args.rounds) for _ in range(2)]
            print(
                f"  arena rebuild --rounds {args.rounds} (reads counts): "
                + "; ".join(times)
                + f" (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
            if args.compare_battles and i == 0:
                idx = build_indexes(url)
                took = rebuild(url, args.rounds, "--read", "battles")
                print(
                    f"  arena rebuild --read battles (indexes built in {idx:.1f} s): {took}",
                    flush=True,
                )
                engine = open_engine(url)
                with engine.begin() as conn:
                    for name in INDEXES:
                        conn.execute(text(f"DROP INDEX {name}"))
                engine.dispose()
            print(f"  {sizes(url)}", flush=True)
        if not args.skip_indexes:
            idx = build_indexes(url)
            print(f"secondary indexes built at {have:,} battles in {idx:.1f} s; {sizes(url)}")
    finally:
        drop()


if __name__ == "__main__":
    main()
