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


def fit_logistic(ra, rb, ry, w, m, x0=None, *, gtol=1e-6, maxiter=100):
    """L-BFGS-B on the count-weighted logistic loss, in rating units as LMArena does.

    Ratings ``r`` with ``P(a beats b) = expit(alpha (r_a - r_b))``, ``alpha =
    ln 10 / 400``; mean loss over battles (weights normalised), LMArena's
    options ``maxiter=100, gtol=1e-6``.  Returns ratings with mean 1000.
    """
    alpha = 1.0 / SCALE
    w = w / w.sum()

    def loss(r):
        p = expit(alpha * (r[ra] - r[rb]))
        val = -(w * (ry * np.log(p) + (1 - ry) * np.log1p(-p))).sum()
        g = alpha * w * (p - ry)
        return val, np.bincount(ra, g, m) - np.bincount(rb, g, m)

    res = minimize(
        loss, np.zeros(m) if x0 is None else x0, jac=True, method="L-BFGS-B", options={"maxiter": maxiter, "gtol": gtol}
    )
    return 1000.0 + res.x - res.x.mean()


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
