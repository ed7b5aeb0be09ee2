"""Board keys: which battles a board rates and how, as one typed value.

A board is the latest snapshot of a :class:`BoardKey`: the battles of a
category and/or a source (neither: all battles), the comparable set it ranks
(1: the main board; ``arena rebuild --components separate`` writes 2, 3, ...)
and whether it is style-controlled. Every layer (rebuild, snapshots,
leaderboard, diff, compare, audit, publish and the site's file names) takes a
``BoardKey``; its text, stored in ``snapshots.board``, has one form:

``overall`` | ``category:C`` | ``source:S`` | ``category:C|source:S``,
then ``|component:N`` for N >= 2, then ``|style``.

Inside ``C`` and ``S`` the three characters that carry structure, ``%``, ``|``
and ``:``, are percent-encoded (``%25``, ``%7C``, ``%3A``; nothing else
changes, so ``category:math`` and unicode names read as before). A name can
therefore never end a field early: the category ``code|style`` is
``category:code%7Cstyle``, never the style-controlled board of ``code``
(``category:code|style``). :meth:`BoardKey.parse` accepts exactly the texts
:func:`str` produces, so the text is one-to-one with the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from arena.core.errors import ArenaError

__all__ = ["OVERALL", "BoardKey", "BoardKeyError"]

_ESCAPES = {"%": "%25", "|": "%7C", ":": "%3A"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
_ESCAPED = re.compile(r"[%|:]")
_UNESCAPED = re.compile(r"%(25|7C|3A)")
_COMPONENT = re.compile(r"component:([1-9][0-9]*)")


class BoardKeyError(ArenaError, ValueError):
    """Text that is not a board key (see :mod:`arena.boards.keys` for the form)."""


def _escape(name: str) -> str:
    return _ESCAPED.sub(lambda m: _ESCAPES[m.group(0)], name)


def _unescape(text: str) -> str:
    return _UNESCAPED.sub(lambda m: _UNESCAPES[m.group(0)], text)


@dataclass(frozen=True)
class BoardKey:
    """The identity of a board.

    Attributes
    ----------
    category, source : str or None
        The battles rated: those of the category and/or the source (``None``:
        no filter; an empty name means none too).
    component : int
        The comparable set ranked: 1 (the main board), or N >= 2 for the set
        with the N-th most battles (``--components separate``).
    style_controlled : bool
        The style-controlled board paired with the raw one.
    """

    category: str | None = None
    source: str | None = None
    component: int = 1
    style_controlled: bool = False

    def __post_init__(self) -> None:
        for name in ("category", "source"):
            if getattr(self, name) == "":
                object.__setattr__(self, name, None)
        if isinstance(self.component, bool) or not isinstance(self.component, int):
            raise BoardKeyError(f"component must be an integer, got {self.component!r}")
        if self.component < 1:
            raise BoardKeyError(f"component must be 1 or more, got {self.component}")

    def __str__(self) -> str:
        parts = []
        if self.category is not None:
            parts.append(f"category:{_escape(self.category)}")
        if self.source is not None:
            parts.append(f"source:{_escape(self.source)}")
        if not parts:
            parts.append("overall")
        if self.component > 1:
            parts.append(f"component:{self.component}")
        if self.style_controlled:
            parts.append("style")
        return "|".join(parts)

    @classmethod
    def parse(cls, text: str) -> BoardKey:
        """The key of a text written by ``str(key)``.

        Raises
        ------
        BoardKeyError
            Anything else (a field out of order, an unknown field, a stray
            ``%`` escape), so two texts never name one board.
        """
        fields = text.split("|")
        category = source = None
        component, style = 1, False
        if fields[-1] == "style":
            style = True
            fields.pop()
        if fields and (m := _COMPONENT.fullmatch(fields[-1])) and int(m.group(1)) > 1:
            component = int(m.group(1))
            fields.pop()
        if fields == ["overall"]:
            fields = []
        elif fields and fields[0].startswith("category:"):
            category = _unescape(fields.pop(0)[len("category:") :])
        if fields and fields[0].startswith("source:"):
            source = _unescape(fields.pop(0)[len("source:") :])
        key = None
        if not fields and category != "" and source != "":
            key = cls(category, source, component, style)
        if key is None or str(key) != text:
            raise BoardKeyError(
                f"not a board key: {text!r} (overall, category:NAME, source:NAME or both, then "
                "|component:N and |style; %, | and : in names written %25, %7C, %3A)"
            )
        return key

    @property
    def main(self) -> BoardKey:
        """The raw main board of this key (component and style dropped)."""
        return BoardKey(self.category, self.source)

    @property
    def raw(self) -> BoardKey:
        """The raw board of the same comparable set."""
        return replace(self, style_controlled=False)

    @property
    def paired(self) -> BoardKey:
        """The style-controlled board of a raw board, or the raw board of a style-controlled one."""
        return replace(self, style_controlled=not self.style_controlled)

    def with_component(self, number: int) -> BoardKey:
        return replace(self, component=number)

    def with_style(self, style_controlled: bool = True) -> BoardKey:
        return replace(self, style_controlled=style_controlled)

    @property
    def is_overall(self) -> bool:
        return self.category is None and self.source is None


#: The board of all battles.
OVERALL = BoardKey()
