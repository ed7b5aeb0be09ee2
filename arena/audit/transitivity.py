"""Intransitivity: more cyclic decided triads than the fitted Bradley–Terry model produces?"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from arena.audit.result import Probe, outside
from arena.audit.setup import Board
from arena.core.outcomes import A_WINS, B_WINS

__all__ = ["intransitivity", "triad_shares"]

#: Innocent band for the excess share of cyclic triads: no more cycles than BT makes.
EXCESS_BAND = (-1.0, 0.0)


def triad_shares(wins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cyclic and decided triads of stacked win matrices.

    Parameters
    ----------
    wins : ndarray, shape (..., M, M)
        ``wins[i, j]`` = decisive wins of i over j.

    Returns
    -------
    cyclic, decided : ndarray, shape (...)
        A pair is decided when one side won more; a triad is decided when
        its three pairs are, and cyclic when they form a cycle.  Counted as
        ``trace(D^3) / 3`` and ``trace(E^3) / 6`` with ``D`` the decided
        direction and ``E = D + D^T``.
    """
    d = (wins > np.swapaxes(wins, -1, -2)).astype(np.float64)
    e = d + np.swapaxes(d, -1, -2)
    cyc = np.einsum("...ij,...jk,...ki->...", d, d, d) / 3.0
    dec = np.einsum("...ij,...jk,...ki->...", e, e, e) / 6.0
    return np.rint(cyc), np.rint(dec)


def intransitivity(board: Board) -> Probe:
    """Excess share of cyclic decided triads over parametric simulations from the fit.

    Each simulation redraws every pair's decisive battles (same counts) from
    the fitted win probabilities; the interval of the excess is the observed
    share minus the simulated shares' central ``level`` range.  A flag means
    the votes contain more cycles than Bradley–Terry noise explains.
    """
    v = board.votes
    m = v.n_models
    dec = ((v.outcome == A_WINS) | (v.outcome == B_WINS)) & (v.a != v.b)
    win_a = v.outcome[dec] == A_WINS
    winner = np.where(win_a, v.a[dec], v.b[dec])
    loser = np.where(win_a, v.b[dec], v.a[dec])
    wins = np.zeros((m, m))
    np.add.at(wins, (winner, loser), v.weight[dec])
    cyc, decided = triad_shares(wins)
    if decided == 0:
        return Probe(
            "intransitivity",
            "Intransitivity (cyclic triads)",
            None,
            None,
            None,
            "share",
            EXCESS_BAND,
            False,
            "No decided triads: nothing to test.",
            {"decided_triads": 0, "cyclic_triads": 0},
        )
    obs = cyc / decided
    theta = board.fit().theta
    iu, ju = np.triu_indices(m, k=1)
    n_pair = (wins + wins.T)[iu, ju]
    live = n_pair > 0
    iu, ju, n_pair = iu[live], ju[live], n_pair[live]
    p = expit(theta[iu] - theta[ju])
    rng = np.random.default_rng(board.opts.seed)
    shares = np.empty(board.opts.rounds)
    chunk = max(1, min(board.opts.rounds, int(4e6 // max(m * m, 1))))
    for start in range(0, board.opts.rounds, chunk):
        r = min(chunk, board.opts.rounds - start)
        k = rng.binomial(np.rint(n_pair).astype(np.int64), p, size=(r, n_pair.size))
        w = np.zeros((r, m, m))
        w[:, iu, ju] = k
        w[:, ju, iu] = n_pair - k
        c, dsim = triad_shares(w)
        shares[start : start + r] = np.where(dsim > 0, c / np.maximum(dsim, 1), 0.0)
    tail = (1 - board.opts.level) / 2
    q_lo, q_hi = np.quantile(shares, [tail, 1 - tail])
    excess = float(obs - shares.mean())
    low, high = float(obs - q_hi), float(obs - q_lo)
    flagged = outside(low, high, EXCESS_BAND)
    if flagged:
        verdict = f"{obs:.1%} of decided triads are cyclic against {shares.mean():.1%} expected from the ratings: more cycles than Bradley–Terry noise explains."
    else:
        verdict = f"{obs:.1%} of decided triads are cyclic, {shares.mean():.1%} expected from the ratings: consistent with a transitive ranking."
    return Probe(
        "intransitivity",
        "Intransitivity (cyclic triads)",
        excess,
        low,
        high,
        "share",
        EXCESS_BAND,
        flagged,
        verdict,
        {
            "decided_triads": int(decided),
            "cyclic_triads": int(cyc),
            "observed_share": float(obs),
            "simulated_share": float(shares.mean()),
            "simulations": int(board.opts.rounds),
        },
    )
