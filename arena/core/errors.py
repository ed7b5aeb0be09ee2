"""An error in one option value, named by its Python parameter.

The library says ``rounds must be at least 10``; the command line says
``--rounds must be at least 10`` by putting the flag where the parameter's
name stands (:func:`arena.cli.errors.flag_for`, one mapping for every
command), so no library message names a CLI flag.
"""

from __future__ import annotations

from collections.abc import Callable


class OptionError(ValueError):
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
        self.name = name
        self.template = template
        self.also = also
        super().__init__(self.spelled(lambda n: n))

    @classmethod
    def about(cls, name: str, message: str) -> OptionError:
        """``NAME: message`` for an error found while using the option (any text)."""
        return cls(name, "{name}: " + escape(message))

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


__all__ = ["OptionError", "check_at_least", "check_choice", "escape"]
