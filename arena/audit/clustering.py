"""Vote clustering: are votes of one judge (or on one question) correlated?"""

from __future__ import annotations

import numpy as np
from scipy.special import chdtri

from arena.audit.result import Probe, outside, skipped
from arena.audit.setup import Board
from arena.audit.votes import NO_KEY
from arena.engine.fitting.fit import fit
from arena.engine.resampling.bootstrap import bootstrap

__all__ = ["clustering", "RATIO_BAND"]

#: Innocent band: cluster-bootstrap SEs at most 10% above the per-battle ones.
RATIO_BAND = (0.0, 1.1)


def _ratio(board: Board, key: np.ndarray, label: str) -> dict:
    v, o = board.votes, board.opts
    table, clusters = v.clustered(key)
    point = fit(table, ties=o.ties, both_bad=o.both_bad)
    # the point fit carries the tie convention into both bootstraps
    se_b = bootstrap(table, rounds=o.rounds, seed=o.seed, point=point).se
    se_c = bootstrap(table, clusters=clusters, rounds=o.rounds, seed=o.seed, point=point).se
    live = board.ranked & (se_b > 0)
    ratio = float(np.sqrt(np.sum(se_c[live] ** 2) / np.sum(se_b[live] ** 2)))
    k = int(np.unique(key[key != NO_KEY]).size)
    # The cluster variance estimate has about K - 1 degrees of freedom.
    df = max(k - 1, 1)
    tail = (1 - o.level) / 2
    low = ratio * np.sqrt(df / chdtri(df, tail))
    high = ratio * np.sqrt(df / chdtri(df, 1 - tail))
    per_model = [
        {"model": v.names[i], "se_battle": float(se_b[i]), "se_cluster": float(se_c[i])}
        for i in np.flatnonzero(live)
    ]
    return {
        "by": label,
        "clusters": k,
        "ratio": ratio,
        "low": float(low),
        "high": float(high),
        "flagged": outside(low, high, RATIO_BAND),
        "models": per_model,
    }


def clustering(board: Board) -> Probe:
    """Ratio of cluster-bootstrap to battle-bootstrap standard errors, by judge and by question.

    The ratio pools the ranked models' variances (root of the summed
    variances).  Its interval treats the cluster variance as a chi-square
    with ``K - 1`` degrees of freedom (``K`` clusters), optimistic when
    cluster sizes are very unequal.  Above 1 the votes of one cluster are
    correlated and per-battle intervals are too narrow.
    """
    v = board.votes
    title = "Vote clustering (SE ratio)"
    rows = []
    # one cluster has no spread between clusters: its ratio (0) would read as a finding
    single = []
    for has, key, label in ((v.has_judges, v.judge, "judge"), (v.has_questions, v.question, "question")):  # fmt: skip
        if not has:
            continue
        if np.unique(key[key != NO_KEY]).size < 2:
            single.append(f"by {label}: every vote is from one {label}, nothing to compare")
            continue
        rows.append(_ratio(board, key, label))
    if not rows:
        why = "; ".join(single) or "the votes have no judge or question ids"
        return skipped("clustering", title, "ratio", RATIO_BAND, why)
    head = max(rows, key=lambda r: r["ratio"])
    words = []
    for r in rows:
        state = (
            "wider than per-battle intervals show"
            if r["flagged"]
            else ("within 10%" if r["high"] <= RATIO_BAND[1] else "undecided")
        )
        words.append(
            f"by {r['by']} ({r['clusters']} clusters) SEs are x{r['ratio']:.2f} ({r['low']:.2f} to {r['high']:.2f}): {state}"
        )
    text = "; ".join(words + single)
    verdict = text[0].upper() + text[1:] + "."
    return Probe(
        "clustering",
        title,
        head["ratio"],
        head["low"],
        head["high"],
        "ratio",
        RATIO_BAND,
        any(r["flagged"] for r in rows),
        verdict,
        {"groups": rows},
    )
