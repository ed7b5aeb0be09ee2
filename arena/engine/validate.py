"""Argument checks shared by the engine's public functions (and by :mod:`arena.evals`)."""

from __future__ import annotations

import numpy as np

from arena.core.errors import ArgumentError
from arena.core.options import option

__all__ = ["check_level", "check_rounds", "interval_arrays", "rating_vector", "sample_matrix"]


def check_rounds(rounds: int) -> int:
    """Bootstrap rounds as an ``int``, within the one bound every entry point uses.

    Raises
    ------
    arena.core.errors.OptionError
        (a ``ValueError``) Not a whole number, or outside
        ``ROUNDS_MIN..ROUNDS_MAX`` (:mod:`arena.core.defaults`).
    """
    return option("rounds").check(rounds)  # type: ignore[return-value]


def check_level(level: float) -> float:
    """A confidence level strictly between 0 and 1, as a float.

    Raises
    ------
    ValueError
        Not a number, or outside ``(0, 1)``.
    """
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise ArgumentError(f"level must be a number in (0, 1), got {level!r}") from None
    if not 0.0 < value < 1.0:
        raise ArgumentError(f"level must be in (0, 1), got {level!r}")
    return value


def rating_vector(x: np.ndarray, name: str) -> np.ndarray:
    """A non-empty, finite 1-D float array."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ArgumentError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ArgumentError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ArgumentError(f"{name} must be finite")
    return arr


def interval_arrays(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interval bounds of equal shape with ``low <= high``."""
    lo = rating_vector(low, "low")
    hi = rating_vector(high, "high")
    if lo.shape != hi.shape:
        raise ArgumentError(f"low and high differ in shape: {lo.shape} vs {hi.shape}")
    if np.any(lo > hi):
        raise ArgumentError("every interval must have low <= high")
    return lo, hi


def sample_matrix(samples: np.ndarray, m: int) -> np.ndarray:
    """Finite bootstrap ratings of shape ``(rounds >= 2, m)``."""
    arr = np.asarray(samples, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != m:
        raise ArgumentError(f"samples must have shape (rounds, {m}), got {arr.shape}")
    if arr.shape[0] < 2:
        raise ArgumentError("samples needs at least 2 bootstrap rounds")
    if not np.all(np.isfinite(arr)):
        raise ArgumentError("samples must be finite")
    return arr
