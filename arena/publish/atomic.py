"""Replace a published site atomically: write into a temporary folder, swap it in.

The site is written into a fresh temporary directory beside OUT_DIR and only
then renamed into place, so readers and crashes never see a half-written site.
A publish replaces OUT_DIR only if it is empty or holds nothing but the files
the previous publish listed in its marker (a database or notes kept there are
never deleted: the publish is refused, naming them). Publishes into one parent
folder take turns (a lock on the folder); each removes the ``.OUT.new-*`` and
``.OUT.old-*`` folders an interrupted publish left behind.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.core.errors import ArenaError, OptionError

MARKER = ".arena-site"
_MARKER_TEXT = b"arena static leaderboard site; `arena publish` may replace this directory\n"
_MANIFEST = "files written:"
#: What publishes wrote before the marker listed its files (a marker of just the first line).
_LEGACY_LAYOUT = re.compile(
    r"(index\.html|style\.css|leaderboard\.(json|csv)|board-[^/]+\.(html|json|csv)"
    r"|models/[^/]+\.html|models)"
)


def _marker(files: list[str]) -> bytes:
    return _MARKER_TEXT + "".join(f"{_MANIFEST} {f}\n" for f in files).encode("utf-8")


def _own_files(out: Path) -> set[str] | None:
    """The files the publish that wrote ``out`` listed, or None if it lists none (older arena)."""
    lines = (out / MARKER).read_text(encoding="utf-8", errors="replace").splitlines()
    listed = {ln[len(_MANIFEST) + 1 :] for ln in lines if ln.startswith(_MANIFEST + " ")}
    return listed or None


class PublishError(ArenaError):
    """A reason not to publish, worded for the user."""


class PublishOptionError(PublishError, OptionError):
    """A bad publish option, named by its parameter (the CLI names the flag)."""


def check_target(out: Path) -> None:
    if out.is_symlink():
        # Swapping would replace the link, not the site it points to.
        raise PublishError(f"{out} is a symbolic link; publish into {out.resolve()} instead")
    if out.exists():
        if not out.is_dir():
            raise PublishError(f"{out} exists and is not a directory")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise PublishError(
                f"{out} is not empty and was not written by `arena publish` "
                f"({_some(sorted(p.name for p in out.iterdir()))}); "
                "refusing to replace it (choose a new or empty directory)"
            )
        if (out / MARKER).is_file():
            _check_only_own_files(out)
    if out.parent == out:
        raise PublishError(f"cannot publish into {out}")


def _check_only_own_files(out: Path) -> None:
    """Refuse to replace a site that holds anything its publish did not write."""
    own = _own_files(out)
    foreign = []
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if rel == MARKER or (path.is_dir() and not path.is_symlink()):
            continue
        if rel not in own if own is not None else not _LEGACY_LAYOUT.fullmatch(rel):
            foreign.append(rel)
    if foreign:
        raise PublishError(
            f"{out} holds files `arena publish` did not write ({_some(foreign)}); "
            "refusing to replace it: move them elsewhere or publish into another directory"
        )


def _some(names: list[str]) -> str:
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return ", ".join(names[:3]) + more


def remove_leftovers(out: Path) -> None:
    """Remove the ``.OUT.new-*`` / ``.OUT.old-*`` folders of interrupted publishes.

    Runs under the publish lock, so no other publish is writing them; a folder
    is removed only if it is empty or carries the site marker.
    """
    for stale in out.parent.glob(f".{glob_escape(out.name)}.*-*"):
        kind = stale.name[len(out.name) + 2 :].split("-", 1)[0]
        if kind not in ("new", "old") or stale.is_symlink() or not stale.is_dir():
            continue
        if (stale / MARKER).is_file() or not any(stale.iterdir()):
            shutil.rmtree(stale, ignore_errors=True)


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def publish_lock(parent: Path) -> int:
    """An exclusive lock on the parent folder, held until the returned fd is closed."""
    fd = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_atomic(out: Path, files: Iterator[tuple[str, bytes]]) -> tuple[list[str], dict[str, Any]]:
    parent = out.parent
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=parent))
    written: list[str] = []
    sizes: dict[str, int] = {}
    try:
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a site is meant to be served
        # the marker first (an interrupted publish's folder is recognisable as
        # ours), rewritten with the list of files at the end
        (tmp / MARKER).write_bytes(_MARKER_TEXT)
        root = tmp.resolve()
        for rel, data in files:
            path = (tmp / rel).resolve()
            # Names come from slugs already; this is the belt to their braces.
            if root not in path.parents:
                raise PublishError(f"refusing to write outside the site: {rel!r}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            written.append(rel)
            sizes[rel] = len(data)
        marker = _marker(written)
        (tmp / MARKER).write_bytes(marker)
        written.insert(0, MARKER)
        sizes[MARKER] = len(marker)
        _swap(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return written, sizes


def _swap(new: Path, out: Path) -> None:
    """Rename the old site aside, the new one in, then delete the old one."""
    if not out.exists():
        os.rename(new, out)
        return
    old = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:12]}"
    os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)
