"""Battle files with known content: CSV and JSON lines, as users and LMArena write them."""

from __future__ import annotations

import csv
import json
import random

import numpy as np


def write_csv(path, header, rows) -> str:
    """``rows`` under ``header`` as a UTF-8 CSV file; returns the path as a string."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return str(path)


def write_jsonl(path, records) -> str:
    """One JSON object per line; returns the path as a string."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def synth_battles(path, *, n=3000, models=8, seed=1, categories=("math", "code"), extra_id=0):
    """Battles from known strengths (Elo spacing 30), with ties and two categories."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(0, 30 * (models - 1), models)[::-1] * np.log(10) / 400
    rows = []
    for k in range(n):
        a, b = rng.choice(models, size=2, replace=False)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random()
        winner = "tie" if u < 0.1 else ("model_a" if u < 0.1 + 0.9 * p else "model_b")
        tags = {c: str(bool(rng.random() < 0.5)) for c in categories}
        rows.append(
            {
                "id": f"b{k + extra_id}",
                "model_a": f"model-{a}",
                "model_b": f"model-{b}",
                "winner": winner,
                "judge": f"j{rng.integers(40)}",
                **tags,
            }
        )
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows


def judged_battles(path, *, n=1500, models=6, judges=25, seed=3):
    """BT votes with judges and questions; judge j00 always votes for the first-shown answer."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.0, -1.0, models)
    rows = []
    for k in range(n):
        a, b = rng.choice(models, size=2, replace=False)
        j = int(rng.integers(judges)) if k % 6 else 0
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        winner = "model_a" if (j == 0 or rng.random() < p) else "model_b"
        rows.append(
            {
                "id": f"b{k}",
                "model_a": f"model-{a}",
                "model_b": f"model-{b}",
                "winner": winner,
                "judge": f"j{j:02d}",
                "question_id": f"q{rng.integers(40)}",
            }
        )
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


# ---------------------------------------------------------------- style metadata

#: LMArena's sub-counts of each style feature (conv_metadata writes them as objects).
STYLE_SUBS = {
    "header_count": ("h1", "h2", "h3", "h4", "h5", "h6"),
    "list_count": ("ordered", "unordered"),
    "bold_count": ("**", "__"),
}


def conv_metadata(tokens, headers, lists, bold, **covariates):
    """A conv_metadata object as LMArena writes it (sub-counts as objects)."""
    out = {}
    for side, i in (("a", 0), ("b", 1)):
        out[f"sum_assistant_{side}_tokens"] = tokens[i]
        for key, total in (("header_count", headers), ("list_count", lists), ("bold_count", bold)):
            subs = dict.fromkeys(STYLE_SUBS[key], 0)
            subs[STYLE_SUBS[key][0]] = total[i]
            out[f"{key}_{side}"] = subs
    for name, (a, b) in covariates.items():
        out[f"{name}_a"], out[f"{name}_b"] = a, b
    return out


# ---------------------------------------------------------------- tagged rows

#: An LMArena-shaped CSV header with two tag columns (the column-wise ingest path).
TAGGED_HEADER = ["id", "model_a", "model_b", "winner", "math", "creative"]
TAGGED_ROWS = [
    ["u1", "a", "b", "model_a", "True", "False"],
    ["u2", "b", "c", "tie", "False", "True"],
    ["u3", "c", "c", "model_b", "True", "True"],  # self-play: stored, excluded
    ["u4", "a", "c", "both_bad", "False", "False"],
    ["u5", "c", "a", "model_b", "True", "False"],
    ["u6", "d", "a", "tie (bothbad)", "False", "True"],
    ["u7", "b", "d", "model_a", "True", "True"],
]

# ---------------------------------------------------------------- random battles for count tables

COUNT_MODELS = ["m0", "m1", "m2", "m3", "m4", "m5"]
COUNT_WINNERS = ["model_a", "model_b", "tie", "both_bad"]


def csv_rows(seed: int, n: int, prefix: str) -> list[list[str]]:
    """Tagged battles (column fast path), a few self-play, repeated pairs."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = rng.choice(COUNT_MODELS), rng.choice(COUNT_MODELS)
        tags = [str(rng.random() < 0.4), str(rng.random() < 0.3)]
        rows.append([f"{prefix}{i}", a, b, rng.choice(COUNT_WINNERS), *tags])
    return rows


def weighted_jsonl(path, seed: int, n: int, prefix: str) -> str:
    """Weighted battles with a category field (row path), as JSON lines."""
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for i in range(n):
            rec = {
                "id": f"{prefix}{i}",
                "model_a": rng.choice(COUNT_MODELS),
                "model_b": rng.choice(COUNT_MODELS),
                "winner": rng.choice(COUNT_WINNERS),
                "weight": rng.choice([1.0, 0.5, 2.0]),
                "category": rng.choice(["math", "code", ""]),
            }
            fh.write(json.dumps(rec) + "\n")
    return str(path)
