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
        sa.Column(
            "battle_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=False,
            nullable=False,
        ),
        sa.Column("external_id", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("battle_id", name=op.f("pk_battle_keys")),
    )
    op.execute(
        "INSERT INTO battle_keys (battle_id, external_id) "
        "SELECT id, external_id FROM battles WHERE external_id IS NOT NULL"
    )
    # built after the fill: one sort, not a B-tree insert per battle
    op.create_index("uq_battle_keys_external_id", "battle_keys", ["external_id"], unique=True)
    op.drop_index("uq_battles_external_id", table_name="battles")


def downgrade() -> None:
    op.create_index("uq_battles_external_id", "battles", ["external_id"], unique=True)
    op.drop_index("uq_battle_keys_external_id", table_name="battle_keys")
    op.drop_table("battle_keys")
