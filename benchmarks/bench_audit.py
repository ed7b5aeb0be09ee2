"""Detection quality of the anomalous-judge detectors (benchmark, not a test).

Plants anomalous judges into real votes -- the shared MT-Bench expert votes
(65 judges) and the LLMFAO crowd votes (124 workers) -- and reports, per
detector, the true-positive rate (planted judges flagged) and the
false-positive rate (real judges flagged), at the detectors' own thresholds
(alpha = 0.05) and at a common true-positive rate of 90% (the paper's
operating point: ~90% TP, 60-70% TN on 25 planted + 25 normal users).

Planted judges copy real battles (pairs and questions sampled from the
data, vote counts sampled from the real judges'), then vote:

* ``random``: a fair coin (ties at the data's tie share);
* ``always_a``: the first-shown answer;
* ``favour``: one model (chosen per judge) whenever it plays, real outcome
  otherwise; half of its battles include that model;
* ``coordinated``: groups of 5 judges boosting one shared model in every battle.

Rates are planted judges as a share of real ones.

    python benchmarks/bench_audit.py            # full
    python benchmarks/bench_audit.py --quick    # smoke run
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

KINDS = ("random", "always_a", "favour", "coordinated")


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


def plant(rows, kind, rate, rng):
    """Real rows plus planted judges' rows; returns rows and the planted judge names."""
    judges = sorted({r[3] for r in rows})
    per_judge = np.array([sum(1 for r in rows if r[3] == j) for j in judges])
    models = sorted({r[0] for r in rows} | {r[1] for r in rows})
    n_plant = max(1, int(round(rate * len(judges))))
    tie_share = np.mean([r[2] == TIE for r in rows])
    out = list(rows)
    planted = []
    group_target = None
    for k in range(n_plant):
        name = f"planted-{kind}-{k}"
        planted.append(name)
        n = int(rng.choice(per_judge))
        if kind == "coordinated":
            if k % 5 == 0:
                group_target = models[rng.integers(len(models))]
            target = group_target
        else:
            target = models[rng.integers(len(models))]
        with_target = [r for r in rows if target in (r[0], r[1])]
        for _ in range(n):
            share = {"favour": 0.5, "coordinated": 1.0}.get(kind, 0.0)
            pool = with_target if (with_target and rng.random() < share) else rows
            a, b, o, _, q = pool[rng.integers(len(pool))]
            if kind == "random":
                o = TIE if rng.random() < tie_share else (A_WINS if rng.random() < 0.5 else B_WINS)
            elif kind == "always_a":
                o = A_WINS
            elif target in (a, b):
                o = A_WINS if a == target else B_WINS
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


def tnr_at_tpr(pos, neg, tpr=0.9):
    """True-negative rate at the lowest threshold reaching the given true-positive rate."""
    pos = np.sort(np.asarray(pos))[::-1]
    k = int(np.ceil(tpr * pos.size)) - 1
    thr = pos[k]
    return float(np.mean(np.asarray(neg) < thr))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    rates = (0.1, 0.25, 0.5)
    datasets = {"mt-bench": load_mtbench(), "llmfao": load_llmfao()}
    if args.quick:
        rates, args.seeds = (0.25,), 1
    la = os.getloadavg()
    print(f"load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")
    print("dataset   kind         rate  detector  TPR@alpha  FPR@alpha  TNR@TPR90")
    opts = AuditOptions(rounds=50)
    summary: dict = {}
    for dname, rows in datasets.items():
        for kind in KINDS:
            for rate in rates:
                acc = {
                    d: {"tp": [], "fp": [], "pos": [], "neg": []}
                    for d in ("bt", "fisher", "fastchat")
                }
                for seed in range(args.seeds):
                    rng = np.random.default_rng(1000 * seed + int(rate * 100))
                    planted_rows, planted = plant(rows, kind, rate, rng)
                    probe = anomalous_judges(Board(to_votes(planted_rows), opts))
                    sc = scores(probe)
                    for d, a in acc.items():
                        for judge, s in sc.items():
                            flag, score = s[d]
                            if judge in planted:
                                a["tp"].append(flag)
                                a["pos"].append(score)
                            else:
                                a["fp"].append(flag)
                                a["neg"].append(score)
                for d, a in acc.items():
                    tpr, fpr = np.mean(a["tp"]), np.mean(a["fp"])
                    tnr90 = tnr_at_tpr(a["pos"], a["neg"])
                    summary.setdefault((dname, d), []).append((tpr, fpr, tnr90))
                    print(
                        f"{dname:9s} {kind:12s} {rate:4.2f}  {d:8s}  {tpr:9.2f}  {fpr:9.2f}  {tnr90:9.2f}"
                    )
    print("\nmean over kinds and rates:")
    for (dname, d), vals in summary.items():
        v = np.array(vals)
        print(
            f"{dname:9s} {d:8s} TPR@alpha {v[:, 0].mean():.2f}  FPR@alpha {v[:, 1].mean():.2f}  TNR@TPR90 {v[:, 2].mean():.2f}"
        )
    la = os.getloadavg()
    print(f"load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"{time.perf_counter() - t0:.0f}s")
