"""Naming things in messages and tables: model lists, "did you mean" suggestions, board warnings
said once, and the flag words that the page and the command line share.

Messages name models by name, never by an internal index, and a long list
stays readable: at most :data:`MAX_NAMED` names, then "and N more".
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

__all__ = [
    "COLUMN_WORDS",
    "FLAG_WORDS",
    "MAX_NAMED",
    "board_warnings",
    "column_word",
    "did_you_mean",
    "flag_legend",
    "flag_word",
    "name_list",
    "too_many_boards",
    "unknown",
]

#: Names spelled out in one message before "and N more".
MAX_NAMED = 10


def name_list(names: Iterable[str], *, limit: int = MAX_NAMED) -> str:
    """``"a, b and c"``; past ``limit`` names, ``"a, b, ... and 7 more"``.

    Parameters
    ----------
    names : iterable of str
        In the order they should appear.
    limit : int
        Names spelled out at most.
    """
    names = list(names)
    if len(names) <= limit:
        if len(names) <= 1:
            return "".join(names)
        return f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"


def did_you_mean(name: str, known: Iterable[str], *, n: int = 3) -> list[str]:
    """Up to ``n`` known names close to ``name`` (case-insensitive, then by prefix)."""
    known = list(known)
    lower = {k.lower(): k for k in known}
    hits = difflib.get_close_matches(name.lower(), list(lower), n=n, cutoff=0.6)
    out = [lower[h] for h in hits]
    if len(out) < n:
        # "o3" should find "o3-2025-04-16": a prefix is a strong hint difflib scores low
        out += [k for k in known if k.lower().startswith(name.lower()) and k not in out]
    return out[:n]


def unknown(what: str, name: str, known: Sequence[str], *, list_known: bool = False) -> str:
    """``unknown model 'o3'; did you mean o3-2025-04-16?``, with the known names if asked.

    Parameters
    ----------
    what : str
        ``"model"``, ``"category"``, ...
    name : str
        What the user typed.
    known : sequence of str
    list_known : bool
        Always list the known names (short vocabularies such as categories).
    """
    parts = [f"unknown {what} {name!r}"]
    close = did_you_mean(name, known)
    if close:
        parts.append(f"did you mean {' or '.join(close)}?")
    if list_known or not close:
        parts.append(f"known: {', '.join(known)}" if known else f"there is no {what} yet")
    return "; ".join(parts)


def too_many_boards(n: int, limit: int) -> str:
    """The refusal of ``max_boards`` (rebuild, publish, nightly): an
    :class:`~arena.core.errors.OptionError` template naming it as ``{name}``."""
    return (
        f"{n:,} boards (overall and one per category), more than {{name}} {limit:,}: "
        "does a category column hold something else, such as prompt ids? "
        "(`arena categories` lists them); give a larger {name} to build them anyway"
    )


#: A count at the start of a sentence ("11 bootstrap rounds had ..."): the only number
#: that may differ between boards whose warnings are said as one.
_LEADING_COUNT = re.compile(r"^(\d+) (.*)$", re.DOTALL)


def board_warnings(notes: Iterable[tuple[str, str]]) -> list[str]:
    """Each board warning said once: a sentence that several boards raise names them all.

    A rebuild of every category repeats the same sentence on board after board (the
    same thin model, bootstrap rounds fitted with the prior); a user should read it once,
    with the boards it concerns. Sentences that differ only in a leading count are said
    once with the range and each board's own count.

    Parameters
    ----------
    notes : iterable of (board, sentence)
        In the order the boards were built; the order of first appearance is kept.

    Returns
    -------
    list of str
        ``"board: sentence"`` for a sentence only one board raises, else
        ``"sentence (on N boards: a, b and c)"`` or
        ``"5 to 20 rest (on N boards: a 5, b 20)"``.
    """
    groups: dict[str, list[tuple[str, str, int | None]]] = {}
    for board, sentence in notes:
        m = _LEADING_COUNT.match(sentence)
        shape, n = (m.group(2), int(m.group(1))) if m else (sentence, None)
        groups.setdefault(shape, []).append((board, sentence, n))
    out = []
    for shape, items in groups.items():
        boards = [b for b, _, _ in items]
        if len(items) == 1:
            out.append(f"{boards[0]}: {items[0][1]}")
        elif len({s for _, s, _ in items}) == 1:
            out.append(f"{items[0][1]} (on {len(items)} boards: {name_list(boards)})")
        else:
            counts = [n for _, _, n in items if n is not None]
            each = name_list(f"{b} {n}" for b, _, n in items)
            out.append(f"{min(counts)} to {max(counts)} {shape} (on {len(items)} boards: {each})")
    return out


#: Every flag token a snapshot row may carry (arena/engine/fitting/graph.py, board.py, rate.py,
#: boards/write.py), as the short word the page and the command line's tables show, and a
#: legend sentence. JSON and CSV keep the tokens (stable machine keys).
FLAG_WORDS: dict[str, tuple[str, str]] = {
    "few_battles": ("few battles", "too few battles to rank it; its interval is wide"),
    "no_battles": ("no battles", "no battles at all on this board"),
    "disconnected": (
        "not comparable",
        "never met the ranked models, directly or through others: no rating on this scale",
    ),
    "no_mle": (
        "no finite rating",
        "its wins and losses do not pin a finite rating (it never won, or never lost)",
    ),
    "never_won": ("never won", "lost (or tied) every battle"),
    "never_lost": ("never lost", "won (or tied) every battle"),
    "hidden": ("hidden", "hidden by the site owner; its battles still count"),
    "no_style": (
        "no style metadata",
        "none of its battles carries style metadata, so the style-controlled fit cannot rate it",
    ),
}


def flag_word(token: str) -> str:
    """The word for a flag token (``few_battles`` -> ``few battles``)."""
    known = FLAG_WORDS.get(token)
    return known[0] if known else token.replace("_", " ")


def flag_legend(tokens: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(word, meaning) for each distinct flag in ``tokens``, in the order of FLAG_WORDS."""
    seen = set(tokens)
    known = [(w, m) for t, (w, m) in FLAG_WORDS.items() if t in seen]
    other = [
        (flag_word(t), f"marked \u201c{t}\u201d by the rating run (no description known)")
        for t in sorted(seen - set(FLAG_WORDS))
    ]
    return tuple(known + other)


#: Column headers of the command line's tables whose key is not already a word; any
#: other key is shown with its underscores as spaces (``sample_rows`` -> ``sample rows``).
#: JSON and CSV keep the keys.
COLUMN_WORDS: dict[str, str] = {
    "model_a": "model A",
    "model_b": "model B",
    "created_at": "created",
    "revoked_at": "revoked",
    "rank_ub": "best rank",
    "rank_lb": "worst rank",
    "d_rating": "rating change",
    "p_reference": "P(reference)",
    "p_candidate": "P(candidate)",
    "pvalue": "p-value",
    "p_adjusted": "adjusted p",
    "bt_pvalue": "BT p-value",
    "fisher_pvalue": "Fisher p-value",
    "fastchat_log_score": "FastChat log score",
    "se": "SE",
    "se_discrimination": "SE discrimination",
    "se_difficulty": "SE difficulty",
}


def column_word(key: str) -> str:
    """The header a command line table shows for the column ``key``."""
    return COLUMN_WORDS.get(key, key.replace("_", " "))
