"""Defaults every entry point shares, so the CLI, the library and the snapshots agree.

One place for each default: the engine's signatures, the rebuild's options,
the front door (:mod:`arena.api`) and the command line's ``--help`` all read
these names, so ``arena.open(url).rebuild()`` and ``arena rebuild`` give the
same bytes. A fixed seed by default: the same data and options give the same
bytes out, whichever command or function computed them.
"""

#: Seed of every bootstrap and random draw unless one is given.
DEFAULT_SEED = 20240501
#: Bootstrap resamples (rounds) unless a number is given.
DEFAULT_ROUNDS = 1000
#: Resamples of the seed design's ``bootstrap_ci`` and ``paired_bootstrap``, whose
#: signatures it fixes as ``n_boot=2000``; everything else says ``rounds``.
SEED_N_BOOT = 2000
#: Confidence level of intervals and tests.
DEFAULT_LEVEL = 0.95
#: Models with fewer battles are listed but not ranked.
DEFAULT_MIN_BATTLES = 50
#: A board with more models than this is refused before any fitting (a guard
#: against an accidental huge board, such as a model column holding prompt ids).
DEFAULT_MAX_MODELS = 20_000
#: Models in the site's heatmaps (the top N by rating), for ``arena publish`` and
#: ``arena nightly`` alike. Each cell is ~170 bytes (full names in its tooltip):
#: when the top models all met (a real arena's top 20 do), three 20x20 matrices
#: are ~195 KB and a 300-model main page passes the 500 KB budget; at 15 they
#: are ~110 KB (benchmarks/bench_publish.py --pair-density 1, docs/site.md).
DEFAULT_HEATMAP_TOP = 15
#: Most boards (overall + categories) a rebuild or publish makes unless told more:
#: a guard against a category column holding something else, such as prompt ids.
DEFAULT_MAX_BOARDS = 1_000
#: Largest absolute rating an anchor may pin (rating points): beyond it the
#: float32 bootstrap samples lose the differences between models.
ANCHOR_MAX = 100_000.0
#: Family-wise level of the audit's anomalous-judge flags.
DEFAULT_AUDIT_ALPHA = 0.05
#: Target power of ``arena plan power``.
DEFAULT_POWER = 0.8
#: Pairs ``arena plan`` lists without ``top`` (about 1,400 ranked models).
PLAN_MAX_LISTED = 1_000_000
#: Seconds a command waits for another command's lock on the database.
DEFAULT_WAIT = 300.0
#: The database when none is given (``--db``, ``ARENA_DATABASE_URL``).
DEFAULT_URL = "sqlite:///arena.db"
#: Environment variable naming the database.
URL_ENV = "ARENA_DATABASE_URL"

__all__ = [
    "ANCHOR_MAX",
    "DEFAULT_AUDIT_ALPHA",
    "DEFAULT_HEATMAP_TOP",
    "DEFAULT_LEVEL",
    "DEFAULT_MAX_BOARDS",
    "DEFAULT_MAX_MODELS",
    "DEFAULT_MIN_BATTLES",
    "DEFAULT_POWER",
    "DEFAULT_ROUNDS",
    "DEFAULT_SEED",
    "DEFAULT_URL",
    "DEFAULT_WAIT",
    "PLAN_MAX_LISTED",
    "SEED_N_BOOT",
    "URL_ENV",
]
