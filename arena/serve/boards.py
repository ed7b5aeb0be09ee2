"""Which board a request names: a category by key or label, a source that has a board.

``?category=`` is resolved once, as ``arena leaderboard --category`` does
(:func:`arena.store.categories.resolve_category`: a key or a label, any case),
and everything after -- the draw, the battle token, the stored vote -- uses
the resolved key, so ``MATH`` and ``Math`` vote on the ``math`` board instead
of founding a category of their own.  A vote drawn for a derived category is
stored with the rule's tags (:func:`stored_categories`): the ingest links it to
the derived category from them, and so does every later ``arena categories
derive`` of the same rule, which rebuilds the links from the tags.

``?source=`` must name a source that has a board (a snapshot): an unknown one
is refused without listing the others (sources of votes are key names, not
another key's business) and without scanning the battles table.
"""

from __future__ import annotations

import threading
import time

from sqlalchemy import Connection, Engine, select

from arena.core.errors import ArenaError
from arena.db.models import Snapshot
from arena.store.categories import CategoryError, resolve_category
from arena.store.derived import Rule, load_rules

__all__ = ["BoardNames", "UnknownBoard"]

#: Seconds a resolved category, the derived rules and the known sources are trusted
#: (a new category or rule is picked up within this).
REFRESH_SECONDS = 5.0
#: Resolved category texts remembered at most (the cache is cleared when full).
MAX_RESOLVED = 1024


class UnknownBoard(ArenaError, LookupError):
    """A category or source no board has; the message is for the client (HTTP 404)."""


class BoardNames:
    """Category and source names of requests, resolved against the store and cached.

    Safe to share between threads; every method may query the database and is
    meant to run off the event loop.
    """

    def __init__(self, engine: Engine, *, refresh: float = REFRESH_SECONDS) -> None:
        self.engine = engine
        self.refresh = refresh
        self._lock = threading.Lock()
        self._categories: dict[str, tuple[str, float]] = {}
        self._sources: dict[str, float] = {}
        self._rules: tuple[dict[str, Rule], float] | None = None

    def category(self, text: str) -> str:
        """The category key ``text`` names (a key or a label); :class:`UnknownBoard` if none."""
        now = time.monotonic()
        hit = self._categories.get(text)
        if hit is not None and now - hit[1] < self.refresh:
            return hit[0]
        with self.engine.connect() as conn:
            try:
                key = resolve_category(conn, text)
            except CategoryError as exc:
                raise UnknownBoard(str(exc)) from None
        with self._lock:
            if len(self._categories) >= MAX_RESOLVED:
                self._categories.clear()
            self._categories[text] = (key, now)
        return key

    def source(self, name: str) -> str:
        """``name`` if some snapshot rates that source; :class:`UnknownBoard` if none does."""
        now = time.monotonic()
        seen = self._sources.get(name)
        if seen is not None and now - seen < self.refresh:
            return name
        with self.engine.connect() as conn:
            found = conn.execute(
                select(Snapshot.id).where(Snapshot.source == name).limit(1)
            ).first()
        if found is None:
            raise UnknownBoard(
                f"no board for source {name!r} (a rebuild of that source writes one)"
            )
        with self._lock:
            if len(self._sources) >= MAX_RESOLVED:
                self._sources.clear()
            self._sources[name] = now
        return name

    def stored_categories(self, key: str) -> list[str]:
        """The categories a vote on a pair drawn for category ``key`` is stored with.

        A derived category's vote carries the rule's tags, so the rule links
        it now and again whenever it is re-applied; any other category is itself.
        """
        rule = self._derived().get(key)
        return list(rule.tags) if rule is not None else [key]

    def rules_fresh(self) -> bool:
        """Whether :meth:`stored_categories` answers from memory now (no database work)."""
        held = self._rules
        return held is not None and time.monotonic() - held[1] < self.refresh

    def _derived(self) -> dict[str, Rule]:
        now = time.monotonic()
        held = self._rules
        if held is not None and now - held[1] < self.refresh:
            return held[0]
        with self.engine.connect() as conn:
            rules = _rules_by_key(conn)
        self._rules = (rules, now)
        return rules


def _rules_by_key(conn: Connection) -> dict[str, Rule]:
    return {rule.key: rule for rule in load_rules(conn)}
