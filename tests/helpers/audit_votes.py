"""Simulated votes for the audit's tests: Bradley-Terry battles with planted behaviour."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from arena.audit.setup import AuditOptions
from arena.audit.votes import Votes
from arena.core.outcomes import A_WINS, B_WINS, TIE

#: Audit options of the tests: few rounds, a low ranking threshold.
OPTS = AuditOptions(rounds=100, min_battles=20)
#: Eight models from strong to weak (logits).
STRENGTH = np.linspace(1.2, -1.2, 8)


def simulate(
    strength,
    n,
    *,
    seed=0,
    gamma=0.0,
    tie=0.0,
    judges=0,
    judge_of=None,
    override=None,
):
    """BT votes: uniform random pairs, first-shown advantage ``gamma`` (logits), tie share.

    ``override(k, a, b, judge, rng)`` may return an outcome code for vote k.
    """
    rng = np.random.default_rng(seed)
    m = len(strength)
    a = rng.integers(m, size=n)
    b = (a + rng.integers(1, m, size=n)) % m
    judge = rng.integers(judges, size=n) if judges else None
    if judge_of is not None:
        judge = judge_of(rng, n)
    p = expit(np.asarray(strength)[a] - np.asarray(strength)[b] + gamma)
    u = rng.random(n)
    out = np.where(u < tie, TIE, np.where(rng.random(n) < p, A_WINS, B_WINS))
    if override is not None:
        for k in range(n):
            o = override(k, a[k], b[k], None if judge is None else judge[k], rng)
            if o is not None:
                out[k] = o
    names = [f"m{i}" for i in range(m)]
    labels = None if judge is None else [f"j{j:03d}" for j in judge]
    return Votes.build(names, a, b, out, judge=labels)
