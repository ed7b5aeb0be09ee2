"""``arena irt fit / select / adapt`` as functions: read 0/1 result files or a saved bank,
calibrate, pick subsets, simulate adaptive tests.

:func:`irt_fit`, :func:`irt_select` and :func:`irt_adapt` are what the commands compute
(options named as their flags); each result's ``to_dict()`` is the command's
``--format json`` document.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.core.defaults import DEFAULT_LEVEL, DEFAULT_SEED
from arena.core.errors import ArenaError, OptionError, check_choice
from arena.evals.ability import score_abilities
from arena.evals.adaptive import simulate_adaptive
from arena.evals.files import read_responses
from arena.evals.irt import ItemBank, calibrate_1pl, calibrate_2pl
from arena.evals.subset import MIN_CORRELATION_MODELS, validate_subset

__all__ = [
    "IrtAdaptive",
    "IrtError",
    "IrtFit",
    "IrtSelection",
    "irt_adapt",
    "irt_fit",
    "irt_select",
    "load_bank",
]


class IrtError(ArenaError, ValueError):
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
    found: list[dict[str, Any]] = [
        {"model": m, "theta": float(t), "se": float(s), "items": int(k)}
        for m, t, s, k in zip(r.models, ab.theta, ab.se, ab.n_items, strict=True)
    ]
    rows = sorted(found, key=lambda row: (-row["theta"], row["model"]))
    return IrtFit(bank, tuple(rows), abilities, len(r.models), len(items), tuple(warnings))


@dataclass(frozen=True)
class IrtSelection:
    """N informative items and how well they recover the full ranking on held-out models."""

    #: one dict per chosen item: item, discrimination, difficulty
    items: tuple[dict[str, Any], ...]
    heldout_models: tuple[str, ...]
    #: rank correlations on the held-out models; None when they are too few
    spearman: float | None
    kendall: float | None
    pairs: int
    same_order: float
    not_contradicted: float
    resolved: float
    level: float
    seed: int
    #: sentences the command prints on stderr
    warnings: tuple[str, ...]

    def summary(self) -> dict[str, Any]:
        """The measures without the items (the command's table)."""
        return {
            "n": len(self.items),
            "heldout_models": list(self.heldout_models),
            "spearman": self.spearman,
            "kendall": self.kendall,
            "pairs": self.pairs,
            "same_order": self.same_order,
            "not_contradicted": self.not_contradicted,
            "resolved": self.resolved,
            "level": self.level,
            "seed": self.seed,
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``arena irt select --format json``."""
        return {**self.summary(), "items": [dict(i) for i in self.items]}


def irt_select(
    results: list[str] | tuple[str, ...],
    *,
    n: int,
    metric: str = "acc",
    filter_name: str | None = None,
    prior_sd: float = 2.0,
    no_prior: bool = False,
    holdout: int | None = None,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> IrtSelection:
    """Pick ``n`` items whose scores recover the full benchmark's ranking on held-out models.

    ``holdout``: models held out for validation (default a fifth, at least 2); the
    bank is calibrated on the others. See ``arena irt select --help``.

    Raises
    ------
    arena.evals.itemfile.ItemFileError
        Unreadable or malformed input.
    IrtError
        A subset that cannot be chosen or validated (too few models or items).
    """
    if n < 1:
        raise OptionError("n", "{name} must be at least 1")
    if holdout is not None and holdout < 2:
        raise OptionError("holdout", "{name} must be at least 2")
    r = read_responses(list(results), metric=metric, filter_name=filter_name)
    models, items = list(r.models), list(r.items)
    holdout = holdout or max(2, len(models) // 5)
    try:
        v = validate_subset(
            r.y,
            np.random.default_rng(seed),
            n=n,
            holdout=holdout,
            items=items,
            prior_sd=None if no_prior else prior_sd,
            level=level,
        )
    except ValueError as exc:
        raise IrtError(str(exc)) from None
    chosen = tuple(
        {
            "item": item,
            "discrimination": float(v.bank.discrimination[j]),
            "difficulty": float(v.bank.difficulty[j]),
        }
        for item, j in zip(v.selection.items, v.selection.indices, strict=True)
    )
    few = bool(np.isnan(v.spearman))
    warnings = (
        (
            f"{holdout} held-out models are too few for a rank correlation (fewer than "
            f"{MIN_CORRELATION_MODELS}); spearman and kendall are left empty, judge the "
            "subset by its pairs",
        )
        if few
        else ()
    )
    return IrtSelection(
        items=chosen,
        heldout_models=tuple(models[i] for i in v.heldout),
        spearman=None if few else v.spearman,
        kendall=None if np.isnan(v.kendall) else v.kendall,
        pairs=v.pairs,
        same_order=v.same_order,
        not_contradicted=v.not_contradicted,
        resolved=v.resolved,
        level=level,
        seed=seed,
        warnings=warnings,
    )


def load_bank(path: str | os.PathLike) -> ItemBank:
    """An item bank saved by ``arena irt fit --save`` (:meth:`ItemBank.to_dict` as JSON).

    Raises
    ------
    IrtError
        The file cannot be read, is not JSON, or is not a bank (the message names the file).
    """
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise IrtError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise IrtError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    try:
        return ItemBank.from_dict(doc)
    except ValueError as exc:
        raise IrtError(f"{path}: {exc}") from None


@dataclass(frozen=True)
class IrtAdaptive:
    """Simulated adaptive tests on a bank, against fixed tests of the same precision."""

    examinees: int
    se_target: float
    max_items: int
    adaptive_mean_items: float
    adaptive_median_items: float
    reached_target: float
    fixed_informative_items: int | None
    fixed_random_items: int | None
    fixed_max_tried: int
    rmse: float
    mean_se: float
    seed: int
    n_bank_items: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``arena irt adapt --format json``."""
        return {
            "examinees": self.examinees,
            "se_target": self.se_target,
            "max_items": self.max_items,
            "adaptive_mean_items": self.adaptive_mean_items,
            "adaptive_median_items": self.adaptive_median_items,
            "reached_target": self.reached_target,
            "fixed_informative_items": self.fixed_informative_items,
            "fixed_random_items": self.fixed_random_items,
            "fixed_max_tried": self.fixed_max_tried,
            "rmse": self.rmse,
            "mean_se": self.mean_se,
            "seed": self.seed,
        }


def irt_adapt(
    bank: str | os.PathLike | ItemBank,
    *,
    simulate: int = 200,
    se: float = 0.3,
    max_items: int = 40,
    seed: int = DEFAULT_SEED,
) -> IrtAdaptive:
    """Simulate ``simulate`` adaptive tests on a bank (a saved file or an :class:`ItemBank`).

    Each examinee (ability N(0, 1)) gets the most informative unused item until the
    ability's standard error reaches ``se`` or ``max_items`` were given; see
    ``arena irt adapt --help``.

    Raises
    ------
    IrtError
        A bank file that cannot be read.
    """
    if simulate < 1:
        raise OptionError("simulate", "{name} must be at least 1")
    if not se > 0:
        raise OptionError("se", "{name} must be positive")
    if max_items < 1:
        raise OptionError("max_items", "{name} must be at least 1")
    item_bank = bank if isinstance(bank, ItemBank) else load_bank(bank)
    sim = simulate_adaptive(
        item_bank,
        np.random.default_rng(seed),
        n_examinees=simulate,
        se_target=se,
        max_items=max_items,
    )
    return IrtAdaptive(
        examinees=simulate,
        se_target=se,
        max_items=max_items,
        adaptive_mean_items=float(sim.n_items.mean()),
        adaptive_median_items=float(np.median(sim.n_items)),
        reached_target=sim.reached,
        fixed_informative_items=sim.fixed_items,
        fixed_random_items=sim.random_items,
        fixed_max_tried=sim.fixed_max,
        rmse=sim.rmse,
        mean_se=float(sim.se.mean()),
        seed=seed,
        n_bank_items=len(item_bank.items),
    )
