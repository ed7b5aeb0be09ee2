"""The one exception tree of arena, and the option error named by its parameter.

Every error a user can cause -- a bad option, a malformed file, a missing
snapshot, a refused publish, a lock held by another command -- is an
:class:`ArenaError`, so a caller catches one class (``except arena.ArenaError``)
and the command line turns each into one ``Error: ...`` line without a
traceback. Anything else that escapes is a bug in arena (or the environment
failing underneath: see :mod:`arena.db.errors`).

The library says ``rounds must be at least 10``; the command line says
``--rounds must be at least 10`` by putting the flag where the parameter's
name stands (:func:`arena.cli.errors.flag_for`, one mapping for every
command), so no library message names a CLI flag.
"""

from __future__ import annotations

from collections.abc import Callable


class ArenaError(Exception):
    """Root of every error a user can cause; ``str(error)`` is one line for them.

    Subclasses carry what the message names as data where there is one:
    ``parameter`` (an option, as spelled in Python), ``path``, ``line`` and
    ``field`` (of an input file); each is None where it does not apply.
    """

    parameter: str | None = None
    path: str | None = None
    line: int | None = None
    field: str | None = None


class ArgumentError(ArenaError, ValueError):
    """A bad argument to one of the library's functions (a value, a shape), named in
    the message; also a :class:`ValueError`, as Python's own argument errors are."""


class ArgumentTypeError(ArenaError, TypeError):
    """An argument of the wrong kind (an unknown keyword, a string for a number);
    also a :class:`TypeError`, as Python's own are."""


class OptionError(ArenaError, ValueError):
    """A bad value for parameter ``name``.

    Parameters
    ----------
    name : str
        The keyword parameter, as spelled in Python (``rounds``, ``heatmap_top``).
    template : str
        The message with ``{name}`` where the option is named, e.g.
        ``"{name} must be at least 10"``; ``str(error)`` fills in ``name``,
        the CLI fills in the flag.
    also : tuple of str
        Other parameters the message names, each as ``{parameter}`` in
        ``template`` (``"{name} must not be the {done} folder"``).
    """

    def __init__(self, name: str, template: str, *, also: tuple[str, ...] = ()) -> None:
        self.name = self.parameter = name
        self.template = template
        self.also = also
        super().__init__(self.spelled(lambda n: n))

    @classmethod
    def about(cls, name: str, message: str) -> OptionError:
        """``NAME: message`` for an error found while using the option (any text)."""
        return cls(name, "{name}: " + escape(message))

    def extended(self, more: str) -> OptionError:
        """The same error (same class and parameters) with ``more`` text at the end."""
        # not copy.copy: an exception copies by calling its class with ``args``
        longer = type(self).__new__(type(self))
        longer.__dict__.update(self.__dict__)
        longer.template = self.template + escape(more)
        longer.args = (longer.spelled(lambda n: n),)
        return longer

    def spelled(self, spell: Callable[[str], str]) -> str:
        """The message with every parameter it names spelled by ``spell`` (flags, say)."""
        return self.template.format(name=spell(self.name), **{n: spell(n) for n in self.also})


def escape(text: str) -> str:
    """``text`` safe inside a template (braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def check_at_least(name: str, value: float | None, low: float) -> None:
    """Raise :class:`OptionError` unless ``value`` is None or at least ``low``."""
    if value is not None and value < low:
        raise OptionError(name, f"{{name}} must be at least {low:g}")


def check_choice(name: str, value: str, choices: tuple[str, ...] | list[str]) -> None:
    """Raise :class:`OptionError` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise OptionError(
            name, "{name} must be one of " + escape(f"{', '.join(choices)} (got {value!r})")
        )


__all__ = [
    "ArenaError",
    "ArgumentError",
    "ArgumentTypeError",
    "OptionError",
    "check_at_least",
    "check_choice",
    "escape",
]
