"""The front door's sampling ledger: who got how many battles, and how pairs were drawn.

:class:`SamplingMethods` is part of :class:`arena.api.Arena` (``arena sampling``,
``GET /v1/sampling``, the site's "Who got how many battles" page); the numbers
are :mod:`arena.store.sampling`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from arena.store.sampling import SamplingLedger

__all__ = ["Sampling", "SamplingMethods"]


@dataclass(frozen=True)
class Sampling:
    """``arena sampling``: every model's and organisation's battles, share and pairs served."""

    ledger: SamplingLedger

    def to_dict(self) -> dict[str, Any]:
        return self.ledger.to_dict()


class SamplingMethods:
    """``sampling`` of :class:`arena.api.Arena` (mixed into it)."""

    def engine(self, *, create: bool = False) -> Engine:  # pragma: no cover - Arena's
        raise NotImplementedError

    def sampling(self, *, source: str | None = None) -> Sampling:
        """The sampling ledger of the whole store, or of one ``source`` (``arena sampling``).

        Per model and per organisation: rated battles, share of all battle
        appearances, pairs ``arena serve`` showed (and how the pair rule drew
        them), first and latest battle stored, hidden or shown.

        Raises
        ------
        OptionError
            ``source`` is no source of the database.
        """
        from arena.store.sampling import sampling_ledger

        with self.engine().connect() as conn:
            return Sampling(sampling_ledger(conn, source=source))
