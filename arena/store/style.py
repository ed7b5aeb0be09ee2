"""Read a board's battles with their style features, as numpy arrays.

The style-controlled fit cannot collapse battles into (pair, outcome) cells,
so it reads battles one by one: ids, outcome codes and weights, and per side
the features stored by ingest (``battle_style``: LMArena's four counts;
``battle_covariates``: user covariates by name).  Numbers only, read in
partitions, so a 10M-battle board needs no Python object per battle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from sqlalchemy import Connection, Float, Select, and_, case, func, select
from sqlalchemy import cast as sa_cast
from sqlalchemy.orm import aliased

from arena.core.errors import ArenaError
from arena.core.outcomes import OUTCOME_CODES
from arena.db.models import (
    Battle,
    BattleCategory,
    BattleCovariate,
    BattleStyle,
    Category,
    StyleFeature,
)
from arena.db.tables import STYLE_FEATURES
from arena.store.read import BattleSelection, cluster_key, selection_filters

#: Rows converted to arrays at a time (bounds the Python objects alive at once).
_PARTITION = 100_000


class StyleDataError(ArenaError, ValueError):
    """A requested feature that the store does not have."""


@dataclass(frozen=True)
class StyleBattles:
    """The rated battles of one board that carry every requested feature, in id order.

    ``n_missing`` counts the board's rated battles left out because they lack
    at least one requested feature (e.g. no ``conv_metadata`` at ingest).
    """

    battle_id: np.ndarray  # (n,) int64, increasing
    model_a: np.ndarray  # (n,) int64 models.id
    model_b: np.ndarray  # (n,) int64 models.id
    outcome: np.ndarray  # (n,) int8, arena.core.outcomes.OUTCOME_CODES
    weight: np.ndarray  # (n,) float64 as stored (an arena-hard strong verdict weighs 3)
    cluster: np.ndarray | None  # (n,) int64 codes 0..C-1, or None when not asked for
    features: tuple[str, ...]  # feature names, the columns of features_a / features_b
    features_a: np.ndarray  # (n, k) float64: model_a's answer
    features_b: np.ndarray  # (n, k) float64: model_b's answer
    n_missing: int

    def __len__(self) -> int:
        return len(self.battle_id)


def _as_array(rows: Sequence[tuple[Any, ...]], width: int) -> np.ndarray:
    """Plain tuples of numbers -> ``(len(rows), width)`` float64, with no per-row object.

    (``np.array`` of SQLAlchemy ``Row`` objects probes every row for the
    array protocols through the row's key lookup, which raises and catches an
    exception per row: 200 us a battle.)
    """
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=len(rows) * width)
    return flat.reshape(-1, width)


def _numbers(conn: Connection, query: Select[*tuple[Any, ...]], width: int) -> np.ndarray:
    """All rows of a query of ``width`` numeric non-null columns, as one float64 array.

    PostgreSQL: one binary ``COPY (query) TO STDOUT`` with every column cast
    to double precision, so each row is a fixed 2 + 12 * width bytes and the
    whole result is parsed by one ``np.frombuffer`` (no Python per row).
    SQLite: the DB-API cursor's plain tuples, a partition at a time, through
    :func:`_as_array`.
    """
    if conn.dialect.name == "postgresql":
        cols = [sa_cast(c, Float(precision=53)) for c in query.selected_columns]
        compiled = query.with_only_columns(*cols).compile(
            dialect=conn.dialect, compile_kwargs={"render_postcompile": True}
        )
        dbapi = conn.connection.dbapi_connection
        assert dbapi is not None, "the connection is open"
        cursor = dbapi.cursor()
        chunks = []
        with cursor.copy(
            f"COPY ({compiled.string}) TO STDOUT (FORMAT binary)", compiled.params
        ) as copy:
            for block in copy:
                chunks.append(bytes(block))
        raw = b"".join(chunks)
        # header: 11-byte signature, 4-byte flags, 4-byte extension length (+ extension)
        start = 19 + int.from_bytes(raw[15:19], "big")
        body = raw[start : len(raw) - 2]  # the trailer is a field count of -1
        row = np.dtype(
            [("n", ">i2")]
            + [(f, t) for i in range(width) for f, t in ((f"l{i}", ">i4"), (f"v{i}", ">f8"))]
        )
        if len(body) % row.itemsize:
            raise RuntimeError("unexpected binary COPY layout (a NULL in a style column?)")
        rec = np.frombuffer(body, dtype=row)
        out = np.empty((rec.size, width))
        for i in range(width):
            out[:, i] = rec[f"v{i}"]
        return out
    result = conn.execute(query)
    cursor = result.cursor  # the DB-API cursor: plain tuples, no Row objects
    parts = []
    while rows := cursor.fetchmany(_PARTITION):
        parts.append(_as_array(rows, width))
    result.close()
    return np.concatenate(parts) if parts else np.empty((0, width))


def _in_category(query: Select[*tuple[Any, ...]], category: str | None) -> Select[*tuple[Any, ...]]:
    if category is None:
        return query
    return (
        query.join(BattleCategory, BattleCategory.battle_id == Battle.id)
        .join(Category, Category.id == BattleCategory.category_id)
        .where(Category.name == category)
    )


def has_style_rows(conn: Connection) -> bool:
    """Whether any battle carries the standard style features (every style board needs them)."""
    return conn.execute(select(BattleStyle.battle_id).limit(1)).first() is not None


def read_style_battles(
    conn: Connection,
    sel: BattleSelection,
    *,
    watermark: int,
    features: tuple[str, ...] = STYLE_FEATURES,
    total: int | None = None,
) -> StyleBattles:
    """Per-battle arrays of one board's rated battles that carry ``features``.

    Parameters
    ----------
    conn
        A connection inside the rebuild's read transaction.
    sel
        The board (category, source, since, until, cluster), filtered exactly
        as :func:`arena.store.read.read_boards` filters it (rated battles only,
        ``id <= watermark``); with a cluster other than ``battle`` also the
        cluster codes (a battle without the key is its own cluster).
    features
        Standard features (``tokens``, ``headers``, ``lists``, ``bold``) and/or
        names of user covariates ingested as ``NAME_a`` / ``NAME_b``.
    total
        The board's rated battles, if the caller knows them (saves a count).

    Raises
    ------
    StyleDataError
        A feature named twice, or a covariate never ingested.
    """
    if len(set(features)) != len(features):
        raise StyleDataError(f"a style feature is named twice: {', '.join(features)}")
    conds = selection_filters(sel, int(watermark))
    category = sel.category
    cluster = cluster_key(sel)
    code = case({o.value: c for o, c in OUTCOME_CODES.items()}, value=Battle.outcome)
    columns = [Battle.id, Battle.model_a_id, Battle.model_b_id, code, Battle.weight]
    query: Select[*tuple[Any, ...]] = select(Battle.id).select_from(Battle)
    standard = [f for f in features if f in STYLE_FEATURES]
    if standard:
        query = query.join(BattleStyle, BattleStyle.battle_id == Battle.id)
    user = [f for f in features if f not in STYLE_FEATURES]
    known = dict(
        conn.execute(
            select(StyleFeature.name, StyleFeature.id).where(StyleFeature.name.in_(user))
        ).all()
    )
    for name in features:
        if name in STYLE_FEATURES:
            columns += [getattr(BattleStyle, f"{name}_a"), getattr(BattleStyle, f"{name}_b")]
            continue
        if name not in known:
            raise StyleDataError(
                f"no battle carries the style feature {name!r} "
                f"(ingest it as conv_metadata {name}_a / {name}_b)"
            )
        cov = aliased(BattleCovariate)
        query = query.join(cov, and_(cov.battle_id == Battle.id, cov.feature_id == known[name]))
        columns += [cov.value_a, cov.value_b]
    if cluster is not None:
        columns.append(cluster)
    query = _in_category(query.with_only_columns(*columns), category)
    query = query.where(and_(*conds)).order_by(Battle.id)
    if total is None:  # the caller may know it (the board's count table): no scan then
        total = conn.execute(
            _in_category(select(func.count()).select_from(Battle), category).where(and_(*conds))
        ).scalar_one()

    k = len(features)
    numeric_width = 5 + 2 * k
    codes: list[int] = []
    if cluster is None:
        data = _numbers(conn, query, numeric_width)
    else:
        parts: list[np.ndarray] = []
        cluster_index: dict[str, int] = {}
        for part in conn.execute(query).partitions(_PARTITION):
            codes.extend(cluster_index.setdefault(r[-1], len(cluster_index)) for r in part)
            parts.append(_as_array([tuple(r[:-1]) for r in part], numeric_width))
        data = np.concatenate(parts) if parts else np.empty((0, numeric_width))
    values = data[:, 5:]
    return StyleBattles(
        battle_id=data[:, 0].astype(np.int64),
        model_a=data[:, 1].astype(np.int64),
        model_b=data[:, 2].astype(np.int64),
        outcome=data[:, 3].astype(np.int8),
        weight=np.ascontiguousarray(data[:, 4]),
        cluster=np.asarray(codes, dtype=np.int64) if cluster is not None else None,
        features=tuple(features),
        features_a=np.ascontiguousarray(values[:, 0::2]),
        features_b=np.ascontiguousarray(values[:, 1::2]),
        n_missing=int(total) - len(data),
    )
