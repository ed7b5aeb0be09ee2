"""Writing normalised battles into the store, fast, inside the caller's transaction.

Rows go in through the DBAPI's bulk paths (``executemany`` on SQLite, ``COPY`` on
PostgreSQL; :mod:`arena.ingest.dialects` holds what differs) via SQLAlchemy's
connection, because ORM objects cost ~10x more per row. Battle ids are assigned here so that category links can be written in the
same pass; on SQLite the writer holds the write lock from its first statement.
(About 440 lines: one chunk's writes of battles, models, categories, style
features and count-table cells belong to one transaction and share the id
bookkeeping; what differs between SQLite and PostgreSQL is in dialects.py.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple, cast

from sqlalchemy import Connection, func, select

from arena.db.models import Battle, Category, Model, StyleFeature
from arena.ingest.bulk import build_indexes, drop_indexes, wants_bulk
from arena.ingest.counts import CountAccumulator
from arena.ingest.dialects import dialect_insert, rows_for
from arena.ingest.records import SELF_PLAY, ColumnBlock, ParsedBattle
from arena.ingest.style import STYLE_COLUMNS, Style
from arena.store.derived import derive_names, derive_positions, load_rules

#: Battle fields that are often empty; a chunk binds only those it fills.
_OPTIONAL = ("external_id", "judge", "question", "language", "occurred_at", "excluded_reason")
_LOOKUP_CHUNK = 5000


@dataclass
class ChunkResult:  # counts of one chunk
    inserted: int
    excluded: int
    duplicates: int
    #: (position in chunk, message) for ids repeated inside the file being ingested
    repeated: list[tuple[int, str]]


def _stored_mask(ids: list[int], inserted: set[int] | None) -> list[bool] | None:
    """Which battles of a chunk were stored (None: all of them)."""
    if inserted is None:
        return None
    return list(map(inserted.__contains__, ids))


class StoredBattle(NamedTuple):
    """What a stored battle says, to compare with a row that repeats its external id."""

    batch_id: int
    id: int
    model_a: str
    model_b: str
    outcome: str
    weight: float
    source: str | None

    @property
    def content(self) -> tuple[Any, ...]:
        return (self.model_a, self.model_b, self.outcome, self.weight, self.source)


def _describe(model_a: str, model_b: str, outcome: str, weight: float, source: str | None) -> str:
    extra = "" if weight == 1.0 else f", weight {weight:g}"
    return f"{model_a!r} vs {model_b!r}, {outcome}{extra}, source {source or '(none)'}"


def _conflict(ext: str, have: StoredBattle, row: tuple[Any, ...]) -> str:
    return (
        f"id {ext!r} is already stored with other content: stored battle {have.id} "
        f"(batch {have.batch_id}): {_describe(*have.content)}; this row: {_describe(*row)}"
    )


@dataclass
class StoredNames:
    """What a writer starts from: the name -> id maps of models, categories and
    style features, the derived-category rules, and the next battle id (five reads).

    arena serve keeps one between its group commits and reads it again only when
    :func:`names_fingerprint` changed (:mod:`arena.serve.writer`).
    """

    models: dict[str, int]
    categories: dict[str, int]
    features: dict[str, int]
    rules: list[Any]
    next_id: int

    @classmethod
    def read(cls, conn: Connection, next_id: int | None = None) -> StoredNames:
        if next_id is None:
            next_id = (conn.execute(select(func.max(Battle.id))).scalar() or 0) + 1
        return cls(
            models=dict(conn.execute(select(Model.name, Model.id)).all()),
            categories=dict(conn.execute(select(Category.name, Category.id)).all()),
            features=dict(conn.execute(select(StyleFeature.name, StyleFeature.id)).all()),
            rules=load_rules(conn),
            next_id=next_id,
        )


def names_fingerprint(conn: Connection) -> tuple[tuple[Any, ...], int]:
    """(what :class:`StoredNames` maps, in brief; the next battle id), one statement.

    Models, categories and style features are only ever added (never renamed or
    removed), so their counts and largest ids tell whether a kept map is current;
    the rules are few and compared whole (a rule may be redefined under its name).
    """
    if conn.dialect.name == "postgresql":
        rules = (
            "SELECT string_agg(name || ' ' || tags || ' ' || at_least, ',' ORDER BY name) "
            "FROM derived_categories"
        )
    else:
        rules = (
            "SELECT group_concat(name || ' ' || tags || ' ' || at_least, ',') "
            "FROM (SELECT * FROM derived_categories ORDER BY name)"
        )
    row = conn.exec_driver_sql(
        "SELECT (SELECT count(*) FROM models), (SELECT max(id) FROM models), "
        "(SELECT count(*) FROM categories), (SELECT max(id) FROM categories), "
        "(SELECT count(*) FROM style_features), (SELECT max(id) FROM style_features), "
        f"({rules}), (SELECT max(id) FROM battles)"
    ).one()
    return tuple(row[:7]), (row[7] or 0) + 1


class BattleWriter:
    """Insert chunks of :class:`ParsedBattle` for one ingest batch."""

    def __init__(
        self,
        conn: Connection,
        *,
        batch_id: int,
        source: str | None,
        few_rows: bool = False,
        names: StoredNames | None = None,
        ids_locked: bool = False,
        keys_new: bool = False,
    ) -> None:
        self.conn = conn
        self.batch_id = batch_id
        self.source = source
        if names is None:
            names = StoredNames.read(conn)
        self.models = names.models
        self.categories = names.categories
        self.features = names.features
        #: derived categories (arena.store.derived): linked here, like the tags they read
        self.rules = names.rules
        self._next_id = names.next_id
        #: ``keys_new``: the caller found, under the battle-id lock, that no external
        #: id it writes is stored (arena serve's pre-check): keys go in unchecked
        self.keys_new = keys_new
        #: what differs between the engines, chosen once (arena.ingest.dialects);
        #: ``few_rows``: a writer of a few dozen rows (arena serve's group commits)
        #: takes the way with the fewest statements (see PostgresRows);
        #: ``ids_locked``: the caller holds the battle-id lock (hold_battle_ids) already
        self.rows = rows_for(
            conn,
            batch_id=batch_id,
            source=source,
            next_id=self._next_id,
            few_rows=few_rows,
            ids_locked=ids_locked,
        )
        self._insert_construct = dialect_insert(conn)
        self.new_models = 0
        #: bulk mode (see :meth:`start_bulk`): None = not decided yet
        self.bulk: bool | None = None
        #: foreign keys checked row by row (PostgreSQL role that may not defer them):
        #: a bulk load drops and re-adds them
        self._fk_per_row = self.rows.fk_per_row
        self._fks_dropped: list[Any] = []
        #: the stored battles per board and cell, for the count table (arena.ingest.counts)
        self.counts = CountAccumulator()

    # -- bulk mode (see arena.ingest.bulk) ----------------------------------
    def start_bulk(self, expected_rows: float) -> bool:
        """Decide, before the first row, whether this ingest loads in bulk; returns the decision."""
        self.bulk = wants_bulk(expected_rows, self._next_id - 1)
        self.counts.expect(expected_rows)
        if self.bulk:
            self._fks_dropped = drop_indexes(self.conn, foreign_keys=self._fk_per_row)
        return self.bulk

    def finish(self) -> None:
        """Build the indexes a bulk load dropped, verify references (see check_references),
        and add the stored battles to the count table (:mod:`arena.ingest.counts`)."""
        if self.bulk:
            build_indexes(
                self.conn,
                foreign_keys=self._fks_dropped,
                first_id=self.rows.first_id,
                last_id=self.rows.last_id,
            )
        self.check_references()
        self.counts.flush(
            self.conn,
            self.rows.merge_counts,
            first_id=self.rows.first_id,
            last_id=self.rows.last_id,
            batch_id=self.batch_id,
        )

    def check_references(self) -> None:
        """Verify, set-wise, that every battle this writer stored names a stored model.

        Stands in for the per-row foreign-key checks that this ingest skipped
        (SQLite: always, see the loader; PostgreSQL: when ``defer_references``
        of :class:`arena.ingest.dialects.PostgresRows` turned the triggers off).  One scan of the new rows.
        """
        bad = self.rows.check_references()
        if bad is not None:
            raise RuntimeError(
                f"ingest wrote battle {bad} with a dangling reference (a bug; nothing was committed)"
            )

    # -- name -> id ---------------------------------------------------------
    def _id_for(
        self, table: type[Model | Category | StyleFeature], cache: dict[str, int], name: str
    ) -> int:
        """Id of ``name`` in ``table`` (models or categories), created on first sight."""
        found = cache.get(name)
        if found is None:
            # A concurrent ingest may have stored the name since this writer read the
            # table (PostgreSQL; on SQLite the writer holds the write lock): skip the
            # conflict and read the id it committed, instead of a unique violation.
            found = self.conn.execute(
                self._insert_construct(table)
                .values(name=name)
                .on_conflict_do_nothing(index_elements=["name"])
                .returning(table.id)
            ).scalar()
            if found is None:
                found = self.conn.execute(select(table.id).where(table.name == name)).scalar_one()
            elif table is Model:
                self.new_models += 1
            cache[name] = found
        return found

    def _model_id(self, name: str) -> int:
        return self._id_for(Model, self.models, name)

    def case_warnings(self, before: set[str]) -> list[str]:
        """Names are kept as given; a new name that differs from another only by case
        is most likely one model spelled twice, so say so (``before``: the names
        stored before this ingest)."""
        folded: dict[str, str] = {}
        for name in sorted(before):
            folded.setdefault(name.casefold(), name)
        out = []
        for name in sorted(self.models.keys() - before):
            other = folded.setdefault(name.casefold(), name)
            if other != name:
                out.append(
                    f"model {name!r} differs from {other!r} only by case; kept as two models"
                )
        return out

    def _category_id(self, name: str) -> int:
        return self._id_for(Category, self.categories, name)

    def _existing(self, ids: list[str]) -> dict[str, StoredBattle]:
        """external id -> the stored battle, for those already stored (driver SQL: this
        runs per chunk and compiling a 5,000-parameter IN through the SQL expression
        layer cost more than the lookup itself)."""
        found: dict[str, StoredBattle] = {}
        for start in range(0, len(ids), _LOOKUP_CHUNK):
            rows = self.rows.existing(ids[start : start + _LOOKUP_CHUNK])
            found.update((row[0], StoredBattle(*row[1:])) for row in rows)
        return found

    def _reserve_ids(self, n: int) -> list[int]:
        return self.rows.reserve_ids(n)

    # -- the chunk ----------------------------------------------------------
    def write(self, chunk: Sequence[ParsedBattle]) -> ChunkResult:
        """Insert one chunk; rows whose external id is already stored are skipped.

        The unique index of ``battle_keys`` decides (``ON CONFLICT DO NOTHING``),
        so there is no lookup per row; only the few skipped rows are looked up
        afterwards, to tell a re-ingested battle (a duplicate) from an id that
        this very file repeats (a rejected row).
        """
        ids = self._reserve_ids(len(chunk))
        models = self.models
        model_id = self._model_id
        # Bind only the columns this chunk fills: sqlite3 spends ~0.5 us binding
        # each parameter, NULLs included, which was a third of the insert time.
        # (Values are None or non-empty, so truthiness tells presence, at C speed.)
        optional = [f for f in _OPTIONAL if any(map(attrgetter(f), chunk))]
        if set(map(attrgetter("weight"), chunk)) != {1.0}:
            optional.append("weight")
        time_format = self.rows.time_format
        if time_format is not None and "occurred_at" in optional:
            # bound as SQLite text: the chunk's times are formatted for the insert
            # (its other fields are read below; its times are not)
            chunk = [
                b._replace(occurred_at=b.occurred_at.strftime(time_format))  # type: ignore[arg-type]
                if b.occurred_at is not None
                else b
                for b in chunk
            ]
        columns = ["id", "model_a_id", "model_b_id", "outcome", *optional]
        extra = attrgetter(*optional) if optional else None
        rows = []
        for battle_id, b in zip(ids, chunk, strict=True):
            row = (
                battle_id,
                models.get(b.model_a) or model_id(b.model_a),
                models.get(b.model_b) or model_id(b.model_b),
                b.outcome,
            )
            if extra is not None:
                more = extra(b)
                row = row + (more if len(optional) > 1 else (more,))
            rows.append(row)
        has_ext = "external_id" in optional
        keys = (  # a bulk load writes them at the end (arena.ingest.bulk)
            [(b.external_id, i) for i, b in zip(ids, chunk, strict=True) if b.external_id]
            if has_ext and not self.bulk
            else None
        )
        inserted = self._insert(
            columns, rows, ids, keys, may_conflict=has_ext and not self.bulk and not self.keys_new
        )

        repeated: list[tuple[int, str]] = []
        duplicates = 0
        if inserted is not None:
            skipped = [pos for pos, battle_id in enumerate(ids) if battle_id not in inserted]
            # only a row with an external id can be skipped (its key was stored)
            exts = cast(list[str], [chunk[pos].external_id for pos in skipped])
            repeated, duplicates = self._classify_skipped(
                exts,
                skipped,
                [
                    (chunk[p].model_a, chunk[p].model_b, chunk[p].outcome, chunk[p].weight)
                    for p in skipped
                ],
            )
        links = []
        styles = []
        excluded = 0
        stored = 0
        for battle_id, b in zip(ids, chunk, strict=True):
            if inserted is not None and battle_id not in inserted:
                continue
            stored += 1
            if b.excluded_reason is not None:
                excluded += 1
            for name in b.categories:
                links.append((self._category_id(name), battle_id))
            for name in derive_names(self.rules, b.categories):
                links.append((self._category_id(name), battle_id))
            if b.style is not None:
                styles.append((battle_id, b.style))
        self._link(links)
        self._write_style(styles)
        tags: dict[int, list[int]] = {}
        for category, battle_id in links:
            tags.setdefault(category, []).append(battle_id - ids[0])
        self.counts.add(
            [r[1] for r in rows],
            [r[2] for r in rows],
            [r[3] for r in rows],
            not_rated=[i for i, b in enumerate(chunk) if b.excluded_reason is not None],
            weights=[b.weight for b in chunk] if "weight" in optional else None,
            stored=_stored_mask(ids, inserted),
            tags=tags.items(),
        )
        return ChunkResult(stored, excluded, duplicates, repeated)

    def _write_style_columns(
        self, block: ColumnBlock, ids: list[int], inserted: set[int] | None
    ) -> None:
        """The style columns of a column block, for the battles actually stored."""
        keep = (
            range(block.n)
            if inserted is None
            else [p for p in range(block.n) if ids[p] in inserted]
        )
        style = block.style
        assert style is not None  # called for a block with style columns
        if style.counts is not None:
            counts = style.counts
            self._rows(
                "battle_style",
                ("battle_id", *STYLE_COLUMNS),
                [(ids[p], *row) for p in keep if (row := counts[p]) is not None],
            )
        for name, a, b in style.covariates:
            feature = self._id_for(StyleFeature, self.features, name)
            self._rows(
                "battle_covariates",
                ("feature_id", "battle_id", "value_a", "value_b"),
                [(feature, ids[p], a[p], b[p]) for p in keep],
            )

    def _write_style(self, styles: list[tuple[int, Style]]) -> None:
        """Style counts (one narrow row per battle) and user covariates of stored battles."""
        counts = [(battle_id, *s.counts) for battle_id, s in styles if s.counts is not None]
        covariates = [
            (self._id_for(StyleFeature, self.features, name), battle_id, a, b)
            for battle_id, s in styles
            for name, a, b in s.covariates
        ]
        self._rows("battle_style", ("battle_id", *STYLE_COLUMNS), counts)
        self._rows(
            "battle_covariates", ("feature_id", "battle_id", "value_a", "value_b"), covariates
        )

    def write_columns(self, block: ColumnBlock) -> ChunkResult:
        """Insert one :class:`ColumnBlock`: names mapped to ids column-wise, rows bound
        straight from the columns (no per-row Python), same outcome as :meth:`write`."""
        n = block.n
        ids = self._reserve_ids(n)
        models = self.models
        for name in sorted(block.names - models.keys()):
            self._model_id(name)
        a_ids = list(map(models.__getitem__, block.model_a))
        b_ids = list(map(models.__getitem__, block.model_b))
        columns = ["id", "model_a_id", "model_b_id", "outcome"]
        cols: list[Sequence[Any]] = [ids, a_ids, b_ids, block.outcome]
        if block.external_id is not None:
            columns.append("external_id")
            cols.append(block.external_id)
        if block.self_play:
            excluded: list[str | None] = [None] * n
            for pos in block.self_play:
                excluded[pos] = SELF_PLAY
            columns.append("excluded_reason")
            cols.append(excluded)
        more = [
            (name, values)
            for name, values in (
                ("question", block.question),
                ("judge", block.judge),
                ("weight", block.weight),
            )
            if values is not None
        ]
        for name, values in more:
            columns.append(name)
            cols.append(values)
        copy_text = self.rows.copy_text(
            ids,
            a_ids,
            b_ids,
            block.outcome,
            block.external_id,
            excluded if block.self_play else None,
            n,
            texts=[v for v in (block.question, block.judge) if v is not None],
            weight=block.weight,
        )
        inserted = self._insert(
            columns,
            zip(*cols, strict=True),
            ids,
            None
            if block.external_id is None or self.bulk
            else list(zip(block.external_id, ids, strict=True)),
            may_conflict=block.external_id is not None and not self.bulk and not self.keys_new,
            copy_text=copy_text,
        )
        repeated: list[tuple[int, str]] = []
        duplicates = 0
        if inserted is not None:
            skipped = [pos for pos, battle_id in enumerate(ids) if battle_id not in inserted]
            ext = block.external_id
            assert ext is not None  # only keyed rows can be skipped
            weight = block.weight
            repeated, duplicates = self._classify_skipped(
                [ext[pos] for pos in skipped],
                skipped,
                [
                    (
                        block.model_a[p],
                        block.model_b[p],
                        block.outcome[p],
                        1.0 if weight is None else weight[p],
                    )
                    for p in skipped
                ],
            )
        if block.style is not None:
            self._write_style_columns(block, ids, inserted)
        named = [*block.tags, *derive_positions(self.rules, block.tags)]
        tags = [(self._category_id(name), positions) for name, positions in named]
        links: list[tuple[int, int]] = []
        for category, positions in tags:
            links.extend(
                (category, ids[pos])
                for pos in positions
                if inserted is None or ids[pos] in inserted
            )
        self._link(links)
        self.counts.add(
            a_ids,
            b_ids,
            block.outcome,
            not_rated=block.self_play,
            weights=block.weight,
            stored=_stored_mask(ids, inserted),
            tags=tags,
        )
        if inserted is None:
            return ChunkResult(n, len(block.self_play), duplicates, repeated)
        return ChunkResult(
            len(inserted), sum(ids[p] in inserted for p in block.self_play), duplicates, repeated
        )

    def _classify_skipped(
        self,
        exts: list[str],
        positions: list[int],
        content: list[tuple[str, str, str, float]],
    ) -> tuple[list[tuple[int, str]], int]:
        """Rows whose key was stored already: an id stored by an earlier batch with the same
        content is a duplicate; with other content (models, outcome, weight or source)
        it is a conflict, and one stored by this batch means the file repeats it --
        both rejected rows."""
        if not exts:
            return [], 0
        stored = self._existing(exts)
        repeated = []
        duplicates = 0
        for pos, ext, row in zip(positions, exts, content, strict=True):
            have = stored.get(ext)
            if have is None:  # its key is stored, its battle is not: deleted by hand
                repeated.append((pos, f"{ext!r} is the key of a deleted battle (arena db recount)"))
            elif have.batch_id == self.batch_id:
                repeated.append((pos, f"{ext!r} appears twice in this file"))
            elif (*row, self.source) != have.content:
                repeated.append((pos, _conflict(ext, have, (*row, self.source))))
            else:
                duplicates += 1
        return repeated, duplicates

    def _link(self, links: list[tuple[int, int]]) -> None:
        self._rows("battle_categories", ("category_id", "battle_id"), links)

    def _rows(self, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        """Plain rows into a table that cannot conflict: executemany or COPY."""
        if rows:
            self.rows.rows(table, columns, rows)

    def _insert(
        self,
        names: list[str],
        rows: Iterable[tuple[Any, ...]],
        ids: list[int],
        keys: list[tuple[str, int]] | None,
        *,
        may_conflict: bool,
        copy_text: str | None = None,
    ) -> set[int] | None:
        """Battle rows and their keys (see ``insert`` of :mod:`arena.ingest.dialects`):
        the ids actually inserted, or None when all were."""
        return self.rows.insert(
            names, rows, ids, keys=keys, may_conflict=may_conflict, copy_text=copy_text
        )
