"""A board's rank and tier rule in words, the same on the page and the command line.

One rank definition on every surface: the leaderboard table, the published page
and the JSON say what a rank set and a tier are with these sentences.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_RANKS

__all__ = [
    "is_cut_rule",
    "is_simultaneous",
    "level_percent",
    "rank_legend",
    "draws_note",
    "tier_claim",
    "tier_sentence",
]


def is_cut_rule(o: Mapping[str, Any]) -> bool:
    return o.get("tier_rule") == "cut" and o.get("tiers") not in ("overlap", "simultaneous")


def is_simultaneous(o: Mapping[str, Any]) -> bool:
    return o.get("tiers") == "simultaneous"


def level_percent(o: Mapping[str, Any]) -> str:
    level = o.get("level", DEFAULT_LEVEL)
    return f"{float(level) * 100:g}%" if isinstance(level, (int, float)) else "95%"


def tier_sentence(options: Mapping[str, Any] | None) -> str:
    """The one sentence that is true of every tier the board draws."""
    o = options or {}
    if is_simultaneous(o):
        return (
            "The top model of each tier is shown better than every model in every lower "
            f"tier, by one test of all pairs of this board at once ({level_percent(o)})"
        )
    return tier_claim(o)


def rank_legend(options: Mapping[str, Any] | None, ranks: str = DEFAULT_RANKS) -> str:
    """The leaderboard's line on what the rank column is."""
    o = options or {}
    if ranks == "overlap":
        return (
            "rank: LMArena's rank from interval overlap, per model (not simultaneous): "
            "1 + models wholly above - models not wholly below; - = not ranked, see below"
        )
    return (
        f"rank: the ranks the data allow for all models at once ({level_percent(o)} simultaneous "
        "rank sets, best-worst); - = not ranked, see below"
    )


def draws_note(diagnostics: Mapping[str, Any] | None) -> str | None:
    """The board's Monte-Carlo error, when its draws check failed (issue 41); else None.

    The rank sets and tiers are counted over fixed draws; a snapshot whose
    second set of draws would move more than 5% of the rank sets (or the
    tiers) says so, with the figures, on every surface that shows the board.
    """
    check = ((diagnostics or {}).get("tiers") or {}).get("draws_check")
    if not check or check.get("passed", True):
        return None
    by = int(check["max_ranks"])
    return (
        f"Monte-Carlo error: the rank sets and tiers are counted over {int(check['draws']):,} "
        f"fixed draws; a second set of as many draws would move {check['sets_moved']} of "
        f"{check['ranked']} rank sets by up to {by} rank{'s' if by != 1 else ''}"
        + ("" if check.get("tiers_equal", True) else " and change the tiers")
        + ", more than the 5% this board aims for"
        + (
            " (it doubled its draws up to the most it takes)."
            if check.get("chosen")
            else " (a rebuild that leaves its rounds to the data takes more draws)."
        )
    )


def tier_claim(o: Mapping[str, Any]) -> str:
    """What a tier boundary promises; it differs by rule, so the words must too."""
    if is_simultaneous(o):
        return tier_sentence(o)
    if is_cut_rule(o):
        return (
            "A tier is a group of models; every model in a higher tier is significantly "
            "better than every model in a lower tier at this level"
        )
    return (
        "A tier starts with its leader and holds the models below it that the data cannot "
        "tell apart from that leader at this level; models in neighbouring tiers may still "
        "be within the noise of each other"
    )
