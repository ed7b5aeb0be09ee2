"""Progress on stderr, hidden with -q or when stderr is not a terminal.

Results go to stdout; progress never does, so piping a command's output stays
clean and a terminal is never silent through a long phase.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import contextmanager

import click


def _shown(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


def phase_reporter(*, quiet: bool) -> Callable[[str], None]:
    """A ``progress(message)`` callback printing each phase with the time since the start.

    Library functions (``rebuild``, ``publish_site``, ...) call it as each
    phase begins or ends, e.g. ``[  2.1s] bootstrap overall: 1000 rounds``.
    """
    if not _shown(quiet):
        return lambda message: None
    started = time.perf_counter()

    def say(message: str) -> None:
        click.echo(f"[{time.perf_counter() - started:6.1f}s] {message}", err=True)

    return say


@contextmanager
def file_progress(*, quiet: bool):
    """Yield a ``progress(file, done, total)`` callback: one bar per file, as files are read.

    For :meth:`arena.api.Arena.ingest`, which reads several files in one call.
    """
    if not _shown(quiet):
        yield lambda file, done, total: None
        return
    state: dict = {"file": None, "bar": None, "done": 0}

    def close() -> None:
        if state["bar"] is not None:
            state["bar"].render_finish()
            state["bar"] = None

    def update(file: str, done: int, total: int) -> None:
        if file != state["file"]:
            close()
            state.update(file=file, done=0)
            if total > 0:
                import os

                state["bar"] = click.progressbar(
                    length=total, label=f"ingest {os.path.basename(file)}", file=sys.stderr
                )
                state["bar"].render_progress()
        if state["bar"] is not None:
            state["bar"].update(max(0, done - state["done"]))
            state["done"] = max(done, state["done"])

    try:
        yield update
    finally:
        close()
