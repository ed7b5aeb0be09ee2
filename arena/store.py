"""Read-side queries over the battle store (no rating logic here)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass

from sqlalchemy import Connection, func, select

from arena.db.models import Battle, Model
from arena.outcomes import Outcome


@dataclass
class ModelRecord:
    model: str
    battles: int
    wins: int
    losses: int
    ties: int
    excluded: int
    organisation: str | None
    licence: str | None
    hidden: bool

    def as_dict(self) -> dict:
        return asdict(self)


def model_records(conn: Connection) -> list[ModelRecord]:
    """Every model with its rated battles, wins, losses and ties (both tie kinds),
    sorted by battles (most first), then name."""
    tally: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for side, column in (("a", Battle.model_a_id), ("b", Battle.model_b_id)):
        rows = conn.execute(
            select(column, Battle.outcome, Battle.excluded_reason.is_(None), func.count()).group_by(
                column, Battle.outcome, Battle.excluded_reason.is_(None)
            )
        )
        for model_id, outcome, rated, n in rows:
            t = tally[model_id]
            if not rated:
                # A self-play battle appears on both sides; count it once.
                if side == "a":
                    t["excluded"] += n
                continue
            t["battles"] += n
            if outcome in (Outcome.TIE, Outcome.TIE_BOTH_BAD):
                t["ties"] += n
            elif (outcome == Outcome.A_WINS) == (side == "a"):
                t["wins"] += n
            else:
                t["losses"] += n
    out = []
    for m in conn.execute(
        select(Model.id, Model.name, Model.organisation, Model.licence, Model.hidden)
    ):
        t = tally.get(m.id, {})
        out.append(
            ModelRecord(
                model=m.name,
                battles=t.get("battles", 0),
                wins=t.get("wins", 0),
                losses=t.get("losses", 0),
                ties=t.get("ties", 0),
                excluded=t.get("excluded", 0),
                organisation=m.organisation,
                licence=m.licence,
                hidden=bool(m.hidden),
            )
        )
    out.sort(key=lambda r: (-r.battles, r.model))
    return out
