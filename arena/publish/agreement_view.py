"""The Audit page's "Agreement" section: each published source's board against a reference source.

When the site publishes boards of two or more sources (``arena rebuild
--source``), the source with the most battles is the reference (on the demo:
the LMArena human votes) and every other source's board is compared with it
by :func:`arena.audit.agreement.board_agreement`, the numbers of
``arena agreement``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from arena.audit.agreement import board_agreement
from arena.boards.snapshots import SnapshotError
from arena.core.defaults import DEFAULT_LEVEL

if TYPE_CHECKING:
    from arena.engine.agreement import Estimate
    from arena.publish.views import SiteBoard

__all__ = ["AgreementPairView", "AgreementView", "agreement_views"]

#: Above this many battles on the two boards together the page skips the
#: per-vote agreement (it reads every vote; `arena agreement` still gives it).
VOTE_LIMIT = 1_000_000
#: The overall board is checked for being one source's only up to this many battles.
OVERALL_SCAN_LIMIT = 5_000_000


@dataclass(frozen=True)
class AgreementPairView:
    model_a: str
    model_b: str
    reference: str
    candidate: str
    outcome: str


@dataclass(frozen=True)
class AgreementView:
    reference_label: str
    candidate_label: str
    reference_snapshot: int
    candidate_snapshot: int
    shared: int
    left_out: int
    stats: tuple[tuple[str, str], ...]
    pairs: tuple[AgreementPairView, ...]
    command: str


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _interval(e: Estimate) -> str:
    if e.estimate is None:
        return "– (fewer than 3 shared models)"
    if e.ci_low is None:
        return _num(e.estimate)
    return f"{_num(e.estimate)} ({_num(e.ci_low)} to {_num(e.ci_high)})"


def _source_sites(conn: Connection, sites: Iterable[SiteBoard]) -> list[tuple[str, SiteBoard]]:
    """(source, site) for the raw main board of each source.

    The overall board counts as a source's board too when every battle it
    rates comes from one source that has no board of its own on the site (the
    demo: LMArena's votes overall, the judge's battles on their own board).
    """
    from sqlalchemy import and_, select

    from arena.audit.read import snapshot_conditions
    from arena.boards.keys import BoardKey, BoardKeyError
    from arena.db.models import Battle

    out: dict[str, SiteBoard] = {}
    overall = None
    for s in sites:
        try:
            key = BoardKey.parse(s.board.snapshot.board)
        except BoardKeyError:
            continue
        if key.category is not None or key.component != 1 or key.style_controlled:
            continue
        if key.source is None:
            overall = s
        else:
            out.setdefault(key.source, s)
    if overall is not None and out and overall.board.snapshot.n_battles <= OVERALL_SCAN_LIMIT:
        conds = snapshot_conditions(overall.board.snapshot)
        found = conn.execute(select(Battle.source).where(and_(*conds)).distinct().limit(2)).scalars().all()  # fmt: skip
        if len(found) == 1 and found[0] is not None and found[0] not in out:
            out[found[0]] = overall
    return list(out.items())


def _selector(site: SiteBoard, source: str) -> str:
    """The board's selector for ``arena agreement`` (``overall`` for the overall board)."""
    return "overall" if site.board.snapshot.source is None else f"source={source}"


def agreement_views(
    conn: Connection, sites: Iterable[SiteBoard], *, level: float = DEFAULT_LEVEL
) -> tuple[AgreementView, ...]:
    """One view per non-reference source; empty with fewer than two published sources."""
    by_source = _source_sites(conn, sites)
    if len(by_source) < 2:
        return ()
    by_source.sort(key=lambda kv: (-kv[1].board.snapshot.n_battles, kv[0]))
    ref_source, ref = by_source[0]
    views = []
    for cand_source, cand in by_source[1:]:
        try:
            ag = board_agreement(
                conn,
                reference={"snapshot_id": ref.board.snapshot.id},
                candidate={"snapshot_id": cand.board.snapshot.id},
                level=level,
                votes=ref.board.snapshot.n_battles + cand.board.snapshot.n_battles <= VOTE_LIMIT,
            )
        except SnapshotError:
            continue  # fewer than two shared ranked models: nothing to compare
        sep_r, sep_c = ag.separability["reference"], ag.separability["candidate"]
        counts = ag.agreement_counts
        pct = f"{level:.0%}"
        stats: tuple[tuple[str, str], ...] = (
            ("Spearman", f"{_interval(ag.spearman)}, {pct} bootstrap"),
            ("Kendall tau-b", f"{_interval(ag.kendall)}, {pct} bootstrap"),
            (
                f"Separability, {ref.label}",
                f"{sep_r['overlap']:.0%} of {sep_r['pairs']} pairs by intervals, {sep_r['simultaneous']:.0%} by the board's simultaneous inference",
            ),  # fmt: skip
            (
                f"Separability, {cand.label}",
                f"{sep_c['overlap']:.0%} by intervals, {sep_c['simultaneous']:.0%} by the board's simultaneous inference",
            ),  # fmt: skip
            (
                "Agreement with confidence",
                f"{_num(ag.agreement_with_confidence)} over {counts['pairs']} pairs the reference separates ({counts['agree']} agree, {counts['disagree']} disagree, {counts['not_separated']} not separated)",
            ),  # fmt: skip
            (
                "Pair-rank Brier score",
                f"{_num(ag.brier)} over {ag.brier_pairs} pairs (0 confident and right, 0.25 a coin)",
            ),  # fmt: skip
        )
        if ag.votes is not None:
            v = ag.votes
            stats += (("Per-vote agreement", f"{_num(v.with_ties)} with ties, {_num(v.without_ties)} without, kappa {_num(v.kappa)} ({v.keys} battles judged by both)"),)  # fmt: skip
        views.append(
            AgreementView(
                reference_label=ref.label,
                candidate_label=cand.label,
                reference_snapshot=ref.board.snapshot.id,
                candidate_snapshot=cand.board.snapshot.id,
                shared=len(ag.models),
                left_out=len({d["model"] for d in ag.left_out}),
                stats=stats,
                pairs=tuple(
                    AgreementPairView(p.model_a, p.model_b, p.reference, p.candidate, p.outcome)
                    for p in ag.pairs
                ),
                command=(
                    f"arena agreement --reference {_selector(ref, ref_source)} "
                    f"--candidate {_selector(cand, cand_source)}"
                ),
            )
        )
    return tuple(views)
