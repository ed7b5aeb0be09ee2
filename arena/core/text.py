"""The rule for stored text: what a name, id, label or annotation may contain.

Every text field arena stores (model names, battle ids, judges, questions,
categories, sources, labels, model annotations) follows one rule, so that the
two database engines store the same thing and nothing that looks like another
value gets in: valid Unicode text (no lone surrogates, which a JSON ``\\ud800``
escape can produce and neither engine can store), no NUL, no control
characters (C0, C1 such as U+0085), no invisible format characters (zero-width
characters, bidi overrides such as U+202E, BOM) and no line or paragraph
separators.  Lengths are checked by the caller against the column's width.
"""

from __future__ import annotations

import unicodedata

__all__ = [
    "FORBIDDEN_CATEGORIES",
    "bad_character",
    "describe_character",
    "shown",
    "text_problem",
]

#: Unicode categories never allowed in stored text: controls (Cc), format
#: characters (Cf), line/paragraph separators (Zl, Zp) and surrogates (Cs).
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


#: Names of the controls met most (``unicodedata.name`` has none for controls).
_CONTROL_NAMES = {
    "\x00": "NUL",
    "\t": "TAB",
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
    "\x85": "NEXT LINE",
}


def bad_character(value: str) -> str | None:
    """The first forbidden character of ``value``, or None.

    ``str.isprintable`` is true only for text without any character of those
    categories (it also refuses spaces other than U+0020 and unassigned code
    points, which the loop then allows), so the common case costs one C call.
    """
    if value.isprintable():
        return None
    for ch in value:
        if unicodedata.category(ch) in FORBIDDEN_CATEGORIES:
            return ch
    return None


def shown(text: str) -> str:
    """``text`` safe to print on one line of a terminal, a log or a file: every character
    of the forbidden categories (a newline that would forge a log line, an escape
    sequence that would drive the terminal, a bidi override) as a ``\\xNN`` or
    ``\\uNNNN`` escape; anything else unchanged."""
    if text.isprintable():
        return text
    return "".join(
        (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        if unicodedata.category(ch) in FORBIDDEN_CATEGORIES
        else ch
        for ch in text
    )


def describe_character(ch: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE)``; a lone surrogate or control by its kind."""
    kind = unicodedata.category(ch)
    if kind == "Cs":
        name = "a lone surrogate, not valid Unicode text"
    else:
        name = unicodedata.name(ch, "") or _CONTROL_NAMES.get(ch, "a control character")
    return f"U+{ord(ch):04X} ({name})"


def text_problem(value: str, *, limit: int) -> str | None:
    """Why ``value`` may not be stored (a forbidden character, too long), or None."""
    ch = bad_character(value)
    if ch is not None:
        return (
            f"contains {describe_character(ch)} at character {value.index(ch) + 1}, "
            "a control, invisible format character or lone surrogate"
        )
    if len(value) > limit:
        return f"longer than {limit} characters"
    return None
