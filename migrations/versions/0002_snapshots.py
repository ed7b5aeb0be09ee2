"""Snapshots: immutable rebuild results

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("board", sa.String(length=600), nullable=False),
        sa.Column("category", sa.String(length=255), nullable=True),
        sa.Column("source", sa.String(length=255), nullable=True),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("options_json", sa.Text(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("code_version", sa.String(length=64), nullable=False),
        sa.Column("watermark", sa.BigInteger(), nullable=False),
        sa.Column("n_battles", sa.Float(), nullable=False),
        sa.Column("n_excluded", sa.Integer(), nullable=False),
        sa.Column("n_models", sa.Integer(), nullable=False),
        sa.Column("diagnostics_json", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_snapshots")),
    )
    with op.batch_alter_table("snapshots", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_snapshots_board"), ["board"], unique=False)

    op.create_table(
        "snapshot_pairs",
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("model_a_id", sa.Integer(), nullable=False),
        sa.Column("model_b_id", sa.Integer(), nullable=False),
        sa.Column("a_wins", sa.Float(), nullable=False),
        sa.Column("b_wins", sa.Float(), nullable=False),
        sa.Column("ties", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_a_id"], ["models.id"], name=op.f("fk_snapshot_pairs_model_a_id_models")
        ),
        sa.ForeignKeyConstraint(
            ["model_b_id"], ["models.id"], name=op.f("fk_snapshot_pairs_model_b_id_models")
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_snapshot_pairs_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "snapshot_id", "model_a_id", "model_b_id", name=op.f("pk_snapshot_pairs")
        ),
    )

    op.create_table(
        "snapshot_rows",
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=False),
        sa.Column("ci_high", sa.Float(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("rank_ub", sa.Integer(), nullable=True),
        sa.Column("tier", sa.Integer(), nullable=True),
        sa.Column("battles", sa.Float(), nullable=False),
        sa.Column("wins", sa.Float(), nullable=False),
        sa.Column("losses", sa.Float(), nullable=False),
        sa.Column("ties", sa.Float(), nullable=False),
        sa.Column("flags", sa.String(length=255), nullable=False),
        sa.Column("ranked", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_id"], ["models.id"], name=op.f("fk_snapshot_rows_model_id_models")
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_snapshot_rows_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("snapshot_id", "model_id", name=op.f("pk_snapshot_rows")),
    )

    op.create_table(
        "snapshot_samples",
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("n_models", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_snapshot_samples_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("snapshot_id", name=op.f("pk_snapshot_samples")),
    )


def downgrade() -> None:
    op.drop_table("snapshot_samples")
    op.drop_table("snapshot_rows")
    op.drop_table("snapshot_pairs")
    op.drop_table("snapshots")
