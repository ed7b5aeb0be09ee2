"""Derived categories: a category made from others by a rule over their tags

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "derived_categories",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("tags", sa.Text(), nullable=False),
        sa.Column("at_least", sa.Integer(), nullable=False),
        sa.Column("note", sa.String(length=1024), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_derived_categories")),
    )


def downgrade() -> None:
    op.drop_table("derived_categories")
