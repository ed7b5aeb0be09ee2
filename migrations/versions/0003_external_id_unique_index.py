"""External ids: a unique index instead of a table constraint

A bulk ingest drops this index and builds it again at the end (one sort
instead of millions of random B-tree inserts).  SQLite cannot drop the index
behind a table-level UNIQUE constraint, so there the battles table is rebuilt
without it; every row, id and category link is kept.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BATTLE_COLUMNS = (
    "id, external_id, model_a_id, model_b_id, outcome, weight, source, judge, question, "
    "language, occurred_at, batch_id, excluded_reason"
)


def _battles_table(name: str, *, unique_constraint: bool) -> None:
    """The battles table as of this revision (as 0001 created it, optionally without the constraint)."""
    extra = (
        [sa.UniqueConstraint("external_id", name=op.f("uq_battles_external_id"))]
        if unique_constraint
        else []
    )
    op.create_table(
        name,
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("external_id", sa.String(length=255), nullable=True),
        sa.Column("model_a_id", sa.Integer(), nullable=False),
        sa.Column("model_b_id", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("weight", sa.Float(), server_default="1", nullable=False),
        sa.Column("source", sa.String(length=255), nullable=True),
        sa.Column("judge", sa.String(length=255), nullable=True),
        sa.Column("question", sa.String(length=255), nullable=True),
        sa.Column("language", sa.String(length=64), nullable=True),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("excluded_reason", sa.String(length=64), nullable=True),
        sa.CheckConstraint(
            "outcome = 'a_wins' OR outcome = 'b_wins' OR outcome = 'tie' OR outcome = 'tie_both_bad'",
            name=op.f("ck_battles_outcome"),
        ),
        sa.CheckConstraint("weight > 0", name=op.f("ck_battles_weight_positive")),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["ingest_batches.id"], name=op.f("fk_battles_batch_id_ingest_batches")
        ),
        sa.ForeignKeyConstraint(
            ["model_a_id"], ["models.id"], name=op.f("fk_battles_model_a_id_models")
        ),
        sa.ForeignKeyConstraint(
            ["model_b_id"], ["models.id"], name=op.f("fk_battles_model_b_id_models")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_battles")),
        *extra,
    )


def _links_table() -> None:
    op.create_table(
        "battle_categories",
        sa.Column("category_id", sa.Integer(), nullable=False),
        sa.Column(
            "battle_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["battle_id"],
            ["battles.id"],
            name=op.f("fk_battle_categories_battle_id_battles"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["category_id"],
            ["categories.id"],
            name=op.f("fk_battle_categories_category_id_categories"),
        ),
        sa.PrimaryKeyConstraint("category_id", "battle_id", name=op.f("pk_battle_categories")),
        sqlite_with_rowid=False,
    )


def _pair_index() -> None:
    op.create_index(
        "ix_battles_pair_outcome",
        "battles",
        ["model_a_id", "model_b_id", "outcome", "weight"],
        unique=False,
        sqlite_where=sa.text("excluded_reason IS NULL"),
        postgresql_where=sa.text("excluded_reason IS NULL"),
        postgresql_include=["id"],
    )


def _rebuild_sqlite(*, unique_constraint: bool) -> None:
    """Rebuild battles on SQLite, keeping every row and link.

    The links table goes first and comes back last: with foreign keys on
    (they cannot be switched off inside the migration's transaction),
    dropping the old battles table would otherwise cascade-delete the links.
    """
    op.execute(
        "CREATE TABLE _arena_links_0003 AS SELECT category_id, battle_id FROM battle_categories"
    )
    op.drop_table("battle_categories")
    _battles_table("_arena_battles_0003", unique_constraint=unique_constraint)
    op.execute(
        f"INSERT INTO _arena_battles_0003 ({BATTLE_COLUMNS}) SELECT {BATTLE_COLUMNS} FROM battles"
    )
    op.drop_table("battles")
    op.rename_table("_arena_battles_0003", "battles")
    _pair_index()
    _links_table()
    op.execute(
        "INSERT INTO battle_categories (category_id, battle_id) SELECT category_id, battle_id FROM _arena_links_0003"
    )
    op.drop_table("_arena_links_0003")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(unique_constraint=False)
    else:
        op.drop_constraint("uq_battles_external_id", "battles", type_="unique")
    op.create_index("uq_battles_external_id", "battles", ["external_id"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_battles_external_id", table_name="battles")
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(unique_constraint=True)
    else:
        op.create_unique_constraint("uq_battles_external_id", "battles", ["external_id"])
