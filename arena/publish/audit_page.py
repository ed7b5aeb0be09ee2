"""The "Audit" page: the stored vote audit of the main snapshot, as a typed context."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.audit.result import pooled_state, tripped_by
from arena.publish.context import Link

if TYPE_CHECKING:
    from arena.publish.agreement_view import AgreementView

__all__ = [
    "AuditPage",
    "ProbeView",
    "JudgeView",
    "JudgeOutcomes",
    "audit_page",
    "AUDIT_FILE",
    "STATUS_WORDS",
    "OUTCOME_WORDS",
]

AUDIT_FILE = "audit.html"


#: Probe status -> (word on the page, CSS class of its badge).
STATUS_WORDS = {
    "flagged": ("Flagged", "flagged"),
    "within band": ("Within band", "ok"),
    "undecided": ("Undecided", "undecided"),
    "skipped": ("Skipped", "skipped"),
}


@dataclass(frozen=True)
class ProbeView:
    name: str
    title: str
    estimate: str
    interval: str
    band: str
    status: str  # "flagged", "within band", "undecided", "skipped"
    verdict: str

    @property
    def status_word(self) -> str:
        return STATUS_WORDS[self.status][0]

    @property
    def status_class(self) -> str:
        return STATUS_WORDS[self.status][1]


#: A judge's outcome (the anomaly probe's ``outcome``) -> (word on the page, CSS class).
OUTCOME_WORDS = {
    "flagged": ("Flagged", "flagged"),
    "consistent": ("Consistent with the board", "ok"),
    "too few votes": ("Too few votes to tell", "undecided"),
}


@dataclass(frozen=True)
class JudgeView:
    judge: str
    votes: int
    reasons: str
    outcome: str = "flagged"
    #: What the test saw: the effect and its interval (flagged), the power (consistent)
    #: or the votes needed (too few votes).
    detail: str = ""

    @property
    def outcome_word(self) -> str:
        return OUTCOME_WORDS[self.outcome][0]

    @property
    def outcome_class(self) -> str:
        return OUTCOME_WORDS[self.outcome][1]


@dataclass(frozen=True)
class JudgeOutcomes:
    """Every judge's outcome (an audit stored since issue 40), flagged first."""

    summary: str
    material: str
    hint: str | None
    judges: tuple[JudgeView, ...]


@dataclass(frozen=True)
class AuditPage:
    title: str
    description: str
    summary: str
    snapshot_id: int
    board_label: str
    votes: int
    judges: int
    level: str
    alpha: str
    probes: tuple[ProbeView, ...]
    flagged_judges: tuple[JudgeView, ...]
    nav: tuple[Link, ...]
    attribution: str | None
    root: str = ""
    #: Each published source's board against the reference source (``agreement_view``).
    agreements: tuple[AgreementView, ...] = ()
    #: Every judge flagged, consistent or with too few votes to tell (None: an older audit).
    outcomes: JudgeOutcomes | None = None
    #: The snapshot the board's page shows (the audit may be of an earlier one).
    shown_snapshot: int = 0

    @property
    def audited(self) -> bool:
        """A vote audit is stored (else the page holds the agreement only)."""
        return bool(self.probes)

    @property
    def older(self) -> bool:
        """The audit is of an earlier snapshot than the one the board shows."""
        return self.audited and 0 < self.snapshot_id < self.shown_snapshot


def _num(x: float | None, unit: str) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if unit == "share":
        return f"{x:+.1%}"
    if unit in ("pairs", "judges"):
        return f"{x:.0f}"
    return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}"


def _unit(x: float | None, unit: str) -> str:
    if x is None:
        return ""
    return " judge" if unit == "judges" and x == 1 else f" {unit}"


def _band(band: list[float], unit: str) -> str:
    lo, hi = band
    lo_s = "−∞" if lo is None else _num(lo, unit)
    hi_s = "∞" if hi is None else _num(hi, unit)
    return lo_s if lo_s == hi_s else f"{lo_s} to {hi_s}"


def _status(p: dict[str, Any]) -> str:
    if p["skipped"]:
        return "skipped"
    if p["flagged"]:
        return "flagged"
    lo, hi = p["band"]
    if p["low"] is None or p["low"] == p["high"]:
        return "within band"
    inside = (lo is None or p["low"] >= lo) and (hi is None or p["high"] <= hi)
    return "within band" if inside else "undecided"


def _verdict(p: dict[str, Any]) -> str:
    """The probe's sentence, ``+-`` as ``±``.

    An audit stored before position verdicts said what tripped the flag reads
    "No position bias ..." beside "Flagged" when only judges or categories were
    flagged; it gets the "Flagged: pooled OK; judge X flagged." opening the
    probe writes now (:func:`arena.audit.position.position_verdict`).
    """
    text: str = p["verdict"]
    if p["name"] == "position" and p["flagged"] and not text.startswith("Flagged"):
        members = {
            kind: [r[kind] for r in p["details"].get(key, []) if r["flagged"]]
            for kind, key in (("judge", "judges"), ("category", "categories"))
        }
        if any(members.values()) and p["low"] is not None:
            pooled = pooled_state(p["low"], p["high"], tuple(p["band"]))
            text = f"Flagged: {tripped_by(pooled, members)}. {text}"
    return text.replace("+-", "±")


def _summary(counts: dict[str, int], probes: int, judges: int) -> str:
    """ "2 of 7 probes flagged, 4 within their band, 1 undecided; 1 judge flagged"."""
    parts = [f"{counts['flagged']} of {probes} probes flagged"]
    if counts["within band"]:
        parts.append(f"{counts['within band']} within their band")
    for status in ("undecided", "skipped"):
        if counts[status]:
            parts.append(f"{counts[status]} {status}")
    text = ", ".join(parts)
    if judges:
        text += f"; {judges} judge{'s' if judges != 1 else ''} flagged"
    return text


def _detail(r: dict[str, Any], target: float) -> str:
    """What the test saw of one judge, in a phrase."""
    if r["outcome"] == "flagged":
        return r.get("effect") or ", ".join(r["reasons"])
    if r["outcome"] == "consistent":
        return f"power {r['power']:.0%} to see a material departure"
    need = r.get("votes_needed")
    if need is None:
        return f"more votes like these would not reach {target:.0%} power"
    return f"needs {need} votes for {target:.0%} power ({r['power']:.0%} now)"


def judge_outcomes(details: dict[str, Any]) -> JudgeOutcomes | None:
    """The judges' outcomes of an anomaly probe's details (None: stored before issue 40)."""
    rows = details.get("judges", [])
    if not rows or "outcome" not in rows[0] or "summary" not in details:
        return None
    order = {"flagged": 0, "too few votes": 1, "consistent": 2}
    target = float(details.get("power_target", 0.8))
    views = tuple(
        JudgeView(
            r["judge"], int(r["votes"]), ", ".join(r["reasons"]), r["outcome"], _detail(r, target)
        )
        for r in sorted(rows, key=lambda r: (order[r["outcome"]], -r["votes"], r["judge"]))
    )
    return JudgeOutcomes(
        summary=details["summary"],
        material=details["material"]["sentence"],
        hint=details.get("hint"),
        judges=views,
    )


def audit_page(
    doc: dict[str, Any] | None,
    *,
    board_label: str,
    nav: tuple[Link, ...],
    attribution: str | None,
    agreements: tuple[AgreementView, ...] = (),
    snapshot_id: int | None = None,
) -> AuditPage:
    """Page context from a stored audit document (see :mod:`arena.audit.read`).

    ``doc`` None (no audit stored for the snapshot ``snapshot_id``): the page
    holds the agreement section only.
    """
    if doc is None:
        return AuditPage(
            title=f"Audit · {board_label}",
            description=f"Agreement between the sources of the {board_label} leaderboard.",
            summary="No vote audit has been run on this board yet",
            snapshot_id=int(snapshot_id or 0),
            board_label=board_label,
            votes=0,
            judges=0,
            level="",
            alpha="",
            probes=(),
            flagged_judges=(),
            nav=nav,
            attribution=attribution,
            agreements=tuple(agreements),
            shown_snapshot=int(snapshot_id or 0),
        )
    probes = []
    for p in doc["probes"]:
        unit = p["unit"]
        interval = (
            "–"
            if p["low"] is None
            else (
                _num(p["low"], unit)
                if p["low"] == p["high"]
                else f"{_num(p['low'], unit)} to {_num(p['high'], unit)}"
            )
        )
        probes.append(
            ProbeView(
                name=p["name"],
                title=p["title"],
                estimate=_num(p["estimate"], unit) + _unit(p["estimate"], unit),
                interval=interval,
                band=_band(p["band"], unit),
                status=_status(p),
                verdict=_verdict(p),
            )
        )
    counts = {k: sum(p.status == k for p in probes) for k in STATUS_WORDS}
    judges = []
    outcomes = None
    for p in doc["probes"]:
        if p["name"] == "anomaly" and not p["skipped"]:
            outcomes = judge_outcomes(p["details"])
            for r in p["details"]["judges"]:
                if r["flagged"]:
                    judges.append(JudgeView(r["judge"], int(r["votes"]), ", ".join(r["reasons"])))
    summary = _summary(counts, len(probes), 0 if outcomes else len(judges))
    if outcomes:  # every judge's outcome, not only the flagged ones
        summary += f"; {outcomes.summary}"
    opts = doc["options"]
    return AuditPage(
        title=f"Vote audit · {board_label}",
        description=(
            f"Vote-quality audit of the {board_label} leaderboard, "
            f"snapshot {int(doc['snapshot'])}: {summary}."
        ),
        summary=summary,
        snapshot_id=int(doc["snapshot"]),
        board_label=board_label,
        votes=int(doc["votes"]),
        judges=int(doc["judges"]),
        level=f"{opts['level']:.0%}",
        alpha=f"{opts['alpha']:g}",
        probes=tuple(probes),
        flagged_judges=tuple(judges),
        nav=nav,
        attribution=attribution,
        agreements=tuple(agreements),
        outcomes=outcomes,
        shown_snapshot=int(snapshot_id or doc["snapshot"]),
    )
