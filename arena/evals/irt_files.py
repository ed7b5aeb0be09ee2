"""``arena irt fit`` as one function: read 0/1 result files, calibrate a bank, score the models.

:func:`irt_fit` is what the command computes (options named as its flags);
the result's ``to_dict()`` is its ``--format json`` document.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.core.errors import OptionError, check_choice
from arena.evals.ability import score_abilities
from arena.evals.files import read_responses
from arena.evals.irt import ItemBank, calibrate_1pl, calibrate_2pl

__all__ = ["IrtError", "IrtFit", "irt_fit"]


class IrtError(ValueError):
    """Responses a bank cannot be calibrated from, or a bank that cannot be written."""


@dataclass(frozen=True)
class IrtFit:
    """A calibrated item bank and every model's ability on it (best first)."""

    bank: ItemBank
    #: one dict per model: model, theta, se, items
    abilities: tuple[dict[str, Any], ...]
    ability_method: str
    n_models: int
    n_items: int
    #: sentences the command prints on stderr (no convergence, items at the bound)
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``arena irt fit --format json``."""
        return {
            **self.bank.to_dict(),
            "abilities": [dict(a) for a in self.abilities],
            "ability_method": self.ability_method,
        }


def irt_fit(
    results: list[str] | tuple[str, ...],
    *,
    metric: str = "acc",
    filter_name: str | None = None,
    prior_sd: float = 2.0,
    no_prior: bool = False,
    abilities: str = "eap",
    model: str = "2pl",
    save: str | os.PathLike | None = None,
) -> IrtFit:
    """Calibrate a 2PL (or 1PL, Rasch) item bank from many models' 0/1 results.

    ``prior_sd``: SD of the normal priors on the discrimination and the
    intercept (``no_prior``: pure marginal maximum likelihood); ``abilities``:
    ``"eap"`` or ``"map"``; ``save``: write the bank as JSON.

    Raises
    ------
    arena.evals.itemfile.ItemFileError
        Unreadable or malformed input.
    IrtError
        Responses that cannot be calibrated, or a bank file that cannot be written.
    """
    check_choice("abilities", abilities, ("eap", "map"))
    check_choice("model", model, ("2pl", "1pl"))
    if not prior_sd > 0:
        raise OptionError("prior_sd", "{name} must be positive")
    r = read_responses(list(results), metric=metric, filter_name=filter_name)
    items = list(r.items)
    calibrate = calibrate_1pl if model == "1pl" else calibrate_2pl
    try:
        bank = calibrate(r.y, items=items, prior_sd=None if no_prior else prior_sd)
    except ValueError as exc:
        raise IrtError(str(exc)) from None
    cols = (
        np.array([items.index(i) for i in bank.items])
        if len(bank.items) < len(items)
        else np.arange(len(items))
    )
    ab = score_abilities(bank, r.y[:, cols], method=abilities)
    warnings = []
    if not bank.converged:
        warnings.append("EM did not converge within the iteration limit")
    if bank.at_bound:
        warnings.append(
            f"{len(bank.at_bound)} items reached the discrimination bound (responses nearly "
            "separate the models); a prior keeps them finite"
        )
    if save:
        try:
            with open(save, "w", encoding="utf-8") as fh:
                json.dump(bank.to_dict(), fh, indent=1)
        except OSError as exc:
            raise IrtError(f"{save}: cannot write: {exc.strerror}") from None
    rows = sorted(
        (
            {"model": m, "theta": float(t), "se": float(s), "items": int(k)}
            for m, t, s, k in zip(r.models, ab.theta, ab.se, ab.n_items, strict=True)
        ),
        key=lambda row: (-row["theta"], row["model"]),
    )
    return IrtFit(bank, tuple(rows), abilities, len(r.models), len(items), tuple(warnings))
