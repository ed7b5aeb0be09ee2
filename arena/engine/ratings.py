"""What rating one board gives: :class:`Ratings`, the result every rating path returns.

Its own module so that the paths that produce it (:func:`arena.engine.rate.rate`,
the comparable-set extension in :mod:`arena.engine.sets.comparable`, style
control) and those that read it (tiers, the board) import it without importing
each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena.engine.fields import filled_by_producer
from arena.engine.fitting.fit import Fit
from arena.engine.messages import flag_warnings
from arena.engine.resampling.bootstrap import Bootstrap
from arena.engine.sets.components import Components

__all__ = ["Ratings"]


@dataclass(frozen=True)
class Ratings:
    """Ratings with intervals, as consumed by tiering and the page.

    Attributes
    ----------
    rating, ci_low, ci_high, se : ndarray, shape (M,)
        NaN rating and SE for models outside the comparable set; their
        bounds are NaN, or a one-sided score interval (``ci_high = inf``
        for a model that never lost to the set) when they met it.
    samples : ndarray, shape (rounds, M)
        Bootstrap ratings (converged rounds), or for analytic methods
        ``rounds`` fixed draws from ``N(rating, cov)`` (no seed enters:
        :func:`arena.engine.inference.intervals.normal_draws`), so downstream code
        treats every method alike.  NaN columns outside the comparable set.
    cov : ndarray (M, M) or None
        Analytic covariance (``None`` for the bootstrap).
    flags : list of tuple of str
    warnings : list of str
    diagnostics : dict
        JSON-serialisable run facts (method, convergence, failed rounds, ...).
    """

    rating: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    se: np.ndarray
    samples: np.ndarray
    cov: np.ndarray | None
    flags: list[tuple[str, ...]]
    warnings: list[str]
    diagnostics: dict[str, Any]
    fit: Fit = filled_by_producer()
    boot: Bootstrap | None = field(repr=False, default=None)
    #: (M,) bool: on the common scale, so ranks, tiers and verdicts may use it.
    comparable: np.ndarray = filled_by_producer()
    #: (M,) bool: interval set by the small-sample rule (``smallsample``).
    small_sample: np.ndarray = filled_by_producer()
    #: Strongly connected components (``None`` for ``comparable="joint"``).
    components: Components | None = field(repr=False, default=None)

    def named_warnings(self, names: Sequence[str] | None) -> list[str]:
        """``warnings`` with models named by ``names[index]`` (at most 10 per sentence).

        (``rate(..., names=)`` names them from the start; this is for a result
        computed without names.)
        """
        flagged = set(flag_warnings(self.flags)) | set(flag_warnings(self.flags, names))
        rest = [w for w in self.warnings if w not in flagged]
        return flag_warnings(self.flags, names) + rest
