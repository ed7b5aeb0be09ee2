"""Rating engine: pure numpy/scipy functions over integer model indices.

Nothing in this package may import sqlalchemy, click or jinja2.

Grouped by step (``docs/architecture.md`` says why): :mod:`~arena.engine.fitting`
(the point fit), :mod:`~arena.engine.resampling` (the bootstrap),
:mod:`~arena.engine.inference` (intervals, ranks, rank sets, tiers, verdicts) and
:mod:`~arena.engine.sets` (comparable sets); the board's own steps stay at the top.

Modules (one job each):

* :mod:`~arena.engine.options` -- :class:`FitOptions`, the model options that
  ``fit``, ``bootstrap``, ``rate`` and the rebuild all take.
* :mod:`~arena.engine.counts` -- battles -> :class:`CountTable` of (pair,
  outcome, weight) cells; sparse clusters x cells matrices.
* :mod:`~arena.engine.fitting.design` -- cells -> sufficient statistics of one model
  variant (half ties / Davidson, optional position term).
* :mod:`~arena.engine.fitting.likelihood` -- batched log-likelihood, gradient and
  Hessian over ``(rounds, params)`` arrays.
* :mod:`~arena.engine.fitting.newton` -- damped Newton and fixed-Hessian (chord)
  solvers of those arrays.
* :mod:`~arena.engine.fitting.graph` -- MLE existence (strong connectivity of the
  beats graph) and per-model flags.
* :mod:`~arena.engine.fitting.fit` -- the exact Bradley–Terry MLE: :func:`fit`;
  :mod:`~arena.engine.messages` -- the flag sentences and model names of its warnings.
* :mod:`~arena.engine.scale` -- the Elo scale and the win probability.
* :mod:`~arena.engine.resampling.sampling` -- exact, fast multinomial resampling.
* :mod:`~arena.engine.resampling.bootstrap` -- vectorised (cluster) bootstrap: :func:`bootstrap`;
  :mod:`~arena.engine.resampling.rounds` runs its chunks of rounds (threads or processes).
* :mod:`~arena.engine.fitting.analytic` -- Fisher and sandwich covariances.
* :mod:`~arena.engine.inference.intervals` -- intervals from a point fit (bootstrap or normal).
* :mod:`~arena.engine.rate` -- one call to ratings with intervals: :func:`rate`;
  :mod:`~arena.engine.sets.comparable` puts a comparable set's fit back on the board.
* :mod:`~arena.engine.style.design`, :mod:`~arena.engine.style.model`,
  :mod:`~arena.engine.style.fit`, :mod:`~arena.engine.style.boot`,
  :mod:`~arena.engine.style.rate` -- style control (covariates, likelihood, point
  fit, bootstrap, :func:`~arena.engine.style.rate.rate_style`).
* :mod:`~arena.engine.inference.ranks` -- rank (UB) and bootstrap rank intervals.
* :mod:`~arena.engine.inference.pairs`, :mod:`~arena.engine.inference.multiple`,
  :mod:`~arena.engine.inference.tiers` -- paired bootstrap statistics, multiplicity
  corrections, tiers.
* :mod:`~arena.engine.inference.compare` -- the head-to-head verdict for one pair.
* :mod:`~arena.engine.board` -- everything one leaderboard needs from a count
  table (ratings, records, ranks, tiers): :func:`rate_board`.
* :mod:`~arena.engine.elo` -- online Elo, a secondary order-dependent rating.
* :mod:`~arena.engine.validate`, :mod:`~arena.engine.resampling.blas` -- argument
  checks; one BLAS thread while fitting.

See ``docs/engine.md`` for the model, the prior and the interval methods.
"""
