"""Defaults every entry point shares, so the CLI, the library and the snapshots agree.

One place for each default: the engine's signatures, the rebuild's options,
the front door (:mod:`arena.api`) and the command line's ``--help`` all read
these names, so ``arena.open(url).rebuild()`` and ``arena rebuild`` give the
same bytes. A fixed seed by default: the same data and options give the same
bytes out, whichever command or function computed them. The allowed values of
the text options (``CI_METHODS``, ``TIER_METHODS``, ...) live here too: the
engine checks its arguments against them and :mod:`arena.core.options` declares
the options with them. Text defaults are ``Final`` so type checkers read them
as the literal types the engine declares.
"""

from typing import Final

#: Seed of every bootstrap and random draw unless one is given.
DEFAULT_SEED = 20240501
#: Bootstrap resamples (rounds) unless a number is given.
DEFAULT_ROUNDS = 1000
#: Resamples of the seed design's ``bootstrap_ci`` and ``paired_bootstrap``, whose
#: signatures it fixes as ``n_boot=2000``; everything else says ``rounds``.
SEED_N_BOOT = 2000
#: Fewest rounds: the 2.5% and 97.5% points of fewer draws are the extreme
#: draws themselves, not interval ends. One bound for every command and the engine.
ROUNDS_MIN = 10
#: Most rounds. The bootstrap holds rounds x models samples in float64, stored
#: as float32: 100,000 rounds of a 1,000-model board are 800 MB in memory and
#: 400 MB per snapshot, about what this 2-core, few-GB class of machine holds;
#: 10**8 rounds ran for minutes and 10**12 grew until the kernel killed it. The
#: Monte Carlo error of a 95% percentile at 100,000 rounds is ~0.07 percentage
#: points of coverage, far below anything the board shows.
ROUNDS_MAX = 100_000
#: Largest seed and snapshot id: both are stored as signed 64-bit integers.
INT64_MAX = 2**63 - 1
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
#: Target power of ``arena plan power``, and the power at which the audit calls a
#: judge it does not flag "consistent with the board" (below: too few votes to tell).
DEFAULT_POWER = 0.8
#: A material departure of a judge from the board (the audit's anomaly probe):
#: favouring a position, model or organisation by this many points of win rate in
#: an even match (0.40: 50% becomes 90%), or agreeing no more often than a coin.
DEFAULT_AUDIT_MATERIAL_POINTS = 0.40
#: Pairs ``arena plan`` lists without ``top`` (about 1,400 ranked models).
PLAN_MAX_LISTED = 1_000_000
#: Share of rank sets a second set of fixed draws must leave unchanged for a
#: board's quadrature error to count as negligible (issue 41's target for
#: seeds: the same set for at least 95% of models; ``arena.engine.board.draws_check``).
DRAWS_CHECK_SHARE: Final = 0.95
#: Binomial standard errors by which a count of rounds must clear the level for
#: the board's step-down to reject (``arena.engine.inference.rank_sets.mc_alpha``):
#: the fixed draws' quadrature error does not average out over boards, and
#: 1.645 kept the family-wise error at or below 5% on 17 of 20 draw sets measured
#: (the lowest 5.1%; 5 of 20 without it; issue 41, docs/tiers.md). 0 was the rule before.
MC_MARGIN: Final = 1.645
#: Most fixed normal draws a board's analytic intervals take when its rounds are
#: chosen by the data (doubling from DEFAULT_ROUNDS while the check fails): on
#: the bundled LMArena boards (52 models) 4,000 draws pass on 10 of 11 boards
#: at about 0.4 s a board; 16,000 draws of 52 models are 3.3 MB per snapshot.
DRAWS_MAX: Final = 16_000
#: Interval methods (:mod:`arena.engine.inference.intervals`) and the default.
CI_METHODS = ("bootstrap", "sandwich", "fisher")
DEFAULT_CI: Final = "sandwich"
#: Tie models: half a win each (LMArena) or Davidson's; the default.
TIE_MODELS = ("half", "davidson")
DEFAULT_TIES: Final = "half"
#: What "both bad" votes are: ties, or left out; the default.
BOTH_BAD_RULES = ("tie", "drop")
DEFAULT_BOTH_BAD: Final = "tie"
#: Resampling units of the bootstrap (the battle, or a column of it); the default.
CLUSTERS = ("battle", "judge", "question", "source")
DEFAULT_CLUSTER: Final = "battle"
#: Tier methods: the board's simultaneous inference (the same test as the rank
#: sets and verdicts), paired differences with max-t / Holm / BH, or interval
#: overlap; the default.
TIER_METHODS = ("simultaneous", "maxt", "holm", "bh", "overlap")
DEFAULT_TIERS: Final = "simultaneous"
#: Paired-tier rules (see :func:`arena.engine.inference.tiers.tiers_paired`); the default.
TIER_RULES = ("leader", "cut")
DEFAULT_TIER_RULE: Final = "leader"
#: Near twins of the simultaneous tiers (issue 41): two models the board does not
#: separate share a tier when their rank sets differ by at most this many ranks at
#: each end and share at least ``TWIN_OVERLAP`` of the ranks of their union. One
#: rank is the Monte-Carlo error of a rank set's end at 1,000 rounds (measured on
#: the bundled board: 27 of 52 sets move by 1-3 ranks between seeds); requiring
#: identical sets made the tiers follow the seed. See docs/tiers.md.
TWIN_ENDS = 1
TWIN_OVERLAP = 0.8
#: Comparable sets of a board: rank the largest, or also one board per other set.
COMPONENT_MODES = ("largest", "separate")
DEFAULT_COMPONENTS: Final = "largest"
#: The rank column of ``arena leaderboard`` and the page: the board's
#: simultaneous rank sets, or LMArena's interval-overlap ranks; the default.
RANK_COLUMNS = ("simultaneous", "overlap")
DEFAULT_RANKS: Final = "simultaneous"
#: What ``arena nightly`` rebuilds: the boards the database has, each with its own
#: stored options ("kept"), or the overall board and its categories with the options
#: given to the night ("given": every source pooled unless a source is given).
NIGHTLY_BOARDS = ("kept", "given")
DEFAULT_NIGHTLY_BOARDS: Final = "kept"
#: What ``arena plan`` optimises: every interval's width (Chiang et al. eq. 9) or
#: the undecided separations of the tiers; the default.
PLAN_RULES = ("paper", "tiers")
DEFAULT_PLAN_RULE: Final = "paper"
#: What a rebuild reads: the count table, the battles, or whichever the options allow.
READS = ("auto", "counts", "battles")
DEFAULT_READ: Final = "auto"
#: Input formats of ``arena ingest`` (auto: guessed from the name or content).
INPUT_FORMATS = ("auto", "csv", "jsonl", "json")
DEFAULT_INPUT_FORMAT: Final = "auto"
#: Most battles one aggregated-count row may stand for.
DEFAULT_MAX_EXPAND = 10_000
#: ``arena serve``: address, port and worker processes.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_WORKERS = 1
#: ``arena serve``: requests per second per key without its own rate (0: unlimited).
DEFAULT_RATE = 20.0
#: ``arena serve``: seconds a battle token stays valid.
DEFAULT_BATTLE_TTL = 3600.0
#: ``arena serve``: largest request body in bytes.
DEFAULT_MAX_BODY = 8 * 1024 * 1024
#: ``arena serve``: requests per second per client address without a valid key.
DEFAULT_ANONYMOUS_RATE = 20.0
#: ``arena serve``: most battles one POST /v1/battles may store (rows expanded).
DEFAULT_MAX_BATTLES = 100_000
#: ``arena serve``: largest request line plus headers in bytes.
DEFAULT_MAX_HEADER_BYTES = 64 * 1024
#: Provisional boards (``arena serve``): their analytic interval methods and the default.
PROVISIONAL_METHODS = ("sandwich", "fisher")
DEFAULT_PROVISIONAL_METHOD: Final = "sandwich"
#: ``arena serve``: seconds between two looks for new votes to refit the provisional board.
DEFAULT_REFIT_EVERY = 2.0
#: ``arena serve``: most open ``/v1/leaderboard/events`` streams per worker (503 beyond).
DEFAULT_MAX_SUBSCRIBERS = 100
#: Longest ``keep_days`` of retention (100 years): beyond it nothing is ever
#: pruned, and the cut-off date would overflow.
KEEP_DAYS_MAX = 36_525
#: Seconds a command waits for another command's lock on the database.
DEFAULT_WAIT = 300.0
#: The database when none is given (``--db``, ``ARENA_DATABASE_URL``).
DEFAULT_URL = "sqlite:///arena.db"
#: Environment variable naming the database.
URL_ENV = "ARENA_DATABASE_URL"

__all__ = [
    "ANCHOR_MAX",
    "DEFAULT_MAX_SUBSCRIBERS",
    "DEFAULT_PROVISIONAL_METHOD",
    "DEFAULT_REFIT_EVERY",
    "PROVISIONAL_METHODS",
    "DEFAULT_ANONYMOUS_RATE",
    "DEFAULT_MAX_BATTLES",
    "DEFAULT_MAX_HEADER_BYTES",
    "BOTH_BAD_RULES",
    "CI_METHODS",
    "CLUSTERS",
    "COMPONENT_MODES",
    "DEFAULT_BATTLE_TTL",
    "DEFAULT_BOTH_BAD",
    "DEFAULT_CI",
    "DRAWS_CHECK_SHARE",
    "DRAWS_MAX",
    "MC_MARGIN",
    "DEFAULT_CLUSTER",
    "DEFAULT_COMPONENTS",
    "DEFAULT_HOST",
    "DEFAULT_INPUT_FORMAT",
    "DEFAULT_MAX_BODY",
    "DEFAULT_MAX_EXPAND",
    "DEFAULT_PORT",
    "DEFAULT_PLAN_RULE",
    "DEFAULT_RANKS",
    "DEFAULT_NIGHTLY_BOARDS",
    "NIGHTLY_BOARDS",
    "DEFAULT_RATE",
    "DEFAULT_READ",
    "DEFAULT_TIER_RULE",
    "DEFAULT_TIERS",
    "DEFAULT_TIES",
    "DEFAULT_WORKERS",
    "INPUT_FORMATS",
    "INT64_MAX",
    "KEEP_DAYS_MAX",
    "RANK_COLUMNS",
    "PLAN_RULES",
    "READS",
    "ROUNDS_MAX",
    "ROUNDS_MIN",
    "TIE_MODELS",
    "TIER_METHODS",
    "TIER_RULES",
    "TWIN_ENDS",
    "TWIN_OVERLAP",
    "DEFAULT_AUDIT_ALPHA",
    "DEFAULT_AUDIT_MATERIAL_POINTS",
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
