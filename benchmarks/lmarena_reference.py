"""A faithful, independent re-implementation of LMArena's bootstrap, for comparison.

LMArena's method (as described in issue 3): collapse battles into unique
``(model_a, model_b, winner)`` rows with counts; per bootstrap round draw one
multinomial over those rows (same law as resampling battles); fit each round
separately with scipy's L-BFGS-B on the logistic loss, ties counted as half a
win for each side, no prior; rating = 1000 + 400/ln10 * theta; 2.5/97.5
percentiles.  Serial here (LMArena uses a process pool); written from the
description, not copied.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

SCALE = 400.0 / np.log(10.0)


def unique_rows(a, b, y, n):
    """Collapse (a, b, y) rows with counts n into unique rows."""
    key = np.stack([a, b, (2 * y).astype(np.int64)])
    rows, inv = np.unique(key, axis=1, return_inverse=True)
    counts = np.bincount(inv.ravel(), weights=n)
    return rows[0], rows[1], rows[2] / 2.0, counts


def fit_logistic(ra, rb, ry, w, m, x0=None):
    """L-BFGS-B on the count-weighted logistic loss (LMArena-style tolerances)."""
    w = w / w.sum()

    def loss(theta):
        p = expit(theta[ra] - theta[rb])
        val = -(w * (ry * np.log(p) + (1 - ry) * np.log1p(-p))).sum()
        r = w * (p - ry)
        return val, np.bincount(ra, r, m) - np.bincount(rb, r, m)

    res = minimize(loss, np.zeros(m) if x0 is None else x0, jac=True, method="L-BFGS-B", options={"ftol": 1e-12, "gtol": 1e-9})
    theta = res.x - res.x.mean()
    return 1000.0 + SCALE * theta


def bootstrap_reference(ra, rb, ry, counts, m, rounds, seed):
    """Per-round multinomial resample of the unique rows and a separate fit each round."""
    rng = np.random.default_rng(seed)
    n = int(counts.sum())
    p = counts / counts.sum()
    out = np.empty((rounds, m))
    for r in range(rounds):
        w = rng.multinomial(n, p).astype(np.float64)
        out[r] = fit_logistic(ra, rb, ry, w, m)
    return out
