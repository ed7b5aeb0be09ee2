"""SQLAlchemy 2.0 typed models: the battle store and the immutable snapshots.

Every schema change goes through an Alembic migration in ``migrations/``;
``tests/test_db.py::test_models_and_migrations_agree`` (``alembic check``) checks that
these models and the migrations agree.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, ClassVar

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

if TYPE_CHECKING:
    from sqlalchemy.engine import Dialect

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: Longest model name accepted. Names are data, any Unicode, stored exactly.
MODEL_NAME_MAX = 512

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets BIGINT
# because a battle table can pass 2**31 rows over the years.
BigId = BigInteger().with_variant(Integer(), "sqlite")


def utcnow() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """An instant, stored as UTC on every engine.

    SQLite has no time zones: SQLAlchemy would store an aware datetime's
    wall-clock time and drop its offset (``10:00+05:00`` as 10:00), while
    PostgreSQL stores the instant (05:00 UTC), so ``--since`` would select
    different battles.  Values are converted to UTC before they are bound (a
    naive value is taken as UTC) and come back aware, in UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)

    if TYPE_CHECKING:
        # every model here maps a Table (DeclarativeBase types it FromClause,
        # which may also be a subquery): insert(), indexes, constraints
        __table__: ClassVar[Table]


class Model(Base):
    __tablename__ = "models"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(MODEL_NAME_MAX), unique=True)
    display_name: Mapped[str | None] = mapped_column(String(MODEL_NAME_MAX))
    organisation: Mapped[str | None] = mapped_column(String(255))
    licence: Mapped[str | None] = mapped_column(String(255))
    link: Mapped[str | None] = mapped_column(String(1024))
    hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ModelAlias(Base):
    """Another spelling of a model (``arena models alias ALIAS CANONICAL``, migration 0016).

    Two sources may name one release differently (``claude-3.7-sonnet`` and
    ``claude-3-7-sonnet-20250219``). An alias never merges battles or boards:
    each board rates the names its battles carry. It says only that two
    boards' rows are one model where boards are matched (``arena agreement``),
    and ``arena models`` shows it. ``reason`` says why the two are the same.
    """

    __tablename__ = "model_aliases"

    alias: Mapped[str] = mapped_column(String(MODEL_NAME_MAX), primary_key=True)
    canonical: Mapped[str] = mapped_column(String(MODEL_NAME_MAX), index=True)
    reason: Mapped[str] = mapped_column(String(1024), default="", server_default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class IngestBatch(Base):
    __tablename__ = "ingest_batches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    file_name: Mapped[str] = mapped_column(String(1024))
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    format: Mapped[str] = mapped_column(String(32))
    source: Mapped[str | None] = mapped_column(String(255))
    rows_read: Mapped[int] = mapped_column(Integer, default=0)
    inserted: Mapped[int] = mapped_column(Integer, default=0)
    duplicates: Mapped[int] = mapped_column(Integer, default=0)
    excluded: Mapped[int] = mapped_column(Integer, default=0)
    rejected: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: size and sha256 of the content read (decompressed for gzip; migration 0014):
    #: a later file that begins with it is read from where it ends (arena.ingest.prefix)
    content_bytes: Mapped[int | None] = mapped_column(BigInteger)
    content_sha256: Mapped[str | None] = mapped_column(String(64))


class Battle(Base):
    __tablename__ = "battles"
    __table_args__ = (
        # Written as ORs, not IN (...): SQLite evaluates a constant IN list in a
        # CHECK by building a temporary index per row, which halved ingest speed.
        CheckConstraint(
            "outcome = 'a_wins' OR outcome = 'b_wins' OR outcome = 'tie' "
            "OR outcome = 'tie_both_bad'",
            name="outcome",
        ),
        CheckConstraint("weight > 0", name="weight_positive"),
        # The rebuild's GROUP BY (model_a, model_b, outcome, weight) over rated battles
        # reads only this index: partial, so the `excluded_reason IS NULL` filter needs
        # no table lookups (10M battles: 57 s -> seconds), with `id` covered for the
        # watermark (SQLite: the rowid is in every index; PostgreSQL: INCLUDE).
        Index(
            "ix_battles_pair_outcome",
            "model_a_id",
            "model_b_id",
            "outcome",
            "weight",
            sqlite_where=text("excluded_reason IS NULL"),
            postgresql_where=text("excluded_reason IS NULL"),
            postgresql_include=["id"],
        ),
        # No unique index on external_id: BattleKey holds it (a partitioned table
        # can have no unique index without its partition key; docs/scale.md).
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    external_id: Mapped[str | None] = mapped_column(String(255))
    model_a_id: Mapped[int] = mapped_column(ForeignKey("models.id"))
    model_b_id: Mapped[int] = mapped_column(ForeignKey("models.id"))
    outcome: Mapped[str] = mapped_column(String(16))
    weight: Mapped[float] = mapped_column(Float, default=1.0, server_default="1")
    source: Mapped[str | None] = mapped_column(String(255))
    judge: Mapped[str | None] = mapped_column(String(255))
    question: Mapped[str | None] = mapped_column(String(255))
    language: Mapped[str | None] = mapped_column(String(64))
    occurred_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    batch_id: Mapped[int] = mapped_column(ForeignKey("ingest_batches.id"))
    #: Why a well-formed battle is kept but not rated (e.g. ``self_play``); NULL = rated.
    excluded_reason: Mapped[str | None] = mapped_column(String(64))


class BattleKey(Base):
    """External id -> battle: the store-wide de-duplication of battles (migration 0010).

    Ingest writes a battle's key first and skips battles whose key is stored; this
    table, not ``battles``, holds the unique index, so ``battles`` can be partitioned
    by time (``docs/scale.md``), which also leaves it no unique ``id`` to reference.
    """

    __tablename__ = "battle_keys"
    # One B-tree keyed by the external id: what the unique index on battles was.
    __table_args__ = {"sqlite_with_rowid": False}

    external_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    battle_id: Mapped[int] = mapped_column(BigId)


class Category(Base):
    __tablename__ = "categories"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)


class CategoryLabel(Base):
    """The name a category is shown under (``arena categories label KEY NAME``).

    Keyed by the category's name, not its id: a label is display text that may
    be set before or kept after the category's battles; it never changes a rating.
    """

    __tablename__ = "category_labels"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    label: Mapped[str] = mapped_column(String(255))


class DerivedCategory(Base):
    """A category computed from others: a battle belongs to it when it carries at
    least ``at_least`` of ``tags`` (``arena categories derive``, :mod:`arena.store.derived`).

    Its links are stored in ``battle_categories`` like a tag's (written at ingest for
    new battles, and for the stored ones when the rule is defined), so every
    board, count and rebuild treats it as any other category.
    """

    __tablename__ = "derived_categories"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    #: the tag names, as a JSON list (sorted)
    tags: Mapped[str] = mapped_column(Text)
    at_least: Mapped[int] = mapped_column(Integer)
    #: where the rule comes from, shown on the page ("" when not given)
    note: Mapped[str] = mapped_column(String(1024), default="")


class BattleCategory(Base):
    """Which categories a battle belongs to (many per battle)."""

    __tablename__ = "battle_categories"
    # One B-tree instead of a rowid table plus its primary-key index: half the
    # write cost for the ~5 links per battle of a tagged LMArena export.
    __table_args__ = {"sqlite_with_rowid": False}

    # Primary key leads with the category: a per-category rebuild scans one range.
    category_id: Mapped[int] = mapped_column(ForeignKey("categories.id"), primary_key=True)
    battle_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("battles.id", ondelete="CASCADE"), primary_key=True
    )


#: ``battle_counts.category_id`` of the board of all battles (no category has id 0).
ALL_BATTLES = 0


class BattleCount(Base):
    """Battles per (board, model_a, model_b, outcome, weight, rated): what a rebuild needs.

    Kept current inside every ingest's transaction (:mod:`arena.ingest.counts`), so a
    rebuild reads this small table instead of aggregating every battle;
    ``arena db recount`` rebuilds it from the battles.  ``category_id`` is a
    category's id, or :data:`ALL_BATTLES` for the board of all battles (hence no
    foreign key).  ``rated`` false counts battles kept but not rated (self-play).
    """

    __tablename__ = "battle_counts"
    __table_args__ = {"sqlite_with_rowid": False}

    category_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_a_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_b_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    outcome: Mapped[str] = mapped_column(String(16), primary_key=True)
    weight: Mapped[float] = mapped_column(Float, primary_key=True)
    rated: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    n: Mapped[int] = mapped_column(BigInteger)


#: The standard style features (LMArena's), each stored as ``NAME_a`` and ``NAME_b``.
STYLE_FEATURES = ("tokens", "headers", "lists", "bold")


class BattleStyle(Base):
    """The four style features of both answers of one battle (LMArena's ``conv_metadata``).

    One narrow row of integers per battle that carries metadata, so a style-
    controlled rebuild reads numbers, never JSON.  Battles without metadata have
    no row.  See :mod:`arena.ingest.style` for how the counts are read.
    """

    __tablename__ = "battle_style"

    battle_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("battles.id", ondelete="CASCADE"), primary_key=True
    )
    tokens_a: Mapped[int] = mapped_column(BigInteger)
    tokens_b: Mapped[int] = mapped_column(BigInteger)
    headers_a: Mapped[int] = mapped_column(Integer)
    headers_b: Mapped[int] = mapped_column(Integer)
    lists_a: Mapped[int] = mapped_column(Integer)
    lists_b: Mapped[int] = mapped_column(Integer)
    bold_a: Mapped[int] = mapped_column(Integer)
    bold_b: Mapped[int] = mapped_column(Integer)


class StyleFeature(Base):
    """A user-defined per-side covariate (``sentiment``, ``emoji``, ...), by name."""

    __tablename__ = "style_features"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)


class BattleCovariate(Base):
    """One user covariate's value for each side of one battle."""

    __tablename__ = "battle_covariates"
    # Keyed feature first: a rebuild reads one feature's range in battle order.
    __table_args__ = {"sqlite_with_rowid": False}

    feature_id: Mapped[int] = mapped_column(ForeignKey("style_features.id"), primary_key=True)
    battle_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("battles.id", ondelete="CASCADE"), primary_key=True
    )
    value_a: Mapped[float] = mapped_column(Float)
    value_b: Mapped[float] = mapped_column(Float)


class Snapshot(Base):
    """One immutable rebuild result: written once, never updated."""

    __tablename__ = "snapshots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: Board key, the text of :class:`arena.boards.keys.BoardKey` (``overall``,
    #: ``category:NAME|style``, ...; ``%``, ``|``, ``:`` in names percent-encoded):
    #: two names of 255 characters, each escaped character three.
    board: Mapped[str] = mapped_column(String(1600), index=True)
    category: Mapped[str | None] = mapped_column(String(255))
    source: Mapped[str | None] = mapped_column(String(255))
    #: Snapshots written by one ``rebuild --all-categories`` run share a run id.
    run_id: Mapped[str] = mapped_column(String(64))
    options_json: Mapped[str] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(BigInteger)
    code_version: Mapped[str] = mapped_column(String(64))
    watermark: Mapped[int] = mapped_column(BigInteger)
    n_battles: Mapped[float] = mapped_column(Float)
    n_excluded: Mapped[int] = mapped_column(Integer)
    n_models: Mapped[int] = mapped_column(Integer)
    diagnostics_json: Mapped[str] = mapped_column(Text)


class SnapshotRow(Base):
    __tablename__ = "snapshot_rows"

    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id"), primary_key=True)
    #: Position of the model in the snapshot's sample matrix columns.
    position: Mapped[int] = mapped_column(Integer)
    #: NULL for a model outside the comparable set (no rating on the board's scale).
    rating: Mapped[float | None] = mapped_column(Float)
    #: NULL when there is no bound (outside the set, or a one-sided interval's open end).
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    #: Position among the ranked models by rating (1 = highest rating). Not a rank:
    #: it is never shown as one (outputs show rank_ub..rank_lb). NULL if unranked.
    rank: Mapped[int | None] = mapped_column(Integer)
    #: 1 + models surely better; NULL for models listed but not ranked.
    rank_ub: Mapped[int | None] = mapped_column(Integer)
    #: Models not surely worse (itself included): the worst rank the data allow.
    rank_lb: Mapped[int | None] = mapped_column(Integer)
    #: Simultaneous rank confidence set rank_low..rank_high (the board's one inference,
    #: arena/engine/inference/rank_sets.py); NULL if unranked or written before revision 0013.
    rank_low: Mapped[int | None] = mapped_column(Integer)
    rank_high: Mapped[int | None] = mapped_column(Integer)
    tier: Mapped[int | None] = mapped_column(Integer)
    battles: Mapped[float] = mapped_column(Float)
    wins: Mapped[float] = mapped_column(Float)
    losses: Mapped[float] = mapped_column(Float)
    ties: Mapped[float] = mapped_column(Float)
    flags: Mapped[str] = mapped_column(String(255), default="")
    ranked: Mapped[bool] = mapped_column(Boolean)


class SnapshotPair(Base):
    """Direct head-to-head record in a snapshot (model_a_id < model_b_id)."""

    __tablename__ = "snapshot_pairs"

    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    model_a_id: Mapped[int] = mapped_column(ForeignKey("models.id"), primary_key=True)
    model_b_id: Mapped[int] = mapped_column(ForeignKey("models.id"), primary_key=True)
    a_wins: Mapped[float] = mapped_column(Float)
    b_wins: Mapped[float] = mapped_column(Float)
    ties: Mapped[float] = mapped_column(Float)


class SnapshotStyleCoefficient(Base):
    """A style coefficient of a style-controlled snapshot, with its interval.

    Logits per standard deviation of the covariate (see ``arena.engine.style.rate``);
    the interval follows the snapshot's interval method and level.
    """

    __tablename__ = "snapshot_style_coefficients"

    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    feature: Mapped[str] = mapped_column(String(255))
    estimate: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float] = mapped_column(Float)
    ci_high: Mapped[float] = mapped_column(Float)
    se: Mapped[float] = mapped_column(Float)


class SnapshotSamples(Base):
    """Bootstrap ratings (rounds x models, float32, C order) of a snapshot.

    Kept so that compare and tiering can read the paired distribution of any
    difference R_i - R_j without storing rounds x M x M.
    """

    __tablename__ = "snapshot_samples"

    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    rounds: Mapped[int] = mapped_column(Integer)
    n_models: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class SnapshotAudit(Base):
    """The vote audit of a snapshot (``arena audit``), stored as its JSON document."""

    __tablename__ = "snapshot_audits"

    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    code_version: Mapped[str] = mapped_column(String(64))
    report_json: Mapped[str] = mapped_column(Text)


class ApiKey(Base):
    """A bearer token of ``arena serve`` (``arena keys create``), stored only as its hash.

    Tokens are 256 random bits, so a plain SHA-256 is a safe hash (no password
    stretching is needed for a secret nobody chose).  ``rate`` is the key's request
    budget per second (``None``: the server's default, 0: unlimited).
    """

    __tablename__ = "api_keys"
    __table_args__ = (
        CheckConstraint(
            "scope = 'vote' OR scope = 'ingest' OR scope = 'read' OR scope = 'admin'",
            name="scope",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    scope: Mapped[str] = mapped_column(String(16))
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    rate: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


class ServeSecret(Base):
    """The key that signs ``arena serve``'s battle tokens, shared by every worker.

    Held in the database so that any number of workers and machines verify one
    another's tokens with no state outside it; created by the first server start.
    """

    __tablename__ = "serve_secrets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    secret: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class ProvisionalSnapshot(Base):
    """A provisional board kept current by ``arena serve`` between two full rebuilds.

    Never a snapshot: its own table, so nothing that reads ``snapshots`` (diff,
    history, publish, audit, the nightly's kept boards) can take it for a full
    rebuild. It is the board of ``since_snapshot`` (a full snapshot, whose
    options it reuses) refitted on every battle up to ``watermark`` with
    analytic intervals (``method``: sandwich or fisher); ``battles_since`` of
    those came after ``since_snapshot``.  Rows are stored as one JSON list (the
    columns of ``snapshot_rows``); only the latest of each board is kept.
    """

    __tablename__ = "provisional_snapshots"
    __table_args__ = (CheckConstraint("kind = 'provisional'", name="kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: Board key, as :attr:`Snapshot.board`.
    board: Mapped[str] = mapped_column(String(1600), index=True)
    kind: Mapped[str] = mapped_column(String(16), default="provisional")
    since_snapshot: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"))
    computed_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    method: Mapped[str] = mapped_column(String(16))
    watermark: Mapped[int] = mapped_column(BigInteger)
    battles_since: Mapped[int] = mapped_column(BigInteger)
    options_json: Mapped[str] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(BigInteger)
    code_version: Mapped[str] = mapped_column(String(64))
    n_battles: Mapped[float] = mapped_column(Float)
    n_excluded: Mapped[int] = mapped_column(Integer)
    n_models: Mapped[int] = mapped_column(Integer)
    diagnostics_json: Mapped[str] = mapped_column(Text)
    rows_json: Mapped[str] = mapped_column(Text)


class ServedPair(Base):
    """Pairs ``arena serve`` handed out (``GET /v1/pair``), counted per day, board,
    pair (sides as shown) and how the pair rule drew it (migration 0018).

    The sampling ledger (``arena sampling``) reads it beside the battles: who was
    shown how often, and by which part of the rule (``plan``: the planner's
    weights, ``uniform``: a uniform draw, ``new``: a model with few battles).
    Each worker counts in memory and adds its counts every few seconds
    (:mod:`arena.serve.ledger`).
    """

    __tablename__ = "served_pairs"
    __table_args__ = (
        CheckConstraint(
            "drawn_by = 'plan' OR drawn_by = 'uniform' OR drawn_by = 'new'", name="drawn_by"
        ),
    )

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    #: the board's key text (:class:`arena.boards.keys.BoardKey`: ``overall``, ``category:math``)
    board: Mapped[str] = mapped_column(String(1024), primary_key=True)
    model_a_id: Mapped[int] = mapped_column(ForeignKey("models.id"), primary_key=True)
    model_b_id: Mapped[int] = mapped_column(ForeignKey("models.id"), primary_key=True)
    drawn_by: Mapped[str] = mapped_column(String(16), primary_key=True)
    served: Mapped[int] = mapped_column(BigInteger)
