"""What the engine says about models: flag sentences, why a model is unranked, model names in messages.

No numpy here: a board read back from a snapshot (``arena leaderboard``) says
why a model is unranked with :func:`unranked_reason` without loading the engine.
:func:`flag_warnings` turns per-model flags (``never_won``, ``disconnected``,
...) into one sentence per flag naming the models; :func:`fit_warnings` adds
the prior's sentence when the MLE does not exist.  Names are table indices
unless the caller gives ``names`` (:func:`check_names`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from arena.core.errors import ArgumentError

__all__ = [
    "FLAG_SENTENCES",
    "UNRANKED_WORDS",
    "check_names",
    "fit_warnings",
    "flag_warnings",
    "model_label",
    "unranked_reason",
]


def check_names(names: Iterable[object] | None, n_models: int) -> list[str] | None:
    """Model names by table index (for messages), or None; one name per model."""
    if names is None:
        return None
    out = [str(n) for n in names]
    if len(out) != n_models:
        raise ArgumentError(f"names: expected one name per model ({n_models}), got {len(out)}")
    return out


def model_label(idx: int, names: Sequence[str] | None = None) -> str:
    """``'gpt-4o'`` with names, ``3`` (the table index) without."""
    return str(idx) if names is None else repr(names[idx])


#: Per-flag sentences: (flag, verb phrase for one model, for several).
FLAG_SENTENCES = (
    (
        "no_battles",
        "has no battles: rating set to the mean/anchor, interval from the prior",
        "have no battles: rating set to the mean/anchor, interval from the prior",
    ),
    ("never_won", "never won (nor tied)", "never won (nor tied)"),
    ("never_lost", "never lost (nor tied)", "never lost (nor tied)"),
    (
        "disconnected",
        "is not connected by battles to the comparable set of models: no rating on its scale",
        "are not connected by battles to the comparable set of models: no rating on its scale",
    ),
    (
        "no_mle",
        "sits where wins and losses do not pin a finite rating",
        "sit where wins and losses do not pin a finite rating",
    ),
    ("few_battles", "has very few battles: wide interval", "have very few battles: wide intervals"),
)


def flag_warnings(flags: list[tuple[str, ...]], names: Sequence[str] | None = None) -> list[str]:
    """One sentence per flag that some model carries, naming the models.

    Parameters
    ----------
    flags : list of tuple of str
        Per-model flags.
    names : sequence of str, optional
        Model names by index; without them models are named by index.
    """
    from arena.core.words import name_list

    out = []
    for flag, one, several in FLAG_SENTENCES:
        idx = [i for i, f in enumerate(flags) if flag in f]
        if idx:
            who = name_list(str(i) if names is None else names[i] for i in idx)
            out.append(f"model {who} {one}" if len(idx) == 1 else f"models {who} {several}")
    return out


def fit_warnings(
    flags: list[tuple[str, ...]], mle_exists: bool, lam: float, names: Sequence[str] | None = None
) -> list[str]:
    out = flag_warnings(flags, names)
    if not mle_exists:
        if lam > 0:
            out.append(
                f"the maximum-likelihood estimate does not exist; ratings use a weak Gaussian "
                f"prior with precision {lam:g} (prior SD {1 / math.sqrt(lam):.3g} logits)"
            )
    return out


#: Why a model has no rank, in words (``{name}`` and ``{battles}``, ``{min_battles}``).
UNRANKED_WORDS = {
    "no_battles": "{name} has no battles",
    "disconnected": (
        "{name} never met the comparable set of models, directly or through others: "
        "its rating is on no common scale"
    ),
    "no_mle": (
        "{name}'s wins and losses against the comparable set do not pin a finite rating "
        "(it never lost, never won, or met the set only through such models)"
    ),
    "few_battles": "{name} has only {battles:g} battles (fewer than {min_battles})",
}


def unranked_reason(
    name: str, flags: tuple[str, ...], battles: float, *, min_battles: int
) -> str | None:
    """Why a model gets no rank, tier or verdict, in words; ``None`` if it is ranked.

    Parameters
    ----------
    name : str
        Model name (used in the sentence).
    flags : tuple of str
        The engine's flags (``disconnected``, ``no_mle``, ``no_battles``, ...).
    battles : float
    min_battles : int
        Battles a model needs to be ranked (at least 1).

    Returns
    -------
    str or None
        The first reason that applies, in the order no battles,
        disconnected, no MLE, few battles.
    """
    for flag in ("no_battles", "disconnected", "no_mle"):
        if flag in flags:
            return UNRANKED_WORDS[flag].format(name=name)
    if battles < max(min_battles, 1):
        return UNRANKED_WORDS["few_battles"].format(
            name=name, battles=battles, min_battles=max(min_battles, 1)
        )
    return None
