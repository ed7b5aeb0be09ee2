"""Boards of the comparable sets other than the largest (``arena rebuild --components separate``).

By default a board ranks one comparable set, the strongly connected group of
models with the most battles (:mod:`arena.engine.sets.components`); every other
model is listed there, flagged ``disconnected`` or ``no_mle``. With
``--components separate`` the rebuild also writes one board per other set of
two or more models: its key is the main board's key plus ``|component:N``
(``overall|component:2``, ``category:math|component:3``; the main board is
component 1), numbered like the sets, by decreasing battles among their
members. Each is rated on its own battles exactly as if nothing else had been
ingested, so its ratings share no scale with the main board or with each
other. See ``docs/small_samples.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from arena.core.defaults import COMPONENT_MODES
from arena.engine.options import FitOptions
from arena.engine.sets.components import components, other_sets, split_pairs, subtables
from arena.store.read import BoardData
from arena.store.style import StyleBattles

__all__ = ["COMPONENT_MODES", "ComponentBoard", "StyleBoard", "split_board"]


_PER_BATTLE = ("battle_id", "model_a", "model_b", "outcome", "weight", "features_a", "features_b")


@dataclass(frozen=True)
class StyleBoard:
    """A board's battles that carry style metadata, and the models they involve."""

    battles: StyleBattles
    #: ``models.id`` of the style board's table indices (ascending)
    model_ids: np.ndarray

    @classmethod
    def of(cls, battles: StyleBattles) -> StyleBoard:
        return cls(battles, np.unique(np.concatenate([battles.model_a, battles.model_b])))


@dataclass(frozen=True)
class ComponentBoard:
    """One comparable set's board: number ``2, 3, ...`` (1 is the main board)."""

    number: int
    #: weakly connected group of the set (sets of one group met, though never both ways)
    group: int
    data: BoardData
    #: its battles with style metadata, or None
    style: StyleBoard | None


def split_board(
    data: BoardData, fit: FitOptions, style: StyleBoard | None = None
) -> list[ComponentBoard]:
    """The boards of ``data``'s comparable sets other than the largest (none if connected).

    Every cell (and style battle) is assigned to its sets in one pass
    (:func:`arena.engine.sets.components.split_pairs`), so a board of thousands of
    small sets splits in O(cells), not O(sets x cells).
    """
    comps = components(data.table, ties=fit.ties, both_bad=fit.both_bad, position=fit.position)
    sets = other_sets(comps)
    if not sets:
        return []
    # one column-major copy: cutting columns of a CSR matrix reads all of it each time
    by_cell = None if data.clusters is None else sp.csc_matrix(data.clusters)
    kept = _style_parts(style, data, sets)
    out = []
    for number, (models, (sub, cells), keep) in enumerate(
        zip(sets, subtables(data.table, sets), kept, strict=True), start=2
    ):
        clusters = None if by_cell is None else by_cell[:, cells].tocsr()
        part = replace(
            data, model_ids=data.model_ids[models], table=sub, clusters=clusters, n_excluded=0
        )
        group = int(comps.weak[models[0]])
        # keep is None exactly when style is
        part_style = (
            None if style is None or keep is None else _restrict_style(style.battles, keep, part)
        )
        out.append(ComponentBoard(number, group, part, part_style))
    return out


def _style_parts(
    style: StyleBoard | None, data: BoardData, sets: list[np.ndarray]
) -> list[np.ndarray | None]:
    """Per set: the indices (ascending) of the style battles between two of its models."""
    if style is None:
        return [None] * len(sets)
    sb = style.battles
    # model ids -> table indices (-1: not on this board)
    order = np.argsort(data.model_ids, kind="stable")
    ids = data.model_ids[order]

    def index_of(model_ids: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(ids, model_ids), max(ids.size - 1, 0))
        found = ids[at] == model_ids if ids.size else np.zeros(model_ids.size, bool)
        return np.where(found, order[at], -1)

    index, _, _, bounds = split_pairs(
        index_of(np.asarray(sb.model_a)),
        index_of(np.asarray(sb.model_b)),
        sets,
        data.table.n_models,
    )
    return [index[bounds[s] : bounds[s + 1]] for s in range(len(sets))]


def _restrict_style(sb: StyleBattles, keep: np.ndarray, part: BoardData) -> StyleBoard | None:
    """The style battles between two models of ``part`` (None when there are none).

    ``keep`` holds the indices (ascending) of the board's style battles ``sb``
    whose two models are both in ``part``.
    """
    if not keep.size:
        return None
    cut = {f: getattr(sb, f)[keep] for f in _PER_BATTLE}
    sub = replace(
        sb,
        **cut,
        cluster=None if sb.cluster is None else sb.cluster[keep],
        n_missing=max(int(round(float(part.table.n.sum()))) - int(keep.size), 0),
    )
    return StyleBoard.of(sub)
