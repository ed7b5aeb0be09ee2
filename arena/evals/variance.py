"""Where the noise lives: variance components of a crossed evaluation design, and intervals over every axis.

A model's score on item ``i`` under prompt template ``p``, seed ``s`` and judge
``j`` is modelled as ``mu + item_i + prompt_p + seed_s + judge_j + (item x
prompt)_ip + (item x seed)_is + (item x judge)_ij + e``, every term random with
its own variance. Main effects are estimated for each factor with more than
one level; an item-by-factor interaction only when the design repeats its cells
(for instance items x prompts with several seeds per cell), otherwise it is
part of the residual, which then says so in ``VarianceComponents.residual_includes``.

Nested designs. A run axis whose every level occurs with one item only (each
item with its own seeds or prompts, labels not shared) is *nested* in items:
its variance is the item-by-axis term, reported as ``item:seed`` and listed in
``VarianceComponents.nested``; with one score per nested level it cannot be
told from the residual and is folded into it. Repeated cells (several scores
for the same item and run labels, e.g. replicate runs with no label: the
one-way random-effects layout of lme4's ``Dyestuff`` data) are replicates:
their spread is the residual, and ``replicates`` counts them.

Estimation is Henderson's method I: the quadratic forms ``sum_l y_l.^2 / n_l``
of every factor are equated to their expectations, which are exact for any
pattern of counts. On a balanced grid this is the classic ANOVA method of
moments; on unbalanced data or with missing cells it stays unbiased (not
efficient, unlike REML). Negative solutions are set to zero (the raw value is
kept in ``raw``).

Intervals over every axis (the two-stage bootstrap) are in
:mod:`arena.evals.twostage`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np
from scipy import stats

from arena.core.defaults import DEFAULT_LEVEL
from arena.core.errors import ArgumentError
from arena.evals.checks import (
    Interval,
    as_finite,
    check_level,
)

__all__ = ["RUN_AXES", "VarianceComponents", "design_se", "label_codes", "variance_components"]

#: The axes an evaluation can be repeated over, besides items.
RUN_AXES = ("prompt", "seed", "judge")


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
        Every combination of levels observed equally often.
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
    nested : list of str
        Run axes nested in items (their ``levels`` entry is then levels per item).
    replicates : float
        Mean scores per design cell (1 when every cell is scored once).
    """

    components: dict[str, float]
    raw: dict[str, float]
    levels: dict[str, float]
    n: int
    balanced: bool
    mean: float
    se: float
    item_only_se: float
    residual_includes: list[str] = field(default_factory=list)
    method: str = ""
    df: float = float("inf")
    budget: dict[str, float] = field(default_factory=dict)
    nested: list[str] = field(default_factory=list)
    replicates: float = 1.0

    def interval(self, level: float = DEFAULT_LEVEL) -> Interval:
        """``mean -/+ t(df) se``: the interval of the mean under the design run."""
        q = float(stats.t.ppf((1.0 + check_level(level)) / 2.0, self.df))
        return Interval(self.mean, self.mean - q * self.se, self.mean + q * self.se, level)

    def share(self) -> dict[str, float]:
        """Each component as a share of the total variance of one score."""
        total = sum(self.components.values())
        return {k: (v / total if total > 0 else 0.0) for k, v in self.components.items()}


def label_codes(labels, n: int, name: str) -> tuple[np.ndarray, int]:
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.size != n:
        raise ArgumentError(f"{name} labels must be a 1-D array of length {n}")
    _, code = np.unique(arr, return_inverse=True)
    return code.astype(np.int64), int(code.max()) + 1


def _pair_sum(cr: np.ndarray, lr: int, cs: np.ndarray, ls: int, nr: np.ndarray) -> float:
    """``sum_l sum_m n_lm^2 / n_l`` for levels l of r and m of s."""
    _, counts = np.unique(cr * ls + cs, return_counts=True)
    keys = np.unique(cr * ls + cs)
    return float((counts.astype(np.float64) ** 2 / nr[keys // ls]).sum())


def design_se(
    components: dict[str, float], levels: dict[str, float], *, replicates: float = 1.0
) -> float:
    """Standard error of the grand mean of a balanced design with ``levels`` per factor.

    ``Var = sum_F sigma_F^2 / n_F + sum_F sigma_item:F^2 / (n_item n_F) +
    sigma_e^2 / (prod(n) r)``, ``r`` scores per cell (a nested axis's
    ``n_F`` is its levels per item).
    """
    var = 0.0
    for name, value in components.items():
        if name == "residual":
            var += value / (prod(levels.values()) * replicates)
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
        Fewer than 2 items, labels of the wrong length, or two factors the
        design cannot separate (named).
    """
    y = as_finite(scores, "scores")
    n = y.size
    factors: dict[str, tuple[np.ndarray, int]] = {"item": label_codes(item, n, "item")}
    for name, labels in (("prompt", prompt), ("seed", seed), ("judge", judge)):
        if labels is not None:
            factors[name] = label_codes(labels, n, name)
    if factors["item"][1] < 2:
        raise ArgumentError("variance components need at least 2 items")
    # A run axis nested in items (each level seen with one item) has no main effect
    # apart from the item-by-axis term: it is that term.
    item_code, n_items = factors["item"]
    nested = []
    for name in RUN_AXES:
        if name in factors and factors[name][1] > n_items:
            code, count = factors[name]
            owners = np.zeros(count, dtype=np.int64) - 1
            owners[code] = item_code
            if np.array_equal(owners[code], item_code):
                nested.append(name)
    levels: dict[str, float] = {k: v[1] for k, v in factors.items()}
    for name in nested:
        per_item = levels[name] / n_items
        levels[name] = int(per_item) if float(per_item).is_integer() else per_item
    # Several scores for one cell are replicates: their spread is the residual.
    cell = np.zeros(n, dtype=np.int64)
    for code, count in factors.values():
        cell = cell * count + code
    _, counts = np.unique(cell, return_counts=True)
    replicates = n / counts.size
    balanced = bool(counts.min() == counts.max()) and counts.size == prod(levels.values())

    random: dict[str, tuple[np.ndarray, int]] = {}
    residual_includes = []
    for name, value in factors.items():
        if value[1] > 1:
            random[f"item:{name}" if name in nested else name] = value
    for name in RUN_AXES:
        if name not in random:
            continue
        code = item_code * factors[name][1] + random[name][0]
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
        # An interaction (or a nested term) the design cannot tell from the residual:
        # fold it in.
        drop = next((nm for nm in reversed(names) if ":" in nm), None)
        if drop is None:
            raise ArgumentError(_confounded(names, solve))
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
        axis = nm.split(":")[-1]
        if axis in nested:
            dfs[nm] = float(ls - n_items)  # levels within items
        else:
            dfs[nm] = float(prod(levels[f] - 1 for f in nm.split(":")))
    dfs["residual"] = max(1.0, n - 1.0 - sum(dfs.values()))
    var = sum(terms.values())
    denom = sum(t * t / dfs[k] for k, t in terms.items())
    df = var * var / denom if denom > 0 else float("inf")
    item_means = np.bincount(item_code, weights=y, minlength=n_items) / np.bincount(
        item_code, minlength=n_items
    )
    item_only = float(item_means.std(ddof=1) / np.sqrt(n_items))

    budget = {"as run": design_se(comps, levels, replicates=replicates)}
    for axis in levels:
        more = dict(levels)
        more[axis] *= 2
        budget[f"2x {axis}s"] = design_se(comps, more, replicates=replicates)
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
        nested=nested,
        replicates=float(replicates),
    )


def _confounded(names: list[str], solve) -> str:
    """Say which factor the design cannot separate from the others or the residual."""
    for nm in reversed(names):
        if nm == "item":
            continue
        rest = [x for x in names if x != nm]
        mat, _ = solve(rest)
        if np.linalg.matrix_rank(mat) == mat.shape[0]:
            return (
                f"the design cannot separate the {nm} variance from the other factors or the "
                f"residual (each {nm} level goes with one level of another factor or one "
                f"score); drop the {nm} column or give {nm}s labels shared across items"
            )
    return "the design cannot separate its variance components (factors confounded)"
