"""Pairs served, counted for the sampling ledger: in memory per worker, added to the table in batches.

Every ``GET /v1/pair`` is counted here (day, board, pair as shown, how the rule
drew it: ``plan``, ``uniform`` or ``new``) without touching the database; a
thread adds the counts to ``served_pairs`` every :data:`FLUSH_SECONDS` and at
shutdown, with one upsert that increments (so any number of workers add up
exactly).  A worker killed with ``kill -9`` loses at most its last
:data:`FLUSH_SECONDS` of counts: the ledger says pairs *served*, the battles
table says what was voted, and neither is made up.
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import UTC, date, datetime

from sqlalchemy import Engine, select
from sqlalchemy.dialects import postgresql, sqlite

from arena.boards.keys import BoardKey
from arena.db.models import Model, ServedPair

__all__ = ["DRAWN_BY", "FLUSH_SECONDS", "ServedCounter"]

#: How the pair rule drew a pair (:class:`arena.serve.pairs.PairPicker`).
DRAWN_BY = ("plan", "uniform", "new")
#: Seconds between additions of a worker's counts to the table.
FLUSH_SECONDS = 5.0

_Key = tuple[date, str | None, str | None, str, str, str]  # day, category, source, a, b, drawn by


class ServedCounter:
    """Counts of served pairs since the last flush; safe to share between threads."""

    def __init__(self, engine: Engine, *, every: float = FLUSH_SECONDS) -> None:
        self.engine = engine
        self.every = every
        self._counts: Counter[_Key] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(
        self, category: str | None, source: str | None, model_a: str, model_b: str, drawn_by: str
    ) -> None:
        """One pair served on the board of ``category`` and ``source``, sides as shown
        (the board's key text is written at the flush, off the pair's path)."""
        key = (datetime.now(UTC).date(), category, source, model_a, model_b, drawn_by)
        with self._lock:
            self._counts[key] += 1

    def pending(self) -> int:
        """Pairs counted and not yet in the table."""
        with self._lock:
            return sum(self._counts.values())

    def flush(self) -> int:
        """Add the counts to ``served_pairs`` (one transaction); returns the pairs added.

        Counts of a failed flush are kept for the next one.
        """
        with self._lock:
            counts, self._counts = self._counts, Counter()
        if not counts:
            return 0
        try:
            self._write(counts)
        except Exception:
            with self._lock:
                self._counts.update(counts)
            raise
        return sum(counts.values())

    def _write(self, counts: Counter[_Key]) -> None:
        names = {n for k in counts for n in (k[3], k[4])}
        with self.engine.begin() as conn:
            query = select(Model.name, Model.id).where(Model.name.in_(names))
            ids = {name: mid for name, mid in conn.execute(query)}
            rows = [
                {
                    "day": day,
                    "board": str(BoardKey(category=category, source=source)),
                    "model_a_id": ids[a],
                    "model_b_id": ids[b],
                    "drawn_by": drawn_by,
                    "served": n,
                }
                for (day, category, source, a, b, drawn_by), n in counts.items()
                if a in ids and b in ids  # a model deleted since it was served: nothing to count
            ]
            if not rows:
                return
            dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
            stmt = dialect.insert(ServedPair)
            conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=["day", "board", "model_a_id", "model_b_id", "drawn_by"],
                    set_={"served": ServedPair.served + stmt.excluded.served},
                ),
                rows,
            )

    # -- the flushing thread -------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="arena-ledger", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - a database hiccup: the counts wait for the next try
                continue

    def close(self) -> None:
        """Stop the thread and add what is counted (at shutdown)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.every + 5)
        self.flush()
