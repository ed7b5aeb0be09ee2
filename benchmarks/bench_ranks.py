"""Coverage and width of rank confidence sets (``arena.engine.inference.rank_sets``), by simulation,
and their width on the bundled LMArena boards against LMArena's interval-overlap rank.

Run::

    PYTHONPATH=. python benchmarks/bench_ranks.py [--boards 1000] [--rounds 1000] [--seed 20261202]
        [--db sqlite:///arena.db]    # boards of `arena demo` (default: build them in a temp dir)
        [--skip-real]

**Simulation.**  Each board has known true ratings ``theta`` (12 models).  The
rating engine is replaced by a normal parametric bootstrap (as in
``benchmarks/bench_tiers.py``): the estimate is ``theta + e`` and each round
``estimate + e*``, ``e`` and ``e*`` independent draws of ``se_i z_i + 10 w``
(``se_i`` 5-10 Elo, ``w`` one shared shift per draw: it cancels in differences,
as a rating anchor does).  A model's true rank set is ``{1 + #better, ...,
#not worse}`` (equal models share it); a confidence set covers it when it
contains all of it.  Printed per design and method:

``P(all covered)``
    boards on which every model's set covers its true ranks (simultaneous
    coverage; the promise of the simultaneous sets is >= 0.95);
``P(model covered)``
    model 5's set covers its true ranks (marginal coverage of one model; the
    promise of the marginal set);
``width``
    mean number of ranks in a set.

Methods: MRSW simultaneous (step-down, and single-step, on the bootstrap-like
rounds), the same step-down on the analytic covariance mapped onto the
engine's fixed draws (``fixed draws``: the default since issue 41), MRSW marginal (each
model alone: its coverage is per model, so "all covered" is not its promise),
and interval overlap (rank (UB)..rank (LB) from 95% percentile intervals: no
stated promise).

**Real boards.**  For the latest snapshot of every board in ``--db``: ranked
models, and the mean width of the simultaneous sets, the marginal sets and the
overlap ranks.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from arena.engine.board import stored_samples
from arena.engine.inference.intervals import normal_draws
from arena.engine.inference.rank_sets import board_inference, marginal_rank_set
from arena.engine.inference.ranks import rank_lb, rank_ub

LEVEL = 0.95
M = 12
DESIGNS = {
    "global null (12 equal)": np.zeros(M),
    "6 equal pairs, 40 apart": np.repeat(np.arange(6) * 40.0, 2)[::-1],
    "continuum, 10 apart": np.arange(M)[::-1] * 10.0,
    "well separated, 60 apart": np.arange(M)[::-1] * 60.0,
}
FOCUS = 5


def _board(rng, theta, rounds):
    sd = rng.uniform(5.0, 10.0, theta.size)

    def draw(n):
        return sd * rng.standard_normal((n, theta.size)) + 10.0 * rng.standard_normal((n, 1))

    est = theta + draw(1)[0]
    # the known covariance of ``est`` (which the sandwich estimates on real boards)
    return est, est + draw(rounds), np.diag(sd**2) + 100.0


def simulate(boards: int, rounds: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    print(f"simulation: {boards} boards of {M} models, {rounds} rounds, level {LEVEL}, seed {seed}")
    print(
        f"{'design':28s} {'method':24s} {'P(all covered)':>15s} {'P(model covered)':>17s} {'width':>6s}"
    )
    for name, theta in DESIGNS.items():
        best = 1 + (theta[None, :] > theta[:, None]).sum(axis=1)
        worst = (theta[None, :] >= theta[:, None]).sum(axis=1)
        kinds = ("simultaneous", "single-step", "fixed draws", "marginal", "overlap")
        stats = {k: [0, 0, 0.0] for k in kinds}
        for _ in range(boards):
            est, s, cov = _board(rng, theta, rounds)
            sets = {}
            # the default since issue 41: the analytic covariance on the fixed draws
            fixed = board_inference(
                est, stored_samples(normal_draws(est, cov, rounds)), level=LEVEL
            )
            sets["fixed draws"] = (fixed.rank_low, fixed.rank_high)
            for k in ("stepdown", "single-step"):
                inf = board_inference(est, s, level=LEVEL, method=k)
                sets["simultaneous" if k == "stepdown" else k] = (inf.rank_low, inf.rank_high)
            marg = np.array([marginal_rank_set(est, s, j, level=LEVEL) for j in range(M)])
            sets["marginal"] = (marg[:, 0], marg[:, 1])
            lo, hi = np.quantile(s, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
            sets["overlap"] = (rank_ub(lo, hi), rank_lb(lo, hi))
            for k, (a, b) in sets.items():
                cov = (a <= best) & (b >= worst)
                stats[k][0] += bool(cov.all())
                stats[k][1] += bool(cov[FOCUS])
                stats[k][2] += float(np.mean(b - a + 1))
        for k, (allc, one, width) in stats.items():
            print(
                f"{name:28s} {k:24s} {allc / boards:15.3f} {one / boards:17.3f} "
                f"{width / boards:6.2f}"
            )


def real_boards(db: str | None) -> None:
    from sqlalchemy import create_engine, text

    from arena.boards.inference import stored_inference
    from arena.boards.snapshots import load_board, load_samples

    tmp = None
    if db is None:
        tmp = tempfile.TemporaryDirectory()
        db = f"sqlite:///{Path(tmp.name) / 'arena.db'}"
        print(f"building the bundled boards: arena demo into {tmp.name} ...", flush=True)
        subprocess.run(
            [sys.executable, "-m", "arena", "--db", db, "demo", "-q", str(Path(tmp.name) / "site")],
            check=True,
        )
    engine = create_engine(db)
    print(f"\nreal boards ({db}): mean width in ranks (simultaneous 95% sets vs overlap rule)")
    print(
        f"{'board':36s} {'models':>6s} {'simultaneous':>12s} {'marginal':>9s} {'overlap':>8s} {'tiers':>5s}"
    )
    with engine.connect() as conn:
        ids = sorted(
            r[0] for r in conn.execute(text("SELECT max(id) FROM snapshots GROUP BY board"))
        )
        for sid in ids:
            board = load_board(conn, sid)
            got = stored_inference(board, load_samples(conn, sid))
            if got is None:
                continue
            inf = got.inference
            ranked = [r for r in board.rows if r.ranked]
            overlap = np.mean([r.rank_lb - r.rank_ub + 1 for r in ranked])
            marg = np.mean([b - a + 1 for a, b in (got.rank_alone(r.model) for r in ranked)])
            print(
                f"{board.snapshot.board:36s} {len(ranked):6d} "
                f"{np.mean(inf.rank_high - inf.rank_low + 1):12.2f} {marg:9.2f} "
                f"{overlap:8.2f} {int(inf.tiers.max()):5d}"
            )
    engine.dispose()
    if tmp is not None:
        tmp.cleanup()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--boards", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--seed", type=int, default=20261202)
    p.add_argument("--db", default=None)
    p.add_argument("--skip-real", action="store_true")
    a = p.parse_args()
    t0 = time.perf_counter()
    simulate(a.boards, a.rounds, a.seed)
    if not a.skip_real:
        real_boards(a.db)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
