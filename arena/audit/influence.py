"""Judge influence: leave-one-judge-out refits."""

from __future__ import annotations

import numpy as np

from arena.audit.result import Probe, skipped
from arena.audit.setup import SCALE, Board, leave_one_judge_out

__all__ = ["judge_influence"]


def judge_influence(board: Board) -> Probe:
    """Judges whose removal moves some ranked rating by more than the median neighbour gap.

    A descriptive probe: the shift is a property of these votes, not an
    estimate of anything, so its "interval" is the shift itself.  The
    innocent band is ``[0, median gap]``: removing one judge should not move a
    model past a typical neighbour.
    """
    v = board.votes
    title = "Judge influence (leave one judge out)"
    if not v.has_judges:
        return skipped("influence", title, "Elo", (0.0, 0.0), "the votes have no judge ids")
    ranked = np.flatnonzero(board.ranked)
    ref = board.fit().theta
    r = np.sort(ref[ranked])
    gap = float(np.median(np.diff(r)) * SCALE) if r.size > 1 else 0.0
    band = (0.0, gap)
    theta = leave_one_judge_out(board)
    rows = []
    for j, name in enumerate(v.judges):
        t = theta[j, ranked]
        ok = np.isfinite(t)
        if not ok.any():
            continue
        # Recentre over the same models so a vanished model does not shift the mean.
        shift = (t[ok] - t[ok].mean()) - (ref[ranked][ok] - ref[ranked][ok].mean())
        k = int(np.argmax(np.abs(shift)))
        rows.append(
            {
                "judge": name,
                "votes": int(np.sum(v.judge == j)),
                "max_shift": float(abs(shift[k]) * SCALE),
                "model": v.names[ranked[ok][k]],
                "flagged": bool(abs(shift[k]) * SCALE > gap),
            }
        )
    rows.sort(key=lambda r: -r["max_shift"])
    flagged = [r for r in rows if r["flagged"]]
    top = rows[0] if rows else None
    if not top:
        verdict = "No judge could be left out."
    elif flagged:
        verdict = f"{len(flagged)} judge(s) move a rating by more than the median neighbour gap ({gap:.1f} Elo) when left out; the largest, {top['judge']}, moves {top['model']} by {top['max_shift']:.1f} Elo."
    else:
        verdict = f"No judge moves a rating by more than the median neighbour gap ({gap:.1f} Elo); the largest shift is {top['max_shift']:.1f} Elo ({top['judge']})."
    est = top["max_shift"] if top else None
    return Probe(
        "influence",
        title,
        est,
        est,
        est,
        "Elo",
        band,
        bool(flagged),
        verdict,
        {"median_gap": gap, "judges": rows},
    )
