"""Keep the BLAS libraries to one thread while the engine works.

The engine's matrices are small (models x models) and its batches already run
in two worker threads or processes; OpenBLAS threads on top of that only spin
and contend -- a 100-model point fit measured 15 ms with one BLAS thread and up
to 90 ms when the BLAS threads of earlier work were still spinning.

:mod:`threadpoolctl` finds every loaded BLAS (NumPy's and SciPy's bundled
OpenBLAS, MKL, BLIS, ...) and sets its thread count; with no BLAS it finds
nothing to limit, and these helpers do nothing.  Limits nest: the previous
count is restored when the outermost block ends.  OpenBLAS has one
process-wide pool, so threadpoolctl lets only one Python thread limit it at a
time; a second thread that enters meanwhile runs under the first one's limit
until that ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache, wraps
from typing import ParamSpec, TypeVar

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread", "one_blas_thread", "set_blas_threads"]


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    # Scanning the loaded libraries takes ~2 ms: once, at the first fit, when
    # NumPy and SciPy (and so their BLAS) are already loaded.
    return ThreadpoolController()


def set_blas_threads(n: int) -> None:
    """Set the BLAS thread count for the rest of the process (worker processes)."""
    _controller().limit(limits=int(n), user_api="blas")


@contextmanager
def single_blas_thread() -> Iterator[None]:
    """Run the block with one BLAS thread; the previous count is restored after."""
    with _controller().limit(limits=1, user_api="blas"):
        yield


P = ParamSpec("P")
R = TypeVar("R")


def one_blas_thread(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator form of :func:`single_blas_thread`."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with single_blas_thread():
            return func(*args, **kwargs)

    return wrapper
