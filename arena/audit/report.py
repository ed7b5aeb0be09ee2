"""Run every probe over one board: :func:`run_audit`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arena.audit import PROBE_NAMES
from arena.audit.anomaly import anomalous_judges
from arena.audit.clustering import clustering
from arena.audit.coverage import coverage
from arena.audit.influence import judge_influence
from arena.audit.position import position_bias
from arena.audit.result import Probe, clean
from arena.audit.setup import AuditOptions, Board
from arena.audit.ties import tie_convention
from arena.audit.transitivity import intransitivity
from arena.audit.votes import Votes
from arena.core.errors import ArgumentError

__all__ = ["AuditReport", "run_audit", "PROBES"]

PROBES: dict[str, Callable[[Board], Probe]] = {
    "position": position_bias,
    "ties": tie_convention,
    "intransitivity": intransitivity,
    "clustering": clustering,
    "influence": judge_influence,
    "anomaly": anomalous_judges,
    "coverage": coverage,
}
assert tuple(PROBES) == PROBE_NAMES


@dataclass(frozen=True)
class AuditReport:
    """All probes of one board."""

    probes: tuple[Probe, ...]
    options: AuditOptions
    n_votes: int
    n_models: int
    n_judges: int

    @property
    def flagged_judges(self) -> list[str]:
        for p in self.probes:
            if p.name == "anomaly" and not p.skipped:
                return list(p.details.get("flagged_judges", []))
        return []

    @property
    def judge_outcomes(self) -> dict | None:
        """Judges per outcome of the anomaly probe (flagged, consistent, too few votes), or None."""
        for p in self.probes:
            if p.name == "anomaly" and not p.skipped:
                return dict(p.details.get("outcomes", {}))
        return None

    def probe(self, name: str) -> Probe:
        return next(p for p in self.probes if p.name == name)

    def to_dict(self) -> dict:
        from dataclasses import asdict

        return clean(
            {
                "options": asdict(self.options),
                "votes": self.n_votes,
                "models": self.n_models,
                "judges": self.n_judges,
                "flagged_judges": self.flagged_judges,
                "judge_outcomes": self.judge_outcomes,
                "probes": [p.to_dict() for p in self.probes],
            }
        )


def run_audit(
    votes: Votes,
    opts: AuditOptions | None = None,
    *,
    only: tuple[str, ...] | None = None,
    progress: Callable[[str], None] | None = None,
    organisations: dict | None = None,
) -> AuditReport:
    """Run the probes (all, or ``only`` those named) over ``votes``.

    ``organisations`` (model name -> organisation) enables the anomaly
    probe's organisation-favouring deviation.

    Raises
    ------
    ValueError
        No votes, or an unknown probe name.
    """
    opts = opts or AuditOptions()
    if votes.n_votes == 0:
        raise ArgumentError("no rated votes to audit")
    names = tuple(PROBES) if only is None else only
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise ArgumentError(
            f"unknown probe(s) {', '.join(unknown)}; choose from {', '.join(PROBES)}"
        )
    board = Board(votes, opts, organisations=dict(organisations or {}))
    probes = []
    for name in names:
        if progress:
            progress(f"audit: {name}")
        probes.append(PROBES[name](board))
    return AuditReport(
        tuple(probes),
        opts,
        votes.n_votes,
        int((board.battles > 0).sum()),
        len(votes.judges),
    )
