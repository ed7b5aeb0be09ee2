"""Count table: battles per (board, pair, outcome, weight, rated), filled from the battles

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_COLUMNS = "category_id, model_a_id, model_b_id, outcome, weight, rated, n"
_KEY = "b.model_a_id, b.model_b_id, b.outcome, b.weight, b.excluded_reason IS NULL"


def upgrade() -> None:
    op.create_table(
        "battle_counts",
        sa.Column("category_id", sa.Integer(), nullable=False),
        sa.Column("model_a_id", sa.Integer(), nullable=False),
        sa.Column("model_b_id", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "category_id",
            "model_a_id",
            "model_b_id",
            "outcome",
            "weight",
            "rated",
            name=op.f("pk_battle_counts"),
        ),
        sqlite_with_rowid=False,
    )
    # the stored battles: all of them (category 0), then each category's
    op.execute(
        f"INSERT INTO battle_counts ({_COLUMNS}) SELECT 0, {_KEY}, count(*) "
        f"FROM battles b GROUP BY {_KEY}"
    )
    op.execute(
        f"INSERT INTO battle_counts ({_COLUMNS}) SELECT bc.category_id, {_KEY}, count(*) "
        "FROM battle_categories bc JOIN battles b ON b.id = bc.battle_id "
        f"GROUP BY bc.category_id, {_KEY}"
    )


def downgrade() -> None:
    op.drop_table("battle_counts")
