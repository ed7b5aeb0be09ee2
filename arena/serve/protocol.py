"""HTTP/1.1 for ``arena serve`` with a limit on request heads (request line and headers).

uvicorn's httptools protocol buffers a request's head without bound, so a few
connections sending endless headers held every worker's memory and loop.  This
protocol counts the bytes of a head while it arrives and answers 431 (then
closes) once it passes ``max_header_bytes``, or once a head carries more than
``max_headers`` fields; the limits come from the server's
:class:`arena.serve.config.ServeConfig`.  Without httptools, uvicorn's h11
protocol is used with ``h11_max_incomplete_event_size`` (the CLI passes it),
which closes such a connection the same way.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from arena.serve.config import CONFIG_ENV, ServeConfig

__all__ = ["HeaderLimitedProtocol", "PROTOCOL"]

#: What ``uvicorn.run(http=...)`` is given to serve with this protocol.
PROTOCOL = "arena.serve.protocol:HeaderLimitedProtocol"


class _HeadRefused(Exception):
    """Raised from a parser callback to stop parsing a refused request."""


@cache
def _limits() -> tuple[int, int]:
    """The server's limits (the defaults when uvicorn was started without ``arena serve``)."""
    config = ServeConfig.from_env() if CONFIG_ENV in os.environ else ServeConfig(url="")
    return config.max_header_bytes, config.max_headers


def _answer_431(message: str) -> bytes:
    body = json.dumps({"error": {"message": message}}).encode()
    return (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
        b"content-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n"
        b"connection: close\r\n\r\n" + body
    )


class HeaderLimitedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, refusing request heads over the server's limits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._max_head_bytes, self._max_headers = _limits()
        #: bytes received since the current request's head began (while it is open)
        self._head_bytes = 0
        self._in_head = True
        self._refused = False

    def _refuse(self, message: str) -> None:
        self._refused = True
        self.logger.warning("refused a request from %s: %s", self.client, message)
        self.transport.write(_answer_431(message))
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        # counted before parsing, judged after: a chunk that completes the head
        # may also carry the body, which is not the head's
        if self._in_head and self._head_bytes > self._max_head_bytes and not self._refused:
            self._refuse(f"request line and headers over {self._max_head_bytes} bytes")

    def on_headers_complete(self) -> None:
        self._in_head = False
        if len(self.headers) > self._max_headers:
            self._refuse(f"more than {self._max_headers} header fields")
            raise _HeadRefused
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True
        self._head_bytes = 0

    def send_400_response(self, msg: str) -> None:
        if not self._refused:  # the 431 is the answer; the parser's error follows from it
            super().send_400_response(msg)
