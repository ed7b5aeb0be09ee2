"""Per-item benchmark statistics: accuracy intervals and paired verdicts.

Pure numpy/scipy and vectorised: bootstrap resamples are drawn as one index
matrix (in row blocks) and summarised with matrix products, never a Python
loop per resample.

The three functions fixed by issue 6 keep their exact names, signatures and
use of ``rng``: :func:`bootstrap_ci`, :func:`paired_bootstrap`, :func:`significant`.
"""

from arena.stats._checks import Interval
from arena.stats.binomial import (
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
from arena.stats.bootstrap import (
    bca_interval,
    bootstrap_ci,
    cluster_bootstrap_ci,
    paired_bootstrap,
    significant,
)
from arena.stats.evaluation import (
    EvaluateError,
    Evaluation,
    ModelAccuracy,
    PairVerdict,
    evaluate,
    write_battles,
)
from arena.stats.models import ModelsBootstrap, bootstrap_models
from arena.stats.multiple import CORRECTIONS, adjust_pvalues, benjamini_hochberg, holm
from arena.stats.permutation import PermutationResult, paired_permutation_test
from arena.stats.power import (
    items_needed,
    items_needed_paired,
    simulate_power,
    simulate_power_paired,
)

__all__ = [
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
