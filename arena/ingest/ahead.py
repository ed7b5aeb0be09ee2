"""Reading the next chunks of a file in a thread while the current one is written.

Parsing holds the GIL, so a thread gains only while the writer waits without
it: on PostgreSQL, for the server's work on each COPY and statement.  1M
rows side by side (load 3.7-4.2): flat CSV 13.9-14.3 -> 12.3-12.7 s of wall,
JSON lines 20.5-21.2 -> 20.1-20.3 s.  On SQLite, whose ``executemany`` holds
the GIL but for SQLite's own steps, the thread only cost (9.7-10.1 ->
10.9-11.1 s for the CSV, 16.0-19.0 -> 18.7-19.0 s for the JSON lines), so
the loader uses it for PostgreSQL only.  The chunks come out in the file's order, at most
``depth`` are read ahead (memory stays bounded), and an error that ended the
read is raised here when the chunks before it have been taken, as reading in
this thread would.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from typing import Any, TypeVar

__all__ = ["read_ahead"]

T = TypeVar("T")

_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def read_ahead(items: Iterator[T], *, depth: int = 2) -> Generator[T, None, None]:
    """``items``, produced by a thread up to ``depth`` ahead of the consumer."""
    box: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                box.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return  # the consumer stopped early
            put(_END)
        except BaseException as exc:  # noqa: BLE001 -- raised in the consumer's thread
            put(_Failed(exc))

    thread = threading.Thread(target=produce, name="arena-ingest-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item = box.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join()
