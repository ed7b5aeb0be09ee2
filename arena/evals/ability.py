"""Abilities of examinees (models) on a calibrated 2PL item bank: MAP and EAP with standard errors.

MAP is the posterior mode under the N(0, 1) prior, found by Newton's method
for all examinees at once; its standard error is ``1 / sqrt(test information +
1)`` at the mode. EAP is the posterior mean, its standard error the posterior
standard deviation, integrated by adaptive Gauss-Hermite quadrature: nodes are
placed at ``mode + sd * x_k``, so the quadrature stays accurate when hundreds of
items make the posterior narrow (a fixed grid would miss it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import expit, logsumexp

from arena.core.errors import ArgumentError
from arena.evals.irt import ItemBank, response_matrix

__all__ = ["Abilities", "METHODS", "score_abilities"]

METHODS = ("eap", "map")
#: Newton iterations for the MAP; each halves the error many times over, 50 is ample.
_MAX_NEWTON = 50
#: Newton steps are clipped to this size (far from the mode the curvature is small).
_MAX_STEP = 2.0
_NEWTON_TOL = 1e-10
#: Adaptive Gauss-Hermite nodes for EAP.
_EAP_NODES = 31
#: Cells per block of the (examinees, nodes, items) array in the EAP.
_BLOCK_CELLS = 1 << 22


@dataclass(frozen=True)
class Abilities:
    """Ability estimates on the bank's scale (N(0, 1) prior).

    Attributes
    ----------
    theta, se : ndarray, shape (n_examinees,)
        Estimates and standard errors.
    method : str
        ``"eap"`` or ``"map"``.
    n_items : ndarray of int
        Bank items each examinee answered.
    """

    theta: np.ndarray
    se: np.ndarray
    method: str
    n_items: np.ndarray


def _map(y, mask, a, d):
    theta = np.zeros(y.shape[0])
    for _ in range(_MAX_NEWTON):
        p = expit(theta[:, None] * a[None, :] + d[None, :])
        grad = (mask * (y - p)) @ a - theta
        hess = (mask * p * (1.0 - p)) @ (a * a) + 1.0
        step = np.clip(grad / hess, -_MAX_STEP, _MAX_STEP)
        theta += step
        if np.abs(step).max() < _NEWTON_TOL:
            break
    p = expit(theta[:, None] * a[None, :] + d[None, :])
    info = (mask * p * (1.0 - p)) @ (a * a)
    return theta, 1.0 / np.sqrt(info + 1.0)


def _eap(y, mask, a, d, mode, sd):
    x, w = hermegauss(_EAP_NODES)
    theta = np.empty_like(mode)
    se = np.empty_like(mode)
    rows = max(1, _BLOCK_CELLS // (x.size * a.size))
    for start in range(0, mode.size, rows):
        sl = slice(start, start + rows)
        nodes = mode[sl, None] + sd[sl, None] * x[None, :]  # (e, k)
        z = nodes[:, :, None] * a[None, None, :] + d[None, None, :]
        ll = np.einsum("ei,eki->ek", y[sl] * mask[sl], z) - np.einsum(
            "ei,eki->ek", mask[sl], np.logaddexp(0.0, z)
        )
        # Posterior density over the proposal N(mode, sd^2): prior * likelihood / proposal.
        logw = np.log(w)[None, :] + ll - 0.5 * nodes**2 + 0.5 * x[None, :] ** 2
        logw -= logsumexp(logw, axis=1, keepdims=True)
        pw = np.exp(logw)
        mean = (pw * nodes).sum(axis=1)
        theta[sl] = mean
        se[sl] = np.sqrt(np.maximum((pw * (nodes - mean[:, None]) ** 2).sum(axis=1), 0.0))
    return theta, se


def score_abilities(bank: ItemBank, responses, *, present=None, method: str = "eap") -> Abilities:
    """Estimate abilities from 0/1 responses to the bank's items.

    Parameters
    ----------
    bank : ItemBank
    responses : array_like, shape (n_examinees, n_bank_items)
        Columns in the bank's item order; NaN (or ``present`` False) where an
        item was not given.
    present : array_like of bool, optional
    method : {"eap", "map"}, default "eap"

    Returns
    -------
    Abilities
        An examinee with no answered items gets the prior: 0 with SE 1.
    """
    if method not in METHODS:
        raise ArgumentError(f"method must be one of {METHODS}, got {method!r}")
    y, mask = response_matrix(responses, present)
    if y.shape[1] != len(bank.items):
        raise ArgumentError(f"responses have {y.shape[1]} items, the bank {len(bank.items)}")
    maskf = mask.astype(np.float64)
    a, d = bank.discrimination, bank.intercept
    mode, sd = _map(y, maskf, a, d)
    if method == "eap":
        mode, sd = _eap(y, maskf, a, d, mode, sd)
    return Abilities(mode, sd, method, mask.sum(axis=1).astype(np.int64))
