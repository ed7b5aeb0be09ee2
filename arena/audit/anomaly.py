"""Anomalous judges: three detectors over the same votes.

* ``fisher`` -- the Chatbot Arena paper's test (Chiang et al., 2024, sec. 5.1):
  each vote gets a conformal p-value of its outcome against the history of
  the same model pair, ``p = (1 + #{h >= x}) / (|H| + 1)`` with ``x`` the
  credit of the first-shown model; per judge, Fisher's combination
  ``M_j = -2 sum log p_i`` of the first ``j`` votes is compared with the
  chi-square quantile ``chi2_{2j}(1 - alpha / 5)`` at 5 random checkpoints
  ``j`` (seeded), the paper's Bonferroni correction for looking more than
  once.  Offline, the "history" of a vote is every other judge's vote on
  that pair (the judge's own votes left out).  As printed the p-value is
  one-sided: a vote against the first-shown model always gets ``p = 1``,
  and discrete outcomes make it conservative, so the test needs votes that
  are both for the first-shown model and against its history.
* ``fastchat`` -- FastChat's variant: flag when ``prod 1 / (2 p_i) > 1 / alpha``.
  Not a calibrated test (``E[1/(2p)]`` is not 1 for conformal p-values); its
  false-positive rate is measured in ``benchmarks/bench_audit.py``.
* ``bt`` (default) -- a model-based detector: the judge's votes against the
  Bradley–Terry ratings fitted *without* that judge, through three
  one-parameter deviations with score intervals (:mod:`arena.audit.offset`):
  temperature (1 = agrees like the board, 0 = random, < 0 = reversed),
  own position advantage, and favouring one model.  A judge is flagged when
  one interval lies wholly outside its innocent band; alpha is split evenly
  over the three deviations and Bonferroni-adjusted within each (over
  judges, or judge x model groups), so the flags control the family-wise
  error.  Pooling the pair histories through the ratings gives
  every vote a usable reference even when its pair was rarely played, and
  the two-sided deviations catch random and reversed voters, which the
  one-sided conformal p-value cannot see.
"""

from __future__ import annotations

import numpy as np
from scipy.special import chdtrc, chdtri, ndtr, ndtri

from arena.audit.offset import group_fit
from arena.audit.result import Probe, skipped
from arena.audit.setup import Board, leave_one_judge_out
from arena.audit.votes import NO_KEY

__all__ = ["anomalous_judges", "pair_pvalues", "fisher_test", "fastchat_score", "bt_deviations"]

DETECTORS = ("bt", "fisher", "fastchat")
LOOKS = 5
#: Innocent bands of the bt detector's deviations (logits).
TEMPERATURE_BAND = (0.5, np.inf)
POSITION_BAND = (-1.0, 1.0)
FAVOUR_BAND = (-1.0, 1.0)


def pair_pvalues(board: Board) -> np.ndarray:
    """Conformal p-value of every vote against the other judges' votes on its pair (NaN if unjudged)."""
    v = board.votes
    y, keep = board.scored
    m = v.n_models
    lo, hi = np.minimum(v.a, v.b), np.maximum(v.a, v.b)
    pair = lo * m + hi
    y_lo = np.where(v.a == lo, y, 1.0 - y)  # credit of the lower-index model
    level = np.rint(y_lo * 2).astype(np.intp)  # 0, 1 (tie), 2
    w = keep.astype(np.float64)
    npairs = m * m
    total = np.zeros((npairs, 3))
    np.add.at(total, (pair, level), w)
    judged = keep & (v.judge != NO_KEY)
    own_key = v.judge * npairs + pair
    uniq, inv = np.unique(own_key[judged], return_inverse=True)
    own = np.zeros((uniq.size, 3))
    np.add.at(own, (inv, level[judged]), 1.0)
    hist = total[pair[judged]] - own[inv]  # counts of y_lo levels among the others
    first_lo = (v.a == lo)[judged]
    # history as the credit of this vote's first-shown model, levels 0, 1, 2
    h = np.where(first_lo[:, None], hist, hist[:, ::-1])
    x = np.rint(y[judged] * 2).astype(np.intp)
    ge = np.cumsum(h[:, ::-1], axis=1)[:, ::-1]  # ge[:, k] = #{h >= k}
    count = ge[np.arange(x.size), x]
    n_hist = h.sum(axis=1)
    p = np.full(v.n_votes, np.nan)
    p[judged] = (1.0 + count) / (n_hist + 1.0)
    return p


def _judge_order(board: Board, p: np.ndarray):
    v = board.votes
    ok = np.isfinite(p)
    order = np.flatnonzero(ok)
    order = order[np.argsort(v.judge[order], kind="stable")]  # votes in store order per judge
    return order, v.judge[order]


def fisher_test(board: Board, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per judge: the paper's combined p-value (min over looks x looks) and max M_j / threshold."""
    nj = len(board.votes.judges)
    alpha = board.opts.alpha
    order, judge = _judge_order(board, p)
    rng = np.random.default_rng(board.opts.seed)
    pval = np.ones(nj)
    ratio = np.zeros(nj)
    starts = np.searchsorted(judge, np.arange(nj + 1))
    logs = -2 * np.log(p[order])
    for j in range(nj):
        s = logs[starts[j] : starts[j + 1]]
        n = s.size
        if n == 0:
            continue
        looks = np.sort(rng.choice(np.arange(1, n + 1), size=min(LOOKS, n), replace=False))
        mj = np.cumsum(s)[looks - 1]
        pval[j] = min(1.0, float(np.min(chdtrc(2 * looks, mj))) * LOOKS)
        ratio[j] = float(np.max(mj / chdtri(2 * looks, alpha / LOOKS)))
    return pval, ratio


def fastchat_score(board: Board, p: np.ndarray) -> np.ndarray:
    """Per judge: ``sum log(1 / (2 p_i))``; FastChat flags it above ``log(1 / alpha)``."""
    nj = len(board.votes.judges)
    ok = np.isfinite(p)
    return np.bincount(board.votes.judge[ok], weights=-np.log(2 * p[ok]), minlength=nj)


def bt_deviations(board: Board) -> dict:
    """The bt detector: per-judge deviations, their intervals and p-values outside the bands."""
    v = board.votes
    y, keep = board.scored
    nj, m = len(v.judges), v.n_models
    theta = leave_one_judge_out(board)
    sel = np.flatnonzero(keep & (v.judge != NO_KEY))
    j = v.judge[sel]
    d = theta[j, v.a[sel]] - theta[j, v.b[sel]]
    ok = np.isfinite(d)
    sel, j, d = sel[ok], j[ok], d[ok]
    ys = y[sel]
    # judge x model groups for "favours one model": each vote counts for both of its models
    fav_group = np.concatenate([j * m + v.a[sel], j * m + v.b[sel]])
    fav_x = np.concatenate([np.ones(sel.size), -np.ones(sel.size)])
    fav_used, fav_idx = np.unique(fav_group, return_inverse=True)
    n_active = int(np.unique(j).size)
    # alpha split evenly over the three deviation families, Bonferroni within each:
    # judges for temperature and position, judge x model groups for favouring.
    third = board.opts.alpha / 3
    crit_j = float(ndtri(1 - third / (2 * max(n_active, 1))))
    crit_f = float(ndtri(1 - third / (2 * max(fav_used.size, 1))))
    ts = board.tie_share
    temp, temp_z = group_fit(j, np.zeros_like(d), d, ys, n_groups=nj, crit=crit_j, tie_share=ts)
    pos, pos_z = group_fit(j, d, np.ones_like(d), ys, n_groups=nj, crit=crit_j, tie_share=ts)
    fav, fav_z = group_fit(
        fav_idx,
        np.concatenate([d, d]),
        fav_x,
        np.concatenate([ys, ys]),
        n_groups=fav_used.size,
        crit=crit_f,
        tie_share=ts,
    )
    fav_judge = fav_used // m
    # family-adjusted p-values of "outside the band" (flag iff < alpha, as the intervals)
    p_temp = np.minimum(1.0, temp.pvalue_outside(TEMPERATURE_BAND, temp_z) * 3 * n_active)
    p_pos = np.minimum(1.0, pos.pvalue_outside(POSITION_BAND, pos_z) * 3 * n_active)
    p_fav = np.minimum(1.0, fav.pvalue_outside(FAVOUR_BAND, fav_z) * 3 * fav_used.size)
    best_fav = np.full(nj, -1)
    p_fav_j = np.ones(nj)
    for k in np.argsort(p_fav, kind="stable")[::-1]:  # smallest p written last
        best_fav[fav_judge[k]] = k
        p_fav_j[fav_judge[k]] = p_fav[k]
    p_judge = np.minimum(np.minimum(p_temp, p_pos), p_fav_j)
    # Evidence against "votes like the board" (t = 1, 0, 0), unadjusted within the
    # judge: a ranking score for detection benchmarks, not a flag.
    z_null = np.minimum(temp_z(1.0), 0.0)  # only agreement weaker than the board's
    nul_temp = 2 * ndtr(z_null)
    nul_pos = 2 * ndtr(-np.abs(pos_z(0.0)))
    nul_fav_g = 2 * ndtr(-np.abs(fav_z(0.0)))
    nul_fav = np.ones(nj)
    np.minimum.at(nul_fav, fav_judge, nul_fav_g * np.bincount(fav_judge, minlength=nj)[fav_judge])
    null_p = np.minimum(1.0, 3 * np.minimum(np.minimum(nul_temp, nul_pos), nul_fav))
    return dict(
        crit=(crit_j, crit_f),
        family=(n_active, int(fav_used.size)),
        null_p=null_p,
        temp=temp,
        pos=pos,
        fav=fav,
        fav_model=fav_used % m,
        best_fav=best_fav,
        p_temp=p_temp,
        p_pos=p_pos,
        p_fav=p_fav_j,
        p_judge=p_judge,
    )


def _outside_rows(dev: dict, j: int) -> list[str]:
    from arena.audit.result import outside

    reasons = []
    t, p = dev["temp"], dev["pos"]
    if outside(t.low[j], t.high[j], TEMPERATURE_BAND):
        reasons.append("reversed" if t.high[j] < 0 else "random")
    if outside(p.low[j], p.high[j], POSITION_BAND):
        reasons.append("position")
    k = dev["best_fav"][j]
    if k >= 0 and outside(dev["fav"].low[k], dev["fav"].high[k], FAVOUR_BAND):
        reasons.append("favours")
    return reasons


def anomalous_judges(board: Board) -> Probe:
    """Run all three detectors; the probe's flags are the ``bt`` detector's."""
    v = board.votes
    title = "Anomalous judges"
    if not v.has_judges:
        return skipped("anomaly", title, "judges", (0.0, 0.0), "the votes have no judge ids")
    alpha = board.opts.alpha
    p = pair_pvalues(board)
    f_p, f_ratio = fisher_test(board, p)
    fc = fastchat_score(board, p)
    dev = bt_deviations(board)
    rows = []
    votes_per = np.bincount(v.judge[v.judge != NO_KEY], minlength=len(v.judges))
    for j, name in enumerate(v.judges):
        if votes_per[j] == 0:
            continue
        reasons = _outside_rows(dev, j)
        k = dev["best_fav"][j]
        t, ps = dev["temp"], dev["pos"]
        rows.append(
            {
                "judge": name,
                "votes": int(votes_per[j]),
                "flagged": bool(reasons),
                "reasons": reasons,
                "bt_pvalue": float(dev["p_judge"][j]),
                "bt_null_pvalue": float(dev["null_p"][j]),
                "temperature": [float(t.estimate[j]), float(t.low[j]), float(t.high[j])],
                "position": [float(ps.estimate[j]), float(ps.low[j]), float(ps.high[j])],
                "favours": None
                if k < 0
                else {
                    "model": v.names[dev["fav_model"][k]],
                    "estimate": float(dev["fav"].estimate[k]),
                    "low": float(dev["fav"].low[k]),
                    "high": float(dev["fav"].high[k]),
                },
                "fisher_pvalue": float(f_p[j]),
                "fisher_flagged": bool(f_p[j] < alpha),
                "fisher_ratio": float(f_ratio[j]),
                "fastchat_log_score": float(fc[j]),
                "fastchat_flagged": bool(fc[j] > np.log(1 / alpha)),
            }
        )
    rows.sort(key=lambda r: (not r["flagged"], r["bt_pvalue"], r["judge"]))
    flagged = [r["judge"] for r in rows if r["flagged"]]
    n_f = sum(r["fisher_flagged"] for r in rows)
    n_fc = sum(r["fastchat_flagged"] for r in rows)
    if flagged:
        verdict = f"{len(flagged)} of {len(rows)} judges vote unlike the board (random, reversed, position-driven or favouring one model), beyond the innocent bands at family-wise level {alpha:g}: {', '.join(flagged[:10])}{' ...' if len(flagged) > 10 else ''}."
    else:
        verdict = f"No judge's votes deviate from the board beyond the innocent bands (family-wise level {alpha:g}, {len(rows)} judges)."
    verdict += f" The paper's Fisher test flags {n_f}, FastChat's rule {n_fc}."
    return Probe(
        "anomaly",
        title,
        float(len(flagged)),
        float(len(flagged)),
        float(len(flagged)),
        "judges",
        (0.0, 0.0),
        bool(flagged),
        verdict,
        {
            "flagged_judges": flagged,
            "alpha": alpha,
            "family": {"judges": dev["family"][0], "judge_model_groups": dev["family"][1]},
            "bands": {
                "temperature": list(TEMPERATURE_BAND),
                "position": list(POSITION_BAND),
                "favours": list(FAVOUR_BAND),
            },
            "judges": rows,
        },
    )
