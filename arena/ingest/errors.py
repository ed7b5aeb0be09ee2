"""The field-level error of one input record."""

from __future__ import annotations

from arena.core.errors import ArenaError


class RowError(ArenaError):
    """A malformed record: which field, and what is wrong with it."""

    field: str

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"field {field!r}: {message}")
        self.field = field
