"""Snapshot rows: rank_lb, and no rating for models outside the comparable set

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("snapshot_rows") as batch:
        batch.add_column(sa.Column("rank_lb", sa.Integer(), nullable=True))
        for name in ("rating", "ci_low", "ci_high"):
            batch.alter_column(name, existing_type=sa.Float(), nullable=True)


def downgrade() -> None:
    # rows written without a rating cannot go back to NOT NULL columns: drop them
    op.execute(
        "DELETE FROM snapshot_rows WHERE rating IS NULL OR ci_low IS NULL OR ci_high IS NULL"
    )
    with op.batch_alter_table("snapshot_rows") as batch:
        for name in ("rating", "ci_low", "ci_high"):
            batch.alter_column(name, existing_type=sa.Float(), nullable=False)
        batch.drop_column("rank_lb")
