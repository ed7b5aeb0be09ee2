"""Boards of a baseline design: every model judged against one baseline, drawn as such.

Arena-Hard and ko-arena-hard judge each model against one baseline answer. Such
a board has no battles between two other models, so its pairwise heatmaps are
empty ("never met" in every cell but one row). When most of a board's battles
involve one model (:data:`BASELINE_SHARE`), the page says so and shows instead
each model's observed score against the baseline with its interval; the
heatmaps come back when the other pairs are observed.

The interval is the normal interval of a mean of per-battle scores (a win 1, a
tie 1/2, a loss 0) at the board's level: battles are taken as independent, as
in the observed-win-rate heatmap it replaces; the board's ratings and their
intervals stay the inference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from arena.boards.snapshots import Board, BoardRow, PairRecord
from arena.publish import svg
from arena.publish.heatmaps import HeatmapChart

__all__ = ["BASELINE_SHARE", "Baseline", "baseline_chart", "baseline_design"]

#: A board whose battles involve one model at least this often is a baseline design.
BASELINE_SHARE = 0.8
#: ... and has at least this many other models (two models are always "a baseline").
_MIN_OTHERS = 2


@dataclass(frozen=True)
class Baseline:
    """``model`` takes part in ``battles`` of the board's ``total`` direct battles."""

    model: str
    battles: float
    total: float

    @property
    def share(self) -> float:
        return self.battles / self.total if self.total else 0.0


def baseline_design(pairs: Sequence[PairRecord]) -> Baseline | None:
    """The baseline model when the board's battles are (mostly) against one model, else None."""
    per: dict[str, float] = {}
    total = 0.0
    for p in pairs:
        n = p.a_wins + p.b_wins + p.ties
        total += n
        per[p.model_a] = per.get(p.model_a, 0.0) + n
        per[p.model_b] = per.get(p.model_b, 0.0) + n
    if total <= 0 or len(per) < _MIN_OTHERS + 1:
        return None
    model = min(per, key=lambda m: (-per[m], m))
    found = Baseline(model, per[model], total)
    return found if found.share >= BASELINE_SHARE else None


@dataclass(frozen=True)
class ScoreVsBaseline:
    row: BoardRow
    battles: float
    score: float  # wins plus half the ties, per battle, in [0, 1]
    low: float
    high: float


def scores_vs_baseline(
    rows: Sequence[BoardRow], pairs: Sequence[PairRecord], baseline: str, level: float
) -> list[ScoreVsBaseline]:
    """Each row's observed score against ``baseline`` with its normal interval, board order."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    record: dict[str, tuple[float, float, float]] = {}  # model -> wins, losses, ties
    for p in pairs:
        if p.model_a == baseline:
            record[p.model_b] = (p.b_wins, p.a_wins, p.ties)
        elif p.model_b == baseline:
            record[p.model_a] = (p.a_wins, p.b_wins, p.ties)
    out = []
    for r in rows:
        if r.model not in record:
            continue
        w, loss, t = record[r.model]
        n = w + loss + t
        if n <= 0:
            continue
        mean = (w + t / 2) / n
        second = (w + t / 4) / n  # mean of the squared scores
        se = math.sqrt(max(second - mean * mean, 0.0) / n)
        out.append(ScoreVsBaseline(r, n, mean, max(0.0, mean - z * se), min(1.0, mean + z * se)))
    return out


def baseline_chart(
    board: Board, pairs: Sequence[PairRecord], found: Baseline, level: float
) -> HeatmapChart:
    """One chart in place of the three heatmaps: score against the baseline, every model."""
    rows = [r for r in board.visible_rows() if r.model != found.model]
    scores = scores_vs_baseline(rows, pairs, found.model, level)
    name = next(
        (r.display_name or r.model for r in board.rows if r.model == found.model), found.model
    )
    pct = f"{level * 100:g}%"
    # tier bands as on the ratings chart (board order keeps tiers together)
    bands = svg.tier_bands([(s.row.ranked, s.row.tier) for s in scores])
    items = [
        svg.IntervalItem(
            label=s.row.display_name or s.row.model,
            rating=100 * s.score,
            low=100 * s.low,
            high=100 * s.high,
            band=band,
            tier=s.row.tier if s.row.ranked else None,
        )
        for s, band in zip(scores, bands, strict=True)
    ]
    axis = svg.Axis.around([it.low for it in items] + [50.0], [it.high for it in items] + [50.0], ticks=10)  # fmt: skip
    chart = svg.interval_chart(
        items,
        axis,
        title=f"Score against {name} (percent), with {pct} intervals",
        desc=f"{len(items)} models in board order; each line is a model's {pct} interval of "
        f"its wins plus half its ties per battle against {name}, the dot the observed score; "
        "shaded bands are tiers.",
        ident="bl",
        value="score",
        unit="%",
        mark=50.0,
    )
    share = f"{found.share * 100:.0f}%"
    return HeatmapChart(
        f"Score against the baseline, {name}",
        chart,
        f"A baseline design: {share} of this board's battles are against {name}, so other "
        "pairs of models rarely or never meet and the pairwise heatmaps are left out. Each "
        f"line: a model's wins plus half its ties per battle against {name}, with its {pct} "
        "interval (battles taken as independent); the dashed line, 50, is as good as the baseline.",
    )
