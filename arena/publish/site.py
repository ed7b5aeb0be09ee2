"""Write the static site: read snapshots, build page contexts, render, swap in atomically.

Layout of OUT_DIR::

    index.html                 the main board (latest overall, or --snapshot ID)
    og.svg, og.png             the main board's card (SVG; PNG for link previews)
    boards.html                every board, grouped (when the header menu leaves some out)
    sampling.html              who got how many battles: the sampling ledger, per source
    leaderboard.json|csv       its downloads, same schema as ``arena leaderboard``
    board-<slug>-<hash>.html   one page per other board (categories), with downloads
    models/<slug>-<hash>.html  one page per visible model
    style.css
    .arena-site                marker: this directory may be replaced by a publish,
                               and the list of the files that publish wrote

The site is written into a fresh temporary directory beside OUT_DIR and only
then renamed into place (:mod:`arena.publish.atomic`), so readers and crashes
never see a half-written site, and files the previous publish did not write
are never deleted.
Output depends only on the database contents (no "now", sorted iteration,
fixed number formats): publishing the same snapshot twice gives identical bytes.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, select

from arena.audit.read import latest_audit
from arena.boards.components import is_current
from arena.boards.keys import OVERALL, BoardKey
from arena.boards.snapshots import (
    ROW_FIELDS,
    Board,
    SnapshotInfo,
    latest_snapshot_id,
    load_board,
    load_pairs,
    previous_snapshot_id,
    rating_history,
)
from arena.core.defaults import DEFAULT_HEATMAP_TOP
from arena.core.errors import escape
from arena.core.formats import render_csv, tidy, to_json
from arena.core.resources import templates_dir
from arena.core.words import name_list, too_many_boards
from arena.db.models import Snapshot
from arena.publish import context as ctx
from arena.publish.agreement_view import AgreementView, agreement_views
from arena.publish.atomic import (
    MARKER,
    PublishError,
    PublishOptionError,
    check_target,
    publish_lock,
    remove_leftovers,
    write_atomic,
)
from arena.publish.audit_page import AUDIT_FILE, audit_page
from arena.publish.render import render
from arena.publish.sampling_page import SAMPLING_FILE, SamplingPage, sampling_page
from arena.publish.views import BoardsPage
from arena.store.categories import label_for, stored_labels
from arena.store.derived import Rule, load_rules
from arena.store.sources import source_infos

__all__ = ["MARKER", "OG_FILE", "PublishReport", "publish_site"]

OG_FILE = "og.svg"
#: The card link previews show (they ignore SVG): ``arena.publish.ogpng``.
OG_PNG = "og.png"


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


#: Boards up to this many ranked models get each model's marginal rank set on its page
#: (one step-down per model: rounds x M^2 in all); larger boards show the board's sets only.
RANK_ALONE_MAX_MODELS = 400


def ranks_alone(conn: Connection, board: Board) -> dict[str, tuple[int, int]]:
    """Each ranked model's rank set when it alone is asked about (its model page)."""
    from arena.boards.inference import stored_inference
    from arena.boards.snapshots import load_samples

    ranked = sum(1 for r in board.rows if r.ranked)
    if not ranked or ranked > RANK_ALONE_MAX_MODELS:
        return {}
    samples = load_samples(conn, board.snapshot.id)
    got = stored_inference(board, samples) if samples is not None else None
    return {} if got is None else {m: got.rank_alone(m) for m in got.index}


def _load_site_boards(
    conn: Connection, snapshot_id: int | None, max_boards: int | None = None
) -> list[ctx.SiteBoard]:
    if snapshot_id is None:
        snapshot_id = latest_snapshot_id(conn, OVERALL)
        if snapshot_id is None:
            if conn.execute(select(Snapshot.id).limit(1)).first() is None:
                raise PublishError("no snapshot yet: run `arena rebuild` first")
            raise PublishOptionError(
                "snapshot",
                "no overall snapshot yet: rebuild one, or pick a snapshot with {name} "
                "(listed by `arena snapshots`)",
            )
    main = load_board(conn, snapshot_id)
    if main is None:
        raise PublishError(f"snapshot {snapshot_id} does not exist")
    labels = stored_labels(conn)
    boards = [BoardKey.parse(b) for (b,) in conn.execute(select(Snapshot.board).distinct())]
    if max_boards is not None and len(boards) > max_boards:
        raise PublishOptionError("max_boards", too_many_boards(len(boards), max_boards))
    # Main board first, then overall (if the main one is a category), then the rest by key.
    others = sorted((b for b in boards if b != main.key), key=lambda b: (not b.is_overall, str(b)))
    loaded: list[Board] = [main]
    for b in others:
        sid = latest_snapshot_id(conn, b)
        board = load_board(conn, sid) if sid is not None else None
        # a comparable set's board only beside the main board of its rebuild
        if board is not None and is_current(conn, board.snapshot):
            loaded.append(board)
    rules = {r.key: r for r in load_rules(conn)}
    # a source board says what it measures: votes or a judge's verdicts
    kinds = (
        {i.source: i.kind for i in source_infos(conn)}
        if any(b.snapshot.source for b in loaded)
        else {}
    )
    # the single tags a derived category counts go to "more boards", not the main menu
    parts = {t for r in rules.values() for t in r.tags}
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
            for name, points in rating_history(conn, info.key).items()
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
                label=_source_kind(ctx.board_label(info.key, labels), info, kinds),
                rank_alone=ranks_alone(conn, board),
                rule=_rule_text(rules.get(info.category or ""), labels),
                group=_group(info, parts),
            )
        )
    # Raw and style-controlled pages link each other only when both come from one
    # rebuild run: a switch must not compare boards computed from different battles.
    by_id = {s.board.snapshot.id: s for s in sites}
    for s in sites:
        paired = by_id.get(s.board.paired_snapshot) if s.board.paired_snapshot else None
        if paired is not None and paired.board.key == s.board.key.paired:
            s.paired = paired
    # Pages list boards (model pages, boards.html) in menu order: the main board,
    # derived categories, other boards by battles, sources, then the single tags.
    rank = {"main": 0, "source": 1, "more": 2}
    sites[1:] = sorted(
        sites[1:],
        key=lambda s: (
            s is not sites[0].paired,
            rank[s.group],
            not s.rule,
            -s.board.snapshot.n_battles,
            str(s.board.key.main),
            s.board.style_controlled,
        ),
    )
    # LMArena opens on style control: where the main board has a style-controlled
    # board from the same run, index.html shows it and the raw board is one click away.
    home, style = sites[0], sites[0].paired
    if style is not None and not home.board.style_controlled:
        home.file, style.file = style.file, home.file
        home.downloads, style.downloads = style.downloads, home.downloads
    return sites


def _source_kind(label: str, info: SnapshotInfo, kinds: Mapping[str | None, str]) -> str:
    """``Source: ko-arena-hard`` -> ``ko-arena-hard (judge verdicts)`` (or ``(votes)``)."""
    kind = kinds.get(info.source) if info.source else None
    if kind is None:
        return label
    words = {"judge": "judge verdicts", "vote": "votes", "mixed": "votes and judge verdicts"}
    return label.replace(f"Source: {info.source}", f"{info.source} ({words[kind]})", 1)


def _rule_text(rule: Rule | None, labels: Mapping[str, str] | None = None) -> str:
    """The rule in words, with the tags by the names the site shows them (a shared
    ``Criterion: `` left off): ``... of the 7 criteria.* tags (complexity, ...)``."""
    if rule is None:
        return ""
    text = f"The battles whose prompt carries {rule.short()}"
    if len(rule.tags) > 1:
        names = [label_for(t, labels) for t in rule.tags]
        head = os.path.commonprefix(names)
        head = head[: head.rfind(": ") + 2] if ": " in head else ""
        text += f" ({name_list([n[len(head) :] for n in names], limit=len(names))})"
    return f"{text}: {rule.note}." if rule.note else f"{text}."


def _group(info: SnapshotInfo, parts: set[str]) -> str:
    """Where the board menu lists a board: ``main``, ``source`` or ``more``."""
    if info.key.component > 1 or (info.category and info.category in parts):
        return "more"
    if info.source and not info.category:
        return "source"
    return "main" if not info.source else "more"


# ---------------------------------------------------------------- rendering


#: Boards named in every page's header menu; the rest are on ``boards.html``, so a
#: page's size does not grow with the number of boards (5,000 categories once made
#: every page list 5,000 links: 183 MB for one publish).
NAV_MAX = 8
BOARDS_FILE = "boards.html"


def _nav_boards(sites: list[ctx.SiteBoard]) -> list[ctx.SiteBoard]:
    """The boards a menu lists: one entry per raw/style pair (the style-controlled
    page, as LMArena opens on style control), and boards without a pair."""
    return [s for s in sites if not (s.paired is not None and not s.board.style_controlled)]


def _menu_order(sites: list[ctx.SiteBoard]) -> list[ctx.SiteBoard]:
    """The header menu: the main board, derived categories, other main boards by
    battles (most first), then the sources' boards."""
    listed = _nav_boards(sites)
    head = [s for s in listed if s is sites[0] or s is sites[0].paired]
    rest = [s for s in listed if s not in head]
    main = sorted(
        (s for s in rest if s.group == "main"),
        key=lambda s: (not s.rule, -s.board.snapshot.n_battles, s.board.snapshot.board),
    )
    return head + main + [s for s in rest if s.group == "source"]


def _nav(
    sites: list[ctx.SiteBoard], current: ctx.SiteBoard | None, root: str
) -> tuple[ctx.Link, ...]:
    """At most :data:`NAV_MAX` boards, then "All N boards" (``boards.html``)."""
    menu = _menu_order(sites)
    links = [
        ctx.Link(
            _menu_label(s),
            root + s.file,
            current is not None and (current is s or current is s.paired),
        )
        for s in menu[:NAV_MAX]
    ]
    total = len(_nav_boards(sites))
    if _has_boards_page(sites):
        links.append(ctx.Link(f"All {total} boards", root + BOARDS_FILE))
    return tuple(links)


def _menu_label(s: ctx.SiteBoard) -> str:
    """One entry stands for a raw/style pair: the board's own name (its raw label)."""
    return s.paired.label if s.paired is not None and s.board.style_controlled else s.label


def _has_boards_page(sites: list[ctx.SiteBoard]) -> bool:
    """Whether the header menu leaves boards out (then ``boards.html`` lists them all)."""
    return len(_nav_boards(sites)) > min(NAV_MAX, len(_menu_order(sites)))


def _boards_page(sites: list[ctx.SiteBoard], attribution: str | None) -> BoardsPage:
    listed = _nav_boards(sites)
    menu = _menu_order(sites)
    groups = (
        ("Leaderboards", [s for s in menu if s.group == "main"]),
        ("Sources", [s for s in menu if s.group == "source"]),
        ("More boards", [s for s in listed if s.group == "more"]),
    )

    def link(s: ctx.SiteBoard) -> ctx.Link:
        n = len(s.board.visible_rows())
        battles = ctx.fmt_count(s.board.snapshot.n_battles)
        view = ", style-controlled" if s.board.style_controlled else ""
        return ctx.Link(f"{_menu_label(s)} ({n} models, {battles} battles{view})", s.file)

    return BoardsPage(
        title=f"All leaderboards: {len(listed)} boards",
        description=f"Every leaderboard of this site: {len(listed)} boards.",
        groups=tuple((title, tuple(link(s) for s in items)) for title, items in groups if items),
        nav=_nav(sites, None, ""),
        attribution=attribution,
    )


def _og_image(sites: list[ctx.SiteBoard]) -> bytes | None:
    """The main board as an Open Graph image (``arena.publish.og``), when that module exists."""
    try:
        from arena.publish.og import og_for_board
    except ImportError:
        return None
    main = sites[0]
    date = ctx.fmt_date(main.board.snapshot.created_at)[:10]
    return str(og_for_board(main.board, f"{main.label} leaderboard", date)).encode("utf-8")


def _og_png(sites: list[ctx.SiteBoard]) -> bytes:
    """The main board's card as PNG (``arena.publish.ogpng``): link previews ignore SVG."""
    from arena.publish.og import og_rows
    from arena.publish.ogpng import og_png

    main = sites[0]
    date = ctx.fmt_date(main.board.snapshot.created_at)[:10]
    return og_png(f"{main.label} leaderboard", date, og_rows(main.board))


def check_base_url(base_url: str | None) -> str | None:
    """``base_url`` with one trailing slash; :class:`PublishError` unless http(s)."""
    if base_url is None:
        return None
    url = base_url.strip()
    if not url.lower().startswith(("http://", "https://")) or len(url) < 10 or " " in url:
        raise PublishOptionError(
            "base_url",
            "{name} must be the http(s) address the site is served at, not "
            + escape(repr(base_url)),
        )
    return url.rstrip("/") + "/"


def _download_json(site: ctx.SiteBoard) -> bytes:
    """The `arena leaderboard --format json` document, plus the board's label."""
    doc = site.board.to_dict()
    doc["snapshot"] = {**doc["snapshot"], "board_label": site.label}
    return (to_json(tidy(doc)) + "\n").encode("utf-8")


def _files(
    sites: list[ctx.SiteBoard],
    *,
    top: int,
    attribution: str | None,
    audits: Mapping[str, dict[str, Any]] | None = None,
    agreements: tuple[AgreementView, ...] = (),
    base_url: str | None = None,
    sampling: SamplingPage | None = None,
) -> Iterator[tuple[str, bytes]]:
    """Every file of the site as (relative path, bytes), in a fixed order.

    ``audits``: each board's latest stored vote audit, by the board's page file.
    The main board's is ``audit.html`` (with the sources' agreement); another
    board's is its own page beside it (:func:`audit_file`).
    """
    audits = dict(audits or {})
    main_info = sites[0].board.snapshot
    attribution_text = ctx.attribution_for(main_info, attribution)
    linked = sorted({r.model for s in sites for r in s.board.visible_rows()})
    linked_set = set(linked)

    yield "style.css", (templates_dir() / "style.css").read_bytes()
    og = _og_image(sites)
    if og is not None:
        yield OG_FILE, og
    yield OG_PNG, _og_png(sites)
    # Link previews need absolute addresses: only when the site's address is known
    # (--base-url); without it the card is named relative to the page, never invented.
    base = base_url or ""

    def absolute(path: str) -> str | None:
        return base + path if base_url else None

    for site in sites:
        board = site.board
        page = ctx.leaderboard_page(
            site,
            nav=_nav(sites, site, ""),
            top=top,
            attribution=attribution_text,
            linked=linked_set,
            og_image=base + OG_PNG,
        )
        page = replace(page, og_url=absolute(site.file))
        # A board links its audit page only when an audit of it is stored; the
        # main board's page also links the sources' agreement (on the same page).
        audit_href = audit_file(site, sites[0]) if site.file in audits else None
        agreement_href = AUDIT_FILE if agreements and site is sites[0] else None
        sampling_href = SAMPLING_FILE if sampling is not None and site is sites[0] else None
        yield (
            site.file,
            render(
                "leaderboard.html",
                page=page,
                audit_href=audit_href,
                agreement_href=agreement_href,
                sampling_href=sampling_href,
            ).encode("utf-8"),
        )
        yield site.downloads[0], _download_json(site)
        rows = [tidy(r.to_dict()) for r in board.visible_rows()]
        yield site.downloads[1], render_csv(rows, ROW_FIELDS).encode("utf-8")
    if sampling is not None:
        ledger = replace(sampling, nav=_nav(sites, None, ""), attribution=attribution_text)
        yield SAMPLING_FILE, render("sampling.html", page=ledger).encode("utf-8")
    if _has_boards_page(sites):
        boards_page = _boards_page(sites, attribution_text)
        yield BOARDS_FILE, render("boards.html", page=boards_page).encode("utf-8")
    for site in sites:
        main = site is sites[0]
        if site.file not in audits and not (main and agreements):
            continue
        audit_view = audit_page(
            audits.get(site.file),
            board_label=site.label,
            nav=_nav(sites, None, ""),
            attribution=attribution_text,
            agreements=agreements if main else (),
            snapshot_id=site.board.snapshot.id,
        )
        yield audit_file(site, sites[0]), render("audit.html", page=audit_view).encode("utf-8")
    model_nav = _nav(sites, None, "../")
    for name in linked:
        model_page = ctx.model_page(
            name,
            sites,
            nav=model_nav,
            attribution=attribution_text,
            linked=linked_set,
            og_image=base + OG_PNG if base_url else "../" + OG_PNG,
        )
        model_page = replace(model_page, og_url=absolute(ctx.model_href(name)))
        yield ctx.model_href(name), render("model.html", page=model_page).encode("utf-8")


def audit_file(site: ctx.SiteBoard, main: ctx.SiteBoard) -> str:
    """A board's audit page: ``audit.html`` for the main board, else beside its page."""
    return AUDIT_FILE if site is main else site.file.removesuffix(".html") + "-audit.html"


def publish_site(
    engine: Engine,
    out_dir: str | os.PathLike[str],
    *,
    snapshot_id: int | None = None,
    top: int = DEFAULT_HEATMAP_TOP,
    attribution: str | None = None,
    extra_files: Mapping[str, bytes | Callable[[], bytes]] | None = None,
    max_boards: int | None = None,
    base_url: str | None = None,
) -> PublishReport:
    """Render a snapshot (default: the latest overall one) and the latest snapshot of
    every other board into ``out_dir``, replacing a previous site atomically.

    Takes the engine and reads in a transaction of its own (as the rebuild
    and the nightly job do); :meth:`arena.api.Arena.publish` is the front door.

    ``extra_files`` (relative name -> bytes, e.g. ``arena nightly``'s
    ``status.json``) are written into the same atomic swap and listed in the
    site marker like the rendered pages. A value may be a function returning
    the bytes: it is called after every page is written, just before the swap
    (so ``status.json`` can time the publish itself).

    Raises :class:`PublishError` for user errors (no snapshot, bad target, more
    boards than ``max_boards``).
    """
    if top < 2:
        raise PublishOptionError("heatmap_top", "{name} must be at least 2")
    base_url = check_base_url(base_url)
    out = Path(os.path.abspath(out_dir))
    check_target(out)
    # one read transaction of its own, like every job (the caller holds none)
    with engine.connect() as conn:
        sites = _load_site_boards(conn, snapshot_id, max_boards)
        audits = {
            s.file: doc
            for s in sites
            if (doc := latest_audit(conn, s.board.snapshot.board, s.board.snapshot.id))
        }
        agreements = agreement_views(conn, sites)
        sampling = sampling_page(conn, nav=(), attribution=None)
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = publish_lock(out.parent)
    try:
        check_target(out)  # again: another publish may have run while this one waited
        remove_leftovers(out)
        files = _files(
            sites,
            top=top,
            attribution=attribution,
            audits=audits,
            agreements=agreements,
            base_url=base_url,
            sampling=sampling if sampling.sources else None,
        )
        if extra_files:
            late = ((k, v() if callable(v) else v) for k, v in extra_files.items())
            files = itertools.chain(files, late)
        written, sizes = write_atomic(out, files)
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
