"""Synthetic snapshots written straight through the ORM, for the publish tests and benchmark.

The rebuild (``arena rebuild``) is not used on purpose: these tests must not
depend on it, and a hand-built snapshot lets us plant exactly the awkward cases
the page has to survive (hostile names, hidden and unranked models, history).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import insert, select

from arena.db.models import Model, Snapshot, SnapshotPair, SnapshotRow, SnapshotSamples

#: Names that must come out as text everywhere (HTML, SVG, JSON, CSV, file names).
EVIL_NAMES = (
    "<script>alert(1)</script>",
    '"onmouseover=alert(1) x="',
    "../../etc/passwd",
    "\u202eevil-rtl\u202c-model",
    '=HYPERLINK("http://x")',
    "-2+3",
    "@sum(a1)",
)

BASE_TIME = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
OPTIONS = {
    "level": 0.95,
    "ci": "bootstrap",
    "rounds": 64,
    "tiers": "paired",
    "ties": "half",
    "cluster": None,
    "simultaneous": False,
    "min_battles": 50,
}


def model_names(n: int, *, evil: bool = True) -> list[str]:
    names = [f"model-{i:03d}" for i in range(n)]
    if evil:
        names[1 : 1 + len(EVIL_NAMES)] = EVIL_NAMES
    return names[:n]


def _ensure_models(conn, names: list[str]) -> dict[str, int]:
    have = dict(conn.execute(select(Model.name, Model.id)).all())
    missing = [n for n in names if n not in have]
    if missing:
        conn.execute(insert(Model), [{"name": n, "hidden": False} for n in missing])
        have = dict(conn.execute(select(Model.name, Model.id)).all())
    return have


def _tiers(rating: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[int]:
    """Leader-overlap tiers over a board sorted by rating (enough for a fixture)."""
    tiers, tier, leader_lo = [], 1, None
    for i in range(len(rating)):
        if leader_lo is None:
            leader_lo = lo[i]
        elif hi[i] < leader_lo:
            tier += 1
            leader_lo = lo[i]
        tiers.append(tier)
    return tiers


def add_snapshot(
    conn,
    *,
    names: list[str],
    strength: np.ndarray,
    when: datetime,
    board: str = "overall",
    category: str | None = None,
    rng: np.random.Generator,
    rounds: int = 64,
    unranked: int = 2,
    options: dict | None = None,
    diagnostics: dict | None = None,
    pair_density: float = 1.0,
    baseline: int | None = None,
) -> int:
    """Insert one snapshot of ``names``; the last ``unranked`` models get too few battles.

    ``baseline``: the index of a model every battle is played against (a baseline
    design, as Arena-Hard's); no other pair meets.
    """
    ids = _ensure_models(conn, names)
    m = len(names)
    # Head-to-head counts from the Bradley-Terry model with the given strengths.
    a_w = np.zeros((m, m))
    ties = np.zeros((m, m))
    for i in range(m):
        for j in range(i + 1, m):
            if pair_density < 1.0 and rng.random() > pair_density and j != i + 1:
                continue
            if baseline is not None and baseline not in (i, j):
                continue
            n = 3 if (i >= m - unranked or j >= m - unranked) else int(rng.integers(20, 80))
            p = 1.0 / (1.0 + 10 ** (-(strength[i] - strength[j]) / 400))
            t = int(rng.binomial(n, 0.2))
            w = int(rng.binomial(n - t, p))
            a_w[i, j], a_w[j, i] = w, n - t - w
            ties[i, j] = ties[j, i] = t
    wins, losses, tie_tot = a_w.sum(1), a_w.sum(0), ties.sum(1)
    battles = wins + losses + tie_tot
    rating = strength + rng.normal(0, 5, m)
    sd = 8 + 200 / np.sqrt(np.maximum(battles, 1))
    samples = (rating[None, :] + rng.normal(size=(rounds, m)) * sd[None, :]).astype("<f4")
    lo = np.percentile(samples, 2.5, axis=0)
    hi = np.percentile(samples, 97.5, axis=0)

    ranked = np.array([i < m - unranked for i in range(m)])
    order = [i for i in np.argsort(-rating, kind="stable") if ranked[i]]
    tier_of = dict(zip(order, _tiers(rating[order], lo[order], hi[order]), strict=True))
    opts = dict(OPTIONS if options is None else options)
    opts["rounds"] = rounds
    sid = conn.execute(
        insert(Snapshot).returning(Snapshot.id),
        [
            {
                "created_at": when,
                "board": board,
                "category": category,
                "source": None,
                "run_id": f"run-{when:%Y%m%d}",
                "options_json": json.dumps(opts),
                "seed": 7,
                "code_version": "0.1.0",
                "watermark": int(battles.sum() / 2),
                "n_battles": float(battles.sum() / 2),
                "n_excluded": 3,
                "n_models": m,
                "diagnostics_json": json.dumps(diagnostics or {}),
            }
        ],
    ).scalar_one()
    rows = []
    for i, name in enumerate(names):
        r_ub = r_lb = None
        if ranked[i]:
            # best: one plus the models surely above; worst: the models not surely below
            r_ub = 1 + int(sum(1 for j in order if lo[j] > hi[i]))
            r_lb = int(sum(1 for j in order if hi[j] >= lo[i]))
        rows.append(
            {
                "snapshot_id": sid,
                "model_id": ids[name],
                "position": i,
                "rating": float(rating[i]),
                "ci_low": float(lo[i]),
                "ci_high": float(hi[i]),
                "rank": (order.index(i) + 1) if ranked[i] else None,
                "rank_ub": r_ub,
                "rank_lb": r_lb,
                "tier": tier_of.get(i),
                "battles": float(battles[i]),
                "wins": float(wins[i]),
                "losses": float(losses[i]),
                "ties": float(tie_tot[i]),
                "flags": "" if ranked[i] else "few_battles,low_data",
                "ranked": bool(ranked[i]),
            }
        )
    conn.execute(insert(SnapshotRow), rows)
    pairs = []
    for i in range(m):
        for j in range(i + 1, m):
            if a_w[i, j] + a_w[j, i] + ties[i, j] == 0:
                continue
            a, b = (i, j) if ids[names[i]] < ids[names[j]] else (j, i)
            pairs.append(
                {
                    "snapshot_id": sid,
                    "model_a_id": ids[names[a]],
                    "model_b_id": ids[names[b]],
                    "a_wins": float(a_w[a, b]),
                    "b_wins": float(a_w[b, a]),
                    "ties": float(ties[a, b]),
                }
            )
    if pairs:
        conn.execute(insert(SnapshotPair), pairs)
    conn.execute(
        insert(SnapshotSamples),
        [
            {
                "snapshot_id": sid,
                "rounds": rounds,
                "n_models": m,
                "data": samples.tobytes(),
            }
        ],
    )
    return sid


def build_site_db(
    engine,
    *,
    n_models: int = 14,
    history: int = 3,
    evil: bool = True,
    hidden: tuple[str, ...] = ("model-012",),
    rounds: int = 64,
    category: bool = True,
    seed: int = 0,
    pair_density: float = 1.0,
    attribution: str | None = "LMArena arena-human-preference-140k (CC-BY-4.0)",
) -> dict:
    """Several overall snapshots over time, one ``category:math`` board, hidden models.

    Returns ``{"overall": [ids...], "math": id, "names": [...]}``.
    """
    rng = np.random.default_rng(seed)
    names = model_names(n_models, evil=evil)
    strength = 1200 - 25.0 * np.arange(n_models) + rng.normal(0, 3, n_models)
    diag = {"attribution": attribution} if attribution else {}
    out: dict = {"overall": [], "names": names}
    with engine.begin() as conn:
        for k in range(history):
            # Later snapshots see one more model, so "new" rank changes appear.
            take = names if k == history - 1 else [n for n in names if n != names[-3]]
            st = strength if k == history - 1 else strength[[names.index(n) for n in take]]
            drift = rng.normal(0, 10, len(take))
            out["overall"].append(
                add_snapshot(
                    conn,
                    names=take,
                    strength=st + drift,
                    when=BASE_TIME + timedelta(days=7 * k),
                    rng=rng,
                    rounds=rounds,
                    diagnostics=diag,
                    pair_density=pair_density,
                )
            )
        if category:
            sub = names[: max(4, n_models // 2)]
            out["math"] = add_snapshot(
                conn,
                names=sub,
                strength=strength[: len(sub)][::-1].copy(),
                when=BASE_TIME + timedelta(days=7 * history),
                board="category:math",
                category="math",
                rng=rng,
                rounds=rounds,
                unranked=1,
                diagnostics=diag,
            )
        for h in hidden:
            conn.execute(Model.__table__.update().where(Model.name == h).values(hidden=True))
    return out
