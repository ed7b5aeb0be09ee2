"""The published page in a real browser: headless Chromium from disk (file://).

Checks at phone (390 px) and desktop (1280 px) widths that the page renders
(non-trivial screenshots), that the rendered DOM holds the table rows and the
charts, and that the browser logs no console errors. Needs Debian's
``chromium`` package; CI: ``apt-get update && apt-get install -y
--no-install-recommends chromium fonts-liberation`` (without a font the text would not
render, so the font is named explicitly).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from arena.publish import publish_site
from arena.publish.context import slug
from tests.publish_fixtures import build_site_db
from tests.test_publish import Node, _Builder

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None
)


def chromium(args: list[str], profile: Path, timeout: int = 120) -> subprocess.CompletedProcess:
    if CHROMIUM is None:
        pytest.skip(
            "CHROMIUM NOT INSTALLED: browser test skipped. Install it with "
            "`apt-get update && apt-get install -y --no-install-recommends chromium fonts-liberation` "
            "(CI must install it; see .ci/run)"
        )
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def console_errors(stderr: str) -> list[str]:
    # The pages have no scripts, so any console line at all means something went wrong
    # (Chromium logs uncaught errors and console.error as "INFO:CONSOLE").
    return [line for line in stderr.splitlines() if "Uncaught" in line or ":CONSOLE" in line]


def png_facts(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values of the decoded image data)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    idat, pos = b"", 8
    while pos < len(data):
        length = struct.unpack(">I", data[pos : pos + 4])[0]
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


@pytest.fixture
def published(engine, tmp_path):
    build_site_db(engine)
    out = tmp_path / "site"
    report = publish_site(engine, out, attribution="Synthetic test data")
    return out, report


@pytest.mark.parametrize("width", [390, 1280])
def test_screenshot_at_width(published, tmp_path, width):
    out, _ = published
    shot = tmp_path / f"index-{width}.png"
    res = chromium(
        [f"--screenshot={shot}", f"--window-size={width},2200", (out / "index.html").as_uri()],
        tmp_path / "profile",
    )
    assert shot.is_file(), f"no screenshot; chromium said:\n{res.stderr[-2000:]}"
    w, h, distinct = png_facts(shot)
    assert (w, h) == (width, 2200)
    # A blank or error page has a handful of byte values; text, bands and charts many.
    assert distinct > 60, f"screenshot looks empty ({distinct} distinct byte values)"
    assert shot.stat().st_size > 20_000
    assert console_errors(res.stderr) == []
    keep = os.environ.get("ARENA_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)


def rendered_dom(url: str, profile: Path) -> tuple[Node, str]:
    res = chromium(["--dump-dom", "--window-size=1280,2000", url], profile)
    assert "<table" in res.stdout, f"no DOM dumped; chromium said:\n{res.stderr[-2000:]}"
    b = _Builder()
    b.feed(res.stdout)
    return b.root, res.stderr


def test_rendered_dom_has_table_and_charts(published, tmp_path):
    out, report = published
    dom, stderr = rendered_dom((out / "index.html").as_uri(), tmp_path / "profile")
    assert console_errors(stderr) == []
    table = dom.find("table", "board")
    rows = [
        tr
        for tr in table.find_all("tr")
        if tr.find("th") is not None and tr.find("th").attrs.get("scope") == "row"
    ]
    assert len(rows) == report.visible_models == 13
    names = {tr.find("th").text() for tr in rows}
    assert "<script>alert(1)</script>" in names  # text, not an executed script
    assert dom.find("script") is None
    bars = [s for s in dom.find_all("svg", "bar")]
    assert len(bars) == 13
    assert len(list(dom.find_all("svg", "chart"))) == 4
    assert "Synthetic test data" in dom.find("footer").text()

    page = out / "models" / f"{slug('../../etc/passwd')}.html"
    dom, stderr = rendered_dom(page.as_uri(), tmp_path / "profile2")
    assert console_errors(stderr) == []
    assert dom.find("h1").text() == "../../etc/passwd"
    assert dom.find("svg", "history") is not None
    assert dom.find("table", "record") is not None


def test_console_error_detection_is_not_vacuous(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><title>x</title><table><tr><td>1</td></tr></table>"
        "<script>throw new Error('boom')</script>",
        encoding="utf-8",
    )
    res = chromium(["--dump-dom", page.as_uri()], tmp_path / "profile")
    assert any("boom" in line for line in console_errors(res.stderr)), res.stderr[-2000:]
