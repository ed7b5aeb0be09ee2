"""Vote-quality audit: probes over one board's votes, each an estimate with an
interval that flags only when the whole interval lies outside an innocent band.

Modules (one probe family each; all pure numpy/scipy except :mod:`read`):

* :mod:`~arena.audit.votes` -- per-vote arrays (:class:`Votes`).
* :mod:`~arena.audit.setup` -- options and the shared fits.
* :mod:`~arena.audit.offset` -- per-group one-parameter deviations with score intervals.
* :mod:`~arena.audit.position`, :mod:`~arena.audit.ties`,
  :mod:`~arena.audit.transitivity`, :mod:`~arena.audit.clustering`,
  :mod:`~arena.audit.influence`, :mod:`~arena.audit.anomaly`,
  :mod:`~arena.audit.coverage` -- the probes.
* :mod:`~arena.audit.report` -- :func:`run_audit`.
* :mod:`~arena.audit.read` -- the store side: votes of a snapshot's board, stored audits.

See ``docs/audit.md``.
"""

from arena.core.vocabulary import PROBE_NAMES

__all__ = ["PROBE_NAMES"]
