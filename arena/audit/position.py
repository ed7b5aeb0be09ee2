"""Position bias: does the first-shown answer (model_a) win more than its rating says?"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from arena.audit.offset import group_fit
from arena.audit.result import Probe, outside, pooled_state, tripped_by
from arena.audit.setup import SCALE, Board
from arena.audit.votes import NO_KEY
from arena.engine.fitting.fit import fit

__all__ = ["position_bias", "position_verdict", "POSITION_BAND"]

#: Innocent band (Elo): between equal models the first-shown wins at most ~51.4%.
POSITION_BAND = (-10.0, 10.0)


def _order_changes(board: Board) -> list[dict]:
    """Ranked pairs whose order flips once the position term is fitted."""
    r0, r1 = board.fit().rating, board.fit(position=True).rating
    idx = np.flatnonzero(board.ranked)
    out = []
    for k, i in enumerate(idx):
        for j in idx[k + 1 :]:
            if (r0[i] - r0[j]) * (r1[i] - r1[j]) < 0:
                hi, lo = (i, j) if r0[i] > r0[j] else (j, i)
                out.append(
                    {
                        "above": board.votes.names[hi],
                        "below": board.votes.names[lo],
                        "gap_without": float(r0[hi] - r0[lo]),
                        "gap_with": float(r1[hi] - r1[lo]),
                    }
                )
    return out


def _own(rows: list[dict], key: str, kind: str, plural: str) -> str:
    """The one flagged member's own estimate, or how many members are flagged."""
    hit = [r for r in rows if r["flagged"]]
    if len(hit) == 1:
        r = hit[0]
        lo, hi = r["low"], r["high"]
        if math.isfinite(lo) and math.isfinite(hi):
            size = f"{r['estimate']:+.1f} Elo ({lo:+.1f} to {hi:+.1f})"
        else:  # every vote for one side: no finite estimate, a one-sided interval
            size = f"{lo:+.1f} Elo or more" if math.isfinite(lo) else f"{hi:+.1f} Elo or less"
        return f" {kind.capitalize()} {r[key]}: {size} on its own votes."
    return f" {len(hit)} {plural} show their own position bias beyond the band." if hit else ""


def position_verdict(gamma: float, low: float, high: float, pooled: str, details: dict) -> str:
    """The probe's sentence; a flag raised by judges or categories says so first.

    Per-judge and per-category flags also flag the probe, so a pooled estimate
    inside the band can stand beside a flag; the sentence then opens with
    "Flagged: pooled OK; judge X flagged" instead of "No position bias".
    ``pooled`` is :func:`arena.audit.result.pooled_state` of the pooled interval.
    """
    cats = [r["category"] for r in details["categories"] if r["flagged"]]
    judges = [r["judge"] for r in details["judges"] if r["flagged"]]
    interval = f"{gamma:+.1f} Elo ({low:+.1f} to {high:+.1f})"
    side = "first" if gamma > 0 else "second"
    if judges or cats:
        pooled_words = {
            "flagged": f"the {side}-shown answer favoured beyond the +-10 Elo band",
            "OK": "within +-10 Elo",
            "undecided": "the data cannot tell whether it exceeds +-10 Elo",
        }[pooled]
        return (
            f"Flagged: {tripped_by(pooled, {'judge': judges, 'category': cats})}. "
            f"Pooled: {interval}, {pooled_words}."
            + _own(details["judges"], "judge", "judge", "judges")
            + _own(details["categories"], "category", "category", "categories")
        )
    if pooled == "flagged":
        return f"The {side}-shown answer has an advantage of {interval}, beyond the +-10 Elo band."
    if pooled == "OK":
        return f"No position bias beyond +-10 Elo: {gamma:+.1f} ({low:+.1f} to {high:+.1f})."
    return f"Position advantage {interval}: the data cannot tell whether it exceeds +-10 Elo."


def position_bias(board: Board) -> Probe:
    """First-shown advantage as a Bradley–Terry term, overall, per judge and per category.

    Overall and per category the term is fitted jointly with the ratings
    (Wald interval from the Fisher information).  Per judge, the ratings are
    held at the board's fit and each judge's own advantage gets a score
    interval (few votes each).  Judge and category intervals are
    Bonferroni-adjusted over their family, so a flagged member is a claim
    about the family, not one of many lucky draws.
    """
    v = board.votes
    full = board.fit(position=True)
    gamma, se = full.position_param * SCALE, full.position_se * SCALE
    z = board.z()
    low, high = gamma - z * se, gamma + z * se
    flagged = outside(low, high, POSITION_BAND)
    details: dict = {"order_changes": _order_changes(board), "judges": [], "categories": []}

    y, keep = board.scored
    if v.has_judges:
        sel = keep & (v.judge != NO_KEY)
        nj = len(v.judges)
        gf, _ = group_fit(
            v.judge[sel],
            board.logit(full.theta)[sel],
            np.ones(int(sel.sum())),
            y[sel],
            n_groups=nj,
            crit=board.z(nj),
            tie_share=board.tie_share,
        )
        for j in range(nj):
            if gf.n[j] == 0:
                continue
            row: dict[str, Any] = {
                "judge": v.judges[j],
                "votes": int(gf.n[j]),
                "estimate": float(gf.estimate[j] * SCALE),
                "low": float(gf.low[j] * SCALE),
                "high": float(gf.high[j] * SCALE),
            }
            row["flagged"] = outside(row["low"], row["high"], POSITION_BAND)
            details["judges"].append(row)
    if v.categories:
        nc = len(v.categories)
        zc = board.z(nc)
        for c, name in enumerate(v.categories):
            mask = np.zeros(v.n_votes, dtype=bool)
            mask[v.cat_vote[v.cat_index == c]] = True
            sub = v.subset(mask)
            try:
                f = fit(
                    sub.table(), ties=board.opts.ties, both_bad=board.opts.both_bad, position=True
                )
            except ValueError:
                continue
            g, s = f.position_param * SCALE, f.position_se * SCALE
            row = {
                "category": name,
                "votes": int(sub.n_votes),
                "estimate": g,
                "low": g - zc * s,
                "high": g + zc * s,
            }
            row["flagged"] = outside(row["low"], row["high"], POSITION_BAND)
            details["categories"].append(row)
    judges = [r["judge"] for r in details["judges"] if r["flagged"]]
    cats = [r["category"] for r in details["categories"] if r["flagged"]]
    pooled = pooled_state(low, high, POSITION_BAND)
    # which of the three families tripped the flag, for a reader of the JSON
    details["flagged_by"] = {"pooled": pooled == "flagged", "judges": judges, "categories": cats}
    flagged = flagged or bool(judges) or bool(cats)
    verdict = position_verdict(gamma, low, high, pooled, details)
    if details["order_changes"]:
        verdict += (
            f" Fitting the term swaps {len(details['order_changes'])} ranked pair(s) (point order)."
        )
    return Probe(
        "position",
        "Position bias (first-shown advantage)",
        gamma,
        low,
        high,
        "Elo",
        POSITION_BAND,
        flagged,
        verdict,
        details,
    )
