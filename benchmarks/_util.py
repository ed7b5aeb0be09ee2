"""Helpers shared by the benchmark scripts (not part of the package)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))

from tests.helpers.postgres import pg_schema  # noqa: E402


def run_arena(args: list[str], *, db: str) -> tuple[float, float, str]:
    """Run the installed CLI in a fresh process; (seconds, peak RSS MiB, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "arena", "--db", db, *args], capture_output=True, text=True
    )
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)} failed:\n{out.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the max over all children so far: report it only
    # when it grew, else say "<= previous".
    return seconds, max(peak, before) / 1024, out.stdout


def synthetic_batch_and_models(conn, models: int) -> None:
    """Ingest batch 1 and models ``model-000`` .. (ids 1..models) for battles written directly."""
    from sqlalchemy import text

    conn.execute(
        text(
            "INSERT INTO ingest_batches (id, file_name, sha256, format, rows_read, "
            "inserted, duplicates, excluded, rejected, started_at) VALUES "
            "(1, 'synthetic', 'x', 'csv', 0, 0, 0, 0, 0, CURRENT_TIMESTAMP)"
        )
    )
    conn.execute(
        text(
            "INSERT INTO models (id, name, hidden, created_at) VALUES "
            "(:id, :name, false, CURRENT_TIMESTAMP)"
        ),
        [{"id": i + 1, "name": f"model-{i:03d}"} for i in range(models)],
    )


def pg_schema_url(name: str, *, ordinary_role: bool = False) -> tuple[str, callable]:
    """A fresh PostgreSQL schema (the tests' helper); returns its URL and a drop function.

    With ``ordinary_role``, owned by and used as a new role that is not a
    superuser (what an application usually runs as).
    """
    schema = pg_schema(role=ordinary_role)
    return next(schema), lambda: next(schema, None)


def synthetic_csv(
    path: Path, rows: int, *, models: int = 250, seed: int = 0, ties: float = 0.1
) -> None:
    """LMArena-shaped CSV (id,model_a,model_b,winner) from known strengths, written in blocks."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, models)
    names = np.array([f"model-{i:03d}" for i in range(models)])
    block = 500_000
    with open(path, "w") as fh:
        fh.write("id,model_a,model_b,winner\n")
        for start in range(0, rows, block):
            n = min(block, rows - start)
            a = rng.integers(0, models, n)
            b = (a + rng.integers(1, models, n)) % models
            p = 1 / (1 + np.exp(strength[b] - strength[a]))
            u = rng.random(n)
            winner = np.where(
                u < ties, "tie", np.where(u < ties + (1 - ties) * p, "model_a", "model_b")
            )
            ids = rng.integers(0, 2**62, n)
            lines = [
                f"{i:016x}-{start + k},{x},{y},{w}\n"
                for k, (i, x, y, w) in enumerate(zip(ids, names[a], names[b], winner, strict=True))
            ]
            fh.writelines(lines)
