"""Battle keys: external ids de-duplicated in their own table, not by an index on battles

PostgreSQL has no global unique index on a partitioned table, so ``battles``
could not be partitioned by time while it held ``uq_battles_external_id``.
The external id stays a column of ``battles``; its uniqueness moves to
``battle_keys`` (external id -> battle id), filled here from the stored
battles, whose unique index is then dropped.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "battle_keys",
        sa.Column("external_id", sa.String(length=255), nullable=False),
        sa.Column(
            "battle_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.PrimaryKeyConstraint("external_id", name=op.f("pk_battle_keys")),
        sqlite_with_rowid=False,
    )
    # in key order: the B-tree fills by appending (the unique index makes them distinct)
    op.execute(
        "INSERT INTO battle_keys (external_id, battle_id) SELECT external_id, id "
        "FROM battles WHERE external_id IS NOT NULL ORDER BY external_id"
    )
    op.drop_index("uq_battles_external_id", table_name="battles")


def downgrade() -> None:
    op.create_index("uq_battles_external_id", "battles", ["external_id"], unique=True)
    op.drop_table("battle_keys")
