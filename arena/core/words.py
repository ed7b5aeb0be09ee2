"""Naming things in messages: model lists and "did you mean" suggestions.

Messages name models by name, never by an internal index, and a long list
stays readable: at most :data:`MAX_NAMED` names, then "and N more".
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = ["MAX_NAMED", "did_you_mean", "name_list", "too_many_boards", "unknown"]

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
    """The refusal of ``--max-boards`` (rebuild, publish, nightly)."""
    return (
        f"{n:,} boards (overall and one per category), more than --max-boards {limit:,}: "
        "does a category column hold something else, such as prompt ids? "
        "(`arena categories` lists them); give a larger --max-boards to build them anyway"
    )
