"""Progress bars on stderr, hidden with -q or when stderr is not a terminal."""

from __future__ import annotations

import sys
from contextlib import contextmanager

import click


@contextmanager
def progress_bar(total: int, label: str, *, quiet: bool):
    """Yield an ``update(done)`` callable taking the absolute amount done."""
    if quiet or not sys.stderr.isatty() or total <= 0:
        yield lambda done: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        state = {"done": 0}

        def update(done: int) -> None:
            bar.update(max(0, done - state["done"]))
            state["done"] = max(done, state["done"])

        yield update
