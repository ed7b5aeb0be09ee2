"""The model options of a fit, in one place: :class:`FitOptions`.

:func:`~arena.engine.fitting.fit.fit`, :func:`~arena.engine.resampling.bootstrap.bootstrap`,
:func:`~arena.engine.rate.rate`, the style-controlled
:func:`~arena.engine.style.fit.fit_style`, :func:`~arena.engine.style.boot.bootstrap_style`,
:func:`~arena.engine.style.rate.rate_style` and the rebuild's options all carry the same
:class:`FitOptions`, so a new model option (a covariate, a tie model) is
added here once and reaches every entry point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from arena.core.defaults import DEFAULT_BOTH_BAD, DEFAULT_TIES
from arena.core.errors import ArgumentTypeError

if TYPE_CHECKING:
    import numpy as np

    from arena.engine.fitting.design import Design

__all__ = ["FitOptions", "RateRun", "fit_options"]


@dataclass(frozen=True)
class FitOptions:
    """What model is fitted (not how its uncertainty is measured).

    Attributes
    ----------
    ties : {"half", "davidson"}
        Ties as half a win for each side (LMArena) or the Davidson tie model.
    both_bad : {"tie", "drop"}
        ``tie_both_bad`` votes count as ties, or are dropped.
    position : bool
        Fit a first-shown advantage ``gamma`` (like home advantage).
    prior : float or None
        ``None``: MLE when it exists, else the weak Gaussian prior
        ``DEFAULT_PRIOR``; ``0``: MLE or :class:`ValueError`; ``> 0``: MAP
        with that precision.
    anchor : (int, float) or None
        ``(model_index, rating)``: shift so that model has this rating.
        Default: mean rating ``BASE``.
    """

    ties: str = DEFAULT_TIES
    both_bad: str = DEFAULT_BOTH_BAD
    position: bool = False
    prior: float | None = None
    anchor: tuple[int, float] | None = None


_NAMES = frozenset(f.name for f in fields(FitOptions))


def fit_options(options: FitOptions | None = None, /, **overrides: Any) -> FitOptions:
    """``options`` (default :class:`FitOptions()`) with some fields replaced.

    The engine's entry points accept either an options object or its fields as
    keywords (``fit(table, ties="davidson")``); this merges the two.

    Raises
    ------
    TypeError
        An override that is not a field of :class:`FitOptions`.
    """
    unknown = sorted(set(overrides) - _NAMES)
    if unknown:
        raise ArgumentTypeError(f"unknown fit option(s): {', '.join(unknown)}")
    base = FitOptions() if options is None else options
    return replace(base, **overrides) if overrides else base


@dataclass(frozen=True)
class RateRun:
    """How :func:`arena.engine.rate.rate` rates one table: its options, checked once.

    ``rate`` takes them as keywords (the engine's public signature) and hands
    this one object to each step (the fit, the intervals, the comparable
    set's embedding), so no step reads options out of a dict.
    """

    #: the model fitted (the anchor is set per fit)
    model: FitOptions
    ci: str
    level: float
    rounds: int
    seed: int | np.random.Generator
    simultaneous: bool | str
    workers: int | None
    small_sample: bool
    progress: Callable[[str], None] | None
    #: model names by table index (for messages), or None
    names: Sequence[str] | None
    #: the sparse engine path (:mod:`arena.engine.sparse.fit`)
    sparse: bool = False
    #: a design of exactly this table and model, to reuse in the fit
    design: Design | None = None
    #: log-strengths of the table's models to warm-start the dense point fit from
    start: np.ndarray | None = None

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)
