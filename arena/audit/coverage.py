"""Coverage: how evenly battles are spread over models and pairs."""

from __future__ import annotations

import numpy as np

from arena.audit.result import Probe, outside
from arena.audit.setup import Board

__all__ = ["coverage", "gini", "GINI_BAND"]

#: Innocent band for the Gini coefficient of battles per model.
GINI_BAND = (0.0, 0.5)


def gini(counts: np.ndarray) -> np.ndarray:
    """Gini coefficient over the last axis (0 = equal, -> 1 = one model has all)."""
    x = np.sort(np.asarray(counts, dtype=np.float64), axis=-1)
    n = x.shape[-1]
    total = x.sum(axis=-1)
    ranks = np.arange(1, n + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        g = (2 * np.sum(ranks * x, axis=-1) / (n * total)) - (n + 1) / n
    return np.where(total > 0, g, 0.0)


def coverage(board: Board) -> Probe:
    """Gini of battles per model (bootstrap interval), unplayed pairs, thin connections.

    The interval resamples battles (multinomial over models' shares of
    battle slots), so it says how sure the spread is, not whether it was
    planned.  Models connected only through one opponent and models under
    the ranking threshold are listed; they are facts, not estimates.
    """
    v = board.votes
    _, keep = board.scored
    m = v.n_models
    counts = board.battles.astype(np.float64)
    live = counts > 0
    g = float(gini(counts[live]))
    rng = np.random.default_rng(board.opts.seed)
    n_b = int(keep.sum())
    share = counts[live] / counts[live].sum()
    draws = rng.multinomial(2 * n_b, share, size=board.opts.rounds)
    tail = (1 - board.opts.level) / 2
    low, high = (float(q) for q in np.quantile(gini(draws), [tail, 1 - tail]))
    played = np.zeros((m, m), dtype=bool)
    played[v.a[keep], v.b[keep]] = True
    played |= played.T
    idx = np.flatnonzero(live)
    sub = played[np.ix_(idx, idx)]
    n_pairs = idx.size * (idx.size - 1) // 2
    never = n_pairs - int(np.triu(sub, 1).sum())
    opponents = sub.sum(axis=1)
    one = [v.names[idx[k]] for k in np.flatnonzero(opponents == 1)]
    under = [v.names[i] for i in idx if counts[i] < board.opts.min_battles]
    flagged = outside(low, high, GINI_BAND)
    verdict = (
        f"Gini of battles per model {g:.2f} ({low:.2f} to {high:.2f})"
        + (": battles are concentrated on a few models." if flagged else ".")
        + f" {never} of {n_pairs} pairs never played"
        + (f"; {len(one)} model(s) met only one opponent" if one else "")
        + (
            f"; {len(under)} model(s) under the ranking threshold ({board.opts.min_battles})"
            if under
            else ""
        )
        + "."
    )
    return Probe(
        "coverage",
        "Coverage",
        g,
        low,
        high,
        "Gini",
        GINI_BAND,
        flagged,
        verdict,
        {
            "models": int(idx.size),
            "pairs": n_pairs,
            "pairs_never_played": never,
            "one_opponent": one,
            "under_threshold": under,
            "battles": {v.names[i]: int(counts[i]) for i in idx},
        },
    )
