"""The rating scale: Elo points per logit, the mean rating, the win probability.

Ratings are ``BASE + SCALE * theta`` for Bradley–Terry log-strengths
``theta``; a difference of ``ELO_POINTS`` means 10:1 odds, as on Elo boards.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["BASE", "ELO_POINTS", "SCALE", "win_probability"]

#: Rating difference for 10:1 odds.
ELO_POINTS = 400.0
#: Elo points per logit.
SCALE = ELO_POINTS / np.log(10.0)
#: Mean rating (or rating of models with no battles).
BASE = 1000.0


def win_probability(diff: ArrayLike, *, elo_points: float = ELO_POINTS) -> Any:
    """Probability that a model ``diff`` rating points above another beats it.

    ``1 / (1 + 10 ** (-diff / elo_points))`` (ties not modelled), computed as
    ``expit``, so extreme differences do not overflow.

    Parameters
    ----------
    diff : float or array_like
        ``R_i - R_j``.
    elo_points : float
        Rating difference for 10:1 odds (400 on the Elo scale).

    Returns
    -------
    float or ndarray
    """
    # scipy.special on first use only: this module is on every command's import path
    # (a leaderboard reads the scale), and scipy.special alone costs ~0.2 s to import.
    from scipy import special

    return special.expit(np.asarray(diff, dtype=np.float64) * (np.log(10.0) / elo_points))
