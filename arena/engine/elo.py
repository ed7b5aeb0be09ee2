"""Online Elo: a secondary, order-dependent rating for users migrating from Elo boards.

Unlike the Bradley–Terry fit, online Elo depends on the order of the battles
and on the K-factor, and carries no uncertainty; it is offered for
comparison and continuity only, and should be labelled as such.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from arena.core.errors import ArgumentError
from arena.core.outcomes import A_WINS, B_WINS
from arena.engine.scale import BASE, ELO_POINTS, win_probability

__all__ = ["online_elo"]


def online_elo(
    model_a: ArrayLike,
    model_b: ArrayLike,
    outcome: ArrayLike,
    *,
    n_models: int,
    k: float = 4.0,
    base: float = BASE,
    scale: float = ELO_POINTS,
    order: ArrayLike | None = None,
) -> np.ndarray:
    """Sequential Elo ratings (ONLINE ELO, not the Bradley–Terry estimate).

    Parameters
    ----------
    model_a, model_b : array_like of int, shape (B,)
        Model indices per battle.
    outcome : array_like of int, shape (B,)
        Outcome codes; both tie codes score 0.5 for each side.
    n_models : int
    k : float
        K-factor (rating points moved by a fully unexpected result).
    base : float
        Starting rating of every model.
    scale : float
        Rating difference for 10:1 odds.
    order : array_like, shape (B,), optional
        Sort key (e.g. timestamps); battles are processed in stable sorted
        order of this key, else in the given order.

    Returns
    -------
    ndarray, shape (n_models,)
        Final ratings.  Self-play battles are skipped.
    """
    a = np.asarray(model_a, dtype=np.intp)
    b = np.asarray(model_b, dtype=np.intp)
    o = np.asarray(outcome)
    if not (a.shape == b.shape == o.shape) or a.ndim != 1:
        raise ArgumentError("model_a, model_b and outcome must be 1-d arrays of the same length")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_models):
        raise ArgumentError(f"model indices must lie in [0, {n_models})")
    if order is not None:
        idx = np.argsort(np.asarray(order), kind="stable")
        a, b, o = a[idx], b[idx], o[idx]
    score = np.where(o == A_WINS, 1.0, np.where(o == B_WINS, 0.0, 0.5))
    ratings = [float(base)] * int(n_models)
    # inherently sequential: each update depends on the previous ratings
    for i, j, s in zip(a.tolist(), b.tolist(), score.tolist(), strict=True):
        if i == j:
            continue
        ri, rj = ratings[i], ratings[j]
        expected = float(win_probability(ri - rj, elo_points=scale))
        delta = k * (s - expected)
        ratings[i] = ri + delta
        ratings[j] = rj - delta
    return np.asarray(ratings)
