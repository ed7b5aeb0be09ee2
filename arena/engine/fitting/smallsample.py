"""Intervals for models with few battles: never narrower than the likelihood allows.

The percentile bootstrap cannot see uncertainty the data do not show: a model
with two battles, both ties, has every resample equal to two ties, and its
bootstrap interval collapses to the spread of its opponents (about +-15 Elo
on LMArena) although two votes pin almost nothing.  The Fisher interval is
honest there but symmetric and, at the smallest samples, still optimistic in
the tails.

The rule (``docs/small_samples.md`` has the measurements): for every model
with fewer than :data:`SMALL_SAMPLE_BATTLES` battles, or whose method
standard error is below :data:`DEGENERATE_SE_RATIO` times its Fisher standard
error (degenerate resamples), the interval is the hull of

* the method's interval (bootstrap, sandwich or Fisher),
* the Fisher interval ``rating +- z se_Fisher``,
* the score interval: the ratings ``t`` that a score test of the model's own
  battles does not reject at ``level``, ``U(t)^2 / I(t) <= z^2``, with the
  other parameters held at the point fit (the Wilson interval of a win rate,
  generalised to opponents of different strength, ties and weights).

Models with enough battles keep the method's interval untouched, byte for
byte.  :func:`score_bounds` also serves models outside the comparable set
that met it (a model that never lost): a one-sided interval ``[low, inf)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from arena.core.defaults import DEFAULT_LEVEL
from arena.engine.fitting.design import Design
from arena.engine.fitting.fit import Fit
from arena.engine.fitting.likelihood import evaluate, hessian_diagonal
from arena.engine.scale import SCALE

__all__ = [
    "SMALL_SAMPLE_BATTLES",
    "DEGENERATE_SE_RATIO",
    "score_bounds",
    "widen_small_samples",
]

#: Models with fewer battles than this get the small-sample rule.
SMALL_SAMPLE_BATTLES = 100
#: A method SE below this share of the Fisher SE marks degenerate resamples.
DEGENERATE_SE_RATIO = 0.25
# Search span around the point fit, logits (~7,000 Elo): beyond it a score
# test that still does not reject means the bound is infinite.
SCORE_SPAN = 40.0
_BISECTIONS = 60


def _score_stat(
    design: Design, x: np.ndarray, stats: np.ndarray, cols: np.ndarray, lam: float
) -> np.ndarray:
    """Signed score statistic ``U / sqrt(I)`` of parameter ``cols[r]`` in row ``r``."""
    _, g, _ = evaluate(design, x, stats, lam, order=-1)
    h = hessian_diagonal(design, x, stats, lam)
    rows = np.arange(x.shape[0])
    u, info = g[rows, cols], h[rows, cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = u / np.sqrt(info)
    # no information left (all opponents infinitely weaker/stronger): the sign of U decides
    flat = np.where(u > 0, np.inf, np.where(u < 0, -np.inf, 0.0))
    return np.where(info > 0, t, flat)


def score_bounds(
    design: Design,
    x: np.ndarray,
    cols: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    lam: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score-test bounds for single thetas, the other parameters held at ``x``.

    Parameters
    ----------
    design : Design
    x : ndarray, shape (P,)
        Parameters at which everything else is held (the point fit).
    cols : ndarray of int, shape (K,)
        Active-model indices whose theta is varied.
    level : float
    lam : float
        Prior precision of the fit (0 for the MLE).

    Returns
    -------
    low, centre, high : ndarray, shape (K,)
        In logits.  ``centre`` is the root of the score (the conditional
        MLE); a bound the test never reaches within ~7,000 Elo is ``-inf`` /
        ``+inf`` (e.g. the upper bound of a model that never lost).
    """
    cols = np.asarray(cols, dtype=np.int64)
    k = cols.size
    if k == 0:
        empty = np.zeros(0)
        return empty, empty.copy(), empty.copy()
    z = float(special.ndtri(0.5 + level / 2.0))
    targets = np.concatenate([np.full(k, z), np.zeros(k), np.full(k, -z)])
    which = np.tile(cols, 3)
    base = np.repeat(x[None, :], 3 * k, axis=0)
    stats = np.repeat(design.point_stats(), 3 * k, axis=0)
    lo = x[which] - SCORE_SPAN
    hi = x[which] + SCORE_SPAN

    def stat_at(t: np.ndarray) -> np.ndarray:
        xr = base.copy()
        xr[np.arange(3 * k), which] = t
        return _score_stat(design, xr, stats, which, lam)

    # the statistic decreases in t: below the root it is above the target
    s_lo, s_hi = stat_at(lo), stat_at(hi)
    below = s_lo < targets  # cannot reject even far below: bound is -inf
    above = s_hi > targets  # cannot reject even far above: bound is +inf
    a, b = lo.copy(), hi.copy()
    for _ in range(_BISECTIONS):
        mid = 0.5 * (a + b)
        up = stat_at(mid) > targets
        a = np.where(up, mid, a)
        b = np.where(up, b, mid)
    root = 0.5 * (a + b)
    root = np.where(below, -np.inf, np.where(above, np.inf, root))
    return root[:k], root[k : 2 * k], root[2 * k :]


def widen_small_samples(
    point: Fit,
    low: np.ndarray,
    high: np.ndarray,
    se: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    min_battles: int = SMALL_SAMPLE_BATTLES,
    bounds: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]] = score_bounds,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply the small-sample rule to a fit's intervals.

    Parameters
    ----------
    point : Fit
        The point fit (its design, parameters, Fisher SEs and anchor).
    low, high, se : ndarray, shape (M,)
        The method's interval and standard error.
    level : float
    min_battles : int
        Models with fewer battles get the rule.
    bounds : callable
        The score bounds (:func:`score_bounds`, or the sparse path's
        :func:`arena.engine.sparse.score.sparse_score_bounds`).

    Returns
    -------
    low, high : ndarray, shape (M,)
        New bounds (copies; unchanged where the rule does not apply).
    widened : ndarray of bool, shape (M,)
        Models the rule applied to.
    """
    d = point.design
    low, high = np.array(low, dtype=np.float64), np.array(high, dtype=np.float64)
    m = d.n_models
    mask = np.zeros(m, dtype=bool)
    if d.n_active == 0:
        return low, high, mask
    battles = d.battles_per_model
    fisher = point.se
    with np.errstate(invalid="ignore"):
        degenerate = se < DEGENERATE_SE_RATIO * fisher
    mask[d.active] = (battles[d.active] < min_battles) | degenerate[d.active]
    if point.anchor is not None:
        mask[point.anchor[0]] = False  # the anchor's rating is fixed by definition
    models = np.flatnonzero(mask)
    if models.size == 0:
        return low, high, mask
    pos = np.full(m, -1, dtype=np.int64)
    pos[d.active] = np.arange(d.n_active)
    cols = pos[models]
    t_lo, _, t_hi = bounds(d, point.x, cols, level=level, lam=point.prior_used)
    # rating is linear in theta_k with the others held: slope SCALE * T[k, k], the
    # diagonal of rating_transform (centring, minus the anchor's row), never formed
    own = 1.0 - 1.0 / d.n_active
    if point.anchor is not None:
        own = own - (0.0 - 1.0 / d.n_active)
    slope = SCALE * own
    x_hat = point.x[cols]
    with np.errstate(invalid="ignore"):
        s_lo = point.rating[models] + slope * (t_lo - x_hat)
        s_hi = point.rating[models] + slope * (t_hi - x_hat)
    z = float(special.ndtri(0.5 + level / 2.0))
    f_lo = point.rating[models] - z * fisher[models]
    f_hi = point.rating[models] + z * fisher[models]
    low[models] = np.minimum.reduce([low[models], f_lo, s_lo])
    high[models] = np.maximum.reduce([high[models], f_hi, s_hi])
    return low, high, mask
