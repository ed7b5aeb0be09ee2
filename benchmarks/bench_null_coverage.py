"""Global-null coverage of the simultaneous rank sets at many equal models (issue 41 item 3).

Run::

    PYTHONPATH=. python benchmarks/bench_null_coverage.py [--models 10,53] [--boards 2000]
        [--rounds 1000] [--seed 5]
        [--pipeline BATTLES]   # instead: null boards of simulated battles through rate_board
        [--draw-sets 20]       # instead: the coverage each fixed draw set implies (quadrature)

Under the global null (every model equal) a board's rank sets cover the truth
only when no pair is separated, so coverage is one minus the family-wise error
of the max-t test over all pairs. Each simulated board is the normal parametric
bootstrap of ``benchmarks/bench_ranks.py`` (per-model SD 5-10 Elo and a shared
10-Elo shift per draw). Printed per number of models:

``engine``
    :func:`arena.engine.inference.rank_sets.board_inference`, the board's own
    inference (step-down, or single-step on long boards) on these bootstrap-like
    rounds, with its Monte-Carlo margin (``MC_MARGIN``, since issue 41);
``fixed draws``
    the default since issue 41: the board's own inference on the analytic
    covariance (here the known one, which the sandwich estimates) mapped onto
    the engine's fixed, whitened normal draws (``normal_draws``): the same draws
    on every board, so their quadrature error does not average out over boards;
``estimated SD``
    the same single-step test written out without the margin (the rule before issue 41): each pair's difference studentized by
    the SD of its bootstrap differences (what the engine does);
``augmented SD``
    the pair's SD over the bootstrap deviations *and* the observed difference,
    as one more draw: under the null the observed statistic and the bootstrap
    ones are then exchangeable, so the test is Monte-Carlo exact. The studentized
    maximum over many pairs otherwise picks the pairs whose SD came out low
    (only the observed statistic gains from that; a bootstrap round is
    normalised by an SD that includes it), which costs coverage as the number of
    pairs grows;
``true SD``
    studentized by the known SD (the reference).

The standard error of each coverage is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from arena.core.outcomes import A_WINS, B_WINS, TIE
from arena.engine.board import BoardOptions, rate_board, stored_samples
from arena.engine.counts import count_table
from arena.engine.inference.intervals import normal_draws
from arena.engine.inference.rank_sets import board_inference

ALPHA = 0.05


def one_board(m: int, rounds: int, rng: np.random.Generator) -> dict[str, bool]:
    """Whether each method covers (separates no pair) on one simulated null board."""
    sd = rng.uniform(5.0, 10.0, m)

    def draw(n: int) -> np.ndarray:
        return sd * rng.standard_normal((n, m)) + 10.0 * rng.standard_normal((n, 1))

    est = draw(1)[0]
    samples = est + draw(rounds)
    inf = board_inference(est, samples, level=1 - ALPHA)
    out = {"engine": bool((inf.rank_low == 1).all() and (inf.rank_high == m).all())}
    # the default since issue 41: the analytic covariance (here the known one,
    # which the sandwich estimates) mapped onto the fixed, whitened draws
    cov = np.diag(sd**2) + 100.0
    fixed = board_inference(est, stored_samples(normal_draws(est, cov, rounds)), level=1 - ALPHA)
    out["fixed draws"] = bool((fixed.rank_low == 1).all() and (fixed.rank_high == m).all())
    a, b = np.triu_indices(m, 1)
    d = samples[:, a] - samples[:, b]
    dhat = est[a] - est[b]
    dev = d - d.mean(axis=0)
    scales = {
        "estimated SD": d.std(axis=0, ddof=1),
        "augmented SD": np.sqrt(((dev**2).sum(axis=0) + dhat**2) / (rounds + 1)),
        "true SD": np.sqrt(sd[a] ** 2 + sd[b] ** 2),
    }
    for name, scale in scales.items():
        t = np.abs(dhat) / scale
        maxima = np.abs(dev / scale).max(axis=1)
        p = (1 + np.count_nonzero(maxima >= t.max())) / (rounds + 1)
        out[name] = bool(p > ALPHA)
    return out


def pipeline_board(m: int, battles: int, rng: np.random.Generator) -> bool:
    """One null board through the whole engine: battles, count table, ``rate_board``.

    The default options (sandwich covariance on the fixed draws since issue 41):
    whether no pair of the ``m`` equal models is separated.
    """
    a = rng.integers(0, m, battles)
    b = (a + rng.integers(1, m, battles)) % m
    o = np.where(rng.random(battles) < 0.5, A_WINS, B_WINS)
    o[rng.random(battles) < 0.1] = TIE
    br = rate_board(count_table(a, b, o, n_models=m), BoardOptions(min_battles=1))
    lo, hi = br.rank_low[br.ranked], br.rank_high[br.ranked]
    return bool(br.ranked.all() and (lo == 1).all() and (hi == m).all())


def draw_sets(m: int, sets: int, rounds_list: list[int]) -> None:
    """The null coverage each fixed draw set implies, over ``sets`` sets (issue 41).

    With the covariance known (53 equal models, SD 7.5 Elo and a shared 10-Elo
    shift), a fixed draw set's critical value (the step-down's first step,
    by the engine's count rule) is put against 200,000 independent draws of
    the null maximum: the coverage a board of that design gets from that set.
    Pseudo-random sets (the engine's kind, whitened) against scrambled Sobol
    points, each with and without the Monte-Carlo margin.
    """
    from scipy import linalg
    from scipy.stats import norm, qmc

    from arena.core.defaults import MC_MARGIN
    from arena.engine.inference.intervals import FIXED_DRAWS_KEY
    from arena.engine.inference.rank_sets import mc_alpha

    sd = np.full(m, 7.5)
    cov = np.diag(sd**2) + 100.0
    vals, vecs = np.linalg.eigh(cov)
    root = (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T
    a, b = np.triu_indices(m, 1)
    pair_sd = np.sqrt(sd[a] ** 2 + sd[b] ** 2)

    def maxima(x: np.ndarray) -> np.ndarray:
        out = np.empty(x.shape[0])
        for i in range(0, x.shape[0], 2000):
            d = x[i : i + 2000, a] - x[i : i + 2000, b]
            out[i : i + 2000] = np.abs(d / pair_sd).max(axis=1)
        return out

    def whiten(z: np.ndarray) -> np.ndarray:
        z = z - z.mean(axis=0)
        chol = np.linalg.cholesky(z.T @ z / (z.shape[0] - 1))
        return linalg.solve_triangular(chol, z.T, lower=True).T

    rng = np.random.default_rng(1)
    ref = np.sort(
        maxima(sd * rng.standard_normal((200_000, m)) + 10.0 * rng.standard_normal((200_000, 1)))
    )
    print(f"{m} equal models, {sets} fixed draw sets each, load {os.getloadavg()[0]:.2f}")
    for rounds in rounds_list:
        for kind in ("pseudo-random", "Sobol"):
            tops = []
            # keys 1..sets, then the engine's own key (pseudo-random sets are the engine's kind)
            for key in [*range(1, sets + 1), FIXED_DRAWS_KEY]:
                if kind == "Sobol":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # balance needs 2^k points; not the point
                        u = qmc.Sobol(d=m, scramble=True, seed=key).random(rounds)
                    z = norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))
                else:
                    z = np.random.default_rng([key, 0]).standard_normal((m, rounds)).T
                tops.append(np.sort(maxima(whiten(z) @ root))[::-1])
            for margin in (0.0, MC_MARGIN):
                k = int(np.floor(mc_alpha(ALPHA, rounds, margin) * (rounds + 1) - 1 + 1e-9))
                implied = np.array([np.searchsorted(ref, t[k]) / ref.size for t in tops])
                by_set, own = implied[:-1], implied[-1]
                print(
                    f"  {rounds:6d} draws, {kind:13s}, margin {margin:5.3f}: implied coverage "
                    f"mean {by_set.mean():.4f}, SD {by_set.std():.4f}, min {by_set.min():.4f}, "
                    f"below 0.95 on {int((by_set < 0.95).sum())} of {sets}"
                    + (f"; the engine's set {own:.4f}" if kind == "pseudo-random" else ""),
                    flush=True,
                )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="10,53", help="comma-separated numbers of models")
    p.add_argument("--boards", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument(
        "--pipeline",
        type=int,
        default=0,
        metavar="BATTLES",
        help="instead: boards of BATTLES simulated battles through the whole engine (rate_board)",
    )
    p.add_argument(
        "--draw-sets",
        type=int,
        default=0,
        metavar="N",
        help="instead: the coverage each of N fixed draw sets implies (53 models; 1,000 and 4,000 draws)",
    )
    args = p.parse_args()
    if args.draw_sets:
        draw_sets(53, args.draw_sets, [1000, 4000])
        return
    if args.pipeline:
        print(
            f"global null through rate_board (default options): {args.boards} boards of "
            f"{args.pipeline:,} battles, seed {args.seed}, load {os.getloadavg()[0]:.2f}"
        )
        for m in (int(x) for x in args.models.split(",")):
            rng = np.random.default_rng([args.seed, m, args.pipeline])
            t0 = time.perf_counter()
            n = sum(pipeline_board(m, args.pipeline, rng) for _ in range(args.boards))
            cov = n / args.boards
            print(
                f"{m:4d} equal models: {cov:.4f} (SE {np.sqrt(cov * (1 - cov) / args.boards):.4f})"
                f"  [{time.perf_counter() - t0:.0f} s]",
                flush=True,
            )
        return
    print(
        f"global null: {args.boards} boards, {args.rounds} rounds, alpha {ALPHA}, "
        f"seed {args.seed}, load {os.getloadavg()[0]:.2f}"
    )
    for m in (int(x) for x in args.models.split(",")):
        rng = np.random.default_rng([args.seed, m])
        t0 = time.perf_counter()
        hits: dict[str, int] = {}
        for _ in range(args.boards):
            for k, v in one_board(m, args.rounds, rng).items():
                hits[k] = hits.get(k, 0) + v
        cells = []
        for k, n in hits.items():
            cov = n / args.boards
            cells.append(f"{k} {cov:.4f} (SE {np.sqrt(cov * (1 - cov) / args.boards):.4f})")
        print(f"{m:4d} equal models: " + "; ".join(cells) + f"  [{time.perf_counter() - t0:.0f} s]")


if __name__ == "__main__":
    main()
