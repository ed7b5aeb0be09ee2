"""One stored board against a reference board: the Arena-Hard agreement measures.

``board_agreement(conn, reference="source=lmarena", candidate="source=judge")``
resolves two boards the way ``arena leaderboard`` does, keeps the models both
rank, and computes (:mod:`arena.engine.agreement` states each definition):
Spearman and Kendall with bootstrap intervals from both snapshots' stored
samples; each board's separability with confidence (interval overlap, and
under the board's own simultaneous inference,
:func:`arena.engine.inference.rank_sets.board_inference`, run on the whole board as the
board itself claims); the paper's agreement with confidence and pair-rank
Brier score; a verdict per pair; and, when the two boards come from different
sources that judged the same battles (same question and model pair), the
per-vote agreement with and without ties and Cohen's kappa.

Battle ids are unique store-wide (``battle_keys``), so two sources cannot
hold the same id: the same battle judged twice is found by its question and
model pair.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
from sqlalchemy import Connection

from arena.audit.read import snapshot_votes
from arena.boards.inference import stored_inference
from arena.boards.resolve import resolve_board, samples_pruned
from arena.boards.snapshots import Board, SnapshotError, load_samples
from arena.core.defaults import DEFAULT_LEVEL
from arena.core.errors import ArgumentError
from arena.core.outcomes import A_WINS, TIE, TIE_BOTH_BAD
from arena.engine.agreement import (
    Estimate,
    VoteAgreement,
    agreement_with_confidence,
    bootstrap_correlations,
    interval_separated,
    pair_brier,
    share_ahead,
    vote_agreement,
)
from arena.store.aliases import canonical_names

__all__ = ["Agreement", "PairAgreement", "board_agreement", "parse_selector"]

_SELECTOR_KEYS = ("source", "category", "snapshot", "style", "component")


def parse_selector(text: str) -> dict:
    """``"source=x,category=y,style"`` (or a snapshot id, or ``overall``) -> resolve_board kwargs.

    Raises
    ------
    ValueError
        An unknown key or a value that is not a number where one is needed.
    """
    text = (text or "").strip()
    if text in ("", "overall"):
        return {}
    if text.isdigit():
        return {"snapshot_id": int(text)}
    out: dict = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in _SELECTOR_KEYS:
            raise ArgumentError(
                f"board selector {text!r}: unknown key {key!r} (one of {', '.join(_SELECTOR_KEYS)}; "
                "e.g. source=lmarena,category=math,style or a snapshot id)"
            )
        if key == "style":
            out["style"] = value.strip().lower() not in ("0", "false", "no")
        elif key in ("snapshot", "component"):
            if not value.strip().isdigit():
                raise ArgumentError(
                    f"board selector {text!r}: {key} must be a number, got {value!r}"
                )
            out["snapshot_id" if key == "snapshot" else "component"] = int(value)
        else:
            out[key] = value.strip()
    return out


@dataclass(frozen=True)
class PairAgreement:
    """One shared pair: ``model_a`` is ahead on the reference board's ratings.

    ``reference`` / ``candidate``: the board's verdict under its simultaneous
    inference (``"a better"``, ``"b better"``, ``"not separated"``);
    ``outcome``: ``"agree"``, ``"disagree"`` (both separate them, opposite
    ways) or ``"not separated"`` (either board does not). ``*_intervals``: the
    same by the paper's interval-overlap rule. ``p_reference`` /
    ``p_candidate``: share of each board's bootstrap rounds with A ahead.
    """

    model_a: str
    model_b: str
    reference: str
    candidate: str
    outcome: str
    reference_intervals: str
    candidate_intervals: str
    p_reference: float
    p_candidate: float


@dataclass(frozen=True)
class Agreement:
    """Result of :func:`board_agreement`; :meth:`document` is the JSON."""

    reference: dict
    candidate: dict
    models: list[str]
    #: shared models spelled differently on the two boards, matched by an alias
    #: (:mod:`arena.store.aliases`): ``{"reference": name, "candidate": name}``
    aliased: list[dict]
    left_out: list[dict]
    spearman: Estimate
    kendall: Estimate
    separability: dict
    agreement_with_confidence: float | None
    agreement_counts: dict
    agreement_simultaneous: dict
    brier: float | None
    brier_pairs: int
    pairs: list[PairAgreement]
    level: float
    rounds: int
    votes: VoteAgreement | None = None
    votes_reason: str | None = None
    definitions: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        doc = asdict(self)
        doc["spearman"] = asdict(self.spearman)
        doc["kendall"] = asdict(self.kendall)
        if self.votes is not None:
            doc["votes"]["table"] = [list(r) for r in self.votes.table]
        return doc


DEFINITIONS = {
    "separability": "share of the shared models' pairs whose intervals do not overlap "
    "(Li et al. 2024); 'simultaneous': share the board separates under its own "
    "simultaneous inference over all its ranked models",
    "agreement_with_confidence": "over pairs the reference's intervals separate: +1 if the "
    "candidate's intervals separate them the same way, -1 the other way, 0 if they overlap; "
    "mean in [-1, 1] (the paper's script prints (mean + 1) / 2)",
    "brier": "over the same pairs: mean of (1 - p)^2, p the share of the candidate's "
    "bootstrap rounds with the reference's winner ahead (ties half)",
    "spearman/kendall": "of the shared models' ratings (Kendall tau-b); intervals: basic "
    "bootstrap 2 r - q over bootstrap rounds (round r of one board paired with round r of the "
    "other), clipped to [-1, 1]",
}


def _describe(board: Board) -> dict:
    s = board.snapshot
    return {"snapshot": s.id, "board": s.board, "source": s.source, "category": s.category}


def _side(conn: Connection, board: Board):
    samples = load_samples(conn, board.snapshot.id)
    if samples is None:
        raise samples_pruned(board.snapshot.id)
    ranked = [r for r in board.rows if r.ranked and r.rating is not None]
    return samples.astype(np.float64), ranked


def _verdict(sign: int) -> str:
    return {1: "a better", -1: "b better", 0: "not separated"}[int(sign)]


def _left_out(ref: Board, cand: Board, shared: set[str], key: Callable[[str], str], ambiguous: dict[str, list[str]]) -> list[dict]:  # fmt: skip
    """Rows not compared, each with why; names are matched through ``key`` (aliases)."""
    out = []
    for label, board, other in (("reference", ref, cand), ("candidate", cand, ref)):
        keys_other = {key(r.model) for r in other.rows}
        for r in board.rows:
            k = key(r.model)
            if k in shared:
                continue
            if k in ambiguous:
                why = f"one model by alias with {', '.join(n for n in ambiguous[k] if n != r.model)} on one board"  # fmt: skip
            elif not (r.ranked and r.rating is not None):
                why = f"unranked on the {label} board" + (f": {r.unranked_reason}" if r.unranked_reason else "")  # fmt: skip
            elif k not in keys_other:
                why = f"only on the {label} board"
            else:
                continue  # reported from the other side (unranked there)
            out.append({"model": r.model, "board": label, "reason": why})
    return sorted(out, key=lambda d: (d["model"], d["board"]))


def _by_key(rows: list, key: Callable[[str], str], ambiguous: dict[str, list[str]]) -> dict:
    """Ranked rows by their canonical name; two rows of one board with one canonical
    name (a model and its alias rated apart) are left out, not merged."""
    groups: dict[str, list] = {}
    for r in rows:
        groups.setdefault(key(r.model), []).append(r)
    for k, rs in groups.items():
        if len(rs) > 1:
            ambiguous[k] = sorted(r.model for r in rs)
    return {k: rs[0] for k, rs in groups.items() if len(rs) == 1}


def board_agreement(
    conn: Connection,
    *,
    reference: str | dict,
    candidate: str | dict,
    level: float = DEFAULT_LEVEL,
    votes: bool = True,
) -> Agreement:
    """Compare a candidate board with a reference board on the models both rank.

    Parameters
    ----------
    conn : sqlalchemy.Connection
    reference, candidate : str or dict
        Board selectors (:func:`parse_selector`) or resolve_board keyword dicts.
    level : float, default DEFAULT_LEVEL (0.95)
        Level of the correlations' bootstrap intervals (separation uses each
        board's own level and intervals).
    votes : bool, default True
        Also the per-vote agreement (reads both boards' votes, one row each).

    Raises
    ------
    SnapshotError
        A board not found, samples pruned, or fewer than 2 shared ranked models.
    ValueError
        A bad selector.
    """
    ref_board = resolve_board(conn, **(parse_selector(reference) if isinstance(reference, str) else reference))  # fmt: skip
    cand_board = resolve_board(conn, **(parse_selector(candidate) if isinstance(candidate, str) else candidate))  # fmt: skip
    if ref_board.snapshot.id == cand_board.snapshot.id:
        raise SnapshotError(f"reference and candidate are the same snapshot ({ref_board.snapshot.id})")  # fmt: skip
    ref_s, ref_ranked = _side(conn, ref_board)
    cand_s, cand_ranked = _side(conn, cand_board)
    names = canonical_names(conn)

    def key(model: str) -> str:
        return names.get(model, model)

    ambiguous: dict[str, list[str]] = {}
    ref_by = _by_key(ref_ranked, key, ambiguous)
    cand_by = _by_key(cand_ranked, key, ambiguous)
    shared_rows = [(r, cand_by[k]) for k, r in ref_by.items() if k in cand_by]
    shared = {key(r.model) for r, _ in shared_rows}
    if len(shared_rows) < 2:
        raise SnapshotError(
            f"snapshots {ref_board.snapshot.id} and {cand_board.snapshot.id} share "
            f"{len(shared_rows)} ranked model(s): agreement needs at least 2"
        )
    # Reference order: by reference rating, best first.
    shared_rows.sort(key=lambda rc: (-rc[0].rating, rc[0].model))
    models = [r.model for r, _ in shared_rows]
    k = len(models)
    ref_pos = np.array([r.position for r, _ in shared_rows])
    cand_pos = np.array([c.position for _, c in shared_rows])
    ref_rating = np.array([r.rating for r, _ in shared_rows], dtype=np.float64)
    cand_rating = np.array([c.rating for _, c in shared_rows], dtype=np.float64)
    sr, sc = ref_s[:, ref_pos], cand_s[:, cand_pos]
    spearman, kendall = bootstrap_correlations(ref_rating, cand_rating, sr, sc, level=level)

    def bounds(rows, attr):
        return np.array([np.nan if getattr(x, attr) is None else getattr(x, attr) for x in rows])

    ref_iv = interval_separated(bounds([r for r, _ in shared_rows], "ci_low"), bounds([r for r, _ in shared_rows], "ci_high"))  # fmt: skip
    cand_iv = interval_separated(bounds([c for _, c in shared_rows], "ci_low"), bounds([c for _, c in shared_rows], "ci_high"))  # fmt: skip

    def simultaneous(board, samples, rows):
        # the board's own inference, as compare and the model page read it back
        # (its stored method and Monte-Carlo margin)
        stored = stored_inference(board, samples)
        assert stored is not None  # at least two shared ranked models
        inf = stored.inference
        idx = [stored.index[r.model] for r in rows]
        sep = np.zeros((k, k), dtype=np.int64)
        for a in range(k):
            for b in range(k):
                sep[a, b] = inf.separated(idx[a], idx[b])
        return sep, inf.method, inf.level

    ref_sim, ref_method, ref_level = simultaneous(ref_board, ref_s, [r for r, _ in shared_rows])
    cand_sim, cand_method, cand_level = simultaneous(
        cand_board, cand_s, [c for _, c in shared_rows]
    )
    iu = np.triu_indices(k, 1)
    n_pairs = int(iu[0].size)

    def share(sep):
        return float(np.count_nonzero(sep[iu])) / n_pairs

    separability = {
        "reference": {
            "overlap": share(ref_iv),
            "simultaneous": share(ref_sim),
            "pairs": n_pairs,
            "inference": ref_method,
            "level": ref_level,
        },  # fmt: skip
        "candidate": {
            "overlap": share(cand_iv),
            "simultaneous": share(cand_sim),
            "pairs": n_pairs,
            "inference": cand_method,
            "level": cand_level,
        },  # fmt: skip
    }
    counts = agreement_with_confidence(ref_iv, cand_iv)
    sim_counts = agreement_with_confidence(ref_sim, cand_sim)
    brier, brier_pairs = pair_brier(ref_iv, sc)
    pairs = []
    for a, b in zip(*iu, strict=True):
        r_v, c_v = int(ref_sim[a, b]), int(cand_sim[a, b])
        outcome = "agree" if r_v != 0 and r_v == c_v else ("disagree" if r_v != 0 and r_v == -c_v else "not separated")  # fmt: skip
        pairs.append(
            PairAgreement(
                model_a=models[a],
                model_b=models[b],
                reference=_verdict(r_v),
                candidate=_verdict(c_v),
                outcome=outcome,
                reference_intervals=_verdict(ref_iv[a, b]),
                candidate_intervals=_verdict(cand_iv[a, b]),
                p_reference=share_ahead(sr, int(a), int(b)),
                p_candidate=share_ahead(sc, int(a), int(b)),
            )  # fmt: skip
        )
    if votes:
        per_vote, votes_reason = _votes(conn, ref_board, cand_board, shared, key)
    else:
        per_vote, votes_reason = None, "not computed (votes=False)"
    return Agreement(
        reference=_describe(ref_board),
        candidate=_describe(cand_board),
        models=models,
        aliased=[
            {"reference": r.model, "candidate": c.model}
            for r, c in shared_rows
            if r.model != c.model
        ],
        left_out=_left_out(ref_board, cand_board, shared, key, ambiguous),
        spearman=spearman,
        kendall=kendall,
        separability=separability,
        agreement_with_confidence=counts.pop("estimate"),
        agreement_counts=counts,
        agreement_simultaneous=sim_counts,
        brier=brier,
        brier_pairs=brier_pairs,
        pairs=pairs,
        level=float(level),
        rounds=int(min(len(ref_s), len(cand_s))),
        votes=per_vote,
        votes_reason=votes_reason,
        definitions=dict(DEFINITIONS),
    )


_TIE_CODES = {TIE, TIE_BOTH_BAD}
_A_CODE = A_WINS


def _keyed(votes, shared: set[str], key: Callable[[str], str]):
    """(question, first model, second model) keys in canonical-name order and 0/1/2 votes."""
    keys, out = [], []
    names = [key(n) for n in votes.names]
    for n in range(votes.a.size):
        q = votes.question[n]
        a, b = names[votes.a[n]], names[votes.b[n]]
        if q < 0 or a not in shared or b not in shared:
            continue
        code = int(votes.outcome[n])
        if code in _TIE_CODES:
            v = 2
        else:
            a_won = code == _A_CODE
            v = 0 if (a_won == (a < b)) else 1
        keys.append((votes.questions[q], min(a, b), max(a, b)))
        out.append(v)
    return keys, out


def _votes(conn: Connection, ref: Board, cand: Board, shared: set[str], key: Callable[[str], str]):  # fmt: skip

    rs, cs = ref.snapshot.source, cand.snapshot.source
    if rs is None or cs is None or rs == cs:
        return None, (
            "per-vote agreement needs two boards of different sources "
            f"(reference source {rs!r}, candidate source {cs!r})"
        )
    rk, rv = _keyed(snapshot_votes(conn, ref.snapshot), shared, key)
    ck, cv = _keyed(snapshot_votes(conn, cand.snapshot), shared, key)
    va = vote_agreement(rk, rv, ck, cv)
    if va.vote_pairs == 0:
        return None, (
            f"no battle was judged by both sources (same question and model pair): "
            f"{len(set(rk))} keyed battles in {rs!r}, {len(set(ck))} in {cs!r}"
        )
    return va, None
