"""Does a small item subset rank models like the full benchmark? Validation on held-out models.

The bank is calibrated on the training models only; the subset is chosen from
that bank to be informative over the training models' abilities; held-out
models are then scored on the subset alone (EAP abilities) and compared with
their accuracy on the whole benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import ndtri

from arena.core.defaults import DEFAULT_LEVEL
from arena.core.errors import ArgumentError
from arena.evals.ability import score_abilities
from arena.evals.adaptive import Selection, select_items
from arena.evals.checks import check_count, check_level, check_rng
from arena.evals.irt import ItemBank, calibrate_2pl, response_matrix

__all__ = ["SubsetValidation", "validate_subset"]


@dataclass(frozen=True)
class SubsetValidation:
    """Result of :func:`validate_subset`.

    Attributes
    ----------
    bank : ItemBank
        Calibrated on the training models.
    selection : Selection
    heldout : ndarray of int
        Rows of the held-out models.
    full_score : ndarray
        Held-out models' accuracy on all their items.
    subset_theta, subset_se : ndarray
        Their abilities from the subset alone.
    spearman, kendall : float
        Rank correlations of subset ability with full accuracy; NaN with fewer
        than :data:`MIN_CORRELATION_MODELS` held-out models, where a
        correlation of 1.0 is what chance gives often (2 models: half the time).
    pairs : int
        Held-out pairs compared (ties in full accuracy left out).
    same_order : float
        Share of pairs the subset orders as the full benchmark does.
    not_contradicted : float
        Share of pairs where the subset either agrees or its interval for the
        difference includes 0 (it does not claim the opposite order).
    resolved : float
        Share of pairs the subset orders with confidence (interval excludes 0)
        and correctly.
    level : float
    """

    bank: ItemBank
    selection: Selection
    heldout: np.ndarray
    full_score: np.ndarray
    subset_theta: np.ndarray
    subset_se: np.ndarray
    spearman: float
    kendall: float
    pairs: int
    same_order: float
    not_contradicted: float
    resolved: float
    level: float


#: Fewest held-out models for which a rank correlation is reported at all.
MIN_CORRELATION_MODELS = 5


def _correlation(test, x: np.ndarray, y: np.ndarray) -> float:
    if x.size < MIN_CORRELATION_MODELS:
        return float("nan")
    return float(test(x, y).statistic)


def validate_subset(
    responses,
    rng,
    *,
    n: int,
    holdout: int,
    present=None,
    items: list[str] | None = None,
    prior_sd: float | None = 2.0,
    level: float = DEFAULT_LEVEL,
) -> SubsetValidation:
    """Calibrate on all but ``holdout`` random models, select ``n`` items, check on the rest.

    Parameters
    ----------
    responses : array_like, shape (n_models, n_items)
        0/1 results; NaN or ``present`` False where missing.
    rng : numpy.random.Generator
        Chooses the held-out models (``rng.permutation(n_models)[:holdout]``).
    n : int
        Subset size.
    holdout : int
        Held-out models (at least 2, and at least 2 left for calibration).
    present : array_like of bool, optional
    items : list of str, optional
    prior_sd : float or None, default 2.0
        Passed to :func:`calibrate_2pl` (a few dozen models cannot pin down
        thousands of items by maximum likelihood alone).
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    SubsetValidation
    """
    y, mask = response_matrix(responses, present)
    n_models, n_items = y.shape
    check_rng(rng)
    holdout = check_count(holdout, "holdout", minimum=2)
    if n_models - holdout < 2:
        raise ArgumentError(
            f"{n_models} models: cannot hold out {holdout} and calibrate on the rest"
        )
    level = check_level(level)
    ids = [str(i) for i in range(n_items)] if items is None else list(items)
    perm = rng.permutation(n_models)
    test_rows, train_rows = np.sort(perm[:holdout]), np.sort(perm[holdout:])
    bank = calibrate_2pl(y[train_rows], present=mask[train_rows], items=ids, prior_sd=prior_sd)
    col = {item: j for j, item in enumerate(ids)}
    bank_cols = np.array([col[i] for i in bank.items])
    train_theta = score_abilities(bank, y[train_rows][:, bank_cols], present=mask[train_rows][:, bank_cols]).theta  # fmt: skip
    selection = select_items(bank, min(check_count(n, "n"), len(bank.items)), theta=train_theta)
    sub = bank_cols[selection.indices]
    sub_bank = ItemBank(
        [bank.items[j] for j in selection.indices],
        bank.discrimination[selection.indices],
        bank.difficulty[selection.indices],
        bank.se_discrimination[selection.indices],
        bank.se_difficulty[selection.indices],
    )
    ab = score_abilities(sub_bank, y[test_rows][:, sub], present=mask[test_rows][:, sub])
    full = (y[test_rows] * mask[test_rows]).sum(axis=1) / np.maximum(mask[test_rows].sum(axis=1), 1)
    i, j = np.triu_indices(holdout, 1)
    d_full = full[i] - full[j]
    keep = d_full != 0
    i, j, d_full = i[keep], j[keep], d_full[keep]
    d_sub = ab.theta[i] - ab.theta[j]
    half = float(ndtri((1 + level) / 2)) * np.sqrt(ab.se[i] ** 2 + ab.se[j] ** 2)
    agree = np.sign(d_sub) == np.sign(d_full)
    confident = np.abs(d_sub) > half
    n_pairs = int(i.size)
    share = lambda v: float(v.mean()) if n_pairs else float("nan")  # noqa: E731
    return SubsetValidation(
        bank=bank,
        selection=selection,
        heldout=test_rows,
        full_score=full,
        subset_theta=ab.theta,
        subset_se=ab.se,
        spearman=_correlation(stats.spearmanr, ab.theta, full),
        kendall=_correlation(stats.kendalltau, ab.theta, full),
        pairs=n_pairs,
        same_order=share(agree),
        not_contradicted=share(agree | ~confident),
        resolved=share(agree & confident),
        level=level,
    )
