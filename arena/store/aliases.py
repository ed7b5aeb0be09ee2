"""Model aliases: two spellings of one model, so that boards of two sources can be matched.

A human board and a judge's board often name one release differently
(``claude-3-7-sonnet-20250219`` and ``claude-3.7-sonnet``). An alias links the
two, with the reason they are one model. It never merges battles: each board
still rates the names its battles carry. Where two boards are matched model by
model (``arena agreement``), a row is matched through its canonical name.

Rules, checked before anything is written (a batch is all or nothing):

- both names are models of the store (a typo is an error with "did you mean");
- an alias is not its own canonical, and there are no chains: a canonical name
  is never itself an alias, and an alias is never another alias's canonical;
- one alias has one canonical; defining it again replaces the canonical and
  the reason.

Variants (reasoning effort, thinking budgets, dated releases) are different
models and must not be aliased; the rule is the user's, the reason column
says why two names are the same model.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from arena.core.errors import ArenaError
from arena.core.text import text_problem
from arena.db.models import ModelAlias
from arena.store.records import unknown_models

__all__ = [
    "Alias",
    "AliasError",
    "alias",
    "canonical_names",
    "define_aliases",
    "list_aliases",
    "read_aliases",
    "remove_aliases",
]

_REASON_MAX = 1024


class AliasError(ArenaError, ValueError):
    """A bad alias (unknown model, a chain, a malformed file); the message is for the user."""


@dataclass(frozen=True)
class Alias:
    """``alias`` is another spelling of ``canonical``; ``reason`` says why ("" when not given)."""

    alias: str
    canonical: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"alias": self.alias, "canonical": self.canonical, "reason": self.reason}


def read_aliases(path: str | os.PathLike[str]) -> list[Alias]:
    """A CSV with header ``alias,canonical,reason`` (``reason`` optional).

    Blank lines and lines starting with ``#`` are comments; errors name the
    file's own line numbers.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise AliasError(f"cannot read {path}: {exc}") from exc
    numbered = [
        (n, ln)
        for n, ln in enumerate(text.splitlines(), start=1)
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    rows = list(csv.reader(ln for _, ln in numbered))
    header = [c.strip() for c in rows[0]] if rows else []
    missing = [c for c in ("alias", "canonical") if c not in header]
    if missing:
        raise AliasError(
            f"{path}: the CSV header must be alias,canonical[,reason]; missing {', '.join(missing)}"
        )
    out = []
    for (n, _), row in zip(numbered[1:], rows[1:], strict=True):
        where = f"{path} line {n}"
        if len(row) > len(header):
            raise AliasError(f"{where}: {len(row)} cells for {len(header)} columns")
        rec = dict(zip(header, row, strict=False))
        out.append(_alias(rec.get("alias"), rec.get("canonical"), rec.get("reason"), where))
    return out


def _alias(alias: Any, canonical: Any, reason: Any, where: str) -> Alias:
    values = {}
    for field, value in (("alias", alias), ("canonical", canonical)):
        value = (value or "").strip() if isinstance(value, str) or value is None else value
        if not isinstance(value, str) or not value:
            raise AliasError(f"{where}: {field} is empty")
        values[field] = value
    reason = (reason or "").strip() if isinstance(reason, str) or reason is None else reason
    if not isinstance(reason, str):
        raise AliasError(f"{where}: reason must be text")
    problem = text_problem(reason, limit=_REASON_MAX) if reason else None
    if problem is not None:
        raise AliasError(f"{where}: reason: {problem}")
    return Alias(values["alias"], values["canonical"], reason)


def alias(alias_name: str, canonical: str, reason: str | None = None) -> Alias:
    """One alias from Python values, checked as a file row is."""
    return _alias(alias_name, canonical, reason, "alias")


def list_aliases(conn: Connection) -> list[Alias]:
    """Every alias, by canonical name then alias."""
    rows = conn.execute(
        select(ModelAlias.alias, ModelAlias.canonical, ModelAlias.reason).order_by(
            ModelAlias.canonical, ModelAlias.alias
        )
    )
    return [Alias(a, c, r or "") for a, c, r in rows]


def canonical_names(conn: Connection) -> dict[str, str]:
    """``{alias: canonical}`` for every alias (a name not in it is its own canonical)."""
    return {a: c for a, c in conn.execute(select(ModelAlias.alias, ModelAlias.canonical))}


def define_aliases(conn: Connection, items: Iterable[Alias]) -> int:
    """Store every alias, or none (see the module's rules). Returns how many were new or changed.

    Runs in the caller's transaction.
    """
    items = list(items)
    if not items:
        return 0
    batch: dict[str, Alias] = {}
    for a in items:
        if a.alias == a.canonical:
            raise AliasError(f"alias {a.alias!r} names itself as its canonical model")
        earlier = batch.get(a.alias)
        if earlier is not None and earlier.canonical != a.canonical:
            raise AliasError(
                f"alias {a.alias!r} is given two canonical models: {earlier.canonical!r} and {a.canonical!r}"
            )
        batch[a.alias] = a
    _known(conn, {n for a in batch.values() for n in (a.alias, a.canonical)})
    stored = {x.alias: x for x in list_aliases(conn)}
    after = {
        **{k: v.canonical for k, v in stored.items()},
        **{k: v.canonical for k, v in batch.items()},
    }
    for a in batch.values():
        if a.canonical in after:
            raise AliasError(
                f"{a.canonical!r} is itself an alias of {after[a.canonical]!r}: "
                f"alias {a.alias!r} to {after[a.canonical]!r} instead (no chains)"
            )
        pointing = sorted(k for k, v in after.items() if v == a.alias)
        if pointing:
            raise AliasError(
                f"{a.alias!r} is the canonical model of {', '.join(map(repr, pointing))}: "
                "it cannot also be an alias (no chains)"
            )
    for name, a in batch.items():
        kept = stored.get(name)
        if not a.reason and kept is not None and kept.canonical == a.canonical:
            batch[name] = kept  # the same alias again without a reason keeps the stored one
    changed = [a for a in batch.values() if stored.get(a.alias) != a]
    if changed:
        conn.execute(delete(ModelAlias).where(ModelAlias.alias.in_([a.alias for a in changed])))
        conn.execute(
            insert(ModelAlias),
            [{"alias": a.alias, "canonical": a.canonical, "reason": a.reason} for a in changed],
        )
    return len(changed)


def remove_aliases(conn: Connection, names: Iterable[str]) -> int:
    """Remove these aliases; an unknown one is an error and nothing is removed."""
    names = sorted(set(names))
    stored = set(canonical_names(conn))
    missing = [n for n in names if n not in stored]
    if missing:
        from arena.core.words import did_you_mean

        close = did_you_mean(missing[0], sorted(stored)) if len(missing) == 1 else []
        hint = f"did you mean {' or '.join(close)}?" if close else "see `arena models aliases`"
        raise AliasError(f"no alias {', '.join(map(repr, missing))} ({hint})")
    conn.execute(delete(ModelAlias).where(ModelAlias.alias.in_(names)))
    return len(names)


def _known(conn: Connection, names: set[str]) -> None:
    problem = unknown_models(conn, names)
    if problem is not None:
        raise AliasError(problem)
