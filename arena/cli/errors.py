"""Library errors on the command line: parameter names become flags, messages one line.

The library names options by their Python parameters (``rounds must be at
least 10``); :func:`flag_for` is the one mapping from a parameter to its flag,
shared by every command, so no command translates its own errors.
"""

from __future__ import annotations

import click

#: Parameters whose flag is not ``--`` + the name with dashes (Python keeps
#: builtins and plural names where the flag is singular or short).
FLAGS = {
    "include_hidden": "--all",
    "style_features": "--style-feature",
    "paths": "PATHS",
    "models": "MODELS",
    "old": "OLD NEW",
    "name": "NAME",
    "from_file": "--from",
    "store": "--no-store",
    "probes": "--probe",
    "map": "--map",
    "hidden": "--hide/--show",
    "power": "--power",
}


def flag_for(name: str) -> str:
    """The CLI spelling of library parameter ``name`` (``heatmap_top`` -> ``--heatmap-top``)."""
    return FLAGS.get(name) or "--" + name.replace("_", "-")


def as_click_error(exc: Exception) -> click.ClickException:
    """A user error of the library as a one-line ``Error: ...`` (flags, not parameter names).

    A lock held by another command gets the flag that waits longer (chosen by
    the error's type: no message is parsed).
    """
    from arena.api import LockHeld
    from arena.core.errors import OptionError

    if isinstance(exc, OptionError):
        return click.ClickException(exc.spelled(flag_for))
    if isinstance(exc, LockHeld):
        return click.ClickException(f"{exc}; {flag_for('wait')} SECONDS waits longer")
    return click.ClickException(str(exc))


__all__ = ["FLAGS", "as_click_error", "flag_for"]
