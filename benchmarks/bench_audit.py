"""Detection quality of the anomalous-judge detectors (benchmark, not a test).

Plants anomalous judges into real votes -- the shared MT-Bench expert votes
(65 judges; ``--llmfao`` adds the LLMFAO crowd, 124 workers) -- and reports,
per detector, the true-positive rate (planted judges flagged at the audit's
default level, alpha = 0.05), the false-flag rate on the real judges, and the
true-negative rate at a common true-positive rate of 90% (ranking quality;
the Chatbot Arena paper's operating point: ~90% TP, 60-70% TN).

Planted judges copy real battles (pairs and questions sampled from the data,
vote counts sampled from the real judges'), then vote (issue 27's kinds):

* ``random``: a fair coin (ties at the data's tie share);
* ``always_first``: the first-shown answer;
* ``one_model``: one model (chosen per judge) whenever it plays, the real
  outcome otherwise; half of its battles include that model;
* ``one_org``: every model of one organisation of two or more models (the
  ``organisation`` annotation; on MT-Bench only OpenAI, the board's top two)
  against any other, the real outcome otherwise; half of its battles include
  one of them; ``one_org_any``: the same for any organisation (most have one
  model on MT-Bench);
* ``private_ranking``: a fixed private ranking of the models (a random
  permutation per judge): the higher one always wins;
* ``copy_majority`` (not harmful, reported apart): the model the board rates
  higher always wins -- no bias, and no test can tell it from a decisive
  honest voter.

Rates are planted judges as a share of real ones (10% and 25%).

    python benchmarks/bench_audit.py            # full (3 seeds)
    python benchmarks/bench_audit.py --quick    # smoke run
    python benchmarks/bench_audit.py --bands-only --seeds 5   # outcome table only

The outcome table (issue 40) gives, per vote-count band of the judge (< 20,
20-39, 40-99, 100+) and per kind, the shares of judges the audit reports as
*flagged*, *consistent with the board* and *too few votes to tell*, for the
real judges (alone, and beside the planted ones) and the planted ones.  An
audit from before issue 40 has two outcomes; its unflagged judges are counted
as "consistent" there, which is how they read.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.audit.anomaly import anomalous_judges  # noqa: E402
from arena.audit.setup import AuditOptions, Board  # noqa: E402
from arena.audit.votes import Votes  # noqa: E402
from arena.core.outcomes import A_WINS, B_WINS, TIE  # noqa: E402
from benchmarks._util import SHARED  # noqa: E402

KINDS = ("random", "always_first", "one_model", "one_org", "one_org_any", "private_ranking", "copy_majority")  # fmt: skip
#: Kinds that bias a board (the goal's "harmful kinds").
HARMFUL = KINDS[:-1]
#: MT-Bench models' organisations (the ``organisation`` annotation of arena annotate).
ORGS = {
    "gpt-4": "OpenAI",
    "gpt-3.5-turbo": "OpenAI",
    "claude-v1": "Anthropic",
    "vicuna-13b-v1.2": "LMSYS",
    "alpaca-13b": "Stanford",
    "llama-13b": "Meta",
}


def load_mtbench():
    rows = [json.loads(x) for x in open(SHARED / "mt-bench-human" / "human_judgments_turn1.jsonl")]
    code = {"model_a": A_WINS, "model_b": B_WINS, "tie": TIE}
    return [
        (r["model_a"], r["model_b"], code[r["winner"]], r["judge"], str(r["question_id"]))
        for r in rows
    ]


def load_llmfao():
    out = []
    code = {"left": A_WINS, "right": B_WINS, "tie": TIE}
    with open(SHARED / "llmfao" / "crowd-comparisons.csv") as fh:
        for r in csv.DictReader(fh):
            out.append((r["left"], r["right"], code[r["winner"]], r["worker"], r["prompt"]))
    return out


def _board_order(rows):
    """Models by their rating on the real votes (for copy_majority)."""
    from arena.engine.fitting.fit import fit

    votes = to_votes(rows)
    theta = fit(votes.table(), ties="half", both_bad="tie").theta
    return {n: float(t) for n, t in zip(votes.names, theta, strict=True)}


def plant(rows, kind, rate, rng, strength=None):
    """Real rows plus planted judges' rows; returns rows and the planted judge names."""
    judges = sorted({r[3] for r in rows})
    per_judge = np.array([sum(1 for r in rows if r[3] == j) for j in judges])
    models = sorted({r[0] for r in rows} | {r[1] for r in rows})
    n_plant = max(1, int(round(rate * len(judges))))
    tie_share = np.mean([r[2] == TIE for r in rows])
    orgs = {}
    for m in models:
        orgs.setdefault(ORGS.get(m, m), []).append(m)
    multi = sorted(o for o, ms in orgs.items() if len(ms) >= 2) or sorted(orgs)
    out = list(rows)
    planted = []
    for k in range(n_plant):
        name = f"planted-{kind}-{k}"
        planted.append(name)
        n = int(rng.choice(per_judge))
        if kind == "one_org":
            favoured = set(orgs[multi[rng.integers(len(multi))]])
        elif kind == "one_org_any":
            names = sorted(orgs)
            favoured = set(orgs[names[rng.integers(len(names))]])
        elif kind == "one_model":
            favoured = {models[rng.integers(len(models))]}
        else:
            favoured = set()
        private = dict(zip(models, rng.permutation(len(models)), strict=True))
        with_target = [r for r in rows if (r[0] in favoured) != (r[1] in favoured)]
        for _ in range(n):
            pool = with_target if (with_target and rng.random() < 0.5) else rows
            a, b, o, _, q = pool[rng.integers(len(pool))]
            if kind == "random":
                o = TIE if rng.random() < tie_share else (A_WINS if rng.random() < 0.5 else B_WINS)
            elif kind == "always_first":
                o = A_WINS
            elif kind == "private_ranking":
                o = A_WINS if private[a] > private[b] else B_WINS
            elif kind == "copy_majority":
                o = A_WINS if strength[a] > strength[b] else B_WINS
            elif (a in favoured) != (b in favoured):
                o = A_WINS if a in favoured else B_WINS
            out.append((a, b, o, name, q))
    return out, set(planted)


def to_votes(rows):
    names = sorted({r[0] for r in rows} | {r[1] for r in rows})
    idx = {n: i for i, n in enumerate(names)}
    return Votes.build(
        names,
        [idx[r[0]] for r in rows],
        [idx[r[1]] for r in rows],
        [r[2] for r in rows],
        judge=[r[3] for r in rows],
        question=[r[4] for r in rows],
    )


def scores(probe):
    """Per judge: flagged by each detector and a continuous score (higher = more anomalous)."""
    out = {}
    for r in probe.details["judges"]:
        out[r["judge"]] = {
            # flags: outside the innocent bands; ranking: evidence against "votes like the board"
            "bt": (r["flagged"], -np.log(max(r["bt_null_pvalue"], 1e-300))),
            "fisher": (r["fisher_flagged"], -np.log(max(r["fisher_pvalue"], 1e-300))),
            "fastchat": (r["fastchat_flagged"], r["fastchat_log_score"]),
        }
    return out


BANDS = ((0, 20, "<20"), (20, 40, "20-39"), (40, 100, "40-99"), (100, 10**9, "100+"))
OUTCOMES = ("flagged", "consistent", "too few votes")


def outcome(row) -> str:
    """The judge's reported outcome; before issue 40 an unflagged judge reads as consistent."""
    if "outcome" in row:
        return row["outcome"]
    return "flagged" if row["flagged"] else "consistent"


def band(n: int) -> str:
    return next(name for lo, hi, name in BANDS if lo <= n < hi)


def print_outcomes(records) -> None:
    """Shares of each outcome by vote band, per group (real, or the planted kind)."""
    print("\noutcomes by the judge's votes (shares; n judges):")
    print(
        f"  {'group':22s} {'band':6s} {'n':>5s}  {'flagged':>8s} {'consistent':>10s} {'too few':>8s}"
    )
    groups = sorted({g for g, _, _ in records}, key=lambda g: (g.startswith("planted"), g))
    for g in groups + ["planted harmful"]:
        mine = [
            (n, o)
            for gg, n, o in records
            if gg == g
            or (g == "planted harmful" and gg.startswith("planted ") and gg[8:] in HARMFUL)
        ]
        for _, _, name in BANDS + ((0, 10**9, "all"),):
            sel = [o for n, o in mine if name == "all" or band(n) == name]
            if not sel:
                continue
            sh = [sum(o == k for o in sel) / len(sel) for k in OUTCOMES]
            print(f"  {g:22s} {name:6s} {len(sel):5d}  {sh[0]:8.2f} {sh[1]:10.2f} {sh[2]:8.2f}")


def tnr_at_tpr(pos, neg, tpr=0.9):
    """True-negative rate at the lowest threshold reaching the given true-positive rate."""
    pos = np.sort(np.asarray(pos))[::-1]
    k = int(np.ceil(tpr * pos.size)) - 1
    thr = pos[k]
    return float(np.mean(np.asarray(neg) < thr))


def audit(rows, opts):
    """The anomaly probe on ``rows``, with the MT-Bench organisations when supported."""
    votes = to_votes(rows)
    try:
        board = Board(votes, opts, organisations=ORGS)
    except TypeError:  # a detector without the organisation probe (before issue 27)
        board = Board(votes, opts)
    return anomalous_judges(board)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--llmfao", action="store_true", help="Also plant into the LLMFAO crowd.")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--bands-only",
        action="store_true",
        help="Skip the per-detector rate lines; print the outcome table and the summaries.",
    )
    args = ap.parse_args()
    rates = (0.1, 0.25)
    datasets = {"mt-bench": load_mtbench()}
    if args.llmfao:
        datasets["llmfao"] = load_llmfao()
    if args.quick:
        rates, args.seeds = (0.25,), 1
    la = os.getloadavg()
    print(f"load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")
    print("dataset   kind         rate  detector  TPR@alpha  FPR@alpha  TNR@TPR90")
    opts = AuditOptions(rounds=50)
    summary: dict = {}
    by_votes: dict = {}
    records: list = []  # (group, votes, outcome) per judge and run
    for dname, rows in datasets.items():
        alone = audit(rows, opts)
        real = scores(alone)
        for r in alone.details["judges"]:
            records.append((f"real alone ({dname})", r["votes"], outcome(r)))
        n_real = sum(s["bt"][0] for s in real.values())
        print(f"{dname}: real judges alone, flagged at the default level: {n_real} of {len(real)}")
        strength = _board_order(rows)
        for kind in KINDS:
            for rate in rates:
                acc = {
                    d: {"tp": [], "fp": [], "pos": [], "neg": []}
                    for d in ("bt", "fisher", "fastchat")
                }
                for seed in range(args.seeds):
                    rng = np.random.default_rng(1000 * seed + int(rate * 100))
                    planted_rows, planted = plant(rows, kind, rate, rng, strength)
                    probe = audit(planted_rows, opts)
                    sc = scores(probe)
                    for r in probe.details["judges"]:
                        g = f"planted {kind}" if r["judge"] in planted else f"real ({dname})"
                        records.append((g, r["votes"], outcome(r)))
                    n_votes = {}
                    for r in planted_rows:
                        n_votes[r[3]] = n_votes.get(r[3], 0) + 1
                    for d, a in acc.items():
                        for judge, s in sc.items():
                            flag, score = s[d]
                            if judge in planted:
                                a["tp"].append(flag)
                                a["pos"].append(score)
                                if d == "bt":
                                    by_votes.setdefault((kind, n_votes[judge] >= 40), []).append(
                                        flag
                                    )
                            else:
                                a["fp"].append(flag)
                                a["neg"].append(score)
                if args.bands_only:
                    continue
                for d, a in acc.items():
                    tpr, fpr = np.mean(a["tp"]), np.mean(a["fp"])
                    tnr90 = tnr_at_tpr(a["pos"], a["neg"])
                    if kind in HARMFUL:
                        summary.setdefault((dname, d), []).append((tpr, fpr, tnr90))
                    print(
                        f"{dname:9s} {kind:12s} {rate:4.2f}  {d:8s}  {tpr:9.2f}  {fpr:9.2f}  {tnr90:9.2f}"
                    )
    print_outcomes(records)
    print("\nmean over the harmful kinds and rates:")
    for (dname, d), vals in summary.items():
        v = np.array(vals)
        print(
            f"{dname:9s} {d:8s} TPR@alpha {v[:, 0].mean():.2f}  FPR@alpha {v[:, 1].mean():.2f}  TNR@TPR90 {v[:, 2].mean():.2f}"
        )
    print("\nbt flags by the planted judge's votes (all rates, seeds and data sets):")
    for kind in KINDS:
        few, many = by_votes.get((kind, False), []), by_votes.get((kind, True), [])
        print(f"  {kind:15s} under 40 votes: {np.mean(few) if few else float('nan'):.2f} of {len(few)}; 40 or more: {np.mean(many) if many else float('nan'):.2f} of {len(many)}")  # fmt: skip
    la = os.getloadavg()
    print(f"load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"{time.perf_counter() - t0:.0f}s")
