"""Rebuild speed and memory (issue 4).

Run: python benchmarks/bench_rebuild.py [--battles 10000000] [--models 250] [--skip-pg]

1. The shared 135,634-battle LMArena file ingested into SQLite, then a full
   `arena rebuild` (1000 rounds) timed end to end in a fresh process.
2. A synthetic store of N battles among M models (all pairs played, 10% ties,
   Bradley-Terry outcomes) written straight into the battles table, then
   `arena rebuild` (1000 rounds) on SQLite and PostgreSQL: seconds and peak RSS
   of the rebuild process.
"""

from __future__ import annotations

import argparse
import io
import tempfile
from pathlib import Path

import numpy as np
from _util import SHARED, pg_schema_url, run_arena, synthetic_batch_and_models
from sqlalchemy import text

from arena.db.session import open_engine
from arena.ingest.counts import recount


def synthetic_blocks(n: int, models: int, seed: int = 0, block: int = 1_000_000):
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, models)
    start = 1
    while n > 0:
        k = min(block, n)
        a = rng.integers(0, models, k)
        b = (a + rng.integers(1, models, k)) % models
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random(k)
        outcome = np.where(u < 0.1, 2, np.where(u < 0.1 + 0.9 * p, 0, 1))
        yield np.arange(start, start + k), a + 1, b + 1, outcome
        start += k
        n -= k


NAMES = np.array(["a_wins", "b_wins", "tie"])


def fill(url: str, n: int, models: int) -> None:
    engine = open_engine(url)
    with engine.begin() as conn:
        synthetic_batch_and_models(conn, models)
        # Bulk load with the aggregation index dropped, then rebuilt once (setup only).
        conn.execute(text("DROP INDEX ix_battles_pair_outcome"))
        pg = conn.dialect.name == "postgresql"
        for ids, a, b, o in synthetic_blocks(n, models):
            if pg:
                buf = io.StringIO()
                np.savetxt(buf, np.column_stack([ids, a, b]), fmt="%d", delimiter="\t")
                lines = buf.getvalue().splitlines()
                payload = "".join(
                    f"{line}\t{NAMES[x]}\t1\n" for line, x in zip(lines, o, strict=True)
                )
                cur = conn.connection.cursor()
                with cur.copy(
                    "COPY battles (id, model_a_id, model_b_id, outcome, batch_id) FROM STDIN"
                ) as cp:
                    cp.write(payload)
            else:
                conn.exec_driver_sql(
                    "INSERT INTO battles (id, model_a_id, model_b_id, outcome, weight, batch_id) "
                    "VALUES (?, ?, ?, ?, 1.0, 1)",
                    list(zip(ids.tolist(), a.tolist(), b.tolist(), NAMES[o].tolist(), strict=True)),
                )
        # Same definition as the migration (partial, covering; INCLUDE on PostgreSQL).
        include = " INCLUDE (id)" if pg else ""
        conn.execute(
            text(
                "CREATE INDEX ix_battles_pair_outcome ON battles "
                f"(model_a_id, model_b_id, outcome, weight){include} "
                "WHERE excluded_reason IS NULL"
            )
        )
        if pg:
            conn.execute(
                text("SELECT setval(pg_get_serial_sequence('battles', 'id'), :n)"), {"n": n}
            )
        # battles written behind ingest's back: rebuild the count table it keeps
        recount(conn)
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE battles"))
    engine.dispose()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--battles", type=int, default=10_000_000)
    ap.add_argument("--models", type=int, default=250)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--skip-pg", action="store_true")
    ap.add_argument("--skip-shared", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    # bootstrap rounds asked for by name: the default --ci is the sandwich since issue 41
    rounds = ["--ci", "bootstrap", "--rounds", str(args.rounds)]

    if not args.skip_shared:
        db = f"sqlite:///{tmp / 'shared.db'}"
        run_arena(["ingest", str(SHARED / "lmarena-140k" / "battles.csv.gz"), "-q"], db=db)
        secs, rss, _ = run_arena(["rebuild", *rounds, "-q"], db=db)
        print(
            f"shared 135,634 battles, SQLite: rebuild {args.rounds} rounds {secs:.2f} s "
            f"end to end, peak RSS {rss:.0f} MiB"
        )

    db = f"sqlite:///{tmp / 'big.db'}"
    fill(db, args.battles, args.models)
    secs, rss, out = run_arena(["rebuild", *rounds, "-q"], db=db)
    print(
        f"synthetic {args.battles:,} battles / {args.models} models, SQLite: rebuild "
        f"{secs:.1f} s, peak RSS {rss:.0f} MiB"
    )
    if not args.skip_pg:
        url, drop = pg_schema_url("rebuild")
        try:
            fill(url, args.battles, args.models)
            secs, rss, out = run_arena(["rebuild", *rounds, "-q"], db=url)
            print(
                f"synthetic {args.battles:,} battles / {args.models} models, PostgreSQL: rebuild "
                f"{secs:.1f} s, peak RSS {rss:.0f} MiB (max over runs so far)"
            )
        finally:
            drop()


if __name__ == "__main__":
    main()
