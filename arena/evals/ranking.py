"""Ranks and tiers from pairwise verdicts (``arena eval``): no 1, 2, 3 the tests do not back.

Given which pairs a (multiplicity-corrected) paired test separates, and in
which direction, every model gets the ranks the verdicts allow and a tier:

* ``rank_ub[i] = 1 + #{j : j significantly better than i}`` (the best rank);
* ``rank_lb[i] = M - #{j : i significantly better than j}`` (the worst);
* tiers by the leader rule used on the arena board (``docs/tiers.md``): walk
  down the models in order of their point estimate; a model starts a new tier
  iff it is significantly worse than the current tier's leader.

When no pair is separated every model has ranks 1..M and all share tier 1.
"""

from __future__ import annotations

import numpy as np

from arena.core.errors import ArgumentError

__all__ = ["verdict_ranks", "verdict_tiers"]


def _better(better) -> np.ndarray:
    b = np.asarray(better, dtype=bool)
    if b.ndim != 2 or b.shape[0] != b.shape[1]:
        raise ArgumentError(f"better must be a square matrix, got shape {b.shape}")
    if np.any(b & b.T) or np.any(np.diag(b)):
        raise ArgumentError("better[i, j] and better[j, i] cannot both hold, nor better[i, i]")
    return b


def verdict_ranks(better) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst rank each model can have given the separated pairs.

    Parameters
    ----------
    better : array_like of bool, shape (M, M)
        ``better[i, j]``: the test says model ``i`` is better than model ``j``.

    Returns
    -------
    rank_ub, rank_lb : ndarray of int, shape (M,)
    """
    b = _better(better)
    m = b.shape[0]
    return 1 + b.sum(axis=0), m - b.sum(axis=1)


def verdict_tiers(order, better) -> np.ndarray:
    """Tiers (1, 2, ...) by the leader rule along ``order`` (best point estimate first).

    Parameters
    ----------
    order : array_like of int, shape (M,)
        Model indices, best point estimate first.
    better : array_like of bool, shape (M, M)

    Returns
    -------
    ndarray of int, shape (M,)
        Tier of each model (by model index).
    """
    b = _better(better)
    order = np.asarray(order, dtype=np.int64)
    tiers = np.zeros(b.shape[0], dtype=np.int64)
    tier, leader = 1, int(order[0]) if order.size else -1
    for k in order.tolist():
        if b[leader, k]:
            tier += 1
            leader = k
        tiers[k] = tier
    return tiers
