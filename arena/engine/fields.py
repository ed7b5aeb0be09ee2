"""Result fields that the function returning the result always fills in."""

from __future__ import annotations

from dataclasses import field
from typing import Any

__all__ = ["filled_by_producer"]


def filled_by_producer(*, repr: bool = False) -> Any:
    """Default ``None`` of a result field that its producer always sets.

    Solver state (design, parameters, inverse Hessian) and per-model arrays of a
    result are set by :func:`arena.engine.fitting.fit.fit`, :func:`arena.engine.rate.rate`
    and the like; ``None`` appears only in a result built by hand.  The default is
    typed ``Any`` so that every reader sees the field's declared type (an array, a
    design) instead of an Optional it would have to test at each use.
    """
    return field(repr=repr, default=None)
