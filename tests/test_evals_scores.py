"""Per-item evaluation beyond 0/1 accuracy: paired verdicts, ratio metrics, variance components.

Statistical claims are checked by simulation with known truth; closed forms
against scipy.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from arena.evals import (
    compare_ratios,
    paired_verdict,
    ratio_interval,
    two_stage_interval,
    variance_components,
)
from arena.evals.signedrank import signed_rank_test

#: Monte Carlo standard errors allowed for "unbiased" (about 3.5 SE, 5 components).
BIAS_SE = 3.5
#: Coverage of a nominal 95% interval over 200 simulated data sets: MC SE 1.5%.
COVERAGE_RANGE = (0.91, 0.985)


# --- paired verdicts ----------------------------------------------------------------------


def test_binary_scores_are_decided_by_mcnemar():
    a = np.r_[np.ones(118), np.ones(6), np.zeros(2), np.zeros(74)]
    b = np.r_[np.ones(118), np.zeros(6), np.ones(2), np.zeros(74)]
    v = paired_verdict(a, b, np.random.default_rng(0), n_perm=2000)
    assert v.binary and v.decided_by == "mcnemar" and "0/1" in v.reason
    assert v.pvalue == pytest.approx(0.2890625) and not v.significant
    assert set(v.pvalues) == {"mcnemar", "t", "wilcoxon", "permutation"}


def test_real_scores_decided_by_permutation_with_reference_tests():
    g = np.random.default_rng(1)
    a = g.normal(6.0, 2.0, 80).round()  # judge scores 1-10, rounded: many zero differences
    b = a - (g.random(80) < 0.3) * g.integers(1, 3, 80)
    v = paired_verdict(a, b, np.random.default_rng(2))
    assert not v.binary and v.decided_by == "permutation" and "normality" in v.reason
    assert v.pvalues["t"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert v.pvalues["wilcoxon"] == pytest.approx(signed_rank_test(a - b).pvalue)
    assert (
        v.wilcoxon_method.startswith("Wilcoxon signed-rank: exact") and "Pratt" in v.wilcoxon_method
    )
    assert v.n_zero == int(np.count_nonzero(a == b)) > 0
    assert v.significant and v.diff > 0 and v.low > 0
    with pytest.raises(ValueError, match="McNemar's test needs 0/1 scores"):
        paired_verdict(a, b, np.random.default_rng(0), test="mcnemar")


def test_groups_make_the_cluster_bootstrap_decide_and_widen_the_interval():
    g = np.random.default_rng(3)
    docs = np.repeat(np.arange(20), 10)
    shift = g.normal(0, 1.0, 20)[docs]  # the gap between models varies by document
    a = g.normal(0, 0.2, 200) + shift * 0.5 + 0.1
    b = g.normal(0, 0.2, 200)
    flat = paired_verdict(a, b, np.random.default_rng(4), test="bootstrap")
    grouped = paired_verdict(a, b, np.random.default_rng(4), groups=docs)
    assert grouped.decided_by == "bootstrap" and grouped.n_groups == 20
    assert grouped.high - grouped.low > 2 * (flat.high - flat.low)


def test_permutation_size_under_the_null():
    # Heavy-tailed, skewed differences with mean 0: the deciding test keeps its level.
    rejections = 0
    reps = 200
    for r in range(reps):
        g = np.random.default_rng(100 + r)
        d = g.standard_exponential(25) - 1.0
        base = g.normal(0, 1, 25)
        v = paired_verdict(base + d, base, g, n_perm=500, rounds=10)
        rejections += v.significant
    assert rejections / reps < 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)


# --- ratio metrics ------------------------------------------------------------------------


def test_bits_per_byte_is_a_ratio_of_sums_with_document_clusters():
    g = np.random.default_rng(5)
    n_docs = 60
    doc_bytes = g.integers(100, 5000, n_docs).astype(float)
    chunks = np.repeat(np.arange(n_docs), 4)
    byte = np.repeat(doc_bytes / 4, 4)
    bpb_a = np.repeat(g.normal(0.9, 0.15, n_docs), 4)
    bits_a = bpb_a * byte
    bits_b = (bpb_a + 0.02 + g.normal(0, 0.01, chunks.size)) * byte
    iv = ratio_interval(bits_a, byte, np.random.default_rng(0), clusters=chunks)
    assert iv.estimate == pytest.approx(bits_a.sum() / byte.sum())
    assert iv.estimate != pytest.approx(bpb_a.mean(), abs=1e-6)  # not a mean of ratios
    assert iv.low < iv.estimate < iv.high
    cmp = compare_ratios(bits_a, byte, bits_b, byte, np.random.default_rng(0), clusters=chunks)
    assert cmp.n_clusters == n_docs
    assert cmp.diff.estimate == pytest.approx(cmp.a.estimate - cmp.b.estimate)
    # Paired: the difference is known far better than either ratio.
    assert cmp.diff.high < 0 and cmp.diff.high - cmp.diff.low < 0.2 * (cmp.a.high - cmp.a.low)
    with pytest.raises(ValueError, match="sums to zero"):
        ratio_interval([1.0, 2.0], [0.0, 0.0], np.random.default_rng(0))


def test_ratio_interval_coverage():
    truth = 1.0
    hits = 0
    reps = 200
    for r in range(reps):
        g = np.random.default_rng(200 + r)
        den = g.integers(50, 2000, 80).astype(float)
        num = den * (truth + g.normal(0, 0.3, 80))
        iv = ratio_interval(num, den, g, rounds=400)
        hits += iv.low <= truth <= iv.high
    assert COVERAGE_RANGE[0] <= hits / reps <= COVERAGE_RANGE[1]


# --- variance components ------------------------------------------------------------------

TRUE = {"item": 0.5, "prompt": 0.02, "seed": 0.01, "item:prompt": 0.1, "residual": 0.3}
MU = 1.0


def _crossed(g, n_items=60, n_prompts=8, n_seeds=5, drop=0.0):
    i, p, s = (
        v.ravel()
        for v in np.meshgrid(
            np.arange(n_items), np.arange(n_prompts), np.arange(n_seeds), indexing="ij"
        )
    )
    sd = {k: np.sqrt(v) for k, v in TRUE.items()}
    y = (
        MU
        + g.normal(0, sd["item"], n_items)[i]
        + g.normal(0, sd["prompt"], n_prompts)[p]
        + g.normal(0, sd["seed"], n_seeds)[s]
        + g.normal(0, sd["item:prompt"], (n_items, n_prompts))[i, p]
        + g.normal(0, sd["residual"], i.size)
    )
    keep = g.random(i.size) >= drop
    return y[keep], i[keep], p[keep], s[keep]


@pytest.mark.slow
@pytest.mark.parametrize("drop", [0.0, 0.25])
def test_components_unbiased_and_intervals_cover(drop):
    g = np.random.default_rng(7)
    raw, hits_t, hits_two, hits_floor = [], 0, 0, 0
    reps = 200
    for _ in range(reps):
        y, i, p, s = _crossed(g, drop=drop)
        vc = variance_components(y, item=i, prompt=p, seed=s)
        raw.append([vc.raw[k] for k in TRUE])
        iv = vc.interval(0.95)
        hits_t += iv.low <= MU <= iv.high
        two = two_stage_interval(y, g, item=i, runs={"prompt": p, "seed": s}, rounds=300)
        hits_two += two.interval.low <= MU <= two.interval.high
        hits_floor += two.floor.low <= MU <= two.floor.high
    raw = np.array(raw)
    mcse = raw.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(raw.mean(axis=0) - list(TRUE.values())) < BIAS_SE * mcse)
    assert vc.balanced == (drop == 0.0) and vc.residual_includes == []
    assert COVERAGE_RANGE[0] <= hits_t / reps <= COVERAGE_RANGE[1]
    assert COVERAGE_RANGE[0] <= hits_two / reps <= COVERAGE_RANGE[1]
    # Ignoring prompts and seeds undercovers clearly: the floor is a floor.
    assert hits_floor / reps < COVERAGE_RANGE[0]


def test_balanced_components_match_the_anova_mean_squares():
    g = np.random.default_rng(8)
    n_i, n_s = 30, 4
    y, i, _, s = _crossed(g, n_items=n_i, n_prompts=1, n_seeds=n_s)
    vc = variance_components(y, item=i, seed=s)
    grid = y.reshape(n_i, n_s)
    ms_item = n_s * grid.mean(axis=1).var(ddof=1)
    ms_seed = n_i * grid.mean(axis=0).var(ddof=1)
    resid = grid - grid.mean(axis=1, keepdims=True) - grid.mean(axis=0) + grid.mean()
    ms_e = (resid**2).sum() / ((n_i - 1) * (n_s - 1))
    assert vc.raw["residual"] == pytest.approx(ms_e)
    assert vc.raw["item"] == pytest.approx((ms_item - ms_e) / n_s)
    assert vc.raw["seed"] == pytest.approx((ms_seed - ms_e) / n_i)
    assert vc.residual_includes == ["item:seed"]  # one score per (item, seed) cell
    # SE under the design: sigma_i^2/n_i + sigma_s^2/n_s + sigma_e^2/N, and the budget.
    c = vc.components
    se = np.sqrt(c["item"] / n_i + c["seed"] / n_s + c["residual"] / (n_i * n_s))
    assert vc.se == pytest.approx(se) and vc.budget["as run"] == pytest.approx(se)
    more_items = np.sqrt(c["item"] / (2 * n_i) + c["seed"] / n_s + c["residual"] / (2 * n_i * n_s))
    assert vc.budget["2x items"] == pytest.approx(more_items)
    assert set(vc.budget) == {"as run", "2x items", "2x seeds"}


@pytest.mark.slow
def test_two_stage_difference_covers_and_shares_prompt_draws():
    # Two models on the same items and templates; each has its own seeds. The template
    # effect is mostly common to both models, so it cancels in the difference.
    from arena.evals import two_stage_difference

    n_i, n_p, n_s, true_diff = 60, 6, 4, 0.3
    hits, widths = 0, []
    reps = 150
    g = np.random.default_rng(11)
    for _ in range(reps):
        item = g.normal(0, 0.7, n_i)
        prompt = g.normal(0, 0.4, n_p)
        cells = []
        for shift in (true_diff, 0.0):
            i, p, s = (v.ravel() for v in np.meshgrid(np.arange(n_i), np.arange(n_p), np.arange(n_s), indexing="ij"))  # fmt: skip
            y = (
                shift + item[i] + prompt[p] + g.normal(0, 0.1, n_p)[p]  # model x prompt
                + g.normal(0, 0.05, n_s)[s] + g.normal(0, 0.3, (n_i))[i] + g.normal(0, 0.5, i.size)
            )  # fmt: skip
            cells.append((y, i, p, s))
        (ya, ia, pa, sa), (yb, ib, pb, sb) = cells
        iv = two_stage_difference(
            ya, yb, g, item_a=ia, item_b=ib, runs_a={"prompt": pa, "seed": sa},
            runs_b={"prompt": pb, "seed": sb}, rounds=300,
        ).interval  # fmt: skip
        hits += iv.low <= true_diff <= iv.high
        widths.append(iv.high - iv.low)
    assert COVERAGE_RANGE[0] <= hits / reps <= COVERAGE_RANGE[1]
    # Had the template effect (sd 0.4 over 6 templates) not cancelled, the interval would be
    # at least 2 * 1.96 * 0.4 * sqrt(2 / 6) ~ 0.9 wide.
    assert np.mean(widths) < 0.45
