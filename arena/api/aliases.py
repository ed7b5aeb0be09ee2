"""The front door's model aliases: one model spelled two ways by two sources.

:class:`AliasMethods` is part of :class:`arena.api.Arena` (``arena models alias``,
``arena models unalias``, ``arena models aliases``). The rules are
:mod:`arena.store.aliases`'s; an alias never changes a rating, only which rows of
two boards ``arena agreement`` matches as one model.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.core.errors import OptionError

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from arena.store.aliases import Alias

__all__ = ["AliasMethods", "Aliased", "Aliases"]


@dataclass(frozen=True)
class Aliased:
    """``arena models alias`` / ``unalias``: how many aliases were stored (new or changed) or removed."""

    changed: int

    def to_dict(self) -> dict[str, Any]:
        return {"changed": self.changed}


@dataclass(frozen=True)
class Aliases:
    """``arena models aliases``: every alias with its canonical model and reason."""

    aliases: tuple[Alias, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"aliases": [a.to_dict() for a in self.aliases]}


class AliasMethods:
    """``alias``, ``unalias`` and ``aliases`` of :class:`arena.api.Arena` (mixed into it)."""

    def engine(self, *, create: bool = False) -> Engine:  # pragma: no cover - Arena's
        raise NotImplementedError

    def alias(
        self,
        alias: str | None = None,
        canonical: str | None = None,
        *,
        reason: str | None = None,
        from_file: str | os.PathLike[str] | None = None,
        aliases: Iterable[Alias] | None = None,
    ) -> Aliased:
        """Say that model ``alias`` is ``canonical`` spelled another way, all or nothing.

        Give ``alias`` and ``canonical`` (and a ``reason``), or ``from_file``
        (CSV ``alias,canonical,reason``; ``#`` lines are comments), or
        ``aliases``. Both names must be models of the store; no chains (a
        canonical model is never itself an alias). Never alias variants
        (reasoning effort, thinking budget, another date): they are other models.

        Raises
        ------
        arena.store.aliases.AliasError
            An unknown model, a chain, a self-alias or a bad file; nothing is stored.
        OptionError
            Both or neither of a pair and a file given.
        """
        from arena.db.session import take_write_lock
        from arena.store.aliases import alias as one_alias
        from arena.store.aliases import define_aliases, read_aliases

        given = sum(x is not None for x in (alias, from_file, aliases))
        if given != 1 or (alias is None) != (canonical is None) or (alias is None and reason is not None):  # fmt: skip
            raise OptionError(
                "alias",
                "give {name} with its canonical model (and a reason), or {from_file}, not both",
                also=("from_file",),
            )
        if from_file is not None:
            items = read_aliases(from_file)
        elif aliases is not None:
            items = list(aliases)
        else:
            assert alias is not None and canonical is not None  # checked above
            items = [one_alias(alias, canonical, reason)]
        with self.engine().begin() as conn:
            take_write_lock(conn, "alias models")
            return Aliased(define_aliases(conn, items))

    def unalias(self, *aliases: str) -> Aliased:
        """Remove aliases by their alias name; an unknown one removes nothing.

        Raises
        ------
        arena.store.aliases.AliasError
            A name that is no alias (with "did you mean").
        """
        from arena.db.session import take_write_lock
        from arena.store.aliases import remove_aliases

        if not aliases:
            raise OptionError("aliases", "give at least one alias to remove")
        with self.engine().begin() as conn:
            take_write_lock(conn, "remove model aliases")
            return Aliased(remove_aliases(conn, aliases))

    def aliases(self) -> Aliases:
        """Every alias, by canonical model (``arena models aliases``)."""
        from arena.store.aliases import list_aliases

        with self.engine().connect() as conn:
            return Aliases(tuple(list_aliases(conn)))
