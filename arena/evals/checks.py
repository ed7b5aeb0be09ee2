"""Input validation shared by the statistics modules.

Every public function checks its input here so that malformed data fails early
with a ``ValueError`` that says what is wrong, instead of a numpy broadcasting
error or a silently wrong interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.core.errors import ArgumentError, ArgumentTypeError
from arena.engine.validate import check_level


def as_binary(values: object, name: str) -> np.ndarray:
    """Return ``values`` as a non-empty 1-D float array of 0s and 1s.

    Booleans are accepted; anything else must compare equal to 0 or 1.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ArgumentError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ArgumentError(f"{name} is empty")
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if not np.issubdtype(arr.dtype, np.number):
        raise ArgumentError(f"{name} must be numeric 0/1 values, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    bad = ~((arr == 0.0) | (arr == 1.0))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ArgumentError(f"{name} must contain only 0 and 1; entry {pos} is {arr[pos]!r}")
    return arr


def as_finite(values: object, name: str) -> np.ndarray:
    """Return ``values`` as a non-empty 1-D array of finite floats."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ArgumentError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ArgumentError(f"{name} is empty")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ArgumentError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ArgumentError(f"{name} contains NaN or infinite values")
    return arr


def same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ArgumentError(
            f"{name_a} and {name_b} must have the same length, got {a.shape[0]} and {b.shape[0]}"
        )


def check_probability(p: float, name: str, *, open_interval: bool = True) -> float:
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} must be a probability, got {p!r}") from None
    ok = 0.0 < value < 1.0 if open_interval else 0.0 <= value <= 1.0
    if not ok:
        bounds = "(0, 1)" if open_interval else "[0, 1]"
        raise ArgumentError(f"{name} must be in {bounds}, got {p!r}")
    return value


def check_count(n: int, name: str, *, minimum: int = 1) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ArgumentError(f"{name} must be an integer, got {n!r}")
    if n < minimum:
        raise ArgumentError(f"{name} must be at least {minimum}, got {n}")
    return int(n)


def check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ArgumentTypeError(
            "rng must be a numpy.random.Generator, e.g. numpy.random.default_rng(seed); "
            f"got {type(rng).__name__}"
        )
    return rng


def quantile_levels(level: float) -> tuple[float, float]:
    """The two-sided tail quantiles ``(1 - level) / 2`` and ``(1 + level) / 2``."""
    level = check_level(level)
    return (1.0 - level) / 2.0, (1.0 + level) / 2.0


def percentile_bounds(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-interval bounds along axis 0; NaN resamples (possible only for
    ratio estimates when a resample drew none of the items) are ignored."""
    lo_q, hi_q = quantile_levels(level)
    if np.isnan(samples).any():
        lo, hi = np.nanquantile(samples, [lo_q, hi_q], axis=0)
    else:
        lo, hi = np.quantile(samples, [lo_q, hi_q], axis=0)
    return lo, hi


class DegenerateResamplesWarning(UserWarning):
    """Every bootstrap resample gave the same value: a resampling interval has zero width."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval.

    Attributes
    ----------
    estimate : float
        The statistic on the original data.
    low, high : float
        Interval bounds.
    level : float
        Nominal coverage, e.g. 0.95.
    note : str or None
        How the interval was obtained when it is not what was asked for
        (e.g. the Clopper-Pearson fallback for degenerate resamples).
    """

    estimate: float
    low: float
    high: float
    level: float
    note: str | None = None
