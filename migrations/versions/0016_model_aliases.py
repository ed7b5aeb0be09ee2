"""Model aliases: one model spelled differently by two sources

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "model_aliases",
        sa.Column("alias", sa.String(length=512), nullable=False),
        sa.Column("canonical", sa.String(length=512), nullable=False),
        sa.Column("reason", sa.String(length=1024), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("alias", name=op.f("pk_model_aliases")),
    )
    op.create_index(op.f("ix_model_aliases_canonical"), "model_aliases", ["canonical"])


def downgrade() -> None:
    op.drop_index(op.f("ix_model_aliases_canonical"), table_name="model_aliases")
    op.drop_table("model_aliases")
