"""The next pair to show: the planner's rule, a share of uniform draws, new models first.

For each board (category, source) the picker keeps the plan of the board's
latest snapshot (:func:`arena.plan.pairs.plan_pairs`, rule ``tiers``: pairs
whose outcome could settle an undecided separation, weighted by how much one
more battle shrinks their interval) and refreshes it when a newer snapshot
appears.  Each draw is then, in this order of preference:

* with probability ``new_share``, when the board has models with few
  battles (fewer than ``min_battles`` on the snapshot, or added since it was
  computed): one of them, against a model of the board drawn uniformly -- so
  a new model is rated quickly instead of waiting to be planned for;
* with probability ``uniform_share``: a uniform pair of the board's models
  (the planner's weights are estimates; uniform draws keep every pair
  observed and the plan honest);
* otherwise a pair drawn from the plan.

The side order is a fair coin, so position bias cancels.  With no snapshot
yet, every draw is uniform over the models stored.  Draws come from one
seeded generator (``arena serve --seed``), so a test can replay them.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection, Engine, select

from arena.boards.resolve import resolve_snapshot_id
from arena.boards.snapshots import SnapshotError
from arena.core.defaults import DEFAULT_MIN_BATTLES
from arena.core.errors import ArenaError
from arena.db.models import Model, Snapshot
from arena.plan.pairs import plan_pairs
from arena.plan.store import plan_inputs
from arena.serve.ledger import ServedCounter

__all__ = ["NoPair", "PairPicker", "PairRule"]

#: Plans of more pairs than this are not listed; such boards draw uniformly.
MAX_PLANNED_PAIRS = 1_000_000


class NoPair(ArenaError, LookupError):
    """There is nothing to pair on this board (fewer than two models)."""


@dataclass(frozen=True)
class PairRule:
    """How draws are mixed (see the module doc)."""

    new_share: float = 0.25
    uniform_share: float = 0.1
    min_battles: int = DEFAULT_MIN_BATTLES
    #: seconds between checks for a newer snapshot
    refresh: float = 5.0


@dataclass
class _BoardPlan:
    snapshot_id: int | None
    names: tuple[str, ...]
    few: tuple[str, ...]  # models with few battles: on the board, or added since
    few_on_board: tuple[str, ...]
    plan_i: np.ndarray | None
    plan_j: np.ndarray | None
    cumulative: np.ndarray | None
    checked_at: float


class PairPicker:
    """Draws pairs for boards of one database; safe to share between threads."""

    def __init__(
        self,
        engine: Engine,
        *,
        rule: PairRule | None = None,
        seed: int | list[int] | None = None,
        served: ServedCounter | None = None,
    ):
        self.engine = engine
        self.rule = rule or PairRule()
        #: counts every pair drawn for the sampling ledger (:mod:`arena.serve.ledger`)
        self.served = served
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self._plans: dict[tuple[str | None, str | None], _BoardPlan] = {}

    def pick(self, *, category: str | None = None, source: str | None = None) -> tuple[str, str]:
        plan = self._plan(category, source)
        with self._lock:
            model_a, model_b, drawn_by = self._draw(plan)
        if self.served is not None:
            self.served.add(category, source, model_a, model_b, drawn_by)
        return model_a, model_b

    # -- plans -----------------------------------------------------------------
    def _plan(self, category: str | None, source: str | None) -> _BoardPlan:
        key = (category, source)
        now = time.monotonic()
        plan = self._plans.get(key)
        if plan is not None and now - plan.checked_at < self.rule.refresh:
            return plan
        with self.engine.connect() as conn:
            snapshot_id = self._latest(conn, category, source)
            if plan is None or plan.snapshot_id != snapshot_id:
                plan = self._build(conn, snapshot_id)
            else:
                plan.few = self._few(conn, plan)
        plan.checked_at = now
        self._plans[key] = plan
        return plan

    @staticmethod
    def _latest(conn: Connection, category: str | None, source: str | None) -> int | None:
        # the caller resolved the names (arena.serve.boards): no listing of the
        # known sources or categories, no scan of the battles table
        try:
            return resolve_snapshot_id(conn, category=category, source=source)
        except SnapshotError:
            if category is None and source is None:
                return None
            raise

    def _all_models(self, conn: Connection) -> list[str]:
        return list(
            conn.execute(
                select(Model.name).where(Model.hidden.is_(False)).order_by(Model.id)
            ).scalars()
        )

    def _few(self, conn: Connection, plan: _BoardPlan) -> tuple[str, ...]:
        """Models with few battles on the board, and models added since its snapshot.

        "Added since" is by the model's first appearance in the store: a model of
        another source's board (a judge's models beside the human votes) is not new
        to this board and is never shown on it as one.
        """
        if plan.snapshot_id is None:
            return ()
        board_names = set(plan.names)
        computed = select(Snapshot.created_at).where(Snapshot.id == plan.snapshot_id)
        added = conn.execute(
            select(Model.name)
            .where(Model.hidden.is_(False), Model.created_at > computed.scalar_subquery())
            .order_by(Model.id)
        ).scalars()
        return tuple(sorted(set(plan.few_on_board) | {n for n in added if n not in board_names}))

    def _build(self, conn: Connection, snapshot_id: int | None) -> _BoardPlan:
        if snapshot_id is None:
            names = tuple(self._all_models(conn))
            return _BoardPlan(None, names, (), (), None, None, None, 0.0)
        inputs = plan_inputs(conn, snapshot_id)
        if inputs is None:
            raise NoPair(f"snapshot {snapshot_id} disappeared")
        battles = np.asarray(inputs.pair_battles.sum(axis=1)).ravel()
        names = inputs.names
        few_on_board = tuple(
            n for n, b in zip(names, battles, strict=True) if b < self.rule.min_battles
        )
        models = np.flatnonzero(inputs.ranked)
        plan_i = plan_j = cumulative = None
        n_pairs = models.size * (models.size - 1) // 2
        if 2 <= models.size and n_pairs <= MAX_PLANNED_PAIRS:
            planned = plan_pairs(
                inputs.rating,
                inputs.samples,
                inputs.pair_battles,
                models=models,
                rule="tiers",
                level=inputs.level,
            ).plan
            plan_i, plan_j = planned.i, planned.j
            cumulative = np.cumsum(planned.probability)
            cumulative /= cumulative[-1]
        plan = _BoardPlan(snapshot_id, names, (), few_on_board, plan_i, plan_j, cumulative, 0.0)
        plan.few = self._few(conn, plan)
        return plan

    # -- draws -----------------------------------------------------------------
    def _draw(self, plan: _BoardPlan) -> tuple[str, str, str]:
        """The pair, sides as shown, and how it was drawn (``new``, ``uniform``, ``plan``)."""
        rng = self._rng
        names = plan.names
        pool = names if len(names) >= 2 else ()
        if plan.few and rng.random() < self.rule.new_share:
            newcomer = plan.few[int(rng.integers(len(plan.few)))]
            others = [n for n in (names or plan.few) if n != newcomer]
            if others:
                pair = (newcomer, others[int(rng.integers(len(others)))])
                a, b = pair if rng.random() < 0.5 else (pair[1], pair[0])
                return a, b, "new"
        if len(pool) < 2:
            raise NoPair("fewer than two models to pair on this board")
        if plan.cumulative is None or rng.random() < self.rule.uniform_share:
            i, j = rng.choice(len(pool), size=2, replace=False)
            pair = (pool[int(i)], pool[int(j)])
            drawn_by = "uniform"
        else:
            k = int(np.searchsorted(plan.cumulative, rng.random(), side="right"))
            k = min(k, plan.cumulative.size - 1)
            assert plan.plan_i is not None and plan.plan_j is not None  # set with cumulative
            pair = (names[int(plan.plan_i[k])], names[int(plan.plan_j[k])])
            drawn_by = "plan"
        a, b = pair if rng.random() < 0.5 else (pair[1], pair[0])
        return a, b, drawn_by
