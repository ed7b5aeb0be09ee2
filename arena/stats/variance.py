"""Where the noise lives: variance components of a crossed evaluation design, and intervals over every axis.

A model's score on item ``i`` under prompt template ``p``, seed ``s`` and judge
``j`` is modelled as ``mu + item_i + prompt_p + seed_s + judge_j + (item x
prompt)_ip + (item x seed)_is + (item x judge)_ij + e``, every term random with
its own variance. Main effects are estimated for each factor with more than
one level; an item-by-factor interaction only when the design repeats its cells
(for instance items x prompts with several seeds per cell), otherwise it is
part of the residual, which then says so in ``VarianceComponents.residual_includes``.

Estimation is Henderson's method I: the quadratic forms ``sum_l y_l.^2 / n_l``
of every factor are equated to their expectations, which are exact for any
pattern of counts. On a balanced grid this is the classic ANOVA method of
moments; on unbalanced data or with missing cells it stays unbiased (not
efficient, unlike REML). Negative solutions are set to zero (the raw value is
kept in ``raw``).

:func:`two_stage_interval` is the bootstrap that respects every axis: stage one
draws items with replacement, stage two draws the levels of each run axis
(seeds, prompts, judges) with replacement, shared by all items because a seed
or a template is the same for every item. The item-only interval of the same
item draws is returned beside it and labelled a floor: it leaves out the
run-level noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np
from scipy import stats

from arena.stats._checks import (
    Interval,
    as_finite,
    check_count,
    check_level,
    check_rng,
    percentile_bounds,
)
from arena.stats.resample import resample_sums

__all__ = [
    "RUN_AXES",
    "TwoStageInterval",
    "VarianceComponents",
    "design_se",
    "two_stage_difference",
    "two_stage_interval",
    "variance_components",
]

#: The axes an evaluation can be repeated over, besides items.
RUN_AXES = ("prompt", "seed", "judge")
#: Run axes that are the same conditions for every model (resampled jointly in comparisons).
SHARED_AXES = ("prompt", "judge")


@dataclass(frozen=True)
class VarianceComponents:
    """Variance components of a crossed design and what they imply.

    Attributes
    ----------
    components : dict
        Name (``"item"``, ``"prompt"``, ``"item:prompt"``, ..., ``"residual"``)
        -> variance (negative solutions set to 0).
    raw : dict
        The unconstrained solutions.
    levels : dict
        Factor -> number of levels in the data.
    n : int
        Observations.
    balanced : bool
        Every combination of levels observed exactly once.
    mean : float
    se : float
        Standard error of ``mean`` under the design actually run.
    item_only_se : float
        What an item-only analysis reports (items independent, run noise
        ignored): ``sd(item means) / sqrt(items)``. A floor.
    residual_includes : list of str
        Interactions the design cannot separate from the residual.
    method : str
    df : float
        Welch-Satterthwaite degrees of freedom of ``se`` (each component
        counted with its levels minus one), for a t interval: with few
        prompts or seeds the run-level terms are poorly known.
    budget : dict
        Alternative -> standard error of the mean for a balanced design with
        that many levels: ``"as run"`` and ``"2x <axis>"`` for each axis
        (each doubles the number of evaluations, so they cost the same).
    """

    components: dict[str, float]
    raw: dict[str, float]
    levels: dict[str, int]
    n: int
    balanced: bool
    mean: float
    se: float
    item_only_se: float
    residual_includes: list[str] = field(default_factory=list)
    method: str = ""
    df: float = float("inf")
    budget: dict[str, float] = field(default_factory=dict)

    def interval(self, level: float = 0.95) -> Interval:
        """``mean -/+ t(df) se``: the interval of the mean under the design run."""
        q = float(stats.t.ppf((1.0 + check_level(level)) / 2.0, self.df))
        return Interval(self.mean, self.mean - q * self.se, self.mean + q * self.se, level)

    def share(self) -> dict[str, float]:
        """Each component as a share of the total variance of one score."""
        total = sum(self.components.values())
        return {k: (v / total if total > 0 else 0.0) for k, v in self.components.items()}


def _codes(labels, n: int, name: str) -> tuple[np.ndarray, int]:
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"{name} labels must be a 1-D array of length {n}")
    _, code = np.unique(arr, return_inverse=True)
    return code.astype(np.int64), int(code.max()) + 1


def _pair_sum(cr: np.ndarray, lr: int, cs: np.ndarray, ls: int, nr: np.ndarray) -> float:
    """``sum_l sum_m n_lm^2 / n_l`` for levels l of r and m of s."""
    _, counts = np.unique(cr * ls + cs, return_counts=True)
    keys = np.unique(cr * ls + cs)
    return float((counts.astype(np.float64) ** 2 / nr[keys // ls]).sum())


def design_se(components: dict[str, float], levels: dict[str, int]) -> float:
    """Standard error of the grand mean of a balanced design with ``levels`` per factor.

    ``Var = sum_F sigma_F^2 / n_F + sum_F sigma_item:F^2 / (n_item n_F) +
    sigma_e^2 / prod(n)``.
    """
    var = 0.0
    for name, value in components.items():
        if name == "residual":
            var += value / prod(levels.values())
        else:
            var += value / prod(levels[f] for f in name.split(":"))
    return float(np.sqrt(var))


def variance_components(scores, *, item, prompt=None, seed=None, judge=None) -> VarianceComponents:
    """Variance components of one model's scores over a crossed design.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One score per (item, prompt, seed, judge) cell actually run.
    item : array_like, shape (n,)
        Item of each score.
    prompt, seed, judge : array_like, shape (n,), optional
        Template, seed (or run) and judge of each score.

    Returns
    -------
    VarianceComponents

    Raises
    ------
    ValueError
        A design cell repeated, fewer than 2 items, labels of the wrong length.
    """
    y = as_finite(scores, "scores")
    n = y.size
    factors: dict[str, tuple[np.ndarray, int]] = {"item": _codes(item, n, "item")}
    for name, labels in (("prompt", prompt), ("seed", seed), ("judge", judge)):
        if labels is not None:
            factors[name] = _codes(labels, n, name)
    if factors["item"][1] < 2:
        raise ValueError("variance components need at least 2 items")
    levels = {k: v[1] for k, v in factors.items()}
    # One score per cell: a repeated cell is an input error, not replication.
    cell = np.zeros(n, dtype=np.int64)
    for code, count in factors.values():
        cell = cell * count + code
    uniq, first, counts = np.unique(cell, return_index=True, return_counts=True)
    if (counts > 1).any():
        dup = int(np.flatnonzero(cell == uniq[np.argmax(counts > 1)])[1])
        raise ValueError(f"design cell repeated: observation {dup} has the same "
                         f"{', '.join(factors)} as observation {int(first[np.argmax(counts > 1)])}")  # fmt: skip
    balanced = n == prod(levels.values())

    random: dict[str, tuple[np.ndarray, int]] = {k: v for k, v in factors.items() if v[1] > 1}
    residual_includes = []
    item_code, n_items = factors["item"]
    for name in RUN_AXES:
        if name not in random:
            continue
        code = item_code * levels[name] + random[name][0]
        _, inter = np.unique(code, return_inverse=True)
        n_inter = int(inter.max()) + 1
        if n_inter < n and n / n_inter >= 1.5:
            random[f"item:{name}"] = (inter.astype(np.int64), n_inter)
        else:
            residual_includes.append(f"item:{name}")

    def solve(names: list[str]):
        size = len(names) + 1
        mat = np.zeros((size, size))
        rhs = np.zeros(size)
        sq_total = y.sum() ** 2 / n
        k0 = {}
        for s in names:
            cs, ls = random[s]
            k0[s] = float((np.bincount(cs, minlength=ls).astype(np.float64) ** 2).sum() / n)
        for r_idx, r in enumerate(names):
            cr, lr = random[r]
            nr = np.bincount(cr, minlength=lr).astype(np.float64)
            rhs[r_idx] = (
                float((np.bincount(cr, weights=y, minlength=lr) ** 2 / nr).sum()) - sq_total
            )
            for s_idx, s in enumerate(names):
                cs, ls = random[s]
                mat[r_idx, s_idx] = (n if r == s else _pair_sum(cr, lr, cs, ls, nr)) - k0[s]
            mat[r_idx, -1] = lr - 1
        rhs[-1] = float(y @ y) - sq_total
        for s_idx, s in enumerate(names):
            mat[-1, s_idx] = n - k0[s]
        mat[-1, -1] = n - 1
        return mat, rhs

    names = list(random)
    mat, rhs = solve(names)
    while np.linalg.matrix_rank(mat) < mat.shape[0]:
        # An interaction the design cannot tell from the residual: fold it in.
        drop = next(nm for nm in reversed(names) if ":" in nm)
        names.remove(drop)
        residual_includes.append(drop)
        mat, rhs = solve(names)
    sol = np.linalg.solve(mat, rhs)
    raw = {nm: float(v) for nm, v in zip([*names, "residual"], sol, strict=True)}
    comps = {k: max(v, 0.0) for k, v in raw.items()}

    # Var(grand mean) for the counts actually run: each random term contributes
    # sigma^2 * sum_m n_m^2 / N^2, the residual sigma^2 / N.
    terms = {"residual": comps["residual"] / n}
    dfs = {}
    for nm in names:
        cs, ls = random[nm]
        sq = float((np.bincount(cs, minlength=ls).astype(np.float64) ** 2).sum())
        terms[nm] = comps[nm] * sq / n**2
        dfs[nm] = float(prod(levels[f] - 1 for f in nm.split(":")))
    dfs["residual"] = max(1.0, n - 1.0 - sum(dfs.values()))
    var = sum(terms.values())
    denom = sum(t * t / dfs[k] for k, t in terms.items())
    df = var * var / denom if denom > 0 else float("inf")
    item_means = np.bincount(item_code, weights=y, minlength=n_items) / np.bincount(
        item_code, minlength=n_items
    )
    item_only = float(item_means.std(ddof=1) / np.sqrt(n_items))

    budget = {"as run": design_se(comps, levels)}
    for axis in levels:
        more = dict(levels)
        more[axis] *= 2
        budget[f"2x {axis}s"] = design_se(comps, more)
    return VarianceComponents(
        components=comps,
        raw=raw,
        levels=levels,
        n=int(n),
        balanced=bool(balanced),
        mean=float(y.mean()),
        se=float(np.sqrt(var)),
        item_only_se=item_only,
        residual_includes=sorted(residual_includes),
        method=(
            "ANOVA method of moments (balanced grid)"
            if balanced
            else "Henderson's method I (unbalanced or missing cells; unbiased, not REML)"
        ),
        df=float(df),
        budget=budget,
    )


@dataclass(frozen=True)
class TwoStageInterval:
    """Result of :func:`two_stage_interval`.

    Attributes
    ----------
    interval : Interval
        Items, then every run axis, resampled.
    floor : Interval
        Items only (the same item draws): leaves out run-level noise, so it is
        a lower bound on the honest width.
    axes : list of str
        Run axes resampled in stage two.
    """

    interval: Interval
    floor: Interval
    axes: list[str]


def two_stage_interval(
    scores,
    rng,
    *,
    item,
    runs: dict[str, object] | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
) -> TwoStageInterval:
    """Two-stage bootstrap interval of a mean score: items, then runs.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One value per cell (a model's score, or the paired difference of two
        models on the same cell).
    rng : numpy.random.Generator
        Consumed as ``rng.integers(0, n_items, size=(n_boot, n_items))`` (in
        row blocks), then for each run axis in the order given
        ``rng.integers(0, L, size=(n_boot, L))``.
    item : array_like, shape (n,)
    runs : dict, optional
        Axis name -> labels of shape (n,), e.g. ``{"seed": seeds}``.
    n_boot : int, default 2000
    level : float, default 0.95

    Returns
    -------
    TwoStageInterval

    Notes
    -----
    Resample mean: ``sum w_item * w_run * y / sum w_item * w_run`` over cells,
    ``w`` the number of times each item and each run level was drawn, so
    missing cells are handled as in a ratio estimate.
    """
    y = as_finite(scores, "scores")
    n = y.size
    level = check_level(level)
    n_boot = check_count(n_boot, "n_boot")
    check_rng(rng)
    item_code, n_items = _codes(item, n, "item")
    runs = dict(runs or {})
    run_codes = [(name, *_codes(labels, n, name)) for name, labels in runs.items()]
    table = _cell_table(y, item_code, n_items, run_codes)
    full, items_only = _two_stage_means([table], rng, n_boot)
    full, items_only = full[:, 0], items_only[:, 0]
    est = float(y.mean())
    lo, hi = percentile_bounds(full, level)
    flo, fhi = percentile_bounds(items_only, level)
    return TwoStageInterval(
        Interval(est, float(lo), float(hi), level),
        Interval(est, float(flo), float(fhi), level),
        list(runs),
    )


def _cell_table(y, item_code, n_items, run_codes):
    """Per (item, run) sums and counts; ``run_codes`` is a list of (name, codes, levels)."""
    run_index = np.zeros(y.size, dtype=np.int64)
    for _, code, count in run_codes:
        run_index = run_index * count + code
    n_runs = prod(c for _, _, c in run_codes) if run_codes else 1
    flat = item_code * n_runs + run_index
    ysum = np.bincount(flat, weights=y, minlength=n_items * n_runs).reshape(n_items, n_runs)
    cnt = np.bincount(flat, minlength=n_items * n_runs).astype(np.float64).reshape(n_items, n_runs)
    counts = [c for _, _, c in run_codes]
    levels = np.unravel_index(np.arange(n_runs), tuple(counts)) if counts else ()
    axes = [(name, c, lev) for (name, _, c), lev in zip(run_codes, levels, strict=True)]
    return ysum, cnt, axes


def _axis_counts(rng, count: int, n_boot: int) -> np.ndarray:
    draws = rng.integers(0, count, size=(n_boot, count))
    draws += (np.arange(n_boot) * count)[:, None]
    return np.bincount(draws.ravel(), minlength=n_boot * count).reshape(n_boot, count)


def _two_stage_means(tables, rng, n_boot, shared_axes=()):
    """Resampled means of several tables over the same items: shared item draws, then
    run draws, one per table except for the axes in ``shared_axes``, drawn once for all."""
    cols = np.hstack([np.hstack([t[0], t[1]]) for t in tables])
    sums = resample_sums(cols, rng, n_boot)
    full = np.empty((n_boot, len(tables)))
    floor = np.empty_like(full)
    common = {}
    start = 0
    for k, (ysum, _, axes) in enumerate(tables):
        n_runs = ysum.shape[1]
        s_y = sums[:, start : start + n_runs]
        s_n = sums[:, start + n_runs : start + 2 * n_runs]
        start += 2 * n_runs
        weight = np.ones((n_boot, n_runs))
        for name, count, lev in axes:
            if name in shared_axes:
                if name not in common:
                    common[name] = _axis_counts(rng, count, n_boot)
                counts = common[name]
            else:
                counts = _axis_counts(rng, count, n_boot)
            weight *= counts[:, lev]
        with np.errstate(invalid="ignore", divide="ignore"):
            full[:, k] = (s_y * weight).sum(axis=1) / (s_n * weight).sum(axis=1)
            floor[:, k] = s_y.sum(axis=1) / s_n.sum(axis=1)
    return full, floor


def two_stage_difference(
    scores_a,
    scores_b,
    rng,
    *,
    item_a,
    item_b,
    runs_a: dict[str, object] | None = None,
    runs_b: dict[str, object] | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
) -> TwoStageInterval:
    """Two-stage bootstrap interval of ``mean(A) - mean(B)`` over the items both have.

    Items are drawn once for both models (the comparison is paired by item).
    Prompt templates and judges are conditions both models meet, so each of
    those axes is drawn once for both (by label); seeds are drawn separately
    per model, since seed 1 of one model has nothing to do with seed 1 of
    another. Means are over each model's cells on the shared items.

    Parameters
    ----------
    scores_a, scores_b : array_like
        Cell scores of models A and B.
    rng : numpy.random.Generator
    item_a, item_b : array_like
        Item of each cell.
    runs_a, runs_b : dict, optional
        Run axes of each model's cells.
    n_boot : int, default 2000
    level : float, default 0.95

    Returns
    -------
    TwoStageInterval
    """
    ya, yb = as_finite(scores_a, "scores_a"), as_finite(scores_b, "scores_b")
    level = check_level(level)
    n_boot = check_count(n_boot, "n_boot")
    check_rng(rng)
    la, lb = np.asarray(item_a), np.asarray(item_b)
    shared = np.intersect1d(la, lb)
    if shared.size == 0:
        raise ValueError("the two models have no items in common")
    runs_a, runs_b = dict(runs_a or {}), dict(runs_b or {})
    common = [c for c in SHARED_AXES if c in runs_a and c in runs_b]
    # Shared axes are coded over the union of both models' labels, so that template
    # "p1" is the same level (and gets the same draw) for both.
    union = {
        c: np.unique(np.concatenate([np.asarray(runs_a[c]), np.asarray(runs_b[c])])) for c in common
    }
    tables, means = [], []
    for y, labels, runs in ((ya, la, runs_a), (yb, lb, runs_b)):
        keep = np.isin(labels, shared)
        code = np.searchsorted(shared, labels[keep])
        run_codes = []
        for name, values in runs.items():
            values = np.asarray(values)[keep]
            if name in union:
                run_codes.append((name, np.searchsorted(union[name], values), union[name].size))
            else:
                run_codes.append((name, *_codes(values, values.size, name)))
        tables.append(_cell_table(y[keep], code, shared.size, run_codes))
        means.append(float(y[keep].mean()))
    full, floor = _two_stage_means(tables, rng, n_boot, shared_axes=common)
    est = means[0] - means[1]
    lo, hi = percentile_bounds(full[:, 0] - full[:, 1], level)
    flo, fhi = percentile_bounds(floor[:, 0] - floor[:, 1], level)
    axes = sorted(set(runs_a or {}) | set(runs_b or {}))
    return TwoStageInterval(
        Interval(est, float(lo), float(hi), level),
        Interval(est, float(flo), float(fhi), level),
        axes,
    )
