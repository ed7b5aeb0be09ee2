"""Tiers for many models without all pairs: :func:`tiers_bounded`.

:func:`arena.engine.inference.tiers.tiers_paired` judges every one of the
``F = M (M - 1) / 2`` pairs (step-down max-t, Holm or BH over the whole
family): 50 million pairs x 1000 rounds at ten thousand models.  The sparse
path keeps the same family and the same rules but replaces the correction by
**Bonferroni over all F pairs** with normal p-values, which needs only the
pairs a rule actually looks at:

* a pair is separated when ``t = d / sd(d*) > z_F``, ``z_F = Phi^-1(1 -
  alpha / (2 F))`` (``d`` the point difference, ``sd(d*)`` its paired
  bootstrap SD);
* ``rule="leader"`` looks at ``M - 1`` pairs (each model against the current
  leader): O(rounds x M);
* ``rule="cut"`` needs every pair across a cut; it uses the bound
  ``sd(d*_ab) <= sd_a + sd_b`` (the SD of a difference is at most the sum of
  the SDs), so a cut is drawn when ``min_{a above} (r_a - z_F sd_a) >
  max_{b below} (r_b + z_F sd_b)``, which implies ``t_ab > z_F`` for every
  pair across it: O(M) after sorting.

**The stated bound.**  Bonferroni's adjusted p-value is never below Holm's or
BH's, and under normal paired differences ``z_F`` is at least the max-t
critical value (union bound), so every pair the sparse path separates is one
the dense path's correction would separate too (for max-t, up to the normal
approximation of the bootstrap tails): the sparse path draws tier boundaries
at least as conservatively.  It may draw fewer.  The leader walk itself is
the dense rule's; only the verdict is stricter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_TIER_RULE, TIER_RULES
from arena.core.errors import ArgumentError
from arena.engine.inference.tiers import TierResult
from arena.engine.validate import check_level, rating_vector, sample_matrix

__all__ = ["tiers_bounded"]


def tiers_bounded(
    rating: np.ndarray,
    samples: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    correction: str = "maxt",
    rule: str = DEFAULT_TIER_RULE,
) -> TierResult:
    """Tiers from paired bootstrap differences, Bonferroni over all pairs (see module doc).

    Same arguments and result as :func:`arena.engine.inference.tiers.tiers_paired`
    (``pvalues`` is always ``"normal"``; ``critical_t`` is ``z_F``), in
    O(rounds x M) time and memory.
    """
    alpha = 1.0 - check_level(level)
    if correction not in ("maxt", "holm", "bh") or rule not in TIER_RULES:
        raise ArgumentError(f"unknown correction {correction!r} or rule {rule!r}")
    r = rating_vector(rating, "rating")
    s = sample_matrix(samples, r.size)
    m, order = r.size, np.argsort(-r, kind="stable")
    n_pairs = m * (m - 1) // 2
    tiers = np.ones(m, dtype=np.int64)
    starts = np.zeros(m, dtype=bool)
    upper, lower = np.full((2, m), -1, dtype=np.int64)
    p_value, p_adjusted = np.full((2, m), np.nan)
    z = float(special.ndtri(1.0 - alpha / (2.0 * max(n_pairs, 1))))
    if m > 1:
        board = np.ascontiguousarray(s[:, order].T)  # (M, rounds), board order
        rb = r[order]
        if rule == "leader":
            leader = 0
            for k in range(1, m):
                sd = float(np.std(board[leader] - board[k], ddof=1))
                est = rb[leader] - rb[k]
                t = est / sd if sd > 0 else (np.inf if est > 0 else 0.0)
                p = min(1.0, 2.0 * float(special.ndtr(-t)))
                upper[order[k]], lower[order[k]] = order[leader], order[k]
                p_value[order[k]] = p
                p_adjusted[order[k]] = min(1.0, p * n_pairs)
                if t > z:
                    starts[order[k]] = True
                    leader = k
        else:
            sd = board.std(axis=1, ddof=1)
            top = np.minimum.accumulate(rb - z * sd)  # weakest model above each cut
            bottom = np.maximum.accumulate((rb + z * sd)[::-1])[::-1]
            # the pair that decides the cut above position k: argmin above, argmax below
            arg_top = _running_arg(rb - z * sd, np.less)
            arg_bottom = _running_arg((rb + z * sd)[::-1], np.greater)[::-1]
            arg_bottom = (m - 1) - arg_bottom
            for k in range(1, m):
                a, b = int(arg_top[k - 1]), int(arg_bottom[k])
                upper[order[k]], lower[order[k]] = order[a], order[b]
                bound_sd = sd[a] + sd[b]
                t = (rb[a] - rb[b]) / bound_sd if bound_sd > 0 else np.inf
                p = min(1.0, 2.0 * float(special.ndtr(-t)))
                p_value[order[k]], p_adjusted[order[k]] = p, min(1.0, p * n_pairs)
                starts[order[k]] = bool(top[k - 1] > bottom[k])
        tiers[order] = 1 + np.cumsum(starts[order])
    verdicts = (tiers, order, starts, upper, lower, p_value, p_adjusted)
    return TierResult(*verdicts, z, n_pairs, float(level), correction, rule, "normal")


def _running_arg(values: np.ndarray, better: Callable[[Any, Any], Any]) -> np.ndarray:
    """Index of the running extreme (first occurrence) of ``values``, shape like it."""
    out = np.empty(values.size, dtype=np.int64)
    best = 0
    for i in range(values.size):
        if better(values[i], values[best]):
            best = i
        out[i] = best
    return out
