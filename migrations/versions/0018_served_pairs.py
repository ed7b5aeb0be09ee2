"""Pairs served by arena serve, per day, board, pair and draw kind (the sampling ledger)

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "served_pairs",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("board", sa.String(length=1024), nullable=False),
        sa.Column("model_a_id", sa.Integer(), nullable=False),
        sa.Column("model_b_id", sa.Integer(), nullable=False),
        sa.Column("drawn_by", sa.String(length=16), nullable=False),
        sa.Column("served", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "drawn_by = 'plan' OR drawn_by = 'uniform' OR drawn_by = 'new'",
            name=op.f("ck_served_pairs_drawn_by"),
        ),
        sa.ForeignKeyConstraint(
            ["model_a_id"], ["models.id"], name=op.f("fk_served_pairs_model_a_id_models")
        ),
        sa.ForeignKeyConstraint(
            ["model_b_id"], ["models.id"], name=op.f("fk_served_pairs_model_b_id_models")
        ),
        sa.PrimaryKeyConstraint(
            "day", "board", "model_a_id", "model_b_id", "drawn_by", name=op.f("pk_served_pairs")
        ),
    )


def downgrade() -> None:
    op.drop_table("served_pairs")
