"""What the probes share: the votes, the options and one fit of the board."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.special import ndtri

from arena.audit.votes import Votes
from arena.core.defaults import (
    DEFAULT_AUDIT_ALPHA,
    DEFAULT_AUDIT_MATERIAL_POINTS,
    DEFAULT_BOTH_BAD,
    DEFAULT_LEVEL,
    DEFAULT_MIN_BATTLES,
    DEFAULT_POWER,
    DEFAULT_ROUNDS,
    DEFAULT_SEED,
    DEFAULT_TIES,
)
from arena.core.errors import OptionError
from arena.engine.fitting.fit import Fit, fit
from arena.engine.scale import SCALE

__all__ = ["AuditOptions", "Board", "SCALE"]


@dataclass(frozen=True)
class AuditOptions:
    """Options of an audit (the fit options normally come from the snapshot).

    Attributes
    ----------
    level : float
        Confidence level of every interval (families are Bonferroni-adjusted).
    alpha : float
        Test level of the anomalous-judge detectors.
    seed : int
    rounds : int
        Bootstrap rounds and simulations.
    ties, both_bad : str
        As in :func:`arena.engine.fitting.fit.fit`.
    min_battles : int
        Ranking threshold of the board.
    material : float
        A material departure of a judge: favouring a position, model or
        organisation by this many points of win rate in an even match (or
        agreeing no more often than a coin); see :mod:`arena.audit.judge_power`.
    power : float
        Power against a material departure at which an unflagged judge is
        "consistent with the board" (below: too few votes to tell).
    """

    level: float = DEFAULT_LEVEL
    alpha: float = DEFAULT_AUDIT_ALPHA
    seed: int = DEFAULT_SEED
    rounds: int = DEFAULT_ROUNDS
    ties: str = DEFAULT_TIES
    both_bad: str = DEFAULT_BOTH_BAD
    min_battles: int = DEFAULT_MIN_BATTLES
    material: float = DEFAULT_AUDIT_MATERIAL_POINTS
    power: float = DEFAULT_POWER

    def __post_init__(self) -> None:
        if not 0 < self.power < 1:
            raise OptionError("power", "{name} must be between 0 and 1")
        if not 0 < self.material < 0.5:
            raise OptionError(
                "material", "{name} must be between 0 and 0.5 (win-rate points as a share)"
            )


@dataclass
class Board:
    """Votes plus the reference fit (no position term), computed once."""

    votes: Votes
    opts: AuditOptions
    #: Model name -> organisation (the ``organisation`` annotation), for the
    #: organisation-favouring deviation of the anomaly probe; empty: no such probe.
    organisations: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False)

    def z(self, family: int = 1) -> float:
        """Two-sided normal critical value at the audit level, Bonferroni over ``family``."""
        return float(ndtri(1 - (1 - self.opts.level) / (2 * max(family, 1))))

    def fit(self, *, position: bool = False, ties: str | None = None) -> Fit:
        key = ("fit", position, ties)
        if key not in self._cache:
            self._cache[key] = fit(
                self.votes.table(),
                ties=ties or self.opts.ties,
                both_bad=self.opts.both_bad,
                position=position,
            )
        return self._cache[key]

    @cached_property
    def scored(self) -> tuple[np.ndarray, np.ndarray]:
        return self.votes.score(self.opts.both_bad)

    @cached_property
    def tie_share(self) -> float:
        y, keep = self.scored
        return float(np.mean(y[keep] == 0.5)) if keep.any() else 0.0

    @cached_property
    def battles(self) -> np.ndarray:
        return self.votes.battles_per_model()

    @cached_property
    def ranked(self) -> np.ndarray:
        return self.battles >= max(self.opts.min_battles, 1)

    def logit(self, theta: np.ndarray) -> np.ndarray:
        """Log-odds of the first-shown model of every vote under ``theta``."""
        return theta[self.votes.a] - theta[self.votes.b]


def leave_one_judge_out(board: Board) -> np.ndarray:
    """Point fits without each judge's votes: thetas, shape (J, M).

    Cached on the board: the influence probe and the anomaly detector share them.
    A model left with no battles gets NaN.
    """
    if "lojo" in board._cache:
        return board._cache["lojo"]
    v, o = board.votes, board.opts
    nj = len(v.judges)
    theta = np.full((nj, v.n_models), np.nan)
    for j in range(nj):
        keep = v.judge != j
        f = fit(v.table(keep), ties=o.ties, both_bad=o.both_bad)
        left = np.bincount(v.a[keep], minlength=v.n_models) + np.bincount(
            v.b[keep], minlength=v.n_models
        )
        theta[j] = np.where(left > 0, f.theta, np.nan)
    board._cache["lojo"] = theta
    return theta
