"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (stdlib only).

Chromium reads protocol commands from file descriptor 3 and writes replies and
events to descriptor 4, each message a JSON object ended by a NUL byte. That is
all a test needs: no websocket library, no port to pick, no Node driver.

    with Browser(chromium_path) as browser:
        page = browser.new_page()
        page.call("Page.navigate", url=...)
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["Browser", "Page", "CDPError"]

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
)


class CDPError(RuntimeError):
    pass


def _high(fd: int) -> int:
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


class Browser:
    """One headless Chromium driven through the DevTools pipe."""

    def __init__(self, executable: str, profile: Path, timeout: float = 30.0) -> None:
        self.timeout = timeout
        # Pipe ends numbered 10 and up, so the shell's redirections to 3 and 4 below
        # cannot clobber one of them.
        to_child_r, self._to_child = (_high(fd) for fd in os.pipe())
        self._from_child, from_child_w = (_high(fd) for fd in os.pipe())
        # bash (dash refuses descriptors above 9) moves the two pipe ends to the descriptors Chromium expects (3, 4).
        wrapper = (
            f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w} {to_child_r}<&- {from_child_w}>&-'
        )
        self.proc = subprocess.Popen(
            [
                "bash",
                "-c",
                wrapper,
                executable,
                *CHROMIUM_FLAGS,
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []

    # -- transport
    def _send(self, msg: dict) -> None:
        data = json.dumps(msg).encode("utf-8") + b"\0"
        while data:
            data = data[os.write(self._to_child, data) :]

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("timed out waiting for Chromium")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise CDPError(f"Chromium closed the pipe; stderr:\n{self._stderr_tail()}")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def _stderr_tail(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read().decode("utf-8", "replace")[-2000:]

    def call(self, method: str, session: str | None = None, **params: Any) -> dict:
        """Send one command and wait for its reply; events that arrive meanwhile are kept."""
        self._next_id += 1
        msg_id = self._next_id
        msg: dict = {"id": msg_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self._send(msg)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str, session: str | None, since: int) -> dict:
        """The first event ``method`` of ``session`` at or after index ``since`` of events."""
        deadline = time.monotonic() + self.timeout
        while True:
            for ev in self.events[since:]:
                if ev["method"] == method and ev.get("sessionId") == session:
                    return ev
            since = len(self.events)
            self.events.append(self._read_message(deadline))

    def new_page(self) -> Page:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log"):
            page.call(f"{domain}.enable")
        return page

    def close(self) -> None:
        try:
            self._send({"id": 0, "method": "Browser.close", "params": {}})
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self._to_child)
            os.close(self._from_child)
            self.proc.stderr.close()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """One tab: commands go to its session; its events are read from the browser's list."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def call(self, method: str, **params: Any) -> dict:
        return self.browser.call(method, self.session, **params)

    def navigate(self, url: str) -> int:
        """Load ``url`` and wait for its load event; returns the event index it started at."""
        since = len(self.browser.events)
        reply = self.call("Page.navigate", url=url)
        if reply.get("errorText"):
            raise CDPError(f"navigation to {url} failed: {reply['errorText']}")
        self.browser.wait_for("Page.loadEventFired", self.session, since)
        return since

    def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        reply = self.call(
            "Runtime.evaluate",
            expression=expression,
            returnByValue=True,
            awaitPromise=await_promise,
        )
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CDPError(f"script failed: {text}")
        return reply["result"].get("value")

    def errors_since(self, since: int) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors of this page."""
        out = []
        for ev in self.browser.events[since:]:
            if ev.get("sessionId") != self.session:
                continue
            p = ev.get("params", {})
            if ev["method"] == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(
                    "uncaught: " + (d.get("exception", {}).get("description") or d.get("text"))
                )
            elif ev["method"] == "Runtime.consoleAPICalled" and p.get("type") in (
                "error",
                "assert",
            ):
                out.append(
                    "console.error: "
                    + " ".join(str(a.get("value", a.get("description"))) for a in p["args"])
                )
            elif ev["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
                e = p["entry"]
                out.append(f"log ({e['source']}): {e['text']} {e.get('url', '')}".strip())
        return out
