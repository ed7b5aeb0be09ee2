"""Defaults every entry point shares, so the CLI, the library and the snapshots agree.

A fixed seed by default: the same data and options give the same bytes out,
whichever command or function computed them.
"""

#: Seed of every bootstrap unless one is given.
DEFAULT_SEED = 20240501
#: Bootstrap resamples (rounds) unless a number is given.
DEFAULT_ROUNDS = 1000
#: Confidence level of intervals and tests.
DEFAULT_LEVEL = 0.95

__all__ = ["DEFAULT_LEVEL", "DEFAULT_ROUNDS", "DEFAULT_SEED"]
