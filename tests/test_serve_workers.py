"""`arena serve --workers N`: the workers end with their supervisor, even after its kill -9.

Before, a kill -9 of the supervisor left both workers serving under PID 1 and
holding the port, so a restart failed with "Address already in use".
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="arena[serve] / the test extra installs httpx")
pytest.importorskip("fastapi", reason="arena[serve] installs fastapi")

from tests.helpers.postgres import pg_schema  # noqa: E402
from tests.helpers.serve import free_port, prepare, start, stop  # noqa: E402

pytestmark = pytest.mark.slow  # real server processes

#: Seconds the workers may take to drain and exit once their supervisor is gone.
EXIT_SECONDS = 20


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _running(pid: int) -> bool:
    """Alive and not a zombie (an exited process not yet reaped by its new parent)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers in /proc (Linux)")
def test_workers_end_when_their_supervisor_is_killed(tmp_path):
    urls = pg_schema()  # --workers > 1 needs PostgreSQL
    url = next(urls)
    try:
        prepare(url, tmp_path)
        port = free_port()
        proc, base = start(url, "--workers", "2", port=port)
        try:
            workers = _children(proc.pid)
            assert len(workers) >= 2, workers
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            deadline = time.monotonic() + EXIT_SECONDS
            while any(_running(w) for w in workers) and time.monotonic() < deadline:
                time.sleep(0.2)
            alive = [w for w in workers if _running(w)]
            for pid in alive:  # leave nothing behind, then fail
                os.kill(pid, signal.SIGKILL)
            assert alive == [], f"workers {alive} outlived their supervisor's kill -9"
            # the port is free again: the same command starts
            again, _ = start(url, "--workers", "2", port=port)
            stop(again)
        finally:
            stop(proc)
    finally:
        next(urls, None)
