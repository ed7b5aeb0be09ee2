"""The front door: ``db = arena.open(url)``; every command is a method of ``db``.

In the style of sqlite-utils' ``Database``: one object per database, whose
methods are the ``arena`` commands. Each method takes the command's options as
keyword arguments with the same names and defaults as its flags (``rounds``,
``seed``, ``level``, ``category``, ``source``, ...; the defaults come from
:mod:`arena.core.defaults`), owns its transaction and its lock, and returns a
frozen result (:mod:`arena.api.results`) whose ``to_dict()`` is the command's
``--format json`` document. The command line is a thin layer over these
methods: same data and options, same numbers.

Errors are the library's: every error a user can cause is an
:class:`arena.core.errors.ArenaError` with a one-line message; a bad option is
its subclass :class:`~arena.core.errors.OptionError`, naming the parameter (the
CLI names the flag).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from arena.api.aliases import AliasMethods
from arena.api.database import DatabaseMethods
from arena.api.demo import DemoMethods
from arena.api.results import (
    Annotated,
    AuditResult,
    Categories,
    Comparison,
    DiffResult,
    Ingested,
    Labelled,
    Leaderboard,
    Models,
    NightResult,
    PlanDraws,
    PlanPower,
    PlanWeights,
    Pruned,
    Published,
    Rebuilt,
    Refitted,
    Snapshots,
)
from arena.api.sampling import SamplingMethods
from arena.core.defaults import (
    DEFAULT_AUDIT_ALPHA,
    DEFAULT_BOTH_BAD,
    DEFAULT_CI,
    DEFAULT_CLUSTER,
    DEFAULT_COMPONENTS,
    DEFAULT_HEATMAP_TOP,
    DEFAULT_INPUT_FORMAT,
    DEFAULT_LEVEL,
    DEFAULT_MAX_BOARDS,
    DEFAULT_MAX_EXPAND,
    DEFAULT_MAX_MODELS,
    DEFAULT_MIN_BATTLES,
    DEFAULT_NIGHTLY_BOARDS,
    DEFAULT_PLAN_RULE,
    DEFAULT_POWER,
    DEFAULT_PROVISIONAL_METHOD,
    DEFAULT_READ,
    DEFAULT_SEED,
    DEFAULT_TIER_RULE,
    DEFAULT_TIERS,
    DEFAULT_TIES,
    DEFAULT_URL,
    DEFAULT_WAIT,
    URL_ENV,
)
from arena.core.errors import ArenaError, OptionError
from arena.core.options import OPTIONS, RATING, checked

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from arena.audit.agreement import Agreement
    from arena.boards.snapshots import Board
    from arena.engine.board import TierMethod, TierRule
    from arena.ingest.loader import IngestReport
    from arena.ingest.rejects import RejectSink
    from arena.jobs.provisional import Refitter
    from arena.jobs.rebuild import RebuildOptions
    from arena.plan.store import PlanInputs
    from arena.store.annotate import Annotation

__all__ = ["Arena", "database_url", "open_arena"]

Progress = Callable[[str], None]


def database_url(url: str | None = None) -> str:
    """The database: ``url``, else ``$ARENA_DATABASE_URL``, else ``sqlite:///arena.db``.

    The same resolution as the command line's ``--db``.
    """
    return url or os.environ.get(URL_ENV) or DEFAULT_URL


def open_arena(url: str | None = None, *, wait: float = DEFAULT_WAIT) -> Arena:
    """Open the arena stored at ``url`` (see :func:`database_url`); nothing is read yet.

    The database is opened at the first call. Like the command line, only the
    methods that store battles (``ingest``, ``nightly``) create arena's tables
    in an empty database; the others refuse an empty or foreign one.

    Parameters
    ----------
    url : str, optional
        SQLAlchemy URL (``sqlite:///arena.db``, ``postgresql+psycopg://user@host/db``).
    wait : float
        Seconds to wait for another command's lock before giving up.

    Examples
    --------
    >>> import arena
    >>> db = arena.open("sqlite:///x.db")  # doctest: +SKIP
    >>> db.ingest("battles.csv"); db.rebuild()  # doctest: +SKIP
    >>> db.leaderboard().to_dict()["rows"][0]["model"]  # doctest: +SKIP
    """
    return Arena(database_url(url), wait=wait)


def _when(name: str, value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise OptionError.about(name, f"{value!r} is not an ISO date") from None


def _anchor(value: str | tuple[str, float] | None) -> tuple[str, float] | None:
    if value is None or isinstance(value, tuple):
        return value
    name, sep, rating = value.rpartition("=")
    try:
        if not sep or not name:
            raise ValueError
        return name, float(rating)
    except ValueError:
        raise OptionError.about(
            "anchor", f"{value!r}: expected MODEL=RATING, e.g. gpt-4o=1200"
        ) from None


#: The rebuild's options besides the rating options: the battles it reads.
_SELECTION = ("category", "source", "since", "until")


def _declared(given: Mapping[str, object]) -> dict[str, object]:
    """The declared options among a method's keyword arguments, checked before any work.

    A front-door method passes its ``locals()`` at its first line: its
    parameters, named as the declarations (:mod:`arena.core.options`) name them.
    """
    return checked({k: v for k, v in given.items() if k in OPTIONS})


def _rebuild_options(values: Mapping[str, object]) -> RebuildOptions:
    """:class:`~arena.jobs.rebuild.RebuildOptions` from the checked keywords of a method."""
    from arena.jobs.rebuild import RebuildOptions

    flat = {k: values[k] for k in (*RATING, *_SELECTION) if k in values}
    flat["anchor"] = _anchor(flat["anchor"])  # type: ignore[arg-type]
    for name in ("since", "until"):
        if name in flat:
            flat[name] = _when(name, flat[name])  # type: ignore[arg-type]
    return RebuildOptions.from_values(flat)


class Arena(DatabaseMethods, DemoMethods, AliasMethods, SamplingMethods):
    """One arena database; its methods are the ``arena`` commands.

    Use :func:`arena.open` to make one. The engine is opened at the first
    call and closed by :meth:`close` (or a ``with`` block).
    """

    def __init__(
        self, url: str, *, wait: float = DEFAULT_WAIT, notice: Callable[[str], None] | None = None
    ) -> None:
        self.url = url
        OPTIONS["wait"].check(wait)  # a NaN or negative wait would never give up or never wait
        self.wait = wait
        #: told once when a command has waited a second for another one's lock
        self.notice = notice
        self._engine: Engine | None = None
        self._created = False
        #: provisional refitters by interval method (each keeps its boards' last fits)
        self._refitters: dict[str, Refitter] = {}

    def __repr__(self) -> str:
        from arena.db.session import mask_passwords

        return f"<Arena {mask_passwords(self.url)}>"

    def __enter__(self) -> Arena:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the database connections (the object can be used again)."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def engine(self, *, create: bool = False) -> Engine:
        """The SQLAlchemy engine, opened (and the schema checked) at the first call.

        ``create``: make arena's tables in an empty database (what storing
        battles does); without it an empty or foreign database is refused.

        Raises
        ------
        arena.db.session.DatabaseError
            The database cannot be opened, is empty (without ``create``) or is
            not an arena database.
        """
        if self._engine is None or (create and not self._created):
            from arena.db.session import open_engine

            # not a database file, a read-only one, ...: one line, by _one_line_failures
            engine = open_engine(self.url, migrate_new=create, wait=self.wait, notice=self.notice)
            if self._engine is not None:
                self._engine.dispose()
            self._engine = engine
            self._created = create
        return self._engine

    # ------------------------------------------------------------------ battles

    def ingest(
        self,
        paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
        *,
        input_format: str = DEFAULT_INPUT_FORMAT,
        source: str | None = None,
        map: Mapping[str, str] | None = None,  # noqa: A002 -- the flag's name (--map)
        skip_invalid: bool = False,
        rejects: str | os.PathLike[str] | None = None,
        max_expand: int = DEFAULT_MAX_EXPAND,
        progress: Callable[[str, int, int], None] | None = None,
        on_file: Callable[[IngestReport], None] | None = None,
    ) -> Ingested:
        """Validate battle files and store their battles, one transaction per file.

        Parameters
        ----------
        paths : path or iterable of paths
            CSV, JSON lines or JSON array files, gzip-compressed or not; ``-`` is stdin.
        input_format : {"auto", "csv", "jsonl", "json"}
        source : str, optional
            Source label stored on every battle.
        map : mapping of str to str, optional
            Read FIELD from COLUMN (``{"judge": "annotator"}``); ``""`` ignores a field.
        skip_invalid : bool
            Store the valid rows and write the rejected ones to ``rejects`` (required then).
        rejects : path, optional
            CSV file for rejected rows.
        max_expand : int
            Most battles one aggregated-count row may stand for.
        progress : callable, optional
            ``progress(file, bytes_done, bytes_total)`` while a file is read.
        on_file : callable, optional
            Called with each file's :class:`~arena.ingest.loader.IngestReport` once stored.

        Raises
        ------
        arena.ingest.IngestError
            A malformed file (file, line and field named); nothing of that file
            is stored, files before it stay stored.
        """
        _declared(locals())
        from arena.ingest.records import FIELDS
        from arena.ingest.rejects import check_rejects_target, rejects_file

        files = (
            [os.fspath(paths)]
            if isinstance(paths, (str, os.PathLike))
            else [os.fspath(p) for p in paths]
        )
        if not files:
            raise OptionError("paths", "give at least one file in {name}")
        if skip_invalid and not rejects:
            raise OptionError(
                "skip_invalid", "{name} needs rejects FILE (nothing is dropped silently)"
            )
        if rejects and not skip_invalid:
            raise OptionError("rejects", "{name} is only used with skip_invalid")
        for fld in map or {}:
            if fld not in FIELDS:
                raise OptionError.about("map", f"{fld!r}: FIELD must be one of {', '.join(FIELDS)}")
        engine = self.engine(create=True)
        if not rejects:
            return self._ingest_all(
                engine, files, input_format, source, map, None, None, max_expand, progress, on_file
            )
        database = engine.url.database if engine.dialect.name == "sqlite" else None
        target = check_rejects_target(rejects, inputs=files, database=database)
        with rejects_file(target) as (sink, keep):
            return self._ingest_all(
                engine, files, input_format, source, map, sink, keep, max_expand, progress, on_file
            )

    @staticmethod
    def _ingest_all(
        engine: Engine,
        files: list[str],
        input_format: str,
        source: str | None,
        mapping: Mapping[str, str] | None,
        sink: RejectSink | None,
        keep: list[bool] | None,
        max_expand: int,
        progress: Callable[[str, int, int], None] | None,
        on_file: Callable[[IngestReport], None] | None,
    ) -> Ingested:
        from arena.ingest import IngestError, ingest_file

        reports: list[IngestReport] = []
        for path in files:
            total = os.path.getsize(path) if path != "-" and os.path.isfile(path) else 0
            update = None
            if progress is not None:
                update = lambda done, _p=path, _t=total: progress(_p, done, _t)  # noqa: E731
            try:
                report = ingest_file(
                    engine,
                    path,
                    fmt=input_format,
                    source=source,
                    mapping=dict(mapping or {}),
                    rejects=sink,
                    progress=update,
                    max_expand=max_expand,
                )
            except IngestError as exc:
                done = ", ".join(r.file for r in reports)
                kept = f" (already stored: {done})" if done else ""
                more = f"; nothing from this file was stored{kept}"
                if isinstance(exc, OptionError):  # keep the parameter: the CLI names the flag
                    raise exc.extended(more) from None
                raise IngestError(f"{exc}{more}") from None
            reports.append(report)
            if keep is not None:
                keep[0] = True  # this file's rejects belong to stored battles: keep them
            if on_file is not None:
                on_file(report)
        return Ingested(tuple(reports))

    def models(self, *, source: str | None = None) -> Models:
        """Every model with its battles, wins, losses, ties and battles per source (``arena models``).

        With ``source``, only that source's battles (``"(no source)"``: those
        ingested without one): the battles that source's board counts.

        Raises
        ------
        OptionError
            ``source`` is no source of the database.
        """
        _declared(locals())
        from arena.store.records import model_records, record_sources

        with self.engine().connect() as conn:
            names = record_sources(conn) if source is None else [source]
            return Models(tuple(model_records(conn, source=source)), tuple(names), source)

    def annotate(
        self,
        name: str | None = None,
        *,
        display_name: str | None = None,
        organisation: str | None = None,
        licence: str | None = None,
        link: str | None = None,
        hidden: bool | None = None,
        from_file: str | os.PathLike[str] | None = None,
        annotations: Iterable[Annotation] | None = None,
    ) -> Annotated:
        """Set a model's display metadata (``arena models annotate``), all or nothing.

        Give ``name`` with the fields to set ("" clears one), or ``from_file``
        (CSV/JSON with columns model, display_name, organisation, licence,
        link, hidden), or ``annotations``. Metadata never changes ratings.

        Raises
        ------
        arena.store.annotate.AnnotateError
            An unknown model (nothing is changed) or a bad file.
        """
        from arena.db.session import take_write_lock
        from arena.store.annotate import Annotation, annotate, read_annotations

        fields = (display_name, organisation, licence, link, hidden)
        given = sum(x is not None for x in (name, from_file, annotations))
        if given != 1 or (name is None and any(v is not None for v in fields)):
            raise OptionError("name", "give either {name} with fields or from_file, not both")
        if from_file is not None:
            items = read_annotations(from_file)
        elif annotations is not None:
            items = list(annotations)
        else:
            if all(v is None for v in fields):
                raise OptionError(
                    "name",
                    "nothing to set for {name}: give display_name, organisation, licence, "
                    "link or hidden",
                )
            assert name is not None  # exactly one of name, from_file, annotations (checked above)
            items = [Annotation(name, display_name, organisation, licence, link, hidden)]
        with self.engine().begin() as conn:
            take_write_lock(conn, "annotate models")
            return Annotated(annotate(conn, items))

    def categories(self) -> Categories:
        """Category keys with their labels and battles (``arena categories``)."""
        from arena.store.categories import category_records

        with self.engine().connect() as conn:
            return Categories(tuple(category_records(conn)))

    def label_category(self, key: str, name: str) -> Labelled:
        """Show category ``key`` as ``name`` on the site ("" restores the default).

        Raises
        ------
        arena.store.categories.CategoryError
            An unknown key (with "did you mean") or an unusable label.
        """
        from arena.db.session import take_write_lock
        from arena.store.categories import set_label

        with self.engine().begin() as conn:
            take_write_lock(conn, "label a category")
            return Labelled(key, set_label(conn, key, name))

    # ------------------------------------------------------------------ rating

    def rebuild(
        self,
        *,
        category: str | None = None,
        source: str | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        rounds: int | None = None,
        seed: int = DEFAULT_SEED,
        level: float = DEFAULT_LEVEL,
        ci: str = DEFAULT_CI,
        simultaneous: bool = False,
        ties: str = DEFAULT_TIES,
        both_bad: str = DEFAULT_BOTH_BAD,
        position: bool = False,
        anchor: str | tuple[str, float] | None = None,
        prior: float | None = None,
        min_battles: int = DEFAULT_MIN_BATTLES,
        tiers: TierMethod = DEFAULT_TIERS,
        tier_rule: TierRule = DEFAULT_TIER_RULE,
        cluster: str = DEFAULT_CLUSTER,
        style_control: bool = True,
        style_features: Iterable[str] = (),
        style_reg: float | None = None,
        components: str = DEFAULT_COMPONENTS,
        max_models: int = DEFAULT_MAX_MODELS,
        max_boards: int = DEFAULT_MAX_BOARDS,
        all_categories: bool = False,
        all_sources: bool = False,
        exclude_flagged: bool = False,
        read: str = DEFAULT_READ,
        progress: Progress | None = None,
    ) -> Rebuilt:
        """Rate the stored battles and write one snapshot per board (``arena rebuild``).

        The options are ``arena rebuild``'s (see ``arena rebuild --help``);
        ``anchor`` is ``"MODEL=RATING"`` or ``(model, rating)``; ``since`` and
        ``until`` ISO dates or datetimes. ``exclude_flagged`` leaves out the
        judges flagged by the stored audit of the board's latest snapshot.
        ``category`` is a key or a label, any case; ``all_sources`` also
        rates each source on its own board (``arena rebuild --all-sources``).

        Every option is checked (:mod:`arena.core.options`) before the database
        is opened.

        Raises
        ------
        arena.jobs.rebuild.RebuildError
            Nothing to rate, a bad option (:class:`~arena.core.errors.OptionError`
            too), a board over ``max_models``, an unknown category or source.
            Nothing is written then.
        """
        opts = _rebuild_options(_declared(locals()))
        from arena.jobs.all_sources import rebuild_all_sources
        from arena.jobs.rebuild import RebuildError, rebuild

        try:
            category = self._category_key(category)
        except OptionError as exc:
            raise exc.extended("; no snapshot was written") from None
        excluded: tuple[str, ...] = ()
        if exclude_flagged:
            excluded = self._flagged_judges(category, source)
        opts = replace(opts, category=category, exclude_judges=excluded)
        engine = self.engine()
        run = rebuild_all_sources if all_sources else rebuild
        try:
            result = run(
                engine,
                opts,
                all_categories=all_categories,
                progress=progress,
                max_models=max_models,
                read=read,
                max_boards=max_boards,
            )
        except OptionError as exc:
            raise exc.extended("; no snapshot was written") from None
        except RebuildError as exc:
            self._check_selection(category, source)
            raise RebuildError(f"{exc}; no snapshot was written") from None
        return Rebuilt(result, excluded, exclude_flagged)

    def _flagged_judges(self, category: str | None, source: str | None) -> tuple[str, ...]:
        from arena.audit.read import AuditError, latest_flagged_judges
        from arena.boards.keys import BoardKey

        try:
            with self.engine().connect() as conn:
                key = BoardKey(category=category, source=source)
                return tuple(latest_flagged_judges(conn, key))
        except AuditError as exc:
            raise OptionError.about("exclude_flagged", str(exc)) from None

    def _category_key(self, category: str | None) -> str | None:
        """The key ``category`` names (a key or a label, any case); an unknown one is an
        :class:`OptionError` with "did you mean" and the known categories."""
        if category is None:
            return None
        from arena.boards.resolve import check_category
        from arena.boards.snapshots import SnapshotError

        with self.engine().connect() as conn:
            try:
                return check_category(conn, category)
            except SnapshotError as exc:
                raise OptionError.about("category", str(exc)) from None

    def _check_selection(self, category: str | None, source: str | None) -> None:
        """A category or source the database does not know: say so, with the known ones."""
        from arena.boards.resolve import check_category, check_source
        from arena.boards.snapshots import SnapshotError

        with self.engine().connect() as conn:
            for name, check, value in (
                ("category", check_category, category),
                ("source", check_source, source),
            ):
                try:
                    if value is not None:
                        check(conn, value)
                except SnapshotError as exc:
                    raise OptionError.about(name, f"{exc}; no snapshot was written") from None

    # ------------------------------------------------------------------ boards

    def _board(
        self,
        conn: Connection,
        *,
        snapshot: int | None,
        category: str | None,
        source: str | None,
        style_control: bool,
        component: int | None,
    ) -> Board:
        from arena.boards.resolve import resolve_board

        return resolve_board(
            conn,
            snapshot_id=snapshot,
            category=category,
            source=source,
            style_control=style_control,
            component=component,
        )

    def leaderboard(
        self,
        *,
        snapshot: int | None = None,
        category: str | None = None,
        source: str | None = None,
        style_control: bool = False,
        component: int | None = None,
        include_hidden: bool = False,
        provisional: bool = False,
    ) -> Leaderboard:
        """One snapshot of a board (``arena leaderboard``): the latest overall by default.

        ``include_hidden`` is ``--all``: also the models hidden from the site.
        ``provisional``: the provisional board ``arena serve`` keeps current (the
        latest snapshot refitted on the battles stored since, analytic
        intervals; its document says so under ``provisional``), or the latest
        snapshot itself when none is newer (``provisional`` is null then).
        Without it a provisional board is never shown.

        Raises
        ------
        arena.boards.snapshots.SnapshotError
            No such snapshot, or the board has none yet.
        arena.core.errors.OptionError
            ``provisional`` with a snapshot id, style control or another comparable set.
        """
        _declared(locals())
        if provisional:
            for name, given in (
                ("snapshot", snapshot is not None),
                ("style_control", style_control),
                ("component", component not in (None, 1)),
            ):
                if given:
                    raise OptionError(
                        name,
                        "{name} and {provisional} do not go together: a provisional board is "
                        "the latest raw board of the main comparable set",
                        also=("provisional",),
                    )
        with self.engine().connect() as conn:
            board = self._board(
                conn,
                snapshot=snapshot,
                category=category,
                source=source,
                style_control=style_control,
                component=component,
            )
            if provisional:
                from arena.boards.provisional import load_provisional

                board = load_provisional(conn, board) or board
        return Leaderboard(board, include_hidden, provisional=provisional)

    def refit_provisional(
        self,
        *,
        category: str | None = None,
        source: str | None = None,
        force: bool = False,
        provisional_method: str = DEFAULT_PROVISIONAL_METHOD,
    ) -> Refitted:
        """Refit a board's provisional board when battles came since its last board
        (``arena serve`` does this every few seconds, one process per arena).

        The board's latest snapshot refitted on every battle stored since, with
        ``provisional_method`` intervals (:mod:`arena.jobs.provisional`); each
        call after the first of this ``Arena`` warm-starts from the previous
        fit. ``force``: refit even without new battles. A board that cannot have
        one (no snapshot yet, too many models) is not refitted and the result says why.
        """
        from arena.boards.keys import BoardKey
        from arena.jobs.provisional import Refitter

        refitter = self._refitters.get(provisional_method)
        if refitter is None:
            refitter = Refitter(self.engine(), method=provisional_method)
            self._refitters[provisional_method] = refitter
        key = BoardKey(category=category, source=source)
        return Refitted(refitter.refit(key, force=force))

    def snapshots(self) -> Snapshots:
        """Every snapshot, oldest first (``arena snapshots``)."""
        from arena.boards.snapshots import list_snapshots

        with self.engine().connect() as conn:
            return Snapshots(tuple(list_snapshots(conn)))

    def compare(
        self,
        model_a: str,
        model_b: str,
        *,
        snapshot: int | None = None,
        category: str | None = None,
        source: str | None = None,
        style_control: bool = False,
        component: int | None = None,
    ) -> Comparison:
        """Head-to-head verdict of ``model_a`` against ``model_b`` (``arena compare``).

        Raises
        ------
        arena.boards.snapshots.SnapshotError
            No such snapshot or board, an unknown model, pruned samples.
        """
        _declared(locals())
        from arena.boards.compare import compare

        if model_a == model_b:
            raise OptionError("model_b", "compare two different models ({name} is model_a)")
        with self.engine().connect() as conn:
            h = compare(
                conn,
                model_a,
                model_b,
                snapshot_id=snapshot,
                category=category,
                style_control=style_control,
                component=component,
                source=source,
            )
        return Comparison(h)

    def agreement(
        self,
        reference: str | dict[str, Any],
        candidate: str | dict[str, Any],
        *,
        level: float = DEFAULT_LEVEL,
        votes: bool = True,
    ) -> Agreement:
        """A candidate board against a reference board (``arena agreement``).

        ``reference`` / ``candidate`` are board selectors (``"source=lmarena"``,
        ``"category=math,style"``, a snapshot id) or ``resolve_board`` keyword
        dicts. Returns :class:`arena.audit.agreement.Agreement` (its
        ``to_dict()`` is the JSON of the command).

        Raises
        ------
        arena.boards.snapshots.SnapshotError
            A board not found, pruned samples, fewer than two shared ranked models.
        ValueError
            A bad selector.
        """
        _declared(locals())
        from arena.audit.agreement import board_agreement

        with self.engine().connect() as conn:
            return board_agreement(
                conn, reference=reference, candidate=candidate, level=level, votes=votes
            )

    def diff(
        self,
        old: int | None = None,
        new: int | None = None,
        *,
        category: str | None = None,
        source: str | None = None,
        style_control: bool = False,
        component: int | None = None,
    ) -> DiffResult:
        """What moved between snapshots ``old`` and ``new`` of one board (``arena diff``).

        With no ids: the board's latest snapshot against the one before it;
        with ``style_control`` and no ids, the latest raw board against its
        style-controlled board from the same rebuild.

        Raises
        ------
        arena.boards.snapshots.SnapshotError
            Snapshots of different boards, unknown ids, one snapshot only.
        """
        _declared(locals())
        for name, value in (("old", old), ("new", new)):  # snapshot ids, named as given
            replace(OPTIONS["snapshot"], name=name).check(value)
        from arena.boards.diff import diff
        from arena.boards.resolve import resolve_board
        from arena.boards.snapshots import SnapshotError, previous_snapshot_id

        if (old is None) != (new is None):
            raise OptionError("old", "give two snapshot ids (old, new), or none")
        if old is not None and (style_control or category or source or component):
            raise OptionError(
                "style_control",
                "{name}, category, source and component pick the boards only without ids",
            )
        with self.engine().connect() as conn:
            if old is None:
                latest = resolve_board(
                    conn, category=category, source=source, component=component
                ).snapshot
                if style_control:
                    old = latest.id
                    new = resolve_board(conn, snapshot_id=latest.id, style_control=True).snapshot.id
                else:
                    old = previous_snapshot_id(conn, latest)
                    if old is None:
                        raise SnapshotError(
                            f"board {latest.board!r} has one snapshot ({latest.id}): nothing "
                            "to diff yet; run `arena rebuild` again after new battles"
                        )
                    new = latest.id
            assert new is not None  # both ids or none (checked above)
            return DiffResult(diff(conn, old, new))

    def prune_snapshots(
        self,
        *,
        keep_days: float | None = None,
        keep_last: int | None = None,
        dry_run: bool = False,
    ) -> Pruned:
        """Drop the samples and pair tables of old snapshots (``arena snapshots prune``).

        A snapshot loses its detail only if older than ``keep_days`` and not
        among its board's newest ``keep_last``; the latest of every board is kept.
        """
        _declared(locals())
        from arena.db.session import take_write_lock
        from arena.jobs.retention import prune_snapshots

        if keep_days is None and keep_last is None:
            raise OptionError("keep_days", "give {name}, keep_last or both")
        with self.engine().begin() as conn:
            take_write_lock(conn, "prune snapshots")
            return Pruned(
                prune_snapshots(conn, keep_days=keep_days, keep_last=keep_last, dry_run=dry_run)
            )

    # ------------------------------------------------------------------ readers

    def audit(
        self,
        *,
        snapshot: int | None = None,
        category: str | None = None,
        source: str | None = None,
        component: int | None = None,
        probes: Iterable[str] = (),
        level: float = DEFAULT_LEVEL,
        alpha: float = DEFAULT_AUDIT_ALPHA,
        rounds: int | None = None,
        seed: int = DEFAULT_SEED,
        store: bool = True,
        progress: Progress | None = None,
    ) -> AuditResult:
        """Audit the votes behind a snapshot (``arena audit``).

        ``probes``: run only these (a partial audit is not stored); ``store``:
        keep the audit with the snapshot (``--no-store`` is ``store=False``).

        Raises
        ------
        arena.audit.read.AuditError
            No snapshot to audit, or nothing in it.
        """
        _declared(locals())
        from arena.audit.read import audit_snapshot
        from arena.boards.keys import BoardKey

        category = self._category_key(category)
        if component is not None or source is not None:
            with self.engine().connect() as conn:
                snapshot = self._board(
                    conn,
                    snapshot=snapshot,
                    category=category,
                    source=source,
                    style_control=False,
                    component=component,
                ).snapshot.id
        info, report = audit_snapshot(
            self.engine(),
            snapshot_id=snapshot,
            board=BoardKey(category=category, source=source),
            level=level,
            alpha=alpha,
            seed=seed,
            rounds=rounds,
            only=tuple(probes) or None,
            store=store,
            progress=progress,
        )
        return AuditResult(info, report)

    def _plan_inputs(
        self, snapshot: int | None, category: str | None, source: str | None, component: int | None
    ) -> PlanInputs:
        from arena.boards.snapshots import SnapshotError
        from arena.plan.store import plan_inputs

        with self.engine().connect() as conn:
            board = self._board(
                conn,
                snapshot=snapshot,
                category=category,
                source=source,
                style_control=False,
                component=component,
            )
            inputs = plan_inputs(conn, board.snapshot.id)
        if inputs is None:
            raise SnapshotError(f"no snapshot {board.snapshot.id}")
        return inputs

    def plan(
        self,
        *,
        snapshot: int | None = None,
        category: str | None = None,
        source: str | None = None,
        component: int | None = None,
        rule: str = DEFAULT_PLAN_RULE,
        n: int | None = None,
        top: int | None = None,
        seed: int = DEFAULT_SEED,
    ) -> PlanWeights | PlanDraws:
        """Sampling probabilities per pair for the next battles (``arena plan``).

        Every pair of ranked models with its battles and probability (the
        ``top`` most probable with ``top``); with ``n``, ``n`` battles drawn
        from those probabilities instead.
        """
        _declared(locals())
        from arena.boards.snapshots import SnapshotError
        from arena.plan.board_plan import plan_draws, plan_weights

        inp = self._plan_inputs(snapshot, category, source, component)
        try:
            if n is not None:
                return PlanDraws(inp.snapshot, rule, seed, plan_draws(inp, n, rule=rule, seed=seed))
            listed = plan_weights(inp, rule=rule, top=top)
        except OptionError:
            raise
        except ValueError as exc:  # an unknown rule, or fewer than two ranked models
            raise SnapshotError(f"snapshot {inp.snapshot.id}: {exc}") from None
        return PlanWeights(inp.snapshot, rule, listed.pairs, top, listed.pairs_total)

    def plan_power(
        self,
        models: Iterable[str] = (),
        *,
        snapshot: int | None = None,
        category: str | None = None,
        source: str | None = None,
        component: int | None = None,
        power: float = DEFAULT_POWER,
    ) -> PlanPower:
        """Battles needed to separate two models, or every adjacent pair (``arena plan power``)."""
        _declared(locals())
        from arena.boards.snapshots import SnapshotError
        from arena.plan.board_plan import plan_power

        inp = self._plan_inputs(snapshot, category, source, component)
        try:
            pairs = plan_power(inp, tuple(models), power=power)
        except KeyError as exc:
            raise SnapshotError(exc.args[0]) from None
        return PlanPower(inp.snapshot, inp.level, power, pairs)

    def publish(
        self,
        out_dir: str | os.PathLike[str],
        *,
        snapshot: int | None = None,
        heatmap_top: int = DEFAULT_HEATMAP_TOP,
        attribution: str | None = None,
        max_boards: int = DEFAULT_MAX_BOARDS,
        progress: Progress | None = None,
        base_url: str | None = None,
    ) -> Published:
        """Write the leaderboard as a static site into ``out_dir`` (``arena publish``).

        ``base_url``: the address the site is served at; link previews then get
        absolute ``og:image`` and ``og:url`` (none is invented without it).

        Raises
        ------
        arena.publish.atomic.PublishError
            No snapshot, or a target that is not arena's site; an ``OSError``
            when ``out_dir`` cannot be written (the previous site stays).
        """
        _declared(locals())
        from arena.publish.atomic import PublishError
        from arena.publish.site import publish_site

        if progress is not None:
            progress(f"publish: rendering the site into {out_dir}")
        try:
            report = publish_site(
                self.engine(),
                out_dir,
                snapshot_id=snapshot,
                top=heatmap_top,
                attribution=attribution,
                max_boards=max_boards,
                base_url=base_url,
            )
        except OSError as exc:
            raise PublishError(f"cannot write {out_dir}: {exc.strerror or exc}") from exc
        return Published(report)

    def nightly(
        self,
        incoming: str | os.PathLike[str],
        site: str | os.PathLike[str],
        *,
        done: str | os.PathLike[str] | None = None,
        failed: str | os.PathLike[str] | None = None,
        rounds: int | None = None,
        seed: int = DEFAULT_SEED,
        level: float = DEFAULT_LEVEL,
        ci: str = DEFAULT_CI,
        simultaneous: bool = False,
        ties: str = DEFAULT_TIES,
        both_bad: str = DEFAULT_BOTH_BAD,
        position: bool = False,
        anchor: str | tuple[str, float] | None = None,
        prior: float | None = None,
        min_battles: int = DEFAULT_MIN_BATTLES,
        tiers: TierMethod = DEFAULT_TIERS,
        tier_rule: TierRule = DEFAULT_TIER_RULE,
        cluster: str = DEFAULT_CLUSTER,
        style_control: bool = True,
        style_features: Iterable[str] = (),
        style_reg: float | None = None,
        components: str = DEFAULT_COMPONENTS,
        max_models: int = DEFAULT_MAX_MODELS,
        heatmap_top: int = DEFAULT_HEATMAP_TOP,
        attribution: str | None = None,
        prune_keep_days: float | None = None,
        prune_keep_last: int | None = None,
        max_boards: int = DEFAULT_MAX_BOARDS,
        follow_symlinks: bool = False,
        boards: str = DEFAULT_NIGHTLY_BOARDS,
        progress: Progress | None = None,
    ) -> NightResult:
        """Ingest a drop folder, rebuild every board and publish the site (``arena nightly``).

        ``boards="kept"`` (the default) rebuilds the boards the database has,
        each with the options its latest snapshot was built with (sources kept
        apart, style variants, categories, excluded judges); the rating options
        below then apply only to a database without a snapshot. ``boards="given"``
        rebuilds the overall board and every category with them (every source
        pooled on one board). The rating options are :meth:`rebuild`'s; the site's :meth:`publish`'s;
        ``prune_keep_days``/``prune_keep_last`` prune old snapshots after a
        good night (as :meth:`prune_snapshots`). ``result.exit_code`` is the
        command's exit code.

        Raises
        ------
        arena.db.lock.LockHeld
            Another run kept the lock longer than the arena's ``wait``; nothing was done.
        """
        opts = _rebuild_options(_declared(locals()))
        from arena.jobs.nightly import nightly

        result = nightly(
            self.engine(create=True),
            incoming,
            site,
            opts,
            done=done,
            failed=failed,
            wait=self.wait,
            max_models=max_models,
            max_boards=max_boards,
            top=heatmap_top,
            attribution=attribution,
            progress=progress,
            prune_keep_days=prune_keep_days,
            prune_keep_last=prune_keep_last,
            follow_symlinks=follow_symlinks,
            boards=boards,
        )
        return NightResult(result)


def _one_line_failures(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` raising :class:`~arena.db.session.DatabaseError` (an ArenaError) for a
    failure of the environment underneath it that arena can name in one line (a
    read-only database, a full disk, a server gone): from Python as from the CLI."""

    @functools.wraps(method)
    def call(self: Arena, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except ArenaError:
            raise
        except Exception as exc:
            from arena.db.errors import describe
            from arena.db.session import DatabaseError

            message = describe(exc)
            if message is None:
                raise
            raise DatabaseError(message) from exc

    return call


for _name, _method in inspect.getmembers(Arena, inspect.isfunction):
    if not _name.startswith("_") and _name not in ("close",):
        setattr(Arena, _name, _one_line_failures(_method))
