"""The model options of a fit, in one place: :class:`FitOptions`.

:func:`~arena.engine.fit.fit`, :func:`~arena.engine.bootstrap.bootstrap`,
:func:`~arena.engine.rate.rate`, the style-controlled
:func:`~arena.engine.style.fit.fit_style`, :func:`~arena.engine.style.boot.bootstrap_style`,
:func:`~arena.engine.style.rate.rate_style` and the rebuild's options all carry the same
:class:`FitOptions`, so a new model option (a covariate, a tie model) is
added here once and reaches every entry point.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

__all__ = ["FitOptions", "fit_options"]


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

    ties: str = "half"
    both_bad: str = "tie"
    position: bool = False
    prior: float | None = None
    anchor: tuple[int, float] | None = None


_NAMES = frozenset(f.name for f in fields(FitOptions))


def fit_options(options: FitOptions | None = None, /, **overrides) -> FitOptions:
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
        raise TypeError(f"unknown fit option(s): {', '.join(unknown)}")
    base = FitOptions() if options is None else options
    return replace(base, **overrides) if overrides else base
