"""Battle store: models, ingest batches, battles, categories

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "categories",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_categories")),
        sa.UniqueConstraint("name", name=op.f("uq_categories_name")),
    )

    op.create_table(
        "ingest_batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("file_name", sa.String(length=1024), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("format", sa.String(length=32), nullable=False),
        sa.Column("source", sa.String(length=255), nullable=True),
        sa.Column("rows_read", sa.Integer(), nullable=False),
        sa.Column("inserted", sa.Integer(), nullable=False),
        sa.Column("duplicates", sa.Integer(), nullable=False),
        sa.Column("excluded", sa.Integer(), nullable=False),
        sa.Column("rejected", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ingest_batches")),
    )
    with op.batch_alter_table("ingest_batches", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ingest_batches_sha256"), ["sha256"], unique=False)

    op.create_table(
        "models",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=512), nullable=False),
        sa.Column("display_name", sa.String(length=512), nullable=True),
        sa.Column("organisation", sa.String(length=255), nullable=True),
        sa.Column("licence", sa.String(length=255), nullable=True),
        sa.Column("link", sa.String(length=1024), nullable=True),
        sa.Column("hidden", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_models")),
        sa.UniqueConstraint("name", name=op.f("uq_models_name")),
    )

    op.create_table(
        "battles",
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
            "outcome = 'a_wins' OR outcome = 'b_wins' OR outcome = 'tie' "
            "OR outcome = 'tie_both_bad'",
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
        sa.UniqueConstraint("external_id", name=op.f("uq_battles_external_id")),
    )
    with op.batch_alter_table("battles", schema=None) as batch_op:
        batch_op.create_index(
            "ix_battles_pair_outcome",
            ["model_a_id", "model_b_id", "outcome", "weight"],
            unique=False,
            sqlite_where=sa.text("excluded_reason IS NULL"),
            postgresql_where=sa.text("excluded_reason IS NULL"),
            postgresql_include=["id"],
        )

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


def downgrade() -> None:
    op.drop_table("battle_categories")
    op.drop_table("battles")
    op.drop_table("models")
    op.drop_table("ingest_batches")
    op.drop_table("categories")
