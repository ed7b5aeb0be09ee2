"""Snapshot rows: simultaneous rank confidence sets (rank_low, rank_high)

The board's one inference (arena/engine/rank_sets.py) gives every ranked model
a set of ranks that holds for all models at once.  Rows written before this
revision have none (NULL): their boards show the interval-overlap ranks.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("snapshot_rows") as batch:
        batch.add_column(sa.Column("rank_low", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("rank_high", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("snapshot_rows") as batch:
        batch.drop_column("rank_high")
        batch.drop_column("rank_low")
