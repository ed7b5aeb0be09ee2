"""The site's words: board and category names, flag words and their legend, and the
plain-words method text ("How to read this board") built from a snapshot's options.

Category keys are shown by their labels (:mod:`arena.store.categories`: default names
for LMArena's keys, overridable with ``arena categories label``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.boards.keys import BoardKey
from arena.boards.snapshots import SnapshotInfo, StyleCoefficient
from arena.boards.words import (
    draws_note,
    is_cut_rule,
    is_simultaneous,
    level_percent,
    tier_claim,
    tier_sentence,
)
from arena.publish.fmt import fmt_count, fmt_date
from arena.store.categories import label_for

# ---------------------------------------------------------------- board names


def board_label(board: BoardKey, labels: Mapping[str, str] | None = None) -> str:
    """``Overall``, ``Instruction following``, ``Source: x``; ``, style-controlled`` for style boards.

    Built from the key's fields, never from its text: a category named
    ``code|style`` is labelled as that category, not as a style-controlled board.
    """
    parts = []
    if board.is_overall:
        parts.append("Overall")
    if board.category is not None:
        parts.append(label_for(board.category, labels))
    if board.source is not None:
        parts.append(f"Source: {board.source}")
    if board.component > 1:
        parts.append(f"comparable set {board.component}")
    return " \u00b7 ".join(parts) + (", style-controlled" if board.style_controlled else "")


# ---------------------------------------------------------------- flags
# The flag words themselves (FLAG_WORDS, flag_word, flag_legend) live in arena.core.words:
# the command line's tables say the same words as the page.


def unranked_reason(flags: set[str]) -> str:
    """Why a group of unranked models has no rank, from their flags."""
    why = ["too few battles"] if "few_battles" in flags or "no_battles" in flags else []
    if "disconnected" in flags:
        why.append("no battles linking some of them to the ranked models")
    if "no_mle" in flags:
        why.append("records that pin no finite rating")
    if "no_style" in flags:
        why.append("no battles with style metadata")
    return "; ".join(why) or "too little data"


# ---------------------------------------------------------------- method text

# Plain words for the option values `arena rebuild` writes; unknown values are shown as is.
_TIER_WORDS = {
    "simultaneous": "drawn from the board's one simultaneous test of all pairs, the test "
    "behind the rank sets and every verdict",
    "maxt": "decided by paired bootstrap tests, corrected for testing many pairs at once "
    "with step-down max-t",
    "holm": "decided by paired bootstrap tests, Holm-corrected for testing many pairs",
    "bh": "decided by paired bootstrap tests, controlling the false discovery rate",
    "overlap": "decided by interval overlap",
}
_RULE_WORDS = {
    "leader": "a new tier starts at the first model separated from the current tier's leader",
    "cut": "tiers are split only where every model above is separated from every model below",
}
_TIE_WORDS = {
    "half": "A tie counts as half a win for each model.",
    "davidson": "Ties are modelled explicitly (Davidson's extension of Bradley\u2013Terry).",
}


def tier_line(info: SnapshotInfo) -> str:
    """The one short line above the table: what a tier and a rank range are."""
    o = info.options or {}
    if is_simultaneous(o):
        return (
            f"{tier_sentence(o)}. Rank 2\u20135 means: with {level_percent(o)} confidence for all "
            "models at once, this model's rank is between 2 and 5."
        )
    if is_cut_rule(o):
        tier = "A tier's models are each significantly better than every model in lower tiers"
    else:
        tier = "A tier holds the models the data cannot tell apart from its leader"
    return (
        f"{tier}; the order inside a tier is not significant. "
        "Rank 2\u20135 means the data allow any rank from 2 to 5."
    )


def _tier_words(o: Mapping[str, Any]) -> str:
    if is_simultaneous(o):
        return ""  # the sentence already says where tiers come from
    parts = []
    if o.get("tiers"):
        parts.append(_TIER_WORDS.get(str(o["tiers"]), f"tier method: {o['tiers']}"))
    if o.get("tier_rule") and o.get("tiers") not in ("overlap", "simultaneous"):
        parts.append(_RULE_WORDS.get(str(o["tier_rule"]), f"rule: {o['tier_rule']}"))
    return f" ({'; '.join(parts)})" if parts else ""


def _inside_tier(o: Mapping[str, Any]) -> str:
    if is_simultaneous(o):
        return (
            ". Two models the board cannot tell apart and whose rank sets are the same always "
            "share a tier, and a model whose rank is pinned to one number is a tier of its "
            "own. Inside a tier some pairs may still be told apart: the rank sets, and the "
            "head-to-head comparison (arena compare), say which."
        )
    return (
        ". Models in one tier are not ranked against each other: the order inside a tier "
        "follows the point ratings, but the differences are within the noise and could "
        "reverse with more battles."
    )


def _draws_words(o: Mapping[str, Any]) -> str:
    """What the step-down counts over: the bootstrap's rounds or the fixed normal draws."""
    if str(o.get("ci") or "bootstrap") == "bootstrap":
        return "the paired bootstrap differences"
    return (
        "fixed normal draws of the estimates' covariance (the same on every rebuild: no "
        "random seed enters)"
    )


def _rank_words(o: Mapping[str, Any]) -> str:
    if not is_simultaneous(o):
        return (
            "Rank is the range of ranks the data allow: from one plus the number of models "
            "whose interval lies entirely above this model's (the best), to the number of "
            "models whose interval does not lie entirely below it (the worst)."
        )
    return (
        "Rank is the set of ranks the data allow for every model at once: all pairs of the "
        f"board are tested together ({level_percent(o)}, step-down max-t over {_draws_words(o)}; "
        "Mogstad, Romano, Shaikh and Wilhelm), the best rank is one plus the "
        "number of models shown better, the worst the number not shown worse. With "
        f"{level_percent(o)} confidence every model's true rank lies in its set at the same time. A "
        "model's page also gives its rank set when it is asked about alone (narrower: "
        "it holds for that model only). LMArena's rank from interval overlap is in the "
        "JSON and CSV exports (rank_ub, rank_lb)."
    )


def level_text(info: SnapshotInfo) -> str:
    """``95% `` (with the space) when the snapshot records its level, else empty."""
    level = (info.options or {}).get("level")
    return f"{float(level) * 100:g}% " if isinstance(level, (int, float)) else ""


def describe_method(info: SnapshotInfo) -> list[str]:
    """The plain-words caption: what the page claims and what it does not."""
    o = info.options or {}
    ci = str(o.get("ci") or "bootstrap")
    rounds = o.get("rounds")
    how = {
        "bootstrap": "a bootstrap over battles"
        + (f" with {int(rounds)} rounds" if isinstance(rounds, (int, float)) else ""),
        "sandwich": "sandwich (robust) standard errors",
        "fisher": "Fisher-information standard errors",
    }.get(ci, ci)
    # "battle" clusters are single battles: the plain bootstrap, nothing to say.
    if o.get("cluster") and str(o["cluster"]) not in ("battle", "none"):
        how += (
            f", resampling whole clusters of battles by {o['cluster']}"
            if ci == "bootstrap"
            else f", robust to battles of one {o['cluster']} being alike"
        )
    joint = (
        "simultaneous: all intervals hold together at this level"
        if o.get("simultaneous")
        else "per model: each interval on its own holds at this level"
    )
    lines = [
        f"Ratings are Bradley\u2013Terry estimates on the Elo scale from "
        f"{fmt_count(info.n_battles)} battles between {info.n_models} models "
        f"(snapshot {info.id}, computed {fmt_date(info.created_at)}).",
        f"Intervals are {level_text(info)}confidence intervals from {how}; they are {joint}. "
        "The bar shows the interval on a common axis, the tick the rating; the numbers "
        "beside it (+a/\u2212b) are how far the interval reaches above and below the rating.",
        _rank_words(o),
        tier_claim(o) + _tier_words(o) + _inside_tier(o),
    ]
    if o.get("ties"):
        ties = _TIE_WORDS.get(str(o["ties"]), f"Ties are handled as: {o['ties']}.")
        if o.get("both_bad") == "drop":
            ties += " Battles where both answers were judged bad are left out."
        lines.append(ties)
    diag = info.diagnostics or {}
    note = draws_note(diag)
    if note:
        lines.append(note)
    nu = diag.get("tie_param")
    if nu is not None:
        se = diag.get("tie_param_se")
        lines.append(
            f"Davidson tie parameter \u03bd = {nu:.3f}"
            + (f" (standard error {se:.3f})" if se is not None else "")
            + ": between equal models a tie is \u03bd times as likely as a win by either one."
        )
    comps = diag.get("components")
    if comps and comps.get("outside_models"):
        lines.append(
            f"Ratings are on one scale only within a set of models connected by wins and "
            f"losses both ways; the board ranks the largest such set ({comps['comparable_models']} "
            f"models). {comps['outside_models']} other models never met it, or met it without "
            "losing (or winning): they have no rating on this scale and are listed unranked."
        )
    part = diag.get("component")
    if part:
        lines.append(
            f"This board ranks comparable set {part['number']} of the "
            f"{board_label(BoardKey.parse(part['main_board']))} board: its models are not linked to that "
            "board's models by wins and losses both ways, directly or through others, so "
            "their ratings are on their own scale and not comparable with it."
        )
    if o.get("min_battles"):
        lines.append(
            f"Models with fewer than {o['min_battles']} battles are listed but not ranked."
        )
    return lines


def attribution_for(info: SnapshotInfo, override: str | None) -> str | None:
    if override:
        return override
    for source in (info.options or {}, info.diagnostics or {}):
        text = source.get("attribution") if isinstance(source, Mapping) else None
        if isinstance(text, str) and text.strip():
            return text.strip()
    return None


# ---------------------------------------------------------------- style coefficients

# What a larger value of each built-in feature means for an answer, in words.
_FEATURE_WORDS = {
    "tokens": ("the longer answer", "the shorter answer"),
    "headers": ("the answer with more headers", "the answer with fewer headers"),
    "lists": ("the answer with more list items", "the answer with fewer list items"),
    "bold": ("the answer with more bold text", "the answer with less bold text"),
}


def coefficient_meaning(c: StyleCoefficient) -> str:
    """One plain sentence: what the coefficient's sign says, if the interval backs it."""
    more, less = _FEATURE_WORDS.get(
        c.feature,
        (f"the answer with the higher {c.feature}", f"the answer with the lower {c.feature}"),
    )
    per = "per standard deviation of the feature, in log-odds of winning"
    if c.ci_low > 0:
        return f"Positive: judges prefer {more}, other things equal ({per})."
    if c.ci_high < 0:
        return f"Negative: judges prefer {less}, other things equal ({per})."
    return (
        f"The interval includes zero: the data cannot tell whether judges prefer "
        f"{more} or {less}, other things equal."
    )
