"""Derived categories: a category made from other categories by a rule over tags.

A rule says "a battle belongs to KEY when it carries at least K of these
tags" (``arena categories derive KEY --tags a,b,c --at-least K``). "All of"
is K = the number of tags, "any of" is K = 1. LMArena's "Hard Prompts" is one
such rule: at least 6 of the 7 ``criteria.*`` tags (:data:`HARD_PROMPTS`).

A derived category is stored like a tag: its links sit in ``battle_categories``
and its cells in the count table, so boards, rebuilds and ``--all-categories``
treat it as any other category. The links are written

* for the battles already stored, when the rule is defined or changed
  (:func:`define`, one INSERT ... SELECT over the tags' links, then the count
  table's cells of that category), and
* for new battles, by the ingest that stores them (:func:`derive_names`,
  :func:`derive_positions`), in the same transaction as the battles.

The rule itself is kept (table ``derived_categories``) and shown: ``arena
categories`` lists it and the published board states it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from arena.core.errors import ArenaError, OptionError, escape
from arena.db.tables import derived_categories

#: Longest note stored with a rule.
NOTE_MAX = 1024

#: LMArena's seven hard-prompt criteria (the ``criteria.*`` tags of its exports).
HARD_CRITERIA = (
    "criteria.complexity",
    "criteria.creativity",
    "criteria.domain_knowledge",
    "criteria.problem_solving",
    "criteria.real_world",
    "criteria.specificity",
    "criteria.technical_accuracy",
)


class DerivedError(ArenaError, ValueError):
    """An unusable rule (no tags, K out of range, a name taken by a tag); for the user."""


class DerivedOptionError(DerivedError, OptionError):
    """A bad rule option, named by its parameter (the CLI names the flag)."""


@dataclass(frozen=True)
class Rule:
    """Battles carrying at least ``at_least`` of ``tags`` belong to category ``key``."""

    key: str
    tags: tuple[str, ...]
    at_least: int
    note: str = ""

    def describe(self) -> str:
        """``at least 6 of the 7 tags criteria.complexity, ...`` (the rule in words)."""
        n = len(self.tags)
        if self.at_least == n and n > 1:
            head = f"all {n} of the tags"
        elif self.at_least == 1 and n > 1:
            head = f"any of the {n} tags"
        elif n == 1:
            head = "the tag"
        else:
            head = f"at least {self.at_least} of the {n} tags"
        return f"{head} {', '.join(self.tags)}"

    def short(self) -> str:
        """The rule in a few words: tags sharing a prefix are named by it
        (``at least 6 of the 7 criteria.* tags``)."""
        n = len(self.tags)
        head = os.path.commonprefix(list(self.tags))
        head = head[: head.rfind(".") + 1] if "." in head else ""
        which = f"{head}* tags" if head and n > 2 else ", ".join(self.tags)
        if n == 1:
            return f"the tag {which}"
        if self.at_least == 1:
            return f"any of the {n} {which}" if head and n > 2 else f"any of {which}"
        if self.at_least == n:
            return f"all {n} {which}" if head and n > 2 else f"all of {which}"
        return (
            f"at least {self.at_least} of the {n} {which}"
            if head and n > 2
            else (f"at least {self.at_least} of {which}")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "tags": list(self.tags),
            "at_least": self.at_least,
            "note": self.note,
        }


#: LMArena's "Hard Prompts" category: a prompt meeting at least 6 of the 7 criteria.
HARD_PROMPTS = Rule(
    key="hard_prompts",
    tags=HARD_CRITERIA,
    at_least=6,
    note="LMArena's rule (LMArena blog, 'Introducing Hard Prompts Category', 2024)",
)


def make_rule(key: str, tags: Iterable[str], at_least: int | None, note: str = "") -> Rule:
    """A checked rule: tags de-duplicated and sorted, ``at_least`` in 1..len(tags)
    (``None``: all of them)."""
    key = key.strip()
    if not key:
        raise DerivedError("a derived category needs a name")
    names = sorted({t.strip() for t in tags if t.strip()})
    if not names:
        raise DerivedOptionError(
            "tags", "derived category " + escape(repr(key)) + ": give at least one tag in {name}"
        )
    if key in names:
        raise DerivedError(f"derived category {key!r} cannot be made from itself")
    k = len(names) if at_least is None else at_least
    if not 1 <= k <= len(names):
        raise DerivedOptionError(
            "at_least",
            "derived category "
            + escape(repr(key))
            + f": {{name}} must be between 1 and {len(names)} (the number of tags), not {k}",
        )
    note = " ".join(note.split())
    if len(note) > NOTE_MAX:
        raise DerivedError(f"derived category {key!r}: the note is longer than {NOTE_MAX}")
    return Rule(key=key, tags=tuple(names), at_least=k, note=note)


def load_rules(conn: Connection) -> list[Rule]:
    """Every stored rule, by key."""
    rows = conn.execute(
        select(
            derived_categories.c.name,
            derived_categories.c.tags,
            derived_categories.c.at_least,
            derived_categories.c.note,
        ).order_by(derived_categories.c.name)
    ).all()
    return [Rule(name, tuple(json.loads(tags)), int(k), note or "") for name, tags, k, note in rows]


def derive_names(rules: Sequence[Rule], categories: Sequence[str]) -> list[str]:
    """The derived categories one battle with tags ``categories`` belongs to."""
    if not rules or not categories:
        return []
    have = set(categories)
    # a battle whose data already carries the key keeps it once (the data's tag)
    return [
        r.key for r in rules if r.key not in have and sum(t in have for t in r.tags) >= r.at_least
    ]


def derive_positions(
    rules: Sequence[Rule], tags: Sequence[tuple[str, Sequence[int]]]
) -> list[tuple[str, list[int]]]:
    """Column form of :func:`derive_names`: ``tags`` is (tag, positions it tags) of one
    block; returns (derived key, positions) for each rule that any position meets."""
    out = []
    by_name = dict(tags)
    for rule in rules:
        if rule.key in by_name:
            continue  # the data tags it itself: its tag wins (no link twice)
        hits: Counter[int] = Counter()
        for tag in rule.tags:
            hits.update(by_name.get(tag, ()))
        positions = sorted(p for p, n in hits.items() if n >= rule.at_least)
        if positions:
            out.append((rule.key, positions))
    return out
