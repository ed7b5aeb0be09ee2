"""Sums of per-group terms onto the models: ``v @ incidence`` and ``v @ |incidence|``.

Every gradient, Hessian diagonal and battle total of the Bradley–Terry model
is a sum of per-group terms onto the group's two members.  As a sparse product
(``incidence.T @ v.T``) this costs a transposed copy of ``v`` (SciPy wants
the vectors contiguous in the other order) and a random-access pass.  Groups
are sorted by their first member (a design's group keys are sorted), so the
first-member sums are segment sums over contiguous runs
(``np.add.reduceat``, a streaming pass); the second-member sums are one
weighted ``np.bincount`` per round on the round's own contiguous row.  On a 1,000-model
board with 432k groups this is about twice as fast as the sparse product.
"""

from __future__ import annotations

import numpy as np

from arena.core.errors import ArgumentError

__all__ = ["GroupSums"]


class GroupSums:
    """Per-model sums of ``(R, G)`` group terms for groups ``(ga, gb)`` sorted by ``ga``.

    Parameters
    ----------
    ga, gb : ndarray of intp, shape (G,)
        Members of each group as model indices; ``ga`` non-decreasing.
    n_models : int
        Number of models (the length of the sums).
    """

    def __init__(self, ga: np.ndarray, gb: np.ndarray, n_models: int):
        ga = np.asarray(ga, dtype=np.intp)
        if ga.size and np.any(ga[1:] < ga[:-1]):
            raise ArgumentError("groups must be sorted by their first member")
        self.n_models = int(n_models)
        self.n_groups = int(ga.size)
        per_first = np.bincount(ga, minlength=self.n_models)
        self.ga_runs = per_first  # group count per first member: np.repeat expands by it
        # segments of the models that are some group's first member: strictly
        # increasing starts, each run ending where the next begins (reduceat)
        starts = np.concatenate([[0], np.cumsum(per_first)[:-1]]) if self.n_models else per_first
        self._leads = np.flatnonzero(per_first > 0)
        self._starts = starts[self._leads]
        self._all_lead = self._leads.size == self.n_models
        self._gb = np.asarray(gb, dtype=np.intp)

    def first(self, v: np.ndarray) -> np.ndarray:
        """``out[r, i] = sum of v[r, g] over groups with ga[g] == i``, shape (R, M)."""
        v = np.asarray(v, dtype=np.float64)
        if self.n_groups == 0:
            return np.zeros((v.shape[0], self.n_models))
        runs = np.add.reduceat(v, self._starts, axis=1)
        if self._all_lead:
            return runs
        out = np.zeros((v.shape[0], self.n_models))
        out[:, self._leads] = runs
        return out

    def second(self, v: np.ndarray) -> np.ndarray:
        """``out[r, i] = sum of v[r, g] over groups with gb[g] == i``, shape (R, M)."""
        out = np.empty((v.shape[0], self.n_models))
        for r in range(v.shape[0]):
            # sequential reads, scattered adds into a cache-resident (M,) vector
            out[r] = np.bincount(self._gb, weights=v[r], minlength=self.n_models)
        return out

    def signed(self, v: np.ndarray) -> np.ndarray:
        """``v @ incidence``: first-member sums minus second-member sums, shape (R, M)."""
        out = self.first(v)
        out -= self.second(v)
        return out

    def total(self, v: np.ndarray) -> np.ndarray:
        """``v @ |incidence|``: first- plus second-member sums, shape (R, M)."""
        out = self.first(v)
        out += self.second(v)
        return out
