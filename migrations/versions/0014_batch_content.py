"""Ingest batches keep the size and sha256 of the content they read

A later file that begins with a stored file's content (a cumulative export
without ids, a file that grew after it was ingested) is read from where that
content ends (``arena.ingest.prefix``, issue 26). For plain files the content
is the file; for gzip input it is the decompressed bytes. Batches stored
before this revision have neither (NULL) and are never taken as a prefix.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("ingest_batches", sa.Column("content_bytes", sa.BigInteger(), nullable=True))
    op.add_column(
        "ingest_batches", sa.Column("content_sha256", sa.String(length=64), nullable=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("ingest_batches") as batch:
        batch.drop_column("content_sha256")
        batch.drop_column("content_bytes")
