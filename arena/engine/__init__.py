"""Rating engine: pure numpy/scipy functions over integer model indices.

Nothing in this package may import sqlalchemy, click or jinja2.

Modules (one job each):

* :mod:`~arena.engine.options` -- :class:`FitOptions`, the model options that
  ``fit``, ``bootstrap``, ``rate`` and the rebuild all take.
* :mod:`~arena.engine.counts` -- battles -> :class:`CountTable` of (pair,
  outcome, weight) cells; sparse clusters x cells matrices.
* :mod:`~arena.engine.design` -- cells -> sufficient statistics of one model
  variant (half ties / Davidson, optional position term).
* :mod:`~arena.engine.likelihood` -- batched log-likelihood, gradient and
  Hessian over ``(rounds, params)`` arrays.
* :mod:`~arena.engine.newton` -- damped Newton and fixed-Hessian (chord)
  solvers of those arrays.
* :mod:`~arena.engine.graph` -- MLE existence (strong connectivity of the
  beats graph) and per-model flags.
* :mod:`~arena.engine.fit` -- the exact Bradley–Terry MLE: :func:`fit`;
  :mod:`~arena.engine.messages` -- the flag sentences and model names of its warnings.
* :mod:`~arena.engine.scale` -- the Elo scale and the win probability.
* :mod:`~arena.engine.sampling` -- exact, fast multinomial resampling.
* :mod:`~arena.engine.bootstrap` -- vectorised (cluster) bootstrap: :func:`bootstrap`;
  :mod:`~arena.engine.rounds` runs its chunks of rounds (threads or processes).
* :mod:`~arena.engine.analytic` -- Fisher and sandwich covariances.
* :mod:`~arena.engine.intervals` -- intervals from a point fit (bootstrap or normal).
* :mod:`~arena.engine.rate` -- one call to ratings with intervals: :func:`rate`;
  :mod:`~arena.engine.comparable` puts a comparable set's fit back on the board.
* :mod:`~arena.engine.style.design`, :mod:`~arena.engine.style.model`,
  :mod:`~arena.engine.style.fit`, :mod:`~arena.engine.style.boot`,
  :mod:`~arena.engine.style.rate` -- style control (covariates, likelihood, point
  fit, bootstrap, :func:`~arena.engine.style.rate.rate_style`).
* :mod:`~arena.engine.ranks` -- rank (UB) and bootstrap rank intervals.
* :mod:`~arena.engine.pairs`, :mod:`~arena.engine.multiple`,
  :mod:`~arena.engine.tiers` -- paired bootstrap statistics, multiplicity
  corrections, tiers.
* :mod:`~arena.engine.compare` -- the head-to-head verdict for one pair.
* :mod:`~arena.engine.board` -- everything one leaderboard needs from a count
  table (ratings, records, ranks, tiers): :func:`rate_board`.
* :mod:`~arena.engine.elo` -- online Elo, a secondary order-dependent rating.
* :mod:`~arena.engine.validate`, :mod:`~arena.engine.blas` -- argument
  checks; one BLAS thread while fitting.

See ``docs/engine.md`` for the model, the prior and the interval methods.
"""
