"""SQLAlchemy 2.0 typed ORM classes of the tables in :mod:`arena.db.tables`, for the writers.

Each class maps one ``Table`` declared there (``__table__``); the annotations
only give the attributes their types. Readers that must answer at once
(``arena leaderboard``) select from the tables and never load ``sqlalchemy.orm``.
Importing this module gives the battles index its PostgreSQL options
(:func:`arena.db.tables.add_postgresql_options`) before any DDL or ``alembic check``.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, ClassVar

from sqlalchemy.orm import DeclarativeBase, Mapped

from arena.db import tables

if TYPE_CHECKING:
    from sqlalchemy import Table

tables.add_postgresql_options()


class Base(DeclarativeBase):
    metadata = tables.metadata

    if TYPE_CHECKING:
        # every model here maps a Table (DeclarativeBase types it FromClause,
        # which may also be a subquery): insert(), indexes, constraints
        __table__: ClassVar[Table]


class Model(Base):
    """Rows of :data:`arena.db.tables.models`."""

    __table__ = tables.models

    id: Mapped[int]
    name: Mapped[str]
    display_name: Mapped[str | None]
    organisation: Mapped[str | None]
    licence: Mapped[str | None]
    link: Mapped[str | None]
    hidden: Mapped[bool]
    created_at: Mapped[datetime]


class ModelAlias(Base):
    """Rows of :data:`arena.db.tables.model_aliases`."""

    __table__ = tables.model_aliases

    alias: Mapped[str]
    canonical: Mapped[str]
    reason: Mapped[str]
    created_at: Mapped[datetime]


class IngestBatch(Base):
    """Rows of :data:`arena.db.tables.ingest_batches`."""

    __table__ = tables.ingest_batches

    id: Mapped[int]
    file_name: Mapped[str]
    sha256: Mapped[str]
    format: Mapped[str]
    source: Mapped[str | None]
    rows_read: Mapped[int]
    inserted: Mapped[int]
    duplicates: Mapped[int]
    excluded: Mapped[int]
    rejected: Mapped[int]
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    content_bytes: Mapped[int | None]
    content_sha256: Mapped[str | None]


class Battle(Base):
    """Rows of :data:`arena.db.tables.battles`."""

    __table__ = tables.battles

    id: Mapped[int]
    external_id: Mapped[str | None]
    model_a_id: Mapped[int]
    model_b_id: Mapped[int]
    outcome: Mapped[str]
    weight: Mapped[float]
    source: Mapped[str | None]
    judge: Mapped[str | None]
    question: Mapped[str | None]
    language: Mapped[str | None]
    occurred_at: Mapped[datetime | None]
    batch_id: Mapped[int]
    excluded_reason: Mapped[str | None]


class BattleKey(Base):
    """Rows of :data:`arena.db.tables.battle_keys`."""

    __table__ = tables.battle_keys

    external_id: Mapped[str]
    battle_id: Mapped[int]


class Category(Base):
    """Rows of :data:`arena.db.tables.categories`."""

    __table__ = tables.categories

    id: Mapped[int]
    name: Mapped[str]


class CategoryLabel(Base):
    """Rows of :data:`arena.db.tables.category_labels`."""

    __table__ = tables.category_labels

    name: Mapped[str]
    label: Mapped[str]


class DerivedCategory(Base):
    """Rows of :data:`arena.db.tables.derived_categories`."""

    __table__ = tables.derived_categories

    name: Mapped[str]
    tags: Mapped[str]
    at_least: Mapped[int]
    note: Mapped[str]


class BattleCategory(Base):
    """Rows of :data:`arena.db.tables.battle_categories`."""

    __table__ = tables.battle_categories

    category_id: Mapped[int]
    battle_id: Mapped[int]


class BattleCount(Base):
    """Rows of :data:`arena.db.tables.battle_counts`."""

    __table__ = tables.battle_counts

    category_id: Mapped[int]
    model_a_id: Mapped[int]
    model_b_id: Mapped[int]
    outcome: Mapped[str]
    weight: Mapped[float]
    rated: Mapped[bool]
    n: Mapped[int]


class BattleStyle(Base):
    """Rows of :data:`arena.db.tables.battle_style`."""

    __table__ = tables.battle_style

    battle_id: Mapped[int]
    tokens_a: Mapped[int]
    tokens_b: Mapped[int]
    headers_a: Mapped[int]
    headers_b: Mapped[int]
    lists_a: Mapped[int]
    lists_b: Mapped[int]
    bold_a: Mapped[int]
    bold_b: Mapped[int]


class StyleFeature(Base):
    """Rows of :data:`arena.db.tables.style_features`."""

    __table__ = tables.style_features

    id: Mapped[int]
    name: Mapped[str]


class BattleCovariate(Base):
    """Rows of :data:`arena.db.tables.battle_covariates`."""

    __table__ = tables.battle_covariates

    feature_id: Mapped[int]
    battle_id: Mapped[int]
    value_a: Mapped[float]
    value_b: Mapped[float]


class Snapshot(Base):
    """Rows of :data:`arena.db.tables.snapshots`."""

    __table__ = tables.snapshots

    id: Mapped[int]
    created_at: Mapped[datetime]
    board: Mapped[str]
    category: Mapped[str | None]
    source: Mapped[str | None]
    run_id: Mapped[str]
    options_json: Mapped[str]
    seed: Mapped[int]
    code_version: Mapped[str]
    watermark: Mapped[int]
    n_battles: Mapped[float]
    n_excluded: Mapped[int]
    n_models: Mapped[int]
    diagnostics_json: Mapped[str]


class SnapshotRow(Base):
    """Rows of :data:`arena.db.tables.snapshot_rows`."""

    __table__ = tables.snapshot_rows

    snapshot_id: Mapped[int]
    model_id: Mapped[int]
    position: Mapped[int]
    rating: Mapped[float | None]
    ci_low: Mapped[float | None]
    ci_high: Mapped[float | None]
    rank: Mapped[int | None]
    rank_ub: Mapped[int | None]
    rank_lb: Mapped[int | None]
    rank_low: Mapped[int | None]
    rank_high: Mapped[int | None]
    tier: Mapped[int | None]
    battles: Mapped[float]
    wins: Mapped[float]
    losses: Mapped[float]
    ties: Mapped[float]
    flags: Mapped[str]
    ranked: Mapped[bool]


class SnapshotPair(Base):
    """Rows of :data:`arena.db.tables.snapshot_pairs`."""

    __table__ = tables.snapshot_pairs

    snapshot_id: Mapped[int]
    model_a_id: Mapped[int]
    model_b_id: Mapped[int]
    a_wins: Mapped[float]
    b_wins: Mapped[float]
    ties: Mapped[float]


class SnapshotStyleCoefficient(Base):
    """Rows of :data:`arena.db.tables.snapshot_style_coefficients`."""

    __table__ = tables.snapshot_style_coefficients

    snapshot_id: Mapped[int]
    position: Mapped[int]
    feature: Mapped[str]
    estimate: Mapped[float]
    ci_low: Mapped[float]
    ci_high: Mapped[float]
    se: Mapped[float]


class SnapshotSamples(Base):
    """Rows of :data:`arena.db.tables.snapshot_samples`."""

    __table__ = tables.snapshot_samples

    snapshot_id: Mapped[int]
    rounds: Mapped[int]
    n_models: Mapped[int]
    data: Mapped[bytes]


class SnapshotAudit(Base):
    """Rows of :data:`arena.db.tables.snapshot_audits`."""

    __table__ = tables.snapshot_audits

    snapshot_id: Mapped[int]
    created_at: Mapped[datetime]
    code_version: Mapped[str]
    report_json: Mapped[str]


class ApiKey(Base):
    """Rows of :data:`arena.db.tables.api_keys`."""

    __table__ = tables.api_keys

    id: Mapped[int]
    name: Mapped[str]
    scope: Mapped[str]
    token_sha256: Mapped[str]
    rate: Mapped[float | None]
    created_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class ServeSecret(Base):
    """Rows of :data:`arena.db.tables.serve_secrets`."""

    __table__ = tables.serve_secrets

    id: Mapped[int]
    secret: Mapped[bytes]
    created_at: Mapped[datetime]


class ProvisionalSnapshot(Base):
    """Rows of :data:`arena.db.tables.provisional_snapshots`."""

    __table__ = tables.provisional_snapshots

    id: Mapped[int]
    board: Mapped[str]
    kind: Mapped[str]
    since_snapshot: Mapped[int]
    computed_at: Mapped[datetime]
    method: Mapped[str]
    watermark: Mapped[int]
    battles_since: Mapped[int]
    options_json: Mapped[str]
    seed: Mapped[int]
    code_version: Mapped[str]
    n_battles: Mapped[float]
    n_excluded: Mapped[int]
    n_models: Mapped[int]
    diagnostics_json: Mapped[str]
    rows_json: Mapped[str]


class ServedPair(Base):
    """Rows of :data:`arena.db.tables.served_pairs`."""

    __table__ = tables.served_pairs

    day: Mapped[date]
    board: Mapped[str]
    model_a_id: Mapped[int]
    model_b_id: Mapped[int]
    drawn_by: Mapped[str]
    served: Mapped[int]
