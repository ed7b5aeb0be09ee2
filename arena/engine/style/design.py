"""Style control, data side: per-battle style features and the compiled design.

The style-controlled model (LMArena's contextual Bradley–Terry) cannot
collapse battles into (pair, outcome) cells: every battle carries its own
covariate vector.  Battles with identical ``(a, b, outcome, weight,
features)`` still collapse into weighted *rows*; everything downstream costs
O(rows) per evaluation.

Features (LMArena's ``preprocess_for_style``)
---------------------------------------------
Per battle and side a non-negative count ``f`` per feature (answer tokens,
headers, list items, bold spans).  The covariate is ``x = (f_a - f_b) /
(f_a + f_b + 1)`` for those counts and the plain difference ``f_a - f_b`` for
user covariates (a sentiment score may be negative, so the ratio has no
meaning there).  Each column is then standardised over the board's battles
that enter the fit (self-play and dropped ties excluded, every battle counted
once whatever its weight): subtract the mean, divide by the population
standard deviation.  A column that is constant over those battles carries no
information and would make the Hessian singular: it is dropped with a
warning naming it.

Orientation is kept as shown (``a`` first): the mean subtraction makes the
covariate of a swapped battle differ from minus the original, so battles are
never flipped onto a canonical pair order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from arena.core.defaults import BOTH_BAD_RULES, DEFAULT_BOTH_BAD
from arena.core.errors import ArgumentError
from arena.core.outcomes import N_OUTCOMES, TIE_BOTH_BAD
from arena.engine.counts import battle_arrays, check_n_models, unique_rows

__all__ = ["STYLE_FEATURES", "StyleTable", "style_table", "style_covariates"]

#: LMArena's style features, in the order of their ``conv_metadata`` fields.
STYLE_FEATURES = ("tokens", "headers", "lists", "bold")


@dataclass(frozen=True)
class StyleTable:
    """Battles of a style-controlled board, collapsed into weighted rows.

    Rows are sorted by ``(a, b)`` (ordered pair), then outcome, weight and
    features.

    Attributes
    ----------
    n_models : int
    a, b : ndarray of intp, shape (N,)
        Model shown first / second.
    outcome : ndarray of int8, shape (N,)
    weight : ndarray of float64, shape (N,)
        Weight of one battle of the row.
    n : ndarray of float64, shape (N,)
        Battles in the row.
    z : ndarray of float64, shape (N, F)
        Standardised covariates of the kept features.
    features : tuple of str
        Names of the kept features (columns of ``z``).
    dropped : tuple of str
        Features dropped because they are constant on the board.
    mean, sd : ndarray, shape (F,)
        Standardisation of the kept features (before it: ``x = z * sd + mean``).
    battle_row : ndarray of intp, shape (B,)
        Row of every input battle, -1 for battles left out (self-play,
        dropped ``tie_both_bad``).
    warnings : list of str
    """

    n_models: int
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray
    n: np.ndarray
    z: np.ndarray
    features: tuple[str, ...]
    dropped: tuple[str, ...]
    mean: np.ndarray
    sd: np.ndarray
    battle_row: np.ndarray
    warnings: list[str]

    @property
    def n_rows(self) -> int:
        return int(self.a.shape[0])

    @property
    def n_battles(self) -> float:
        return float(self.n.sum())


def style_covariates(side_a: ArrayLike, side_b: ArrayLike, ratio: ArrayLike) -> np.ndarray:
    """Raw covariates ``(f_a - f_b) / (f_a + f_b + 1)`` (ratio columns) or ``f_a - f_b``.

    Parameters
    ----------
    side_a, side_b : array_like, shape (B, F)
        Per-side feature values of each battle.
    ratio : array_like of bool, shape (F,)
        Columns that get LMArena's ratio normalisation (non-negative counts).

    Returns
    -------
    ndarray, shape (B, F)
    """
    fa = np.asarray(side_a, dtype=np.float64)
    fb = np.asarray(side_b, dtype=np.float64)
    ratio = np.asarray(ratio, dtype=bool)
    x = fa - fb
    if ratio.any():
        x[:, ratio] /= fa[:, ratio] + fb[:, ratio] + 1.0
    return x


def _collapse(
    m: int, a: np.ndarray, b: np.ndarray, o: np.ndarray, w: np.ndarray, z: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of equal ``(a, b, outcome, weight, z)``: ``(first, inverse)`` as :func:`unique_rows`.

    The same rows in the same order (lexicographic in ``a, b, outcome, weight,
    z_0, z_1, ...``; the first battle of each row as representative) as
    ``unique_rows(a, b, o, w, *z.T)``, which sorts by every column in turn
    (8 stable sorts for the four features, 3 s for 1M battles).  Here the
    integer columns and the weight's rank are packed into one key, and two
    stable sorts (``z_0``, then the key) give the order by ``(key, z_0)``;
    ``z_0`` (the length ratio) is nearly unique, so the rare battles that tie
    on it are ordered by the remaining features afterwards, among themselves.
    """
    n = a.shape[0]
    if n == 0 or z.shape[1] == 0:
        return unique_rows(a, b, o, w, *z.T)
    key = (a.astype(np.int64) * m + b) * N_OUTCOMES + o
    if w.min() != w.max():  # the weight's rank, below the integer columns
        wv, wcode = np.unique(w, return_inverse=True)
        key = key * wv.size + wcode.reshape(-1)
    order = np.argsort(z[:, 0], kind="stable")
    order = order[np.argsort(key[order], kind="stable")]
    sk, s0 = key[order], z[order, 0]
    # tie[i]: sorted battle i has the key and z_0 of battle i - 1
    tie = np.zeros(n, dtype=bool)
    tie[1:] = (sk[1:] == sk[:-1]) & (s0[1:] == s0[:-1])
    new = ~tie
    if tie.any() and z.shape[1] > 1:
        # runs of equal (key, z_0): sort each run by z_1, z_2, ... (stable), then a
        # battle starts a new row where any of those differs from the one before
        start = np.flatnonzero(new)
        run = np.cumsum(new) - 1
        size = np.diff(np.r_[start, n])
        pos = np.flatnonzero(size[run] > 1)
        rest = z[order[pos], 1:]
        sub = np.lexsort((*rest[:, ::-1].T, run[pos]))
        order[pos] = order[pos[sub]]
        rest = rest[sub]
        later = np.flatnonzero(tie[pos])  # positions in pos that continue a run
        new[pos[later]] = np.any(rest[later] != rest[later - 1], axis=1)
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def style_table(
    model_a: ArrayLike,
    model_b: ArrayLike,
    outcome: ArrayLike,
    side_a: ArrayLike,
    side_b: ArrayLike,
    *,
    n_models: int,
    features: Sequence[str] = STYLE_FEATURES,
    ratio: ArrayLike | None = None,
    weight: ArrayLike | None = None,
    both_bad: str = DEFAULT_BOTH_BAD,
) -> StyleTable:
    """Per-battle arrays -> standardised covariates and collapsed rows.

    Parameters
    ----------
    model_a, model_b, outcome : array_like of int, shape (B,)
        As for :func:`arena.engine.counts.count_table`.
    side_a, side_b : array_like, shape (B, F)
        Feature values of the first / second answer (counts for LMArena's
        features; any finite number for user covariates).
    n_models : int
    features : sequence of str, length F
        Feature names (for coefficients and warnings).
    ratio : array_like of bool, shape (F,), optional
        Columns normalised by ``f_a + f_b + 1``.  Default: the columns named
        in :data:`STYLE_FEATURES`; other columns use the plain difference.
    weight : array_like of float, shape (B,), optional
        Battle weights (default 1).
    both_bad : {"tie", "drop"}
        ``tie_both_bad`` battles count as ties or are left out.

    Returns
    -------
    StyleTable
    """
    m = check_n_models(n_models)
    a, b, o = battle_arrays(m, model_a, model_b, outcome)
    nb = a.shape[0]
    names = tuple(str(f) for f in features)
    fa = np.asarray(side_a, dtype=np.float64).reshape(nb, -1)
    fb = np.asarray(side_b, dtype=np.float64).reshape(nb, -1)
    if fa.shape != fb.shape or fa.shape[1] != len(names):
        raise ArgumentError(
            f"side_a and side_b must have shape (battles, {len(names)}) for features {names}"
        )
    if len(set(names)) != len(names):
        raise ArgumentError(f"feature names must be distinct, got {names}")
    if not (np.isfinite(fa).all() and np.isfinite(fb).all()):
        raise ArgumentError("style feature values must be finite")
    ratio = (
        np.array([f in STYLE_FEATURES for f in names], dtype=bool)
        if ratio is None
        else np.asarray(ratio, dtype=bool).reshape(len(names))
    )
    if ratio.any() and ((fa[:, ratio] < 0).any() or (fb[:, ratio] < 0).any()):
        raise ArgumentError("ratio-normalised style features (counts) must be non-negative")
    if weight is None:
        w = np.ones(nb)
    else:
        w = np.broadcast_to(np.asarray(weight, dtype=np.float64), (nb,)).copy()
        if not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ArgumentError("weights must be finite and positive")
    if both_bad not in BOTH_BAD_RULES:
        raise ArgumentError(f"both_bad must be one of {BOTH_BAD_RULES}, got {both_bad!r}")

    keep = a != b
    if both_bad == "drop":
        keep &= o != TIE_BOTH_BAD
    kept = np.flatnonzero(keep)
    x = style_covariates(fa[kept], fb[kept], ratio)
    mean = x.mean(axis=0) if kept.size else np.zeros(len(names))
    sd = x.std(axis=0) if kept.size else np.zeros(len(names))
    # exactly constant columns (sd 0) and columns whose spread is round-off
    const = ~(sd > 1e-12 * np.maximum(1.0, np.abs(mean)))
    warnings = []
    dropped = tuple(n for n, c in zip(names, const, strict=True) if c)
    if dropped:
        warnings.append(
            f"style feature(s) {', '.join(dropped)} are constant on this board "
            "(they cannot explain any outcome) and were left out of the style model"
        )
    live = ~const
    z = (x[:, live] - mean[live]) / sd[live]

    ka, kb, ko, kw = a[kept], b[kept], o[kept], w[kept]
    first, inverse = _collapse(m, ka, kb, ko, kw, z)
    battle_row = np.full(nb, -1, dtype=np.intp)
    battle_row[kept] = inverse
    return StyleTable(
        n_models=m,
        a=ka[first],
        b=kb[first],
        outcome=ko[first].astype(np.int8),
        weight=kw[first],
        n=np.bincount(inverse, minlength=first.size).astype(np.float64),
        z=np.ascontiguousarray(z[first]),
        features=tuple(n for n, c in zip(names, live, strict=True) if c),
        dropped=dropped,
        mean=mean[live],
        sd=sd[live],
        battle_row=battle_row,
        warnings=warnings,
    )
