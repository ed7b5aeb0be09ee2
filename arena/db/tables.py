"""The tables, in SQLAlchemy Core: the battle store and the immutable snapshots.

Every table is declared here once. Readers select from these ``Table`` objects
(``arena leaderboard`` reads snapshots without loading ``sqlalchemy.orm``);
the writers' ORM classes in :mod:`arena.db.models` are mapped onto them.
Every schema change goes through an Alembic migration in ``migrations/``;
``tests/test_db.py::test_models_and_migrations_agree`` (``alembic check``) checks
that these tables and the migrations agree.

The PostgreSQL options of ``ix_battles_pair_outcome`` (its ``WHERE`` and
``INCLUDE``) are added by :func:`add_postgresql_options`, not written in the
``Index``: SQLAlchemy validates a dialect's options by importing that dialect's
package (``sqlalchemy.dialects.postgresql`` with its asyncpg driver: ~30 ms of
every command on a SQLite database). They are in place before any DDL or schema
comparison: :mod:`arena.db.models` (imported by every writer, the bulk index
builds and ``migrations/env.py``) adds them, and so does ``metadata.create_all``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
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
    event,
    false,
    text,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Dialect

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

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


models = Table(
    "models",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(MODEL_NAME_MAX), unique=True, nullable=False),
    Column("display_name", String(MODEL_NAME_MAX)),
    Column("organisation", String(255)),
    Column("licence", String(255)),
    Column("link", String(1024)),
    Column("hidden", Boolean, default=False, server_default=false(), nullable=False),
    Column("created_at", DateTime(timezone=True), default=utcnow, nullable=False),
)


#: Another spelling of a model (``arena models alias ALIAS CANONICAL``, migration 0016).
#:
#: Two sources may name one release differently (``claude-3.7-sonnet`` and
#: ``claude-3-7-sonnet-20250219``). An alias never merges battles or boards:
#: each board rates the names its battles carry. It says only that two
#: boards' rows are one model where boards are matched (``arena agreement``),
#: and ``arena models`` shows it. ``reason`` says why the two are the same.
model_aliases = Table(
    "model_aliases",
    metadata,
    Column("alias", String(MODEL_NAME_MAX), primary_key=True),
    Column("canonical", String(MODEL_NAME_MAX), index=True, nullable=False),
    Column("reason", String(1024), default="", server_default="", nullable=False),
    Column("created_at", DateTime(timezone=True), default=utcnow, nullable=False),
)


ingest_batches = Table(
    "ingest_batches",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("file_name", String(1024), nullable=False),
    Column("sha256", String(64), index=True, nullable=False),
    Column("format", String(32), nullable=False),
    Column("source", String(255)),
    Column("rows_read", Integer, default=0, nullable=False),
    Column("inserted", Integer, default=0, nullable=False),
    Column("duplicates", Integer, default=0, nullable=False),
    Column("excluded", Integer, default=0, nullable=False),
    Column("rejected", Integer, default=0, nullable=False),
    Column("started_at", DateTime(timezone=True), default=utcnow, nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    #: size and sha256 of the content read (decompressed for gzip; migration 0014):
    #: a later file that begins with it is read from where it ends (arena.ingest.prefix)
    Column("content_bytes", BigInteger),
    Column("content_sha256", String(64)),
)


battles = Table(
    "battles",
    metadata,
    Column("id", BigId, primary_key=True),
    Column("external_id", String(255)),
    Column("model_a_id", ForeignKey("models.id"), nullable=False),
    Column("model_b_id", ForeignKey("models.id"), nullable=False),
    Column("outcome", String(16), nullable=False),
    Column("weight", Float, default=1.0, server_default="1", nullable=False),
    Column("source", String(255)),
    Column("judge", String(255)),
    Column("question", String(255)),
    Column("language", String(64)),
    Column("occurred_at", UtcDateTime),
    Column("batch_id", ForeignKey("ingest_batches.id"), nullable=False),
    #: Why a well-formed battle is kept but not rated (e.g. ``self_play``); NULL = rated.
    Column("excluded_reason", String(64)),
    # Written as ORs, not IN (...): SQLite evaluates a constant IN list in a
    # CHECK by building a temporary index per row, which halved ingest speed.
    CheckConstraint(
        "outcome = 'a_wins' OR outcome = 'b_wins' OR outcome = 'tie' OR outcome = 'tie_both_bad'",
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
        # PostgreSQL: the same WHERE, and INCLUDE (id), by add_postgresql_options()
    ),
)


#: External id -> battle: the store-wide de-duplication of battles (migration 0010).
#:
#: Ingest writes a battle's key first and skips battles whose key is stored; this
#: table, not ``battles``, holds the unique index, so ``battles`` can be partitioned
#: by time (``docs/scale.md``), which also leaves it no unique ``id`` to reference.
battle_keys = Table(
    "battle_keys",
    metadata,
    Column("external_id", String(255), primary_key=True),
    Column("battle_id", BigId, nullable=False),
    # One B-tree keyed by the external id: what the unique index on battles was.
    sqlite_with_rowid=False,
)


categories = Table(
    "categories",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(255), unique=True, nullable=False),
)


#: The name a category is shown under (``arena categories label KEY NAME``).
#:
#: Keyed by the category's name, not its id: a label is display text that may
#: be set before or kept after the category's battles; it never changes a rating.
category_labels = Table(
    "category_labels",
    metadata,
    Column("name", String(255), primary_key=True),
    Column("label", String(255), nullable=False),
)


#: A category computed from others: a battle belongs to it when it carries at
#: least ``at_least`` of ``tags`` (``arena categories derive``, :mod:`arena.store.derived`).
#:
#: Its links are stored in ``battle_categories`` like a tag's (written at ingest for
#: new battles, and for the stored ones when the rule is defined), so every
#: board, count and rebuild treats it as any other category.
derived_categories = Table(
    "derived_categories",
    metadata,
    Column("name", String(255), primary_key=True),
    #: the tag names, as a JSON list (sorted)
    Column("tags", Text, nullable=False),
    Column("at_least", Integer, nullable=False),
    #: where the rule comes from, shown on the page ("" when not given)
    Column("note", String(1024), default="", nullable=False),
)


#: Which categories a battle belongs to (many per battle).
battle_categories = Table(
    "battle_categories",
    metadata,
    # Primary key leads with the category: a per-category rebuild scans one range.
    Column("category_id", ForeignKey("categories.id"), primary_key=True),
    Column("battle_id", BigId, ForeignKey("battles.id", ondelete="CASCADE"), primary_key=True),
    # One B-tree instead of a rowid table plus its primary-key index: half the
    # write cost for the ~5 links per battle of a tagged LMArena export.
    sqlite_with_rowid=False,
)


#: ``battle_counts.category_id`` of the board of all battles (no category has id 0).
ALL_BATTLES = 0


#: Battles per (board, model_a, model_b, outcome, weight, rated): what a rebuild needs.
#:
#: Kept current inside every ingest's transaction (:mod:`arena.ingest.counts`), so a
#: rebuild reads this small table instead of aggregating every battle;
#: ``arena db recount`` rebuilds it from the battles.  ``category_id`` is a
#: category's id, or :data:`ALL_BATTLES` for the board of all battles (hence no
#: foreign key).  ``rated`` false counts battles kept but not rated (self-play).
battle_counts = Table(
    "battle_counts",
    metadata,
    Column("category_id", Integer, primary_key=True),
    Column("model_a_id", Integer, primary_key=True),
    Column("model_b_id", Integer, primary_key=True),
    Column("outcome", String(16), primary_key=True),
    Column("weight", Float, primary_key=True),
    Column("rated", Boolean, primary_key=True),
    Column("n", BigInteger, nullable=False),
    sqlite_with_rowid=False,
)


#: The standard style features (LMArena's), each stored as ``NAME_a`` and ``NAME_b``.
STYLE_FEATURES = ("tokens", "headers", "lists", "bold")


#: The four style features of both answers of one battle (LMArena's ``conv_metadata``).
#:
#: One narrow row of integers per battle that carries metadata, so a style-
#: controlled rebuild reads numbers, never JSON.  Battles without metadata have
#: no row.  See :mod:`arena.ingest.style` for how the counts are read.
battle_style = Table(
    "battle_style",
    metadata,
    Column("battle_id", BigId, ForeignKey("battles.id", ondelete="CASCADE"), primary_key=True),
    Column("tokens_a", BigInteger, nullable=False),
    Column("tokens_b", BigInteger, nullable=False),
    Column("headers_a", Integer, nullable=False),
    Column("headers_b", Integer, nullable=False),
    Column("lists_a", Integer, nullable=False),
    Column("lists_b", Integer, nullable=False),
    Column("bold_a", Integer, nullable=False),
    Column("bold_b", Integer, nullable=False),
)


#: A user-defined per-side covariate (``sentiment``, ``emoji``, ...), by name.
style_features = Table(
    "style_features",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), unique=True, nullable=False),
)


#: One user covariate's value for each side of one battle.
battle_covariates = Table(
    "battle_covariates",
    metadata,
    Column("feature_id", ForeignKey("style_features.id"), primary_key=True),
    Column("battle_id", BigId, ForeignKey("battles.id", ondelete="CASCADE"), primary_key=True),
    Column("value_a", Float, nullable=False),
    Column("value_b", Float, nullable=False),
    # Keyed feature first: a rebuild reads one feature's range in battle order.
    sqlite_with_rowid=False,
)


#: One immutable rebuild result: written once, never updated.
snapshots = Table(
    "snapshots",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("created_at", DateTime(timezone=True), default=utcnow, nullable=False),
    #: Board key, the text of :class:`arena.boards.keys.BoardKey` (``overall``,
    #: ``category:NAME|style``, ...; ``%``, ``|``, ``:`` in names percent-encoded):
    #: two names of 255 characters, each escaped character three.
    Column("board", String(1600), index=True, nullable=False),
    Column("category", String(255)),
    Column("source", String(255)),
    #: Snapshots written by one ``rebuild --all-categories`` run share a run id.
    Column("run_id", String(64), nullable=False),
    Column("options_json", Text, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("code_version", String(64), nullable=False),
    Column("watermark", BigInteger, nullable=False),
    Column("n_battles", Float, nullable=False),
    Column("n_excluded", Integer, nullable=False),
    Column("n_models", Integer, nullable=False),
    Column("diagnostics_json", Text, nullable=False),
)


snapshot_rows = Table(
    "snapshot_rows",
    metadata,
    Column("snapshot_id", ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True),
    Column("model_id", ForeignKey("models.id"), primary_key=True),
    #: Position of the model in the snapshot's sample matrix columns.
    Column("position", Integer, nullable=False),
    #: NULL for a model outside the comparable set (no rating on the board's scale).
    Column("rating", Float),
    #: NULL when there is no bound (outside the set, or a one-sided interval's open end).
    Column("ci_low", Float),
    Column("ci_high", Float),
    #: Position among the ranked models by rating (1 = highest rating). Not a rank:
    #: it is never shown as one (outputs show rank_ub..rank_lb). NULL if unranked.
    Column("rank", Integer),
    #: 1 + models surely better; NULL for models listed but not ranked.
    Column("rank_ub", Integer),
    #: Models not surely worse (itself included): the worst rank the data allow.
    Column("rank_lb", Integer),
    #: Simultaneous rank confidence set rank_low..rank_high (the board's one inference,
    #: arena/engine/inference/rank_sets.py); NULL if unranked or written before revision 0013.
    Column("rank_low", Integer),
    Column("rank_high", Integer),
    Column("tier", Integer),
    Column("battles", Float, nullable=False),
    Column("wins", Float, nullable=False),
    Column("losses", Float, nullable=False),
    Column("ties", Float, nullable=False),
    Column("flags", String(255), default="", nullable=False),
    Column("ranked", Boolean, nullable=False),
)


#: Direct head-to-head record in a snapshot (model_a_id < model_b_id).
snapshot_pairs = Table(
    "snapshot_pairs",
    metadata,
    Column("snapshot_id", ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True),
    Column("model_a_id", ForeignKey("models.id"), primary_key=True),
    Column("model_b_id", ForeignKey("models.id"), primary_key=True),
    Column("a_wins", Float, nullable=False),
    Column("b_wins", Float, nullable=False),
    Column("ties", Float, nullable=False),
)


#: A style coefficient of a style-controlled snapshot, with its interval.
#:
#: Logits per standard deviation of the covariate (see ``arena.engine.style.rate``);
#: the interval follows the snapshot's interval method and level.
snapshot_style_coefficients = Table(
    "snapshot_style_coefficients",
    metadata,
    Column("snapshot_id", ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("feature", String(255), nullable=False),
    Column("estimate", Float, nullable=False),
    Column("ci_low", Float, nullable=False),
    Column("ci_high", Float, nullable=False),
    Column("se", Float, nullable=False),
)


#: Bootstrap ratings (rounds x models, float32, C order) of a snapshot.
#:
#: Kept so that compare and tiering can read the paired distribution of any
#: difference R_i - R_j without storing rounds x M x M.
snapshot_samples = Table(
    "snapshot_samples",
    metadata,
    Column("snapshot_id", ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True),
    Column("rounds", Integer, nullable=False),
    Column("n_models", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
)


#: The vote audit of a snapshot (``arena audit``), stored as its JSON document.
snapshot_audits = Table(
    "snapshot_audits",
    metadata,
    Column("snapshot_id", ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True),
    Column("created_at", DateTime(timezone=True), default=utcnow, nullable=False),
    Column("code_version", String(64), nullable=False),
    Column("report_json", Text, nullable=False),
)


#: A bearer token of ``arena serve`` (``arena keys create``), stored only as its hash.
#:
#: Tokens are 256 random bits, so a plain SHA-256 is a safe hash (no password
#: stretching is needed for a secret nobody chose).  ``rate`` is the key's request
#: budget per second (``None``: the server's default, 0: unlimited).
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(255), unique=True, nullable=False),
    Column("scope", String(16), nullable=False),
    Column("token_sha256", String(64), unique=True, nullable=False),
    Column("rate", Float),
    Column("created_at", UtcDateTime, default=utcnow, nullable=False),
    Column("revoked_at", UtcDateTime),
    CheckConstraint(
        "scope = 'vote' OR scope = 'ingest' OR scope = 'read' OR scope = 'admin'",
        name="scope",
    ),
)


#: The key that signs ``arena serve``'s battle tokens, shared by every worker.
#:
#: Held in the database so that any number of workers and machines verify one
#: another's tokens with no state outside it; created by the first server start.
serve_secrets = Table(
    "serve_secrets",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("secret", LargeBinary, nullable=False),
    Column("created_at", UtcDateTime, default=utcnow, nullable=False),
)


#: A provisional board kept current by ``arena serve`` between two full rebuilds.
#:
#: Never a snapshot: its own table, so nothing that reads ``snapshots`` (diff,
#: history, publish, audit, the nightly's kept boards) can take it for a full
#: rebuild. It is the board of ``since_snapshot`` (a full snapshot, whose
#: options it reuses) refitted on every battle up to ``watermark`` with
#: analytic intervals (``method``: sandwich or fisher); ``battles_since`` of
#: those came after ``since_snapshot``.  Rows are stored as one JSON list (the
#: columns of ``snapshot_rows``); only the latest of each board is kept.
provisional_snapshots = Table(
    "provisional_snapshots",
    metadata,
    Column("id", Integer, primary_key=True),
    #: Board key, as :attr:`Snapshot.board`.
    Column("board", String(1600), index=True, nullable=False),
    Column("kind", String(16), default="provisional", nullable=False),
    Column("since_snapshot", ForeignKey("snapshots.id", ondelete="CASCADE"), nullable=False),
    Column("computed_at", UtcDateTime, default=utcnow, nullable=False),
    Column("method", String(16), nullable=False),
    Column("watermark", BigInteger, nullable=False),
    Column("battles_since", BigInteger, nullable=False),
    Column("options_json", Text, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("code_version", String(64), nullable=False),
    Column("n_battles", Float, nullable=False),
    Column("n_excluded", Integer, nullable=False),
    Column("n_models", Integer, nullable=False),
    Column("diagnostics_json", Text, nullable=False),
    Column("rows_json", Text, nullable=False),
    CheckConstraint("kind = 'provisional'", name="kind"),
)


#: Pairs ``arena serve`` handed out (``GET /v1/pair``), counted per day, board,
#: pair (sides as shown) and how the pair rule drew it (migration 0018).
#:
#: The sampling ledger (``arena sampling``) reads it beside the battles: who was
#: shown how often, and by which part of the rule (``plan``: the planner's
#: weights, ``uniform``: a uniform draw, ``new``: a model with few battles).
#: Each worker counts in memory and adds its counts every few seconds
#: (:mod:`arena.serve.ledger`).
served_pairs = Table(
    "served_pairs",
    metadata,
    Column("day", Date, primary_key=True),
    #: the board's key text (:class:`arena.boards.keys.BoardKey`: ``overall``, ``category:math``)
    Column("board", String(1024), primary_key=True),
    Column("model_a_id", ForeignKey("models.id"), primary_key=True),
    Column("model_b_id", ForeignKey("models.id"), primary_key=True),
    Column("drawn_by", String(16), primary_key=True),
    Column("served", BigInteger, nullable=False),
    CheckConstraint(
        "drawn_by = 'plan' OR drawn_by = 'uniform' OR drawn_by = 'new'", name="drawn_by"
    ),
)


def add_postgresql_options() -> None:
    """Give ``ix_battles_pair_outcome`` its PostgreSQL options (partial, ``INCLUDE (id)``).

    Idempotent; imports ``sqlalchemy.dialects.postgresql`` (see the module doc).
    """
    index = next(ix for ix in battles.indexes if ix.name == "ix_battles_pair_outcome")
    options = index.dialect_options["postgresql"]
    if options["where"] is None:
        options["where"] = text("excluded_reason IS NULL")
        options["include"] = ["id"]


@event.listens_for(metadata, "before_create")
def _before_create(*_args: Any, **_kw: Any) -> None:
    add_postgresql_options()
