"""Reader of the shared ko-arena-hard battles as per-battle arrays (tests and benchmarks).

Kept free of pytest so that ``benchmarks/bench_style.py`` can import it.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena.core.outcomes import A_WINS, B_WINS, TIE

KO_ARENA_HARD = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ko-arena-hard"
#: arena-hard verdict -> (outcome code, weight); a strong verdict weighs 3
VERDICT = {
    "A>>B": (A_WINS, 3.0),
    "A>B": (A_WINS, 1.0),
    "A=B": (TIE, 1.0),
    "B>A": (B_WINS, 1.0),
    "B>>A": (B_WINS, 3.0),
}
#: conv_metadata fields of LMArena's four style features, side "a" / "b"
FIELDS = ("sum_assistant_{}_tokens", "header_count_{}", "list_count_{}", "bold_count_{}")


def _count(value) -> float:
    return float(sum(value.values()) if isinstance(value, dict) else value)


@dataclass(frozen=True)
class StyleBattles:
    models: list[str]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray
    side_a: np.ndarray  # (B, 4)
    side_b: np.ndarray
    question: np.ndarray
    n_without_metadata: int


def load_ko_arena_hard(path: Path | None = None) -> StyleBattles:
    """Battles with ``conv_metadata`` (the others are counted, not returned)."""
    path = path or KO_ARENA_HARD / "battles.jsonl.gz"
    index: dict[str, int] = {}
    a, b, o, w, fa, fb, q = [], [], [], [], [], [], []
    missing = 0
    with gzip.open(path, "rt") as fh:
        for line in fh:
            rec = json.loads(line)
            meta = rec.get("conv_metadata")
            if not meta:
                missing += 1
                continue
            out, weight = VERDICT[rec["verdict"]]
            a.append(index.setdefault(rec["model_a"], len(index)))
            b.append(index.setdefault(rec["model_b"], len(index)))
            o.append(out)
            w.append(weight)
            fa.append([_count(meta[f.format("a")]) for f in FIELDS])
            fb.append([_count(meta[f.format("b")]) for f in FIELDS])
            q.append(rec["question_id"])
    return StyleBattles(
        models=list(index),
        a=np.array(a, dtype=np.intp),
        b=np.array(b, dtype=np.intp),
        outcome=np.array(o, dtype=np.intp),
        weight=np.array(w),
        side_a=np.array(fa),
        side_b=np.array(fb),
        question=np.array(q),
        n_without_metadata=missing,
    )


@dataclass(frozen=True)
class SimulatedStyle:
    theta: np.ndarray  # true strengths, mean zero (logits)
    gamma: np.ndarray  # true coefficients per standardised covariate
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    side_a: np.ndarray  # (B, 4) counts
    side_b: np.ndarray


def simulate_style(
    rng: np.random.Generator, *, n_models: int, n_battles: int, gamma, spread: float = 0.5
) -> SimulatedStyle:
    """Decisive battles from the contextual BT model with known ratings and coefficients.

    Each model has its own style (mean length, headers, lists, bold), correlated
    with its strength, so style and strength are confounded as on real boards.
    The covariates are standardised over the simulated battles themselves, so the
    generating model is exactly the one fitted.
    """
    m = n_models
    theta = rng.normal(0.0, spread, m)
    theta -= theta.mean()
    a = rng.integers(0, m, n_battles)
    b = (a + rng.integers(1, m, n_battles)) % m
    base = np.exp(
        np.array([6.0, 0.5, 1.0, 0.8]) + 0.3 * theta[:, None] + rng.normal(0, 0.3, (m, 4))
    )
    # answers vary around their model's style (question to question)
    side_a = rng.poisson(base[a] * rng.lognormal(0.0, 0.5, (n_battles, 4))).astype(np.float64)
    side_b = rng.poisson(base[b] * rng.lognormal(0.0, 0.5, (n_battles, 4))).astype(np.float64)
    x = (side_a - side_b) / (side_a + side_b + 1.0)
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    gamma = np.asarray(gamma, dtype=np.float64)
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b] + z @ gamma)))
    outcome = np.where(rng.random(n_battles) < p, A_WINS, B_WINS).astype(np.intp)
    return SimulatedStyle(theta, gamma, a, b, outcome, side_a, side_b)
