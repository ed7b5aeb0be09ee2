"""Multiple-comparison corrections for the p-values of many pairwise tests.

Used by the paired tiers (:mod:`arena.engine.inference.tiers`) and by the per-item
statistics (:mod:`arena.evals`), which re-export these functions.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from arena.core.errors import ArgumentError

__all__ = ["holm", "benjamini_hochberg", "adjust_pvalues", "CORRECTIONS"]

CORRECTIONS = ("holm", "bh", "none")


def _as_pvalues(pvalues: ArrayLike) -> np.ndarray:
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ArgumentError(f"pvalues must be a 1-D array, got shape {p.shape}")
    if np.isnan(p).any():
        raise ArgumentError("pvalues contain NaN")
    if ((p < 0) | (p > 1)).any():
        raise ArgumentError("pvalues must lie in [0, 1]")
    return p


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm step-down adjusted p-values (controls the family-wise error rate).

    Sorted ascending, ``p_(i)`` becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``.
    Reject hypothesis ``i`` at level alpha when the adjusted value is <= alpha.
    """
    p = _as_pvalues(pvalues)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(scaled)
    return out


def benjamini_hochberg(pvalues: ArrayLike) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (controls the false discovery rate).

    Sorted ascending, ``p_(i)`` becomes ``min_{j >= i} min(1, m p_(j) / j)``
    (:func:`scipy.stats.false_discovery_control`).
    """
    p = _as_pvalues(pvalues)
    if p.size == 0:
        return p.copy()
    # Imported here: scipy.stats costs ~0.5 s of start-up, and most commands never get here.
    from scipy.stats import false_discovery_control

    adjusted: np.ndarray = false_discovery_control(p, method="bh")
    return adjusted


def adjust_pvalues(pvalues: ArrayLike, method: str = "holm") -> np.ndarray:
    """Adjust p-values with ``"holm"``, ``"bh"`` (Benjamini-Hochberg) or ``"none"``."""
    if method == "holm":
        return holm(pvalues)
    if method == "bh":
        return benjamini_hochberg(pvalues)
    if method == "none":
        return _as_pvalues(pvalues).copy()
    raise ArgumentError(f"unknown correction {method!r}; expected one of {', '.join(CORRECTIONS)}")
