"""What every probe returns: an estimate, its interval, an innocent band and a verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from arena.core.words import name_list

__all__ = ["COUNT_UNITS", "Probe", "outside", "pooled_state", "skipped", "clean", "tripped_by"]

#: Units of probes whose estimate, interval and band are counts (integers in JSON).
COUNT_UNITS = frozenset({"pairs", "judges", "models", "battles", "votes"})


def outside(low: float, high: float, band: tuple[float, float]) -> bool:
    """True when the whole interval ``[low, high]`` lies outside ``band``."""
    return bool(high < band[0] or low > band[1])


def pooled_state(low: float, high: float, band: tuple[float, float]) -> str:
    """``"flagged"`` (interval outside the band), ``"OK"`` (inside) or ``"undecided"``."""
    if outside(low, high, band):
        return "flagged"
    return "OK" if low >= band[0] and high <= band[1] else "undecided"


def tripped_by(pooled: str, members: dict[str, list[str]]) -> str:
    """What flagged a probe that has a pooled estimate and flagged members.

    ``"pooled OK; judge j7 flagged"``, ``"pooled flagged; categories math and if
    flagged"``: ``pooled`` is a :func:`pooled_state`, ``members`` maps a kind
    (singular) to the names flagged.
    """
    parts = [f"pooled {pooled}"]
    for kind, names in members.items():
        if names:
            plural = kind[:-1] + "ies" if kind.endswith("y") else kind + "s"
            parts.append(f"{kind if len(names) == 1 else plural} {name_list(names)} flagged")
    return "; ".join(parts)


def clean(value: Any) -> Any:
    """JSON-safe value: floats rounded to 6 significant digits, inf/nan as None."""
    if isinstance(value, float):
        return None if not math.isfinite(value) else float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return clean(value.item())
    return value


def _count(x: float | None) -> int | float | None:
    """A whole number as an int (counts are integers in JSON); anything else unchanged."""
    if x is None or not math.isfinite(float(x)) or float(x) != round(float(x)):
        return x
    return int(round(float(x)))


@dataclass(frozen=True)
class Probe:
    """One audit probe's result.

    Attributes
    ----------
    name : str
        Machine name (``position``, ``ties``, ...).
    title : str
    estimate, low, high : float or None
        Headline estimate and its interval (``None`` when skipped).
    unit : str
    band : (float, float)
        The innocent band: values consistent with votes that are fine.
    flagged : bool
        Whole interval outside the band (or, for lists, any member flagged).
    verdict : str
        One plain-language sentence.
    details : dict
        Probe-specific rows (per judge, per pair, ...), JSON-serialisable.
    skipped : str or None
        Why the probe did not run (e.g. the data have no judges).
    """

    name: str
    title: str
    estimate: float | None
    low: float | None
    high: float | None
    unit: str
    band: tuple[float, float]
    flagged: bool
    verdict: str
    details: dict = field(default_factory=dict)
    skipped: str | None = None

    def to_dict(self) -> dict:
        number = _count if self.unit in COUNT_UNITS else (lambda x: x)
        return clean(
            {
                "name": self.name,
                "title": self.title,
                "estimate": number(self.estimate),
                "low": number(self.low),
                "high": number(self.high),
                "unit": self.unit,
                "band": [number(b) for b in self.band],
                "flagged": self.flagged,
                "verdict": self.verdict,
                "skipped": self.skipped,
                "details": self.details,
            }
        )


def skipped(name: str, title: str, unit: str, band: tuple[float, float], why: str) -> Probe:
    return Probe(name, title, None, None, None, unit, band, False, f"Skipped: {why}", {}, why)
