"""Keep NumPy's OpenBLAS to one thread while the engine works.

The engine's matrices are small (models x models) and its batches already run
in two worker threads or processes; OpenBLAS threads on top of that only spin
and contend -- a 100-model point fit measured 15 ms with one BLAS thread and up
to 90 ms when the BLAS threads of earlier work were still spinning.  Best
effort: uses the setter exported by the OpenBLAS bundled with NumPy wheels,
and does nothing if there is none (another BLAS, or a system build).
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from contextlib import contextmanager
from functools import lru_cache, wraps

import numpy as np

__all__ = ["single_blas_thread", "one_blas_thread", "set_blas_threads"]

_LOCK = threading.Lock()
_DEPTH = 0
_SAVED = 0


@lru_cache(maxsize=1)
def _openblas():
    """(get, set) functions of NumPy's bundled OpenBLAS, or None."""
    libdir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libdir, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    get.restype = ctypes.c_int
                    put.argtypes = [ctypes.c_int]
                    return get, put
    return None


def set_blas_threads(n: int) -> None:
    """Set NumPy's OpenBLAS thread count (no-op without a bundled OpenBLAS)."""
    funcs = _openblas()
    if funcs is not None:
        funcs[1](int(n))


@contextmanager
def single_blas_thread():
    """Run the block with one OpenBLAS thread; the previous count is restored after."""
    global _DEPTH, _SAVED
    funcs = _openblas()
    if funcs is None:
        yield
        return
    with _LOCK:
        if _DEPTH == 0:
            _SAVED = funcs[0]()
            funcs[1](1)
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                funcs[1](_SAVED)


def one_blas_thread(func):
    """Decorator form of :func:`single_blas_thread`."""

    @wraps(func)
    def wrapper(*args, **kwargs):
        with single_blas_thread():
            return func(*args, **kwargs)

    return wrapper
