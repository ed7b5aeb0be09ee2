"""Provisional boards: the latest refit of a board kept current by arena serve

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "provisional_snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("board", sa.String(length=1600), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("since_snapshot", sa.Integer(), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("watermark", sa.BigInteger(), nullable=False),
        sa.Column("battles_since", sa.BigInteger(), nullable=False),
        sa.Column("options_json", sa.Text(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("code_version", sa.String(length=64), nullable=False),
        sa.Column("n_battles", sa.Float(), nullable=False),
        sa.Column("n_excluded", sa.Integer(), nullable=False),
        sa.Column("n_models", sa.Integer(), nullable=False),
        sa.Column("diagnostics_json", sa.Text(), nullable=False),
        sa.Column("rows_json", sa.Text(), nullable=False),
        sa.CheckConstraint("kind = 'provisional'", name=op.f("ck_provisional_snapshots_kind")),
        sa.ForeignKeyConstraint(
            ["since_snapshot"],
            ["snapshots.id"],
            name=op.f("fk_provisional_snapshots_since_snapshot_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provisional_snapshots")),
    )
    op.create_index(
        op.f("ix_provisional_snapshots_board"), "provisional_snapshots", ["board"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_provisional_snapshots_board"), table_name="provisional_snapshots")
    op.drop_table("provisional_snapshots")
