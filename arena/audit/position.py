"""Position bias: does the first-shown answer (model_a) win more than its rating says?"""

from __future__ import annotations

import numpy as np

from arena.audit.offset import group_fit
from arena.audit.result import Probe, outside
from arena.audit.setup import SCALE, Board
from arena.audit.votes import NO_KEY
from arena.engine.fit import fit

__all__ = ["position_bias", "POSITION_BAND"]

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
            row = {
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
    n_j = sum(r["flagged"] for r in details["judges"])
    n_c = sum(r["flagged"] for r in details["categories"])
    flagged = flagged or n_j > 0 or n_c > 0
    if outside(low, high, POSITION_BAND):
        side = "first" if gamma > 0 else "second"
        verdict = f"The {side}-shown answer has an advantage of {gamma:+.1f} Elo ({low:+.1f} to {high:+.1f}), beyond the +-10 Elo band."
    elif low >= POSITION_BAND[0] and high <= POSITION_BAND[1]:
        verdict = f"No position bias beyond +-10 Elo: {gamma:+.1f} ({low:+.1f} to {high:+.1f})."
    else:
        verdict = f"Position advantage {gamma:+.1f} Elo ({low:+.1f} to {high:+.1f}): the data cannot tell whether it exceeds +-10 Elo."
    if n_j:
        verdict += f" {n_j} judge(s) show their own position bias beyond the band."
    if n_c:
        verdict += f" {n_c} categor(ies) show position bias beyond the band."
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
