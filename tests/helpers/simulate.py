"""Battles simulated from known Bradley-Terry strengths (engine-level arrays)."""

from __future__ import annotations

import numpy as np

from arena.core.outcomes import A_WINS, B_WINS, TIE


def simulate(rng: np.random.Generator, theta: np.ndarray, n_battles: int, *, tie_rate: float = 0.1):
    """Battles from known strengths: random pairs, ties with ``tie_rate``, else BT winner."""
    m = theta.size
    a = rng.integers(0, m, n_battles)
    b = (a + rng.integers(1, m, n_battles)) % m
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    u = rng.random(n_battles)
    o = np.where(u < p, A_WINS, B_WINS)
    o[rng.random(n_battles) < tie_rate] = TIE
    return a, b, o
