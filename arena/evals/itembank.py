"""The 2PL (and 1PL) item model and a calibrated item bank: :func:`item_information`, :class:`ItemBank`.

``P(correct) = expit(a * (theta - b))`` for an examinee of ability
``theta`` and an item of discrimination ``a`` and difficulty ``b``; the bank
is what :func:`arena.evals.irt.calibrate_2pl` returns and what ability
scoring (:mod:`arena.evals.ability`) and adaptive testing
(:mod:`arena.evals.adaptive`) read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from arena.core.errors import ArgumentError

__all__ = ["ItemBank", "item_information", "response_matrix"]


def item_information(theta, a, b) -> np.ndarray:
    """Fisher information of 2PL items at ability ``theta``: ``a^2 p (1 - p)``.

    Parameters
    ----------
    theta, a, b : array_like
        Abilities, discriminations and difficulties (broadcast together).

    Returns
    -------
    ndarray
        ``a**2 * p * (1 - p)`` with ``p = expit(a * (theta - b))``.

    Examples
    --------
    >>> float(item_information(0.0, 2.0, 0.0))
    1.0
    >>> round(float(item_information(0.0, 2.0, 2.0)), 3)
    0.071
    """
    theta, a, b = (np.asarray(v, dtype=np.float64) for v in (theta, a, b))
    z = a * (theta - b)
    return a * a * expit(z) * expit(-z)


@dataclass(frozen=True)
class ItemBank:
    """A calibrated 2PL item bank.

    Attributes
    ----------
    items : list of str
        Item ids, in the order of the arrays.
    discrimination, difficulty : ndarray, shape (n_items,)
        ``a`` and ``b``.
    se_discrimination, se_difficulty : ndarray, shape (n_items,)
        Standard errors (NaN when the information matrix is singular).
    log_likelihood : float
        Marginal log-likelihood at the estimates (None for a loaded bank).
    n_examinees : int
        Examinees the bank was calibrated on.
    iterations : int
        EM iterations run; ``converged`` says whether the tolerance was met.
    converged : bool
    quadrature : str
        ``"gauss-hermite, 21 nodes"`` or ``"uniform grid, h=0.02, 601 nodes"``.
    se_method : str
        ``"full observed information"`` or ``"item-diagonal blocks of the observed information"``.
    prior_sd : float or None
        Standard deviation of the normal priors on ``a`` (mean 1) and on the
        intercept ``d`` (mean 0), when the estimates are posterior modes.
    dropped : dict
        Item id -> reason, for items left out (no variation in responses).
    at_bound : list of str
        Items whose discrimination reached the bound ``A_LIMIT`` (responses
        nearly separate the examinees; the estimate is not a maximum).
    model : str
        ``"2PL"``, or ``"1PL"`` (Rasch: one discrimination shared by every item,
        so ``discrimination`` holds that value for each).
    """

    items: list[str]
    discrimination: np.ndarray
    difficulty: np.ndarray
    se_discrimination: np.ndarray
    se_difficulty: np.ndarray
    log_likelihood: float | None = None
    n_examinees: int = 0
    iterations: int = 0
    converged: bool = True
    quadrature: str = ""
    se_method: str = ""
    prior_sd: float | None = None
    dropped: dict[str, str] = field(default_factory=dict)
    at_bound: list[str] = field(default_factory=list)
    model: str = "2PL"

    @property
    def intercept(self) -> np.ndarray:
        """``d = -a * b`` of the slope-intercept form."""
        return -self.discrimination * self.difficulty

    def to_dict(self) -> dict:
        """JSON-ready form (numbers as numbers; NaN standard errors as None)."""

        def num(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {
            "model": self.model,
            "items": [
                {
                    "item": item,
                    "discrimination": float(a),
                    "difficulty": float(b),
                    "se_discrimination": num(sa),
                    "se_difficulty": num(sb),
                }
                for item, a, b, sa, sb in zip(
                    self.items,
                    self.discrimination,
                    self.difficulty,
                    self.se_discrimination,
                    self.se_difficulty,
                    strict=True,
                )
            ],
            "log_likelihood": self.log_likelihood,
            "n_examinees": self.n_examinees,
            "iterations": self.iterations,
            "converged": self.converged,
            "quadrature": self.quadrature,
            "se_method": self.se_method,
            "prior_sd": self.prior_sd,
            "dropped": dict(self.dropped),
            "at_bound": list(self.at_bound),
        }

    @classmethod
    def from_dict(cls, doc: dict) -> ItemBank:
        """Inverse of :meth:`to_dict`; raises ``ValueError`` naming the bad field."""
        if not isinstance(doc, dict) or doc.get("model") not in ("1PL", "2PL"):
            raise ArgumentError('not an item bank (field \'model\' must be "1PL" or "2PL")')
        rows = doc.get("items")
        if not isinstance(rows, list) or not rows:
            raise ArgumentError("field 'items' must be a non-empty list")
        cols: dict[str, list] = {k: [] for k in ("item", "a", "b", "sa", "sb")}
        for n, row in enumerate(rows, 1):
            try:
                cols["item"].append(str(row["item"]))
                a, b = float(row["discrimination"]), float(row["difficulty"])
            except (KeyError, TypeError, ValueError) as exc:
                raise ArgumentError(f"items[{n}]: bad or missing field {exc}") from None
            if not (np.isfinite(a) and np.isfinite(b)):
                raise ArgumentError(f"items[{n}]: discrimination and difficulty must be finite")
            cols["a"].append(a)
            cols["b"].append(b)
            for key, name in (("sa", "se_discrimination"), ("sb", "se_difficulty")):
                v = row.get(name)
                cols[key].append(np.nan if v is None else float(v))
        if len(set(cols["item"])) != len(cols["item"]):
            raise ArgumentError("field 'items' repeats an item id")
        return cls(
            items=cols["item"],
            discrimination=np.array(cols["a"]),
            difficulty=np.array(cols["b"]),
            se_discrimination=np.array(cols["sa"]),
            se_difficulty=np.array(cols["sb"]),
            log_likelihood=doc.get("log_likelihood"),
            n_examinees=int(doc.get("n_examinees") or 0),
            iterations=int(doc.get("iterations") or 0),
            converged=bool(doc.get("converged", True)),
            quadrature=str(doc.get("quadrature") or ""),
            se_method=str(doc.get("se_method") or ""),
            prior_sd=doc.get("prior_sd"),
            dropped=dict(doc.get("dropped") or {}),
            at_bound=list(doc.get("at_bound") or []),
            model=str(doc["model"]),
        )


def response_matrix(responses, present=None) -> tuple[np.ndarray, np.ndarray]:
    """Validate 0/1 responses ``(examinees, items)``; return float responses and a bool mask.

    Entries where ``present`` is False (or NaN entries when ``present`` is
    None) are missing and ignored.
    """
    y = np.asarray(responses, dtype=np.float64)
    if y.ndim != 2 or y.size == 0:
        raise ArgumentError(
            f"responses must be a non-empty 2-D (examinees, items) array, got {y.shape}"
        )
    mask = ~np.isnan(y) if present is None else np.asarray(present, dtype=bool)
    if mask.shape != y.shape:
        raise ArgumentError(f"present has shape {mask.shape}, responses {y.shape}")
    y = np.where(mask, y, 0.0)
    bad = mask & (y != 0.0) & (y != 1.0)
    if bad.any():
        p, i = (int(v[0]) for v in np.nonzero(bad))
        raise ArgumentError(f"responses must be 0 or 1; examinee {p}, item {i} is {y[p, i]!r}")
    return y, mask
