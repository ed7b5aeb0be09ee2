"""Paired verdicts for two models scored on the same items, for any real-valued metric.

Every applicable test is computed; one of them decides, by a fixed rule that
the result states (``decided_by`` and ``reason``):

- 0/1 scores: McNemar's test on the discordant items (exact below
  :data:`~arena.evals.EXACT_BELOW` of them). Its conditional test uses only
  the items the two models disagree on, which is what carries information.
- Items in groups (several questions on one document, say): the cluster
  bootstrap interval of the mean difference, resampling whole groups. The
  other tests assume independent items and would be too confident.
- Otherwise: the paired (sign-flip) permutation test of the mean difference.
  It is exact under the null hypothesis that the two models' scores on each
  item are exchangeable, and needs no normality or symmetry, unlike the paired
  t-test (normal mean differences, or a large sample) and the Wilcoxon
  signed-rank test (which tests symmetry about zero, not the mean).

The paired t-test and the Wilcoxon test are reported for reference. Wilcoxon
(:mod:`arena.evals.signedrank`, not scipy's version-dependent default): zeros
ranked with the others and then dropped (Pratt's method), which keeps the test
consistent when many items tie, as 0/1 and rounded judge scores often do;
mid-ranks for ties; the exact distribution given the observed ranks up to 50
non-zero differences, else the normal approximation with continuity
correction. ``wilcoxon_method`` says which.
A named test can be asked for instead of the rule; McNemar on scores that are
not 0/1 is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_ROUNDS
from arena.core.errors import ArgumentError
from arena.evals.binomial import mcnemar_counts
from arena.evals.bootstrap import cluster_bootstrap_ci
from arena.evals.checks import (
    as_finite,
    check_count,
    check_level,
    check_rng,
    percentile_bounds,
    same_length,
)
from arena.evals.permutation import paired_permutation_test
from arena.evals.resample import resample_sums
from arena.evals.signedrank import signed_rank_test

__all__ = ["PAIRED_TESTS", "PairedVerdict", "paired_verdict"]

PAIRED_TESTS = ("auto", "mcnemar", "t", "wilcoxon", "permutation", "bootstrap")


@dataclass(frozen=True)
class PairedVerdict:
    """Paired comparison of models A and B on the same items.

    Attributes
    ----------
    n : int
        Paired items.
    mean_a, mean_b, diff : float
        Mean scores and ``mean_a - mean_b``.
    low, high : float
        Paired bootstrap interval of ``diff`` (whole groups resampled when
        groups are given).
    level : float
    decided_by : str
        ``"mcnemar"``, ``"t"``, ``"wilcoxon"``, ``"permutation"`` or ``"bootstrap"``.
    reason : str
        Why that test decides, in words.
    pvalue : float or None
        p-value of the deciding test (None for the bootstrap, which decides
        by whether its interval excludes 0).
    significant : bool
        The deciding test rejects "no difference" at ``1 - level``.
    pvalues : dict
        p-value of every test computed (two-sided).
    n_zero : int
        Items with a difference of exactly 0.
    n_groups : int or None
    binary : bool
        Both models' scores are all 0 or 1.
    wilcoxon_method : str
        How the Wilcoxon p-value was computed (exact or normal, zeros, ties).
    """

    n: int
    mean_a: float
    mean_b: float
    diff: float
    low: float
    high: float
    level: float
    decided_by: str
    reason: str
    pvalue: float | None
    significant: bool
    pvalues: dict[str, float] = field(default_factory=dict)
    n_zero: int = 0
    n_groups: int | None = None
    binary: bool = False
    wilcoxon_method: str = ""


def _is_binary(x: np.ndarray) -> bool:
    return bool(np.all((x == 0.0) | (x == 1.0)))


def paired_verdict(
    a,
    b,
    rng,
    *,
    groups=None,
    test: str = "auto",
    rounds: int = DEFAULT_ROUNDS,
    n_perm: int = 10000,
    level: float = DEFAULT_LEVEL,
) -> PairedVerdict:
    """Compare two models' per-item scores and say which test decided and why.

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Scores of models A and B on the same items (aligned).
    rng : numpy.random.Generator
        Used by the bootstrap first (``rounds`` resamples), then by the
        permutation test.
    groups : array_like, shape (n,), optional
        Group (document) of each item; whole groups are resampled.
    test : {"auto", "mcnemar", "t", "wilcoxon", "permutation", "bootstrap"}
        ``"auto"`` applies the rule of the module notes.
    rounds : int, default DEFAULT_ROUNDS (1000)
    n_perm : int, default 10000
    level : float, default DEFAULT_LEVEL (0.95)

    Returns
    -------
    PairedVerdict

    Raises
    ------
    ValueError
        Lengths differ, non-finite scores, fewer than 2 items, an unknown
        test, or McNemar asked for scores that are not 0/1.
    """
    x = as_finite(a, "a")
    y = as_finite(b, "b")
    same_length(x, y, "a", "b")
    if x.size < 2:
        raise ArgumentError("a paired comparison needs at least 2 items")
    if test not in PAIRED_TESTS:
        raise ArgumentError(f"test must be one of {PAIRED_TESTS}, got {test!r}")
    level = check_level(level)
    rounds = check_count(rounds, "rounds")
    n_perm = check_count(n_perm, "n_perm")
    check_rng(rng)
    binary = _is_binary(x) and _is_binary(y)
    if test == "mcnemar" and not binary:
        bad = int(np.flatnonzero(~((x == 0) | (x == 1)) | ~((y == 0) | (y == 1)))[0])
        raise ArgumentError(
            f"McNemar's test needs 0/1 scores; item {bad} has scores "
            f"{x[bad]!r} and {y[bad]!r} (choose test t, wilcoxon, permutation or bootstrap)"
        )
    d = x - y
    n = int(d.size)
    alpha = 1.0 - level
    n_groups = None
    if groups is not None:
        labels = np.asarray(groups)
        same_length(d, labels, "scores", "groups")
        interval = cluster_bootstrap_ci(d, labels, rng, rounds=rounds, level=level)
        low, high = interval.low, interval.high
        n_groups = int(np.unique(labels).size)
    else:
        sums = resample_sums(d[:, None], rng, rounds)[:, 0] / n
        low, high = (float(v) for v in percentile_bounds(sums, level))

    pvalues: dict[str, float] = {}
    if binary:
        a_only = int(np.count_nonzero(d > 0))
        b_only = int(np.count_nonzero(d < 0))
        pvalues["mcnemar"] = mcnemar_counts(a_only, b_only).pvalue
    if np.all(d == d[0]):
        # No spread: the t statistic is undefined; every item moved the same way.
        pvalues["t"] = 1.0 if d[0] == 0 else 0.0
    else:
        pvalues["t"] = float(stats.ttest_rel(x, y).pvalue)
    n_zero = int(np.count_nonzero(d == 0))
    signed = signed_rank_test(d, zero_method="pratt")
    pvalues["wilcoxon"] = signed.pvalue
    pvalues["permutation"] = paired_permutation_test(x, y, rng, n_perm=n_perm).pvalue

    if test == "auto":
        if binary and groups is None:
            test = "mcnemar"
            reason = (
                f"scores are 0/1: McNemar's test on the {n - n_zero} items the models disagree on"
            )
        elif groups is not None:
            test = "bootstrap"
            reason = (
                f"items come in {n_groups} groups: only the cluster bootstrap allows for "
                "dependence within a group (the other tests assume independent items)"
            )
        else:
            test = "permutation"
            reason = (
                f"real-valued scores on {n} independent items: the paired permutation test "
                "of the mean difference is exact without assuming normality "
                "(t-test and Wilcoxon shown for reference)"
            )
    elif test == "wilcoxon":
        reason = f"asked for ({signed.description})"
    else:
        reason = f"asked for ({test})"
    if test == "bootstrap":
        pvalue = None
        significant = bool(low > 0.0 or high < 0.0)
    else:
        pvalue = pvalues[test]
        significant = bool(pvalue < alpha)
    return PairedVerdict(
        n=n,
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        diff=float(d.mean()),
        low=float(low),
        high=float(high),
        level=level,
        decided_by=test,
        reason=reason,
        pvalue=pvalue,
        significant=significant,
        pvalues=pvalues,
        n_zero=n_zero,
        n_groups=n_groups,
        binary=binary,
        wilcoxon_method=signed.description,
    )
