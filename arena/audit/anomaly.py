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
  Bradley–Terry ratings fitted *without* that judge, through four
  one-parameter deviations with score tests (:mod:`arena.audit.offset`):
  temperature (1 = agrees like the board, 0 = random, < 0 = reversed), own
  position advantage, favouring one model and -- with the ``organisation``
  annotation -- favouring every model of one organisation (of two or more
  models).  Each judge is tested against "votes like the board"; the judges'
  p-values go through Benjamini-Hochberg at ``alpha`` (false discovery rate),
  and a rejected judge is flagged for each rejected deviation whose estimate
  lies outside its innocent band (:func:`bt_deviations`).  Pooling the pair
  histories through the ratings gives every vote a usable reference even
  when its pair was rarely played, and the two-sided deviations catch random
  and reversed voters, which the one-sided conformal p-value cannot see.
  The false discovery rate (not the family-wise error of the earlier
  Bonferroni rule) is what a reader of the flags needs: among flagged judges
  at most ``alpha`` are honest, on average, and planted judges with a few
  dozen votes are found (``benchmarks/bench_audit.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import chdtrc, chdtri, expit, ndtr, ndtri

from arena.audit.judge_power import DEPARTURE_WORDS, OUTCOMES, Material, judge_power
from arena.audit.offset import group_fit
from arena.audit.result import Probe, skipped
from arena.audit.setup import Board, leave_one_judge_out
from arena.audit.votes import NO_KEY

__all__ = [
    "anomalous_judges",
    "pair_pvalues",
    "fisher_test",
    "fastchat_score",
    "bt_deviations",
    "outcome_summary",
    "needed_hint",
    "effect_text",
]

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


def _bh_cut(p: np.ndarray, alpha: float) -> float:
    """Benjamini-Hochberg at FDR ``alpha``: the largest p-value rejected (-1: none)."""
    if p.size == 0:
        return -1.0
    order = np.sort(p)
    ok = order <= alpha * np.arange(1, p.size + 1) / p.size
    return float(order[np.flatnonzero(ok)[-1]]) if ok.any() else -1.0


def _side_groups(j, a, b, key, n_keys):
    """Votes as (judge x key) groups with x = +1 for the first-shown side, -1 for the second.

    ``key[model]`` is the model itself (favouring one model) or its organisation
    (-1: none); a vote counts for a side's key unless both sides share it.
    """
    ka, kb = key[a], key[b]
    use_a = (ka >= 0) & (ka != kb)
    use_b = (kb >= 0) & (ka != kb)
    rows = np.concatenate([np.flatnonzero(use_a), np.flatnonzero(use_b)])
    group = np.concatenate([j[use_a] * n_keys + ka[use_a], j[use_b] * n_keys + kb[use_b]])
    x = np.concatenate([np.ones(use_a.sum()), -np.ones(use_b.sum())])
    used, idx = np.unique(group, return_inverse=True)
    return rows, x, used, idx


def _organisation_keys(board: Board) -> tuple[np.ndarray, list[str]]:
    """Per model, the index of its organisation when that has two or more models (else -1)."""
    names = board.votes.names
    org = [board.organisations.get(n) for n in names]
    counts: dict[str, int] = {}
    for o in org:
        if o:
            counts[o] = counts.get(o, 0) + 1
    orgs = sorted(o for o, c in counts.items() if c >= 2)
    pos: dict[str | None, int] = {o: k for k, o in enumerate(orgs)}
    return np.array([pos.get(o, -1) for o in org], dtype=np.intp), orgs


def bt_deviations(board: Board) -> dict:
    """The bt detector: per-judge deviations, their intervals, null p-values and flags.

    Each judge is tested against "votes like the board" (temperature 1, no
    position advantage, no favourite model or organisation), the fit without
    the judge as the board: one-sided for the temperature (agreement weaker
    than the board's), two-sided for the others, the favourite model and
    organisation Bonferroni-adjusted over the judge's models / organisations,
    the deviations Bonferroni within the judge.  The judges' p-values then go
    through Benjamini-Hochberg at ``alpha`` (false discovery rate over
    judges).  A rejected judge is *flagged* for each rejected deviation whose
    estimate lies outside its innocent band (a material deviation, not just a
    detectable one).  Intervals are at the false-coverage-rate level of the
    selection (Benjamini & Yekutieli 2005: ``R alpha / n`` with R judges
    rejected), split over the deviations (and models, organisations).
    """
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
    a, b = v.a[sel], v.b[sel]
    ts = board.tie_share
    alpha = board.opts.alpha
    active = np.unique(j)
    n_active = int(active.size)
    fav_rows, fav_x, fav_used, fav_idx = _side_groups(j, a, b, np.arange(m), m)
    org_key, orgs = _organisation_keys(board)
    n_org = max(len(orgs), 1)
    org_rows, org_x, org_used, org_idx = _side_groups(j, a, b, org_key, n_org)
    has_org = org_used.size > 0

    def fits(crit_j, crit_f, crit_o):
        temp = group_fit(j, np.zeros_like(d), d, ys, n_groups=nj, crit=crit_j, tie_share=ts)
        pos = group_fit(j, d, np.ones_like(d), ys, n_groups=nj, crit=crit_j, tie_share=ts)
        fav = group_fit(fav_idx, d[fav_rows], fav_x, ys[fav_rows], n_groups=max(fav_used.size, 1), crit=crit_f, tie_share=ts)  # fmt: skip
        org = group_fit(org_idx, d[org_rows], org_x, ys[org_rows], n_groups=max(org_used.size, 1), crit=crit_o, tie_share=ts)  # fmt: skip
        return temp, pos, fav, org

    (temp, temp_z), (pos, pos_z), (fav, fav_z), (org, org_z) = fits(2.0, 2.0, 2.0)
    fav_judge, org_judge = fav_used // m, org_used // n_org
    fav_per = np.bincount(fav_judge, minlength=nj)
    org_per = np.bincount(org_judge, minlength=nj)

    def best(p_group, owner, per):
        """Per judge: Bonferroni-adjusted smallest group p-value and its group index."""
        p_adj = np.minimum(1.0, p_group * per[owner]) if p_group.size else p_group
        best_k = np.full(nj, -1)
        p_j = np.ones(nj)
        for k in np.argsort(p_adj, kind="stable")[::-1]:  # smallest written last
            best_k[owner[k]] = k
            p_j[owner[k]] = p_adj[k]
        return p_j, best_k

    # Null p-values: "votes like the board".
    p_temp = ndtr(temp_z(1.0))  # one-sided: agreement weaker than the board's
    p_pos = 2 * ndtr(-np.abs(pos_z(0.0)))
    p_fav, best_fav = best(2 * ndtr(-np.abs(fav_z(0.0)))[: fav_used.size], fav_judge, fav_per)
    if has_org:
        p_org, best_org = best(2 * ndtr(-np.abs(org_z(0.0)))[: org_used.size], org_judge, org_per)
    else:
        p_org, best_org = np.ones(nj), np.full(nj, -1)
    n_dev = np.where(org_per > 0, 4, 3)
    dev_p = np.minimum(1.0, n_dev[:, None] * np.column_stack([p_temp, p_pos, p_fav, p_org]))
    p_judge = dev_p.min(axis=1)
    cut = _bh_cut(p_judge[active], alpha)
    rejected = int(np.count_nonzero(p_judge[active] <= cut)) if cut >= 0 else 0
    # Intervals at the selection's false-coverage-rate level, split like the tests.
    q = alpha * max(rejected, 1) / max(n_active, 1)
    k_dev = 4 if has_org else 3
    crit_j = float(ndtri(1 - q / (2 * k_dev)))
    crit_f = float(ndtri(1 - q / (2 * k_dev * max(int(fav_per.max(initial=1)), 1))))
    crit_o = float(ndtri(1 - q / (2 * k_dev * max(int(org_per.max(initial=1)), 1))))
    temp, pos, fav, org = (f for f, _ in fits(crit_j, crit_f, crit_o))
    evidence = dict(
        judge=j,
        d=d,
        sides={"favours": (fav_rows, fav_x)}
        | ({"favours_organisation": (org_rows, org_x)} if has_org else {}),
        keys={"favours": m, "favours_organisation": len(orgs)},
        keys_seen={"favours": fav_per, "favours_organisation": org_per},
        n_departures=np.full(nj, 4 if has_org else 3),
        level=alpha * max(rejected, 1) / max(n_active, 1),
        tie_share=ts,
    )
    return dict(
        evidence=evidence,
        crit=(crit_j, crit_f, crit_o),
        family=(n_active, int(fav_used.size), int(org_used.size)),
        fdr_cut=cut,
        rejected=rejected,
        dev_p=dev_p,
        null_p=p_judge,
        p_judge=p_judge,
        temp=temp,
        pos=pos,
        fav=fav,
        org=org,
        fav_model=fav_used % m,
        org_name=[orgs[k] for k in (org_used % n_org)] if has_org else [],
        best_fav=best_fav,
        best_org=best_org,
    )


def _outside_rows(dev: dict, j: int) -> list[str]:
    """Why judge ``j`` is flagged: rejected deviations whose estimate is outside its band."""
    cut = dev["fdr_cut"]
    if cut < 0 or dev["p_judge"][j] > cut:
        return []
    p = dev["dev_p"][j]
    reasons = []
    t = dev["temp"].estimate[j]
    if p[0] <= cut and t < TEMPERATURE_BAND[0]:
        # reversed only when the interval says so; a coin's estimate may fall below 0
        reasons.append("reversed" if dev["temp"].high[j] < 0 else "random")
    e = dev["pos"].estimate[j]
    if p[1] <= cut and not POSITION_BAND[0] <= e <= POSITION_BAND[1]:
        reasons.append("position")
    k = dev["best_fav"][j]
    if k >= 0 and p[2] <= cut and not FAVOUR_BAND[0] <= dev["fav"].estimate[k] <= FAVOUR_BAND[1]:
        reasons.append("favours")
    k = dev["best_org"][j]
    if k >= 0 and p[3] <= cut and not FAVOUR_BAND[0] <= dev["org"].estimate[k] <= FAVOUR_BAND[1]:
        reasons.append("favours organisation")
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
    rows: list[dict[str, Any]] = []
    votes_per = np.bincount(v.judge[v.judge != NO_KEY], minlength=len(v.judges))
    material = Material(board.opts.material)
    power = judge_power(
        **dev["evidence"], votes=votes_per, material=material, target=board.opts.power
    )
    for j, name in enumerate(v.judges):
        if votes_per[j] == 0:
            continue
        reasons = _outside_rows(dev, j)
        need = power.votes_needed[j]
        outcome = (
            "flagged"
            if reasons
            else ("consistent" if power.power[j] >= power.target else "too few votes")
        )
        k = dev["best_fav"][j]
        t, ps = dev["temp"], dev["pos"]
        rows.append(
            {
                "judge": name,
                "votes": int(votes_per[j]),
                "flagged": bool(reasons),
                "reasons": reasons,
                "outcome": outcome,
                "power": float(power.power[j]),
                "votes_needed": int(need) if np.isfinite(need) else None,
                "least_seen": power.weakest[j],
                "power_by_departure": {k: float(p[j]) for k, p in power.by_departure.items()},
                "votes_needed_by_departure": {
                    k: int(n[j]) if np.isfinite(n[j]) else None
                    for k, n in power.needed_by_departure.items()
                },
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
                "favours_organisation": None
                if dev["best_org"][j] < 0
                else {
                    "organisation": dev["org_name"][dev["best_org"][j]],
                    "estimate": float(dev["org"].estimate[dev["best_org"][j]]),
                    "low": float(dev["org"].low[dev["best_org"][j]]),
                    "high": float(dev["org"].high[dev["best_org"][j]]),
                },
                "fisher_pvalue": float(f_p[j]),
                "fisher_flagged": bool(f_p[j] < alpha),
                "fisher_ratio": float(f_ratio[j]),
                "fastchat_log_score": float(fc[j]),
                "fastchat_flagged": bool(fc[j] > np.log(1 / alpha)),
            }
        )
    rows.sort(key=lambda r: (not r["flagged"], r["bt_pvalue"], r["judge"]))
    for r in rows:
        r["effect"] = effect_text(r) if r["flagged"] else None
    flagged = [r["judge"] for r in rows if r["flagged"]]
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    unchecked = [r["votes_needed"] for r in rows if r["outcome"] == "too few votes"]
    n_f = sum(r["fisher_flagged"] for r in rows)
    n_fc = sum(r["fastchat_flagged"] for r in rows)
    if flagged:
        verdict = f"{len(flagged)} of {len(rows)} judges vote unlike the board (random, reversed, position-driven or favouring one model or organisation; false discovery rate {alpha:g} over judges, estimate outside the innocent band): {', '.join(flagged[:10])}{' ...' if len(flagged) > 10 else ''}."
    else:
        verdict = f"No judge's votes deviate materially from the board (false discovery rate {alpha:g} over {len(rows)} judge{'s' if len(rows) != 1 else ''})."
    summary = outcome_summary(counts)
    too_few = [r for r in rows if r["outcome"] == "too few votes"]
    hint = (
        needed_hint(
            unchecked,
            board.opts.power,
            hardest=_hardest(too_few),
            coin=[r["votes_needed_by_departure"]["temperature"] for r in too_few],
        )
        if unchecked
        else None
    )
    verdict += f" {summary}; material: {material.sentence}."
    if hint:
        verdict += f" {hint}"
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
            "family": {
                "judges": dev["family"][0],
                "judge_model_groups": dev["family"][1],
                "judge_organisation_groups": dev["family"][2],
            },
            "rule": "Benjamini-Hochberg over judges at alpha on the null 'votes like the board', "
            "flagged for a rejected deviation whose estimate is outside its band",
            "fdr_cut": dev["fdr_cut"],
            "outcomes": counts,
            "summary": summary,
            "hint": hint,
            "material": material.to_dict(),
            "power_target": board.opts.power,
            "votes_needed_unchecked": None
            if not unchecked
            else {
                "judges": len(unchecked),
                "median": _median_votes(unchecked),
                "never": sum(n is None for n in unchecked),
            },
            "bands": {
                "temperature": list(TEMPERATURE_BAND),
                "position": list(POSITION_BAND),
                "favours": list(FAVOUR_BAND),
                "favours_organisation": list(FAVOUR_BAND),
            },
            "judges": rows,
        },
    )


def outcome_summary(counts: dict) -> str:
    """ "41 judges checked: 2 flagged, 30 consistent with the board, 9 too few votes to tell"."""
    n = sum(counts.values())
    return (
        f"{n} judge{'s' if n != 1 else ''} checked: {counts.get('flagged', 0)} flagged, "
        f"{counts.get('consistent', 0)} consistent with the board, "
        f"{counts.get('too few votes', 0)} too few votes to tell"
    )


def _median_votes(needed: list) -> int | None:
    finite = sorted(n for n in needed if n is not None)
    if len(finite) * 2 <= len(needed):  # half or more can never be checked
        return None
    return int(np.median(finite + [np.inf] * (len(needed) - len(finite))))


def _hardest(rows: list) -> str | None:
    """The departure that needs the most votes for most of ``rows``."""
    worst: list[str] = []
    for r in rows:
        need = {k: (np.inf if n is None else n) for k, n in r["votes_needed_by_departure"].items()}
        worst.append(max(need, key=need.__getitem__))
    return max(sorted(set(worst)), key=worst.count) if worst else None


def needed_hint(
    needed: list, target: float, *, hardest: str | None = None, coin: list | None = None
) -> str:
    """What would make the judges too few votes to tell checkable: the votes they need.

    ``hardest`` names the departure that needs the most votes; ``coin`` gives each
    judge's votes needed against a coin alone (the cheapest check, said when it differs).
    """
    finite = sorted(n for n in needed if n is not None)
    n = len(needed)
    who = "The judge with too few votes" if n == 1 else f"The {n} judges with too few votes"
    if not finite:
        return f"{who} cannot be checked by more votes of the kind they cast."
    lo, hi = finite[0], finite[-1]
    span = f"{lo}" if lo == hi else f"{lo} to {hi} (median {_median_votes(needed) or 'never'})"
    never = n - len(finite)
    text = f"{who} would need {span} votes each for {target:.0%} power against a material departure"
    if hardest in DEPARTURE_WORDS:
        text += f", most for {DEPARTURE_WORDS[hardest]}"
    coin_median = _median_votes(coin) if coin else None
    if hardest != "temperature" and coin_median is not None:
        text += f"; against a coin alone, {coin_median} (median)"
    if never:
        text += f"; {never} could not be checked by more votes of their kind"
    return text + "."


def _points(x: float) -> str:
    """A logit shift as points of win rate in an even match: ``+31``."""
    return f"{100 * (float(expit(x)) - 0.5):+.0f}"


def effect_text(row: dict) -> str:
    """The flagged deviations of a judge row, with intervals, in units people use."""
    parts = []
    for reason in row["reasons"]:
        if reason in ("random", "reversed"):
            t, lo, hi = row["temperature"]
            parts.append(
                f"agreement with the board {t:.2f} ({_end(lo)} to {_end(hi)}; 1 = like the board, 0 = a coin)"
            )
        elif reason == "position":
            e, lo, hi = row["position"]
            parts.append(
                f"first-shown answer favoured by {_points(e)} points of win rate ({_points(lo)} to {_points(hi)})"
            )
        else:
            key = "favours" if reason == "favours" else "favours_organisation"
            f = row[key]
            who = f["model"] if key == "favours" else f"{f['organisation']}'s models"
            parts.append(
                f"{who} favoured by {_points(f['estimate'])} points of win rate "
                f"({_points(f['low'])} to {_points(f['high'])})"
            )
    return (
        "; ".join(parts) + " (in an even match)"
        if any("points" in p for p in parts)
        else "; ".join(parts)
    )


def _end(x: float) -> str:
    return "-inf" if x == -np.inf else ("inf" if x == np.inf else f"{x:.2f}")
