"""Write the static site: read snapshots, build page contexts, render, swap in atomically.

Layout of OUT_DIR::

    index.html                 the main board (latest overall, or --snapshot ID)
    leaderboard.json|csv       its downloads, same schema as ``arena leaderboard``
    board-<slug>-<hash>.html   one page per other board (categories), with downloads
    models/<slug>-<hash>.html  one page per visible model
    style.css
    .arena-site                marker: this directory may be replaced by a publish,
                               and the list of the files that publish wrote

The site is written into a fresh temporary directory beside OUT_DIR and only
then renamed into place, so readers and crashes never see a half-written site.
A publish replaces OUT_DIR only if it is empty or holds nothing but the files
the previous publish listed in its marker (a database or notes kept there are
never deleted: the publish is refused, naming them). Publishes into one parent
folder take turns (a lock on the folder); each removes the ``.OUT.new-*`` and
``.OUT.old-*`` folders an interrupted publish left behind.
Output depends only on the database contents (no "now", sorted iteration,
fixed number formats): publishing the same snapshot twice gives identical bytes.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, Engine, select

from arena.audit.read import load_audit
from arena.component_boards import is_current
from arena.db.models import Snapshot
from arena.formats import render_csv, to_json
from arena.publish import context as ctx
from arena.publish.audit_page import AUDIT_FILE, audit_page
from arena.publish.render import render
from arena.resources import templates_dir
from arena.snapshots import (
    OVERALL,
    ROW_FIELDS,
    Board,
    latest_snapshot_id,
    load_board,
    load_pairs,
    paired_board_key,
    previous_snapshot_id,
    rating_history,
)

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


class PublishError(Exception):
    """A reason not to publish, worded for the command line."""


@dataclass(frozen=True)
class PublishReport:
    out_dir: Path
    snapshot_id: int
    board: str
    boards: tuple[str, ...]  # every board rendered, main first
    model_pages: int
    visible_models: int
    hidden_models: int
    index_bytes: int
    total_bytes: int
    files: tuple[str, ...]


# ---------------------------------------------------------------- reading


def _load_site_boards(conn: Connection, snapshot_id: int | None) -> list[ctx.SiteBoard]:
    if snapshot_id is None:
        snapshot_id = latest_snapshot_id(conn, OVERALL)
        if snapshot_id is None:
            if conn.execute(select(Snapshot.id).limit(1)).first() is None:
                raise PublishError("no snapshot yet: run `arena rebuild` first")
            raise PublishError(
                "no overall snapshot yet: run `arena rebuild`, or pick one "
                "with --snapshot ID (see `arena snapshots`)"
            )
    main = load_board(conn, snapshot_id)
    if main is None:
        raise PublishError(f"snapshot {snapshot_id} does not exist")
    boards = sorted(b for (b,) in conn.execute(select(Snapshot.board).distinct()))
    # Main board first, then overall (if the main one is a category), then the rest by key.
    others = sorted(
        (b for b in boards if b != main.snapshot.board), key=lambda b: (b != OVERALL, b)
    )
    loaded: list[Board] = [main]
    for b in others:
        sid = latest_snapshot_id(conn, b)
        board = load_board(conn, sid) if sid is not None else None
        # a comparable set's board only beside the main board of its rebuild
        if board is not None and is_current(conn, board.snapshot):
            loaded.append(board)
    sites = []
    for i, board in enumerate(loaded):
        info = board.snapshot
        if i == 0:
            file, downloads = "index.html", ("leaderboard.json", "leaderboard.csv")
        else:
            stem = ctx.slug(info.board, prefix="board-")
            file, downloads = f"{stem}.html", (f"{stem}.json", f"{stem}.csv")
        prev_id = previous_snapshot_id(conn, info)
        # History up to this snapshot only: republishing an old snapshot must
        # not change when later snapshots are added.
        history = {
            name: [h for h in points if h[0] <= info.id]
            for name, points in rating_history(conn, info.board).items()
        }
        sites.append(
            ctx.SiteBoard(
                board=board,
                file=file,
                downloads=downloads,
                previous=load_board(conn, prev_id) if prev_id is not None else None,
                # Unordered is fine: every consumer sorts or indexes what it shows.
                pairs=load_pairs(conn, info.id),
                history=history,
            )
        )
    # Raw and style-controlled pages link each other only when both come from one
    # rebuild run: a switch must not compare boards computed from different battles.
    by_id = {s.board.snapshot.id: s for s in sites}
    for s in sites:
        paired = by_id.get(s.board.paired_snapshot) if s.board.paired_snapshot else None
        if paired is not None and paired.board.snapshot.board == paired_board_key(
            s.board.snapshot.board
        ):
            s.paired = paired
    return sites


# ---------------------------------------------------------------- rendering


def _files(
    sites: list[ctx.SiteBoard],
    *,
    top: int,
    attribution: str | None,
    audit: dict | None = None,
) -> Iterator[tuple[str, bytes]]:
    """Every file of the site as (relative path, bytes), in a fixed order."""
    main_info = sites[0].board.snapshot
    attribution_text = ctx.attribution_for(main_info, attribution)
    linked = sorted({r.model for s in sites for r in s.board.visible_rows()})
    linked_set = set(linked)

    def nav(current: str | None, root: str) -> tuple[ctx.Link, ...]:
        return tuple(
            ctx.Link(ctx.nav_label(s.board.snapshot.board), root + s.file, s.file == current)
            for s in sites
        )

    yield "style.css", (templates_dir() / "style.css").read_bytes()
    for site in sites:
        board = site.board
        page = ctx.leaderboard_page(
            site, nav=nav(site.file, ""), top=top, attribution=attribution_text, linked=linked_set
        )
        # The audit is of the main snapshot; only its page links to it.
        audit_href = AUDIT_FILE if audit is not None and site is sites[0] else None
        yield (
            site.file,
            render("leaderboard.html", page=page, audit_href=audit_href).encode("utf-8"),
        )
        yield site.downloads[0], (to_json(board.document()) + "\n").encode("utf-8")
        rows = [r.as_dict() for r in board.visible_rows()]
        yield site.downloads[1], render_csv(rows, ROW_FIELDS).encode("utf-8")
    if audit is not None:
        page = audit_page(
            audit,
            board_label=ctx.board_label(main_info.board),
            nav=nav(None, ""),
            attribution=attribution_text,
        )
        yield AUDIT_FILE, render("audit.html", page=page).encode("utf-8")
    model_nav = nav(None, "../")
    for name in linked:
        page = ctx.model_page(
            name, sites, nav=model_nav, attribution=attribution_text, linked=linked_set
        )
        yield ctx.model_href(name), render("model.html", page=page).encode("utf-8")


# ---------------------------------------------------------------- writing


def _check_target(out: Path) -> None:
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


def _remove_leftovers(out: Path) -> None:
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


def _publish_lock(parent: Path):
    """An exclusive lock on the parent folder, held until the returned fd is closed."""
    fd = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_atomic(out: Path, files: Iterator[tuple[str, bytes]]) -> tuple[list[str], dict]:
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


def publish_site(
    conn_or_engine: Connection | Engine,
    out_dir: str | os.PathLike,
    *,
    snapshot_id: int | None = None,
    top: int = 20,
    attribution: str | None = None,
    extra_files: Mapping[str, bytes | Callable[[], bytes]] | None = None,
) -> PublishReport:
    """Render a snapshot (default: the latest overall one) and the latest snapshot of
    every other board into ``out_dir``, replacing a previous site atomically.

    ``extra_files`` (relative name -> bytes, e.g. ``arena nightly``'s
    ``status.json``) are written into the same atomic swap and listed in the
    site marker like the rendered pages. A value may be a function returning
    the bytes: it is called after every page is written, just before the swap
    (so ``status.json`` can time the publish itself).

    Raises :class:`PublishError` for user errors (no snapshot, bad target).
    """
    if top < 2:
        raise PublishError("--top must be at least 2")
    out = Path(os.path.abspath(out_dir))
    _check_target(out)
    if isinstance(conn_or_engine, Engine):
        with conn_or_engine.connect() as conn:
            sites = _load_site_boards(conn, snapshot_id)
            audit = load_audit(conn, sites[0].board.snapshot.id)
    else:
        sites = _load_site_boards(conn_or_engine, snapshot_id)
        audit = load_audit(conn_or_engine, sites[0].board.snapshot.id)
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = _publish_lock(out.parent)
    try:
        _check_target(out)  # again: another publish may have run while this one waited
        _remove_leftovers(out)
        files = _files(sites, top=top, attribution=attribution, audit=audit)
        if extra_files:
            late = ((k, v() if callable(v) else v) for k, v in extra_files.items())
            files = itertools.chain(files, late)
        written, sizes = _write_atomic(out, files)
    finally:
        os.close(lock)
    main = sites[0].board
    visible = {r.model for s in sites for r in s.board.visible_rows()}
    return PublishReport(
        out_dir=out,
        snapshot_id=main.snapshot.id,
        board=main.snapshot.board,
        boards=tuple(s.board.snapshot.board for s in sites),
        model_pages=len(visible),
        visible_models=len(main.visible_rows()),
        hidden_models=sum(1 for r in main.rows if r.hidden),
        index_bytes=sizes.get("index.html", 0),
        total_bytes=sum(sizes.values()),
        files=tuple(written),
    )
