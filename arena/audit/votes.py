"""Per-battle votes as the audit sees them: pure arrays, no database.

The rating engine works on aggregated cells; several audit probes need the
individual votes (who voted, on which question, in which order), so the audit
reads rated battles one row each (:mod:`arena.audit.read`) into :class:`Votes`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.core.defaults import DEFAULT_BOTH_BAD
from arena.core.outcomes import A_WINS, B_WINS, TIE_BOTH_BAD
from arena.engine.counts import CountTable, clustered_table, count_table

__all__ = ["Votes", "NO_KEY"]

#: Judge / question index of a vote that has none.
NO_KEY = -1


@dataclass(frozen=True)
class Votes:
    """Rated battles, one entry per vote, in store order (battle id).

    Attributes
    ----------
    names : tuple of str
        Model names; ``a`` and ``b`` index into it.
    a, b : ndarray of intp, shape (B,)
        First-shown (``model_a``) and second-shown model.
    outcome : ndarray of int8, shape (B,)
        Outcome codes of :mod:`arena.core.outcomes`.
    weight : ndarray of float64, shape (B,)
    judge, question : ndarray of intp, shape (B,)
        Index into ``judges`` / ``questions``, or ``NO_KEY``.
    judges, questions : tuple of str
    cat_vote, cat_index : ndarray of intp
        Category membership pairs (vote index, index into ``categories``).
    categories : tuple of str
    """

    names: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray
    judge: np.ndarray
    judges: tuple[str, ...]
    question: np.ndarray
    questions: tuple[str, ...]
    cat_vote: np.ndarray
    cat_index: np.ndarray
    categories: tuple[str, ...]

    @classmethod
    def build(
        cls,
        names,
        a,
        b,
        outcome,
        *,
        weight=None,
        judge=None,
        question=None,
        categories: dict[str, np.ndarray] | None = None,
    ) -> Votes:
        """Votes from model indices and optional judge / question labels.

        ``judge`` and ``question`` are sequences of labels (``None`` for a vote
        without one); ``categories`` maps a category name to the indices of
        its votes.
        """
        a = np.asarray(a, dtype=np.intp)
        n = a.size
        jidx, jnames = _labels(judge, n)
        qidx, qnames = _labels(question, n)
        cats = categories or {}
        cat_names = tuple(sorted(cats))
        cat_vote = np.concatenate(
            [np.asarray(cats[c], dtype=np.intp) for c in cat_names] or [np.zeros(0, np.intp)]
        )
        cat_index = np.repeat(
            np.arange(len(cat_names), dtype=np.intp), [len(cats[c]) for c in cat_names]
        )
        return cls(
            names=tuple(names),
            a=a,
            b=np.asarray(b, dtype=np.intp),
            outcome=np.asarray(outcome, dtype=np.int8),
            weight=np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64),
            judge=jidx,
            judges=jnames,
            question=qidx,
            questions=qnames,
            cat_vote=cat_vote,
            cat_index=cat_index,
            categories=cat_names,
        )

    @property
    def n_models(self) -> int:
        return len(self.names)

    @property
    def n_votes(self) -> int:
        return int(self.a.size)

    @property
    def has_judges(self) -> bool:
        return bool(self.judges) and bool(np.any(self.judge != NO_KEY))

    @property
    def has_questions(self) -> bool:
        return bool(self.questions) and bool(np.any(self.question != NO_KEY))

    def score(self, both_bad: str = DEFAULT_BOTH_BAD) -> tuple[np.ndarray, np.ndarray]:
        """Credit of the first-shown model (1, 0.5 for a tie, 0) and the votes that count.

        With ``both_bad="drop"`` "both bad" votes do not count, as in the fit.
        """
        y = np.where(self.outcome == A_WINS, 1.0, np.where(self.outcome == B_WINS, 0.0, 0.5))
        keep = self.a != self.b
        if both_bad == "drop":
            keep &= self.outcome != TIE_BOTH_BAD
        return y, keep

    def table(self, mask: np.ndarray | None = None) -> CountTable:
        """Count table of the (masked) votes over all models."""
        sel = slice(None) if mask is None else mask
        weight = self.weight[sel]
        return count_table(
            self.a[sel],
            self.b[sel],
            self.outcome[sel],
            n_models=self.n_models,
            weight=None if np.all(weight == 1.0) else weight,
        )

    def clustered(self, key: np.ndarray):
        """Count table and clusters x cells matrix; votes without a key are their own cluster."""
        own = np.arange(key.size) + (int(key.max()) + 1 if key.size else 0)
        cluster = np.where(key == NO_KEY, own, key)
        weight = None if np.all(self.weight == 1.0) else self.weight
        return clustered_table(
            self.a, self.b, self.outcome, cluster, n_models=self.n_models, weight=weight
        )

    def subset(self, mask: np.ndarray) -> Votes:
        """The votes where ``mask`` holds (labels and models keep their indices)."""
        idx = np.flatnonzero(mask)
        new = np.full(self.n_votes, -1, dtype=np.intp)
        new[idx] = np.arange(idx.size)
        keep_cat = mask[self.cat_vote] if self.cat_vote.size else np.zeros(0, bool)
        return Votes(
            names=self.names,
            a=self.a[idx],
            b=self.b[idx],
            outcome=self.outcome[idx],
            weight=self.weight[idx],
            judge=self.judge[idx],
            judges=self.judges,
            question=self.question[idx],
            questions=self.questions,
            cat_vote=new[self.cat_vote[keep_cat]],
            cat_index=self.cat_index[keep_cat],
            categories=self.categories,
        )

    def battles_per_model(self) -> np.ndarray:
        _, keep = self.score()
        m = self.n_models
        return np.bincount(self.a[keep], minlength=m) + np.bincount(self.b[keep], minlength=m)


def _labels(values, n: int) -> tuple[np.ndarray, tuple[str, ...]]:
    if values is None:
        return np.full(n, NO_KEY, dtype=np.intp), ()
    values = list(values)
    names = sorted({v for v in values if v is not None})
    index = {v: i for i, v in enumerate(names)}
    return np.fromiter((index.get(v, NO_KEY) for v in values), np.intp, n), tuple(names)
