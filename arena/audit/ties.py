"""Tie convention: do separated pairs reverse when ties are dropped or modelled (Davidson)?"""

from __future__ import annotations

import numpy as np

from arena.audit.result import Probe
from arena.audit.setup import Board
from arena.core.outcomes import A_WINS, B_WINS
from arena.engine.fitting.fit import Fit, fit

__all__ = ["tie_convention"]


def _diffs(f: Fit, idx: np.ndarray):
    """Rating differences and their Fisher SEs for all ranked pairs i < j."""
    i, j = np.triu_indices(idx.size, k=1)
    gi, gj = idx[i], idx[j]
    d = f.rating[gi] - f.rating[gj]
    var = f.cov[gi, gi] + f.cov[gj, gj] - 2 * f.cov[gi, gj]
    return gi, gj, d, np.sqrt(np.maximum(var, 0.0))


def tie_convention(board: Board) -> Probe:
    """Count ranked pairs separated under the board's convention that reverse under another.

    A pair is separated when its difference interval (Fisher, Bonferroni
    over all ranked pairs) excludes zero.  It reverses when the other
    convention puts the point difference on the other side, and it reverses
    *significantly* (a flag) when the other convention's interval lies
    wholly on the other side.  The innocent band for the count of
    significant reversals is zero.
    """
    v = board.votes
    idx = np.flatnonzero(board.ranked)
    base = board.fit()
    npairs = max(idx.size * (idx.size - 1) // 2, 1)
    z = board.z(npairs)
    gi, gj, d, se = _diffs(base, idx)
    separated = np.abs(d) > z * se
    decisive = (v.outcome == A_WINS) | (v.outcome == B_WINS)
    alternatives: dict[str, Fit] = {}
    try:
        alternatives["ties dropped"] = fit(v.table(decisive))
    except ValueError:
        pass
    other = "davidson" if board.opts.ties == "half" else "half"
    try:
        alternatives[f"ties as {other}"] = board.fit(ties=other)
    except ValueError:
        pass
    rows, n_rev, n_sig = [], 0, 0
    for label, f in alternatives.items():
        _, _, d2, se2 = _diffs(f, idx)
        rev = separated & (np.sign(d2) != np.sign(d))
        sig = rev & (np.abs(d2) > z * se2)
        n_rev += int(rev.sum())
        n_sig += int(sig.sum())
        for k in np.flatnonzero(rev):
            rows.append(
                {
                    "convention": label,
                    "model_a": v.names[gi[k]],
                    "model_b": v.names[gj[k]],
                    "difference": float(d[k]),
                    "difference_other": float(d2[k]),
                    "low_other": float(d2[k] - z * se2[k]),
                    "high_other": float(d2[k] + z * se2[k]),
                    "flagged": bool(sig[k]),
                }
            )
    n_sep = int(separated.sum())
    if not alternatives:
        verdict = "No alternative tie convention could be fitted."
    elif n_sig:
        verdict = f"{n_sig} separated pair(s) are separated the other way under another tie convention: the order depends on how ties count."
    elif n_rev:
        verdict = f"{n_rev} of {n_sep} separated pair(s) change point order under another tie convention, none significantly."
    else:
        verdict = (
            f"All {n_sep} separated pair(s) keep their order when ties are dropped or modelled."
        )
    return Probe(
        "ties",
        "Tie convention",
        float(n_sig),
        float(n_sig),
        float(n_sig),
        "pairs",
        (0.0, 0.0),
        n_sig > 0,
        verdict,
        {"separated_pairs": n_sep, "reversed": n_rev, "pairs": rows},
    )
