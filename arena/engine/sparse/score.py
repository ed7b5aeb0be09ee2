"""Score-test bounds of single models in O(cells): the sparse path's small-sample rule.

:func:`arena.engine.fitting.smallsample.score_bounds` evaluates the whole design once
per varied model (``3 K x P`` parameters and ``3 K x G`` statistics: 10^12
numbers for ten thousand models).  The score of model ``k`` with the others
held fixed involves only ``k``'s own groups, so here every group appears as
two *half-edges* (one per member) and the bisection runs on all models at
once over ``2 G`` half-edges; the root search is regula falsi (Illinois)
instead of 60 bisections.  Same statistic and same bounds (to 1e-11 logits).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from arena.core.defaults import DEFAULT_LEVEL
from arena.engine.fitting.design import Design
from arena.engine.fitting.likelihood import group_terms
from arena.engine.fitting.smallsample import SCORE_SPAN

__all__ = ["sparse_score_bounds"]


def sparse_score_bounds(
    design: Design,
    x: np.ndarray,
    cols: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    lam: float = 0.0,
    centre: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As :func:`arena.engine.fitting.smallsample.score_bounds` (low, centre, high in logits).

    The centre (root of the score) is computed only with ``centre=True``
    (NaN otherwise: the small-sample rule uses the two bounds only).
    """
    d = design
    cols = np.asarray(cols, dtype=np.int64)
    k = cols.size
    if k == 0:
        empty = np.zeros(0)
        return empty, empty.copy(), empty.copy()
    ma = d.n_active
    slot = np.full(ma, -1, dtype=np.int64)
    slot[cols] = np.arange(k)
    stats = d.point_stats()[0]  # (n_stats, G)
    groups = np.arange(d.n_groups)
    # half-edges of the varied models: (slot, group, sign, the other member's theta)
    parts = []
    for me, other, sign in ((d.ga, d.gb, 1.0), (d.gb, d.ga, -1.0)):
        hit = slot[me] >= 0
        parts.append((slot[me[hit]], groups[hit], np.full(hit.sum(), sign), x[other[hit]]))
    he_slot, he_group, he_sign, he_other = (np.concatenate(p) for p in zip(*parts, strict=True))
    he_stats = stats[:, he_group]
    shift = x[ma] if d.position else 0.0
    phi = np.full((1, 1), x[-1]) if d.ties == "davidson" else None

    def stat_at(t: np.ndarray) -> np.ndarray:  # t: (3, K) -> signed score statistic (3, K)
        tv = t[:, he_slot]
        lin = he_sign * (tv - he_other) + shift
        _, (ld, hdd, *_rest) = group_terms(d.ties, lin, phi, he_stats, derivs=True, value=False)
        # weighted counts: float arrays (numpy's stubs type bincount as integers)
        u: np.ndarray = np.stack(
            [np.bincount(he_slot, weights=row, minlength=k) for row in he_sign * ld]
        )
        info: np.ndarray = np.stack([np.bincount(he_slot, weights=row, minlength=k) for row in hdd])
        u -= lam * t
        info += lam
        with np.errstate(divide="ignore", invalid="ignore"):
            out = u / np.sqrt(info)
        flat = np.where(u > 0, np.inf, np.where(u < 0, -np.inf, 0.0))
        return np.where(info > 0, out, flat)

    z = float(special.ndtri(0.5 + level / 2.0))
    targets = np.array([z, 0.0, -z] if centre else [z, -z])[:, None]
    start = np.broadcast_to(x[cols], (targets.shape[0], k))
    a, b = start - SCORE_SPAN, start + SCORE_SPAN
    fa, fb = stat_at(a) - targets, stat_at(b) - targets
    below = fa < 0  # cannot reject even far below: bound is -inf
    above = fb > 0  # cannot reject even far above: bound is +inf
    root = _illinois(lambda t: stat_at(t) - targets, a, b, fa, fb)
    root = np.where(below, -np.inf, np.where(above, np.inf, root))
    if not centre:
        return root[0], np.full(k, np.nan), root[1]
    return root[0], root[1], root[2]


def _illinois(
    f: Callable[[np.ndarray], np.ndarray],
    a: np.ndarray,
    b: np.ndarray,
    fa: np.ndarray,
    fb: np.ndarray,
    *,
    xtol: float = 1e-11,
    max_iter: int = 200,
) -> np.ndarray:
    """Roots of decreasing ``f`` bracketed by ``f(a) >= 0 >= f(b)``, elementwise.

    Regula falsi with the Illinois modification (the end kept twice has its
    value halved), falling back to bisection where the secant is undefined and
    every fourth step: superlinear, so ~15 evaluations reach ``xtol`` where
    the dense path's bisection takes 60.
    """
    last = np.zeros(a.shape, dtype=np.int8)  # +1: a moved last, -1: b moved last
    for it in range(max_iter):
        live = (b - a) > xtol
        if not live.any():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            secant = b - fb * (b - a) / (fb - fa)
        good = np.isfinite(secant) & (secant > a) & (secant < b) & (it % 4 != 3)
        c = np.where(good, secant, 0.5 * (a + b))
        c = np.where(live, c, a)
        fc = f(c)
        up = live & (fc > 0)  # the root lies above c
        down = live & ~(fc > 0)
        fb = np.where(up & (last == 1), 0.5 * fb, fb)
        fa = np.where(down & (last == -1), 0.5 * fa, fa)
        a, fa = np.where(up, c, a), np.where(up, fc, fa)
        b, fb = np.where(down, c, b), np.where(down, fc, fb)
        last = np.where(up, 1, np.where(down, -1, last)).astype(np.int8)
    mid: np.ndarray = 0.5 * (a + b)
    return mid
