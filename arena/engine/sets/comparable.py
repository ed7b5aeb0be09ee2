"""Ratings of the comparable set, extended to every model of the board.

When the beats graph is not strongly connected, :func:`arena.engine.rate.rate`
fits the comparable set alone (the strongly connected component with the
most battles); :func:`extend_to_all` puts that fit back on the whole board:
NaN ratings outside the set, the flags ``disconnected``/``no_mle``, and
one-sided score bounds on the set's scale for models that met it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from arena.engine.counts import CountTable
from arena.engine.fitting.design import Design, make_design
from arena.engine.fitting.fit import Fit
from arena.engine.fitting.graph import existence, model_flags
from arena.engine.fitting.smallsample import score_bounds
from arena.engine.messages import fit_warnings
from arena.engine.scale import SCALE
from arena.engine.sets.components import Components, subtable

if TYPE_CHECKING:
    from arena.engine.options import RateRun
    from arena.engine.ratings import Ratings

__all__ = ["extend_to_all"]


def extend_to_all(
    table: CountTable, design: Design, comps: Components, inner: Ratings, run: RateRun
) -> Ratings:
    """``inner`` (the ratings of the set ``comps.main``) embedded into all models of ``table``."""
    m = table.n_models
    main = comps.main
    flags = _outside_flags(design, comps, inner, main)
    low = _embed(inner.ci_low, main, m)
    high = _embed(inner.ci_high, main, m)
    attached = [k for k in range(m) if comps.strong[k] > 0 and comps.weak[k] == comps.weak[main[0]]]
    if attached:
        lo, hi = _attached_bounds(table, main, inner.fit, np.asarray(attached), run)
        low[attached], high[attached] = lo, hi

    n_out = int(np.count_nonzero(design.battles_per_model > 0) - main.size)
    point = inner.fit
    warnings = fit_warnings(flags, True, point.prior_used, run.names)
    warnings.append(
        f"ratings are on the scale of the comparable set ({main.size} models, "
        f"{comps.battles[0]:g} battles, the strongly connected group with the most battles); "
        f"{n_out} models outside it have no rating on that scale"
    )
    warnings += [w for w in inner.warnings if w not in point.warnings]
    diag = dict(inner.diagnostics)
    diag.update(
        mle_exists=False,
        n_battles=float(design.n_total),
        components={
            "mode": "largest",
            "n": comps.n_components,
            "comparable_models": int(main.size),
            "comparable_battles": float(comps.battles[0]),
            "outside_models": n_out,
        },
        small_sample_models=main[inner.small_sample[: main.size]].tolist(),
    )
    return replace(
        inner,
        rating=_embed(inner.rating, main, m),
        ci_low=low,
        ci_high=high,
        se=_embed(inner.se, main, m),
        samples=_embed(inner.samples, main, m, axis=1),
        cov=None if inner.cov is None else _embed(_embed(inner.cov, main, m), main, m, axis=1),
        flags=flags,
        warnings=warnings,
        diagnostics=diag,
        fit=point,
        boot=inner.boot,
        comparable=_embed(np.ones(main.size), main, m) == 1,
        small_sample=_embed(inner.small_sample.astype(float), main, m) == 1,
        components=comps,
    )


def _embed(values: np.ndarray, main: np.ndarray, m: int, axis: int = 0) -> np.ndarray:
    shape = list(values.shape)
    shape[axis] = m
    out = np.full(shape, np.nan)
    index: list[slice | np.ndarray] = [slice(None)] * values.ndim
    index[axis] = main
    out[tuple(index)] = values
    return out


def _outside_flags(
    design: Design, comps: Components, inner: Ratings, main: np.ndarray
) -> list[tuple[str, ...]]:
    """Flags of every model: the set's own fit inside, data facts outside."""
    full = model_flags(design, design.point_stats()[0], existence(design, design.point_stats()[0]))
    flags: list[tuple[str, ...]] = []
    main_pos = {int(k): i for i, k in enumerate(main)}
    main_weak = comps.weak[main[0]]
    for k in range(design.n_models):
        if k in main_pos:
            flags.append(inner.flags[main_pos[k]])
            continue
        base = [f for f in full[k] if f not in ("disconnected", "no_mle")]
        if comps.strong[k] >= 0:
            base.append("no_mle" if comps.weak[k] == main_weak else "disconnected")
        flags.append(tuple(base))
    return flags


def _attached_bounds(
    table: CountTable, main: np.ndarray, point: Fit, models: np.ndarray, run: RateRun
) -> tuple[np.ndarray, np.ndarray]:
    """Score bounds, on the set's scale, of outside models that met the set.

    Each model is fitted alone against the set's ratings held fixed (its
    battles with other outside models carry no information about the set's
    scale).  A model that never lost to the set gets ``[low, inf)``.
    """
    lo = np.full(models.size, np.nan)
    hi = np.full(models.size, np.nan)
    ma = main.size
    theta = point.x[:ma]
    extra = point.x[ma:]
    ref_rating = point.rating[0] - SCALE * theta[0]  # rating of theta = 0 on the set's scale
    for i, k in enumerate(models.tolist()):
        members = np.sort(np.append(main, k))
        sub, _ = subtable(table, members)
        model = run.model
        d = make_design(sub, ties=model.ties, both_bad=model.both_bad, position=model.position)
        pos_k = int(np.searchsorted(members, k))
        if d.n_active != members.size:  # no usable battle with the set
            continue
        x = np.concatenate([np.insert(theta, pos_k, 0.0), extra])
        t_lo, _, t_hi = score_bounds(d, x, np.array([pos_k]), level=run.level, lam=point.prior_used)
        lo[i] = ref_rating + SCALE * t_lo[0]
        hi[i] = ref_rating + SCALE * t_hi[0]
    return lo, hi
