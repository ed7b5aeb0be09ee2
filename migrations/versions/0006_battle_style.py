"""Style metadata: per-battle style features and user covariates

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "battle_style",
        sa.Column("battle_id", BigId, nullable=False),
        sa.Column("tokens_a", sa.BigInteger(), nullable=False),
        sa.Column("tokens_b", sa.BigInteger(), nullable=False),
        *(
            sa.Column(f"{feature}_{side}", sa.Integer(), nullable=False)
            for feature in ("headers", "lists", "bold")
            for side in "ab"
        ),
        sa.ForeignKeyConstraint(
            ["battle_id"],
            ["battles.id"],
            name=op.f("fk_battle_style_battle_id_battles"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("battle_id", name=op.f("pk_battle_style")),
    )
    op.create_table(
        "style_features",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_style_features")),
        sa.UniqueConstraint("name", name=op.f("uq_style_features_name")),
    )
    op.create_table(
        "battle_covariates",
        sa.Column("feature_id", sa.Integer(), nullable=False),
        sa.Column("battle_id", BigId, nullable=False),
        sa.Column("value_a", sa.Float(), nullable=False),
        sa.Column("value_b", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["battle_id"],
            ["battles.id"],
            name=op.f("fk_battle_covariates_battle_id_battles"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["feature_id"],
            ["style_features.id"],
            name=op.f("fk_battle_covariates_feature_id_style_features"),
        ),
        sa.PrimaryKeyConstraint("feature_id", "battle_id", name=op.f("pk_battle_covariates")),
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    op.drop_table("battle_covariates")
    op.drop_table("style_features")
    op.drop_table("battle_style")
