"""Category names people read: LMArena's keys (``if``, ``criteria.domain_knowledge``)
mapped to labels ("Instruction following", "Criterion: domain knowledge").

A default map lives here; ``arena categories label KEY "Name"`` stores an
override in the ``category_labels`` table, which wins over the default. A key
with neither gets a label made from its spelling ("my_topic" -> "My topic").
Labels are display text only: they never change a board key or a rating.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, select

from arena.core.errors import ArenaError
from arena.core.text import text_problem
from arena.core.words import did_you_mean, unknown
from arena.db.tables import battle_categories, categories, category_labels
from arena.store.derived import load_rules

#: Longest label stored (the column's width).
LABEL_MAX = 255

_CRIT = "Criterion"
#: LMArena's category keys (the tag columns of its exports and its leaderboard's
#: category names) and the names its leaderboard shows for them. The seven
#: ``criteria.*`` tags are single criteria of a prompt, not LMArena's "Hard
#: Prompts" (a prompt meeting at least 6 of them: :data:`arena.store.derived.HARD_PROMPTS`).
DEFAULT_LABELS: dict[str, str] = {
    "creative_writing": "Creative writing",
    "if": "Instruction following",
    "math": "Math",
    "coding": "Coding",
    "is_code": "Coding",
    "hard_6": "Hard Prompts",
    "hard_prompts": "Hard Prompts",
    "hard_english_6": "Hard Prompts (English)",
    "criteria.complexity": f"{_CRIT}: complexity",
    "criteria.creativity": f"{_CRIT}: creativity",
    "criteria.domain_knowledge": f"{_CRIT}: domain knowledge",
    "criteria.problem_solving": f"{_CRIT}: problem solving",
    "criteria.real_world": f"{_CRIT}: real world",
    "criteria.specificity": f"{_CRIT}: specificity",
    "criteria.technical_accuracy": f"{_CRIT}: technical accuracy",
    "long_user": "Long query",
    "long": "Long query",
    "multiturn": "Multi-turn",
    "no_tie": "Without ties",
    "no_short": "Without short queries",
    "no_refusal": "Without refusals",
    "english": "English",
    "chinese": "Chinese",
    "japanese": "Japanese",
    "korean": "Korean",
    "russian": "Russian",
    "german": "German",
    "french": "French",
    "spanish": "Spanish",
    "portuguese": "Portuguese",
    "italian": "Italian",
    "arabic": "Arabic",
    "vietnamese": "Vietnamese",
    "polish": "Polish",
    "dutch": "Dutch",
    "turkish": "Turkish",
    "indonesian": "Indonesian",
    "hindi": "Hindi",
}


class CategoryError(ArenaError, ValueError):
    """An unknown category key or an unusable label; the message is for the user."""


@dataclass(frozen=True)
class CategoryRecord:
    key: str
    label: str
    #: where the label comes from: "set" (stored override), "default" (the map above),
    #: "key" (made from the key's spelling)
    source: str
    battles: int
    #: a derived category's rule in words ("" for a tag of the data)
    rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "source": self.source,
            "battles": self.battles,
            "rule": self.rule,
        }


def spelled_label(key: str) -> str:
    """A readable label from a key's spelling: ``my_topic.sub`` -> ``My topic sub``."""
    words = " ".join(key.replace("_", " ").replace(".", " ").replace("-", " ").split())
    return (words[:1].upper() + words[1:]) if words else key


def label_for(key: str, overrides: Mapping[str, str] | None = None) -> str:
    """The label of one category key: stored override, else default, else spelled."""
    if overrides and key in overrides:
        return overrides[key]
    return DEFAULT_LABELS.get(key) or DEFAULT_LABELS.get(key.lower()) or spelled_label(key)


def stored_labels(conn: Connection) -> dict[str, str]:
    """The overrides set with ``arena categories label``, by key."""
    return dict(conn.execute(select(category_labels.c.name, category_labels.c.label)).all())


def category_records(conn: Connection) -> list[CategoryRecord]:
    """Every category in the store with its label and tagged battles, most battles first."""
    counts: dict[str, int] = dict(
        conn.execute(
            select(categories.c.name, func.count(battle_categories.c.battle_id))
            .select_from(categories)
            .outerjoin(battle_categories, battle_categories.c.category_id == categories.c.id)
            .group_by(categories.c.name)
        ).all()
    )
    stored = stored_labels(conn)
    rules = {r.key: r.describe() for r in load_rules(conn)}
    out = []
    for key, n in counts.items():
        source = "set" if key in stored else "default" if key in DEFAULT_LABELS else "key"
        out.append(CategoryRecord(key, label_for(key, stored), source, int(n), rules.get(key, "")))
    return sorted(out, key=lambda r: (-r.battles, r.key))


def resolve_category(conn: Connection, text: str) -> str:
    """The category key ``text`` names: a key, or a label as the site shows it,
    either in any case (``Math``, ``instruction following``, ``IF``).

    Raises :class:`CategoryError` with "did you mean" over keys and labels.
    """
    keys: list[str] = sorted(conn.execute(select(categories.c.name)).scalars())
    if text in keys:
        return text
    stored = stored_labels(conn)
    folded = text.casefold().strip()
    by_key = [k for k in keys if k.casefold() == folded]
    by_label = [k for k in keys if label_for(k, stored).casefold() == folded]
    for found in (by_key, by_label):
        if len(set(found)) == 1:
            return found[0]
        if len(set(found)) > 1:
            raise CategoryError(
                f"category {text!r} is ambiguous: it names {', '.join(sorted(set(found)))}; "
                "give the key"
            )
    labels = {label_for(k, stored): k for k in keys}
    close = did_you_mean(text, [*keys, *labels])
    # each close key once, with the label the site shows beside it
    found = list(dict.fromkeys(labels.get(c, c) if c not in keys else c for c in close))
    shown = [
        k if label_for(k, stored).casefold() == k.casefold() else f"{k} ({label_for(k, stored)})"
        for k in found
    ]
    parts = [f"unknown category {text!r}"]
    if shown:
        parts.append(f"did you mean {' or '.join(shown)}?")
    parts.append(f"known: {', '.join(keys)}" if keys else "there is no category yet")
    raise CategoryError("; ".join(parts))


def set_label(conn: Connection, key: str, label: str) -> str:
    """Store ``label`` for category ``key`` ("" removes the override); returns the label now shown.

    Raises :class:`CategoryError` for a key that is not a category in the store
    (with "did you mean") or a label that is too long or only spaces.
    """
    known = sorted(conn.execute(select(categories.c.name)).scalars())
    if key not in known:
        raise CategoryError(unknown("category", key, known, list_known=True))
    text = " ".join(label.split())
    if label and not text:
        raise CategoryError(f'label for {key!r} is only spaces; give a name or "" to reset it')
    problem = text_problem(text, limit=LABEL_MAX)
    if problem is not None:
        raise CategoryError(f"label for {key!r}: {problem}")
    conn.execute(delete(category_labels).where(category_labels.c.name == key))
    if text:
        conn.execute(category_labels.insert().values(name=key, label=text))
    return label_for(key, {key: text} if text else None)
