"""A faithful, independent re-implementation of LMArena's bootstrap, for comparison.

LMArena's method (issue 3, and FastChat's ``rating_systems.py`` as published):

1. collapse the battles into unique ``(model_a, model_b, outcome)`` rows with
   counts -- one ``np.unique(..., axis=0)`` over a (battles x 3) int32 array,
   outcome coded 2 / 1 / 0 for A wins / tie / B wins (both tie labels are ties);
2. draw all rounds' multinomial resamples of those counts at once, weights
   normalised by the number of battles (a mean loss);
3. fit each round separately: scipy L-BFGS-B from zeros on the logistic loss,
   ties as half a win, no prior, parameters in base-10 logits
   (``P(a beats b) = expit(ln 10 * (r_a - r_b))``), ``gtol=1e-6``,
   ``maxiter=100``; rating = 1000 + 400 r (= 1000 + 400/ln 10 * theta);
4. 2.5 / 97.5 percentiles.

The tolerance is applied in the same parametrisation as LMArena's, which
matters: the same ``gtol`` on the Elo scale would stop 400x earlier and leave
errors of ~1 Elo.  Serial, as issue 3 asks (LMArena maps rounds over a process
pool).  One deliberate deviation makes this reference *faster* than the
original: the per-model gradient is summed with ``np.bincount`` instead of
``np.add.at``.  Written from the description, not copied.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

ALPHA = np.log(10.0)  # LMArena fits in base-10 logits
SCALE = 400.0
INIT = 1000.0


def collapse(model_a: np.ndarray, model_b: np.ndarray, y2: np.ndarray):
    """Unique (a, b, outcome) rows and their counts, as LMArena's preprocessing does.

    ``y2`` is the outcome coded 2 (A wins), 1 (tie), 0 (B wins).
    Returns ``(a, b, y, counts)`` with ``y`` in {1, 0.5, 0}.
    """
    schedule = np.empty((model_a.size, 3), dtype=np.int32)
    schedule[:, 0] = model_a
    schedule[:, 1] = model_b
    schedule[:, 2] = y2
    rows, counts = np.unique(schedule, return_counts=True, axis=0)
    return (
        rows[:, 0].astype(np.intp),
        rows[:, 1].astype(np.intp),
        rows[:, 2] / 2.0,
        counts.astype(np.float64),
    )


def fit_bt(ra, rb, ry, w, m, *, gtol=1e-6, maxiter=100):
    """One L-BFGS-B fit on the weighted logistic loss; returns base-10 logits ``r``."""

    def loss(r):
        p = expit(ALPHA * (r[ra] - r[rb]))
        val = -(w * (ry * np.log(p) + (1.0 - ry) * np.log(1.0 - p))).sum()
        g = -ALPHA * (ry - p) * w
        return val, np.bincount(ra, g, m) - np.bincount(rb, g, m)

    res = minimize(
        loss, np.zeros(m), jac=True, method="L-BFGS-B", options={"maxiter": maxiter, "gtol": gtol}
    )
    return res.x


def point_reference(ra, rb, ry, counts, m, **kw) -> np.ndarray:
    """Point ratings (mean 1000) by the same fit on the unresampled counts."""
    r = fit_bt(ra, rb, ry, counts / counts.sum(), m, **kw)
    return INIT + SCALE * (r - r.mean())


def bootstrap_reference(model_a, model_b, y2, m, rounds, seed) -> np.ndarray:
    """End to end from battle arrays: collapse, resample all rounds, fit each; (rounds, m) ratings."""
    ra, rb, ry, counts = collapse(model_a, model_b, y2)
    n = model_a.size
    rng = np.random.default_rng(seed)
    boot = rng.multinomial(n, counts / counts.sum(), size=rounds).astype(np.float64) / n
    out = np.empty((rounds, m))
    for r in range(rounds):
        out[r] = INIT + SCALE * fit_bt(ra, rb, ry, boot[r], m)
    return out
