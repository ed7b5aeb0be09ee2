"""Retention: database bytes for a year of nightly rebuilds, with and without pruning.

Run: python benchmarks/bench_retention.py [--nights 14] [--models 300] [--boards 11]
     [--rounds 1000] [--pair-fraction 0.3] [--keep-days 30] [--keep-last 7] [--postgres]

Simulating 365 real rebuilds of 11 boards with 300 models takes hours, so the
script writes the snapshot tables directly with the shapes a rebuild writes
(one ``snapshots`` row, one ``snapshot_rows`` row per model, one
``snapshot_pairs`` row per observed pair, one ``snapshot_samples`` blob of
rounds x models float32) for ``--nights`` nights of ``--boards`` boards, one
night per day. It measures the bytes of one night from ``arena db stats``
(dbstat pages on SQLite, pg_total_relation_size on PostgreSQL), then prunes
every snapshot but each board's latest (``prune_snapshots``), VACUUMs and
measures the bytes a pruned night keeps. A year is extrapolated per night:
without pruning 365 full nights; with ``--keep-days D --keep-last K`` the
newest max(D, K) nights full and the rest summary-only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import insert, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.db.models import Model, Snapshot, SnapshotPair, SnapshotRow, SnapshotSamples  # noqa: E402
from arena.db.session import open_engine  # noqa: E402
from arena.jobs.retention import db_stats, prune_snapshots  # noqa: E402

SNAPSHOT_TABLES = (
    "snapshots",
    "snapshot_rows",
    "snapshot_pairs",
    "snapshot_samples",
    "snapshot_style_coefficients",
    "snapshot_audits",
)


def snapshot_bytes(conn) -> int:
    return sum(t.bytes for t in db_stats(conn).tables if t.table in SNAPSHOT_TABLES)


def write_night(conn, night: int, when: datetime, *, args, model_ids, pairs, rng) -> None:
    m = len(model_ids)
    for b in range(args.boards):
        sid = conn.execute(
            insert(Snapshot)
            .values(
                created_at=when,
                board="overall" if b == 0 else f"category:c{b}",
                category=None if b == 0 else f"c{b}",
                run_id=f"night-{night}",
                options_json=json.dumps({"rounds": args.rounds, "ci": "bootstrap"}),
                seed=night,
                code_version="bench",
                watermark=night * 100000,
                n_battles=float(100000 * night),
                n_excluded=0,
                n_models=m,
                diagnostics_json="{}",
            )
            .returning(Snapshot.id)
        ).scalar_one()
        rating = np.sort(rng.normal(1000, 100, m))[::-1]
        conn.execute(
            insert(SnapshotRow),
            [
                dict(
                    snapshot_id=sid,
                    model_id=model_ids[i],
                    position=i,
                    rating=float(rating[i]),
                    ci_low=float(rating[i] - 15),
                    ci_high=float(rating[i] + 15),
                    rank=i + 1,
                    rank_ub=i + 1,
                    rank_lb=i + 3,
                    tier=i // 10 + 1,
                    battles=3000.0,
                    wins=1400.0,
                    losses=1300.0,
                    ties=300.0,
                    flags="",
                    ranked=True,
                )
                for i in range(m)
            ],
        )
        counts = rng.integers(1, 200, size=(len(pairs), 3)).astype(float)
        conn.execute(
            insert(SnapshotPair),
            [
                dict(
                    snapshot_id=sid,
                    model_a_id=model_ids[lo],
                    model_b_id=model_ids[hi],
                    a_wins=c[0],
                    b_wins=c[1],
                    ties=c[2],
                )
                for (lo, hi), c in zip(pairs, counts.tolist(), strict=True)
            ],
        )
        samples = (rating + rng.normal(0, 8, (args.rounds, m))).astype("<f4")
        conn.execute(
            insert(SnapshotSamples).values(
                snapshot_id=sid, rounds=args.rounds, n_models=m, data=samples.tobytes()
            )
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nights", type=int, default=14)
    ap.add_argument("--models", type=int, default=300)
    ap.add_argument("--boards", type=int, default=11)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--pair-fraction", type=float, default=0.3)
    ap.add_argument("--keep-days", type=float, default=30)
    ap.add_argument("--keep-last", type=int, default=7)
    ap.add_argument("--postgres", action="store_true", help="Use a scratch PostgreSQL schema.")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    if args.postgres:
        from benchmarks._util import pg_schema_url

        url, _drop = pg_schema_url("bench_retention")
    else:
        tmp = tempfile.mkdtemp(prefix="bench_retention_")
        url = f"sqlite:///{os.path.join(tmp, 'arena.db')}"
    engine = open_engine(url, migrate_new=True)
    m = args.models
    all_pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    keep = rng.random(len(all_pairs)) < args.pair_fraction
    pairs = [p for p, k in zip(all_pairs, keep, strict=True) if k]
    with engine.begin() as conn:
        conn.execute(insert(Model), [dict(name=f"model-{i:03d}") for i in range(m)])
        model_ids = conn.execute(text("SELECT id FROM models ORDER BY name")).scalars().all()
    first = datetime(2026, 1, 1, tzinfo=UTC)
    t0 = time.perf_counter()
    for night in range(args.nights):
        with engine.begin() as conn:
            write_night(
                conn,
                night,
                first + timedelta(days=night),
                args=args,
                model_ids=model_ids,
                pairs=pairs,
                rng=rng,
            )
    write_s = time.perf_counter() - t0
    with engine.connect() as conn:
        full = snapshot_bytes(conn)
        per_night_db_stats = db_stats(conn).bytes_per_night
    per_full = full / args.nights
    t0 = time.perf_counter()
    with engine.begin() as conn:
        pruned = prune_snapshots(
            conn, keep_days=0, keep_last=1, now=first + timedelta(days=args.nights)
        )
    prune_s = time.perf_counter() - t0
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM" if engine.dialect.name == "sqlite" else "VACUUM FULL"))
    with engine.connect() as conn:
        after = snapshot_bytes(conn)
    # after pruning: one full night (each board's latest) + (nights - 1) summary-only nights
    per_summary = (after - per_full) / (args.nights - 1)
    year = 365
    kept_full = min(year, max(int(args.keep_days), args.keep_last))
    without = year * per_full
    with_prune = kept_full * per_full + (year - kept_full) * per_summary
    mib = 1024 * 1024
    load = os.getloadavg()
    print(
        f"engine {engine.dialect.name}; {args.nights} simulated nights x {args.boards} boards, "
        f"{m} models, {len(pairs)} pairs ({args.pair_fraction:.0%} of {len(all_pairs)}), "
        f"{args.rounds} rounds; written in {write_s:.1f}s"
    )
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"full night (all boards): {per_full / mib:.1f} MiB measured "
        f"(db stats bytes_per_night: {per_night_db_stats / mib:.1f} MiB)"
    )
    print(f"pruned night (summary rows only): {per_summary / mib:.3f} MiB")
    print(
        f"prune of {len(pruned.snapshot_ids)} snapshots: {pruned.bytes_freed / mib:.1f} MiB "
        f"estimated freed, {(full - after) / mib:.1f} MiB measured after VACUUM, {prune_s:.1f}s"
    )
    print(
        f"a year ({year} nights, extrapolated per night): without pruning "
        f"{without / 2**30:.2f} GiB; with --keep-days {args.keep_days:g} --keep-last "
        f"{args.keep_last} {with_prune / 2**30:.3f} GiB ({without / with_prune:.0f}x smaller)"
    )
    engine.dispose()
    if args.postgres:
        _drop()


if __name__ == "__main__":
    main()
