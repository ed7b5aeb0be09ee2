"""Per-item benchmark statistics: accuracy intervals and paired verdicts.

Pure numpy/scipy and vectorised: bootstrap resamples are drawn as one index
matrix (in row blocks) and summarised with matrix products, never a Python
loop per resample.

* accuracy intervals: :func:`bootstrap_ci` (percentile), :func:`bca_interval`,
  :func:`cluster_bootstrap_ci`, :func:`wilson_interval`,
  :func:`clopper_pearson_interval`;
* two models on the same items: :func:`paired_bootstrap` (interval of the
  difference), :func:`significant` (does it exclude 0), :func:`mcnemar`,
  :func:`paired_permutation_test`;
* many models: :func:`bootstrap_models`, with :func:`holm` /
  :func:`benjamini_hochberg` (:func:`adjust_pvalues`) over their pairs;
* planning: :func:`items_needed`, :func:`items_needed_paired`,
  :func:`simulate_power`, :func:`simulate_power_paired`; :func:`chance_test`;
* any metric (accuracy or not): :func:`paired_verdict` (the test that decides and
  why), :func:`ratio_interval` / :func:`compare_ratios` (bits per byte),
  :func:`variance_components`, :func:`two_stage_interval`,
  :func:`two_stage_difference`;
* item response theory: :func:`calibrate_2pl` (and :func:`calibrate_1pl`), :func:`score_abilities`,
  :func:`item_information`, :func:`select_items`, :func:`adaptive_test`,
  :func:`simulate_adaptive`.

Every function that resamples takes a ``numpy.random.Generator`` ``rng``: same
seed, same result.
"""

from arena.engine.inference.multiple import CORRECTIONS, adjust_pvalues, benjamini_hochberg, holm
from arena.evals.ability import Abilities, score_abilities
from arena.evals.adaptive import (
    AdaptiveResult,
    AdaptiveSimulation,
    Selection,
    adaptive_test,
    select_items,
    simulate_adaptive,
)
from arena.evals.binomial import (
    EXACT_BELOW,
    ChanceResult,
    McNemarResult,
    chance_test,
    clopper_pearson_interval,
    mcnemar,
    mcnemar_counts,
    mcnemar_pvalues,
    wilson_interval,
)
from arena.evals.bootstrap import (
    bca_interval,
    bootstrap_ci,
    cluster_bootstrap_ci,
    paired_bootstrap,
    significant,
)
from arena.evals.checks import Interval
from arena.evals.evaluation import (
    EvaluateError,
    Evaluation,
    ModelAccuracy,
    PairVerdict,
    evaluate,
    write_battles,
)
from arena.evals.irt import ItemBank, calibrate_1pl, calibrate_2pl, item_information
from arena.evals.models import ModelsBootstrap, bootstrap_models
from arena.evals.paired import PAIRED_TESTS, PairedVerdict, paired_verdict
from arena.evals.permutation import PermutationResult, paired_permutation_test
from arena.evals.power import (
    items_needed,
    items_needed_paired,
    simulate_power,
    simulate_power_paired,
)
from arena.evals.ratio import RatioComparison, compare_ratios, ratio_interval
from arena.evals.twostage import TwoStageInterval, two_stage_difference, two_stage_interval
from arena.evals.variance import VarianceComponents, design_se, variance_components

__all__ = [
    "two_stage_difference",
    "variance_components",
    "two_stage_interval",
    "design_se",
    "VarianceComponents",
    "TwoStageInterval",
    "ratio_interval",
    "compare_ratios",
    "RatioComparison",
    "paired_verdict",
    "PairedVerdict",
    "PAIRED_TESTS",
    "item_information",
    "calibrate_1pl",
    "calibrate_2pl",
    "ItemBank",
    "score_abilities",
    "simulate_adaptive",
    "select_items",
    "adaptive_test",
    "Selection",
    "AdaptiveSimulation",
    "AdaptiveResult",
    "Abilities",
    "CORRECTIONS",
    "EXACT_BELOW",
    "ChanceResult",
    "EvaluateError",
    "Evaluation",
    "Interval",
    "McNemarResult",
    "ModelAccuracy",
    "ModelsBootstrap",
    "PairVerdict",
    "PermutationResult",
    "adjust_pvalues",
    "bca_interval",
    "benjamini_hochberg",
    "bootstrap_ci",
    "bootstrap_models",
    "chance_test",
    "clopper_pearson_interval",
    "cluster_bootstrap_ci",
    "evaluate",
    "holm",
    "items_needed",
    "items_needed_paired",
    "mcnemar",
    "mcnemar_counts",
    "mcnemar_pvalues",
    "paired_bootstrap",
    "paired_permutation_test",
    "significant",
    "simulate_power",
    "simulate_power_paired",
    "wilson_interval",
    "write_battles",
]
