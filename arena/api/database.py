"""The front door's database commands: schema, sizes, recount and derived categories.

:class:`DatabaseMethods` is part of :class:`arena.api.Arena` (``arena db ...`` and
``arena categories derive``); each method owns its transaction and lock and
returns a frozen result whose ``to_dict()`` is the command's JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from arena.ingest.recount import Recount
    from arena.jobs.retention import DbStats
    from arena.store.derived import Rule

__all__ = [
    "DatabaseMethods",
    "DbSize",
    "DerivedDefined",
    "DerivedDropped",
    "Recounted",
    "SchemaState",
]


@dataclass(frozen=True)
class SchemaState:
    """``arena db current`` / ``arena db upgrade``: the schema revision before and now."""

    before: str | None
    revision: str | None
    head: str

    @property
    def up_to_date(self) -> bool:
        return self.revision == self.head

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "up_to_date": self.up_to_date}


@dataclass(frozen=True)
class DbSize:
    """``arena db stats``: rows and bytes of each table."""

    stats: DbStats

    def to_dict(self) -> dict[str, Any]:
        return self.stats.to_dict()


@dataclass(frozen=True)
class Recounted:
    """``arena db recount``: what the recount found and changed."""

    recount: Recount

    def to_dict(self) -> dict[str, Any]:
        return asdict(self.recount)


@dataclass(frozen=True)
class DerivedDefined:
    """``arena categories derive``: the rule stored and the battles now in its category."""

    rule: Rule
    battles: int
    replaced: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.rule.key,
            "tags": list(self.rule.tags),
            "at_least": self.rule.at_least,
            "note": self.rule.note,
            "rule": self.rule.describe(),
            "battles": self.battles,
            "replaced": self.replaced,
        }


@dataclass(frozen=True)
class DerivedDropped:
    """``arena categories derive KEY --remove``: the rule forgotten (its snapshots stay)."""

    key: str

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "removed": True}


class DatabaseMethods:
    """The database commands of :class:`arena.api.Arena` (mixed into it)."""

    url: str
    wait: float
    notice: Callable[[str], None] | None

    def engine(self, *, create: bool = False) -> Engine:  # pragma: no cover - Arena's
        raise NotImplementedError

    def schema(self) -> SchemaState:
        """The database's schema revision and the newest one this arena knows.

        Unlike every other method it opens a database at any revision (and an
        empty one, revision None); a revision newer than this arena's is refused.
        """
        from arena.db.session import check_known, create_db_engine, current_revision
        from arena.db.session import head_revision as head

        engine = create_db_engine(self.url, wait=self.wait)
        try:
            revision = current_revision(engine)
            check_known(revision, self.url)
        finally:
            engine.dispose()
        return SchemaState(before=revision, revision=revision, head=head())

    def upgrade(self, revision: str = "head") -> SchemaState:
        """Migrate the schema to ``revision`` (the newest by default)."""
        from arena.db.errors import describe
        from arena.db.session import (
            DatabaseError,
            create_db_engine,
            current_revision,
            head_revision,
            mask_passwords,
            upgrade,
        )

        engine = create_db_engine(self.url, wait=self.wait, notice=self.notice)
        try:
            before = current_revision(engine)
            upgrade(engine, self.url, revision)
            after = current_revision(engine)
        except DatabaseError:
            raise
        except Exception as exc:  # alembic/SQL errors: one line, not a traceback
            message = describe(exc) or mask_passwords(f"migration failed: {exc}")
            raise DatabaseError(message) from exc
        finally:
            engine.dispose()
        return SchemaState(before=before, revision=after, head=head_revision())

    def db_stats(self) -> DbSize:
        """Rows and bytes of each table, and the bytes one night's rebuild adds."""
        from arena.jobs.retention import db_stats

        with self.engine().connect() as conn:
            return DbSize(db_stats(conn))

    def recount(self, *, progress: Callable[[str], None] | None = None) -> Recounted:
        """Make the count table and the battle keys equal to the battles (one transaction;
        on PostgreSQL a VACUUM (ANALYZE) of both tables follows)."""
        from arena.db.session import take_write_lock
        from arena.ingest.recount import recount, vacuum_after_recount

        engine = self.engine()
        with engine.connect() as conn, conn.begin():
            take_write_lock(conn, "recount")
            done = recount(conn, progress=progress)
        if engine.dialect.name == "postgresql":
            if progress is not None:
                progress("recount: VACUUM (ANALYZE) battle_counts, battle_keys")
            vacuum_after_recount(engine)
        return Recounted(done)

    def derive_category(
        self, key: str, tags: Iterable[str], *, at_least: int | None = None, note: str = ""
    ) -> DerivedDefined:
        """Define category ``key`` as the battles carrying at least ``at_least`` of
        ``tags`` (all of them by default) and link every stored battle now; a rule of
        the same key is replaced. Later ingests link the battles they store."""
        from arena.db.session import take_write_lock
        from arena.ingest.derived import define
        from arena.store.derived import make_rule

        rule = make_rule(key, tags, at_least, note)
        with self.engine().begin() as conn:
            take_write_lock(conn, "derive a category")
            done = define(conn, rule)
        return DerivedDefined(rule=done.rule, battles=done.battles, replaced=done.replaced)

    def drop_category(self, key: str) -> DerivedDropped:
        """Forget derived category ``key``: its rule, links and counts (snapshots stay)."""
        from arena.db.session import take_write_lock
        from arena.ingest.derived import drop

        with self.engine().begin() as conn:
            take_write_lock(conn, "drop a derived category")
            drop(conn, key)
        return DerivedDropped(key)
