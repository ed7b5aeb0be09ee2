"""Worker processes that end with their parent (``arena serve --workers N``).

uvicorn's supervisor starts the workers and restarts any that dies; but a
``kill -9`` of the supervisor left the workers serving under PID 1, holding
the port, so a restart failed with "Address already in use".  Each worker
therefore binds its life to the supervisor's:

* on Linux the kernel sends it SIGTERM when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``), and uvicorn drains as on any SIGTERM, so what
  was acknowledged is committed;
* everywhere, a daemon thread polls the parent's process id once a second and
  sends the same SIGTERM when the parent is gone (also covering a parent that
  died before the ``prctl`` call).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading

__all__ = ["end_with_parent"]

#: From <linux/prctl.h>.
PR_SET_PDEATHSIG = 1
#: Seconds between two looks at the parent.
POLL_SECONDS = 1.0


def _linux_parent_death_signal(signum: int) -> bool:
    """Ask the kernel for ``signum`` when the parent dies; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return bool(libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0)  # ctypes: an int


def _watch(parent: int) -> None:
    stop = threading.Event()
    while not stop.wait(POLL_SECONDS):
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def end_with_parent(parent: int) -> None:
    """Make this process stop (SIGTERM) when process ``parent`` exits."""
    _linux_parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the kernel was asked
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=_watch, args=(parent,), name="arena-serve-parent", daemon=True).start()
