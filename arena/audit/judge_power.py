"""What the anomalous-judge test can see of each judge: power and votes needed.

A judge the ``bt`` detector does not flag is either *consistent with the
board* -- the test had the power to see a material departure and saw none --
or *too few votes to tell*.  "Material" is stated once (:class:`Material`):

* agreeing with the board's expected winner no more often than a coin
  (temperature 0), or
* favouring the first-shown position, one model or one organisation by
  ``points`` of win rate or more in an even match (default 30: a side that
  should win half the time wins 80%; a shift of ``logit(0.5 + points)``
  logits, beyond the innocent band of 1 logit).

Power is a normal approximation of the test as run on the judge's own votes
(the board's log-odds ``d`` of each vote from the fit without the judge).
For a deviation with score ``U = sum x (y - p)`` (``x`` the vote's weight in
the deviation), ``k`` relevant votes whose per-vote shift of the score under
the departure is ``m``, null variance ``v0``, variance ``v1`` and information
``i1`` under the departure:

    P(flag) ~ Phi((k m - c sqrt(k v0)) / sqrt(k v1)) * Phi(g k i1 / sqrt(k v1))

The first factor is the score test's power at the critical value ``c`` the
judge actually faced (Benjamini-Hochberg's level ``alpha R / n`` with ``R``
judges rejected, at least one, then Bonferroni within the judge like the
test); the second the chance that the estimate also lies outside the band
(``g`` the distance from the departure to the band's edge), since a flag needs
both.  The two events are positively related, so the product is a lower
bound: the power is understated, never overstated.

Temperature and position use every vote.  Favouring one model (organisation)
is judged for a model of average exposure: the judge's side-votes (a vote
counts once for each side's model; for organisations, once for each side
whose organisation is not the other side's) spread over the board's ``K``
models (organisations of two or more models), ``k = side-votes / K``.  A judge's
power is the least over the departures, its votes needed the most: the votes
(more of the same kind as its own) at which every departure is seen with the
target power.  A judge without votes of some kind borrows the board's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit, ndtr, ndtri

from arena.audit.offset import tie_variance
from arena.core.defaults import DEFAULT_AUDIT_MATERIAL_POINTS, DEFAULT_POWER

__all__ = ["Material", "JudgePower", "judge_power", "OUTCOMES", "DEPARTURE_WORDS"]

#: The three outcomes of a judge, in the order they are reported.
OUTCOMES = ("flagged", "consistent", "too few votes")
#: Each departure as the hint names it.
DEPARTURE_WORDS = {
    "temperature": "agreeing no more often than a coin",
    "position": "favouring the first-shown position",
    "favours": "favouring one model",
    "favours_organisation": "favouring one organisation",
}
#: Largest vote count searched for the target power (beyond: never).
MAX_VOTES = 10_000_000
#: Innocent band edges the flags use (temperature's lower edge; shifts' +-edge, logits).
_TEMPERATURE_EDGE = 0.5
_SHIFT_EDGE = 1.0


@dataclass(frozen=True)
class Material:
    """The smallest departure from the board the audit calls material.

    Attributes
    ----------
    points : float
        Win-rate points (0-0.5) by which a favoured position, model or
        organisation wins an even match more often: 0.30 = 50% becomes 80%.
    """

    points: float = DEFAULT_AUDIT_MATERIAL_POINTS

    @property
    def shift(self) -> float:
        """The same departure in logits."""
        return float(logit(0.5 + self.points))

    @property
    def sentence(self) -> str:
        pts = round(100 * self.points)
        return (
            "agreeing with the board's expected winner no more often than a coin, or favouring "
            f"the first-shown position, one model or one organisation by {pts} points of win rate "
            f"or more (an even match won {50 + pts}% of the time)"
        )

    def to_dict(self) -> dict:
        return {
            "coin": "temperature 0: agrees with the board's expected winner as often as a coin",
            "win_rate_points": self.points,
            "shift_logits": self.shift,
            "sentence": self.sentence,
        }


@dataclass(frozen=True)
class JudgePower:
    """Per judge (arrays of shape (J,)): power of each departure and in all, votes needed."""

    by_departure: dict
    power: np.ndarray
    votes_needed: np.ndarray
    weakest: tuple[str, ...]
    target: float
    #: Votes needed against each departure alone (inf: never), shape (J,) each.
    needed_by_departure: dict


@dataclass(frozen=True)
class _Evidence:
    """One departure's per-relevant-vote moments per judge (shape (J,)) and its test."""

    k_share: np.ndarray  # relevant votes per vote of the judge (0: none)
    k_need: np.ndarray  # the same, the board's where the judge has none (to extrapolate)
    m: np.ndarray
    v0: np.ndarray
    v1: np.ndarray
    i1: np.ndarray
    crit: np.ndarray
    gap: float

    def power(self, votes: np.ndarray, *, share: np.ndarray | None = None) -> np.ndarray:
        k = (self.k_share if share is None else share) * votes
        with np.errstate(divide="ignore", invalid="ignore"):
            sd1 = np.sqrt(k * self.v1)
            test = ndtr((k * self.m - self.crit * np.sqrt(k * self.v0)) / sd1)
            band = ndtr(self.gap * k * self.i1 / sd1)
        return np.where((k > 0) & (sd1 > 0), test * band, 0.0)

    def needed(self, target: float) -> np.ndarray:
        lo = np.zeros(self.m.shape)
        hi = np.full(self.m.shape, float(MAX_VOTES))
        share = self.k_need
        never = self.power(hi, share=share) < target
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            ok = self.power(mid, share=share) >= target
            hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
        need = np.ceil(hi)
        need = np.where(self.power(need, share=share) >= target, need, need + 1)
        return np.where(never, np.inf, need)


def _evidence(owner, w, p0, p1, ts, votes, per_key, crit, gap) -> _Evidence:
    """Moments per relevant vote from each judge's votes; the board's where a judge has none.

    ``w`` weighs each vote's score (the log-odds for the temperature, 1 for shifts),
    ``p0`` / ``p1`` the probability of the scored side under the board / the departure;
    a judge's relevant votes are its (side-)votes over ``per_key``.
    """
    n_judges = votes.size

    def per(values):
        return np.bincount(owner, weights=values, minlength=n_judges)

    count = per(np.ones_like(p0))
    terms = (
        w * (p1 - p0),
        w**2 * tie_variance(p0, ts),
        w**2 * tie_variance(p1, ts),
        w**2 * p1 * (1 - p1),
    )
    sums = [per(t) for t in terms]
    board = [float(t.sum()) / max(float(count.sum()), 1.0) for t in terms]
    have = count > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        m, v0, v1, i1 = (np.where(have, s / count, b) for s, b in zip(sums, board, strict=True))
    total = max(float(votes.sum()), 1.0)
    share = count / per_key / np.maximum(votes, 1)
    need = np.where(have, share, float(count.sum()) / per_key / total)
    return _Evidence(share, need, np.abs(m), v0, v1, i1, crit, gap)


def judge_power(
    *,
    judge: np.ndarray,
    d: np.ndarray,
    votes: np.ndarray,
    sides: dict,
    keys: dict,
    keys_seen: dict,
    n_departures: np.ndarray,
    level: float,
    tie_share: float,
    material: Material | None = None,
    target: float = DEFAULT_POWER,
) -> JudgePower:
    """Power of the ``bt`` detector against a material departure, per judge, and votes needed.

    Parameters
    ----------
    judge, d : ndarray, shape (B,)
        Judge of each scored vote and the board's log-odds of its first-shown
        model (the fit without that judge).
    votes : ndarray, shape (J,)
        Votes per judge (all the judge's votes; ``k`` scales with them).
    sides : dict
        ``"favours"`` (and ``"favours_organisation"``): ``(rows, x)``, the
        side-votes of :func:`arena.audit.anomaly._side_groups` (vote rows and
        +1 / -1 for the first / second-shown side).
    keys : dict
        Per side kind, the board's models / organisations ``K``.
    keys_seen : dict
        Per side kind, the keys each judge's votes touch (its Bonferroni family), shape (J,).
    n_departures : ndarray, shape (J,)
        Deviations tested per judge (Bonferroni within the judge).
    level : float
        Benjamini-Hochberg's per-judge level, ``alpha R / n``.
    """
    material = material or Material()
    votes = np.asarray(votes, dtype=np.float64)
    delta = material.shift
    one = ndtri(1 - level / n_departures)
    two = ndtri(1 - level / (2 * n_departures))
    ev: dict[str, list[_Evidence]] = {}
    # temperature: score at t = 1 of logit = t d; the departure is t = 0 (a coin)
    p0 = expit(d)
    ev["temperature"] = [
        _evidence(
            judge, d, p0, np.full_like(p0, 0.5), tie_share, votes, 1.0, one, _TEMPERATURE_EDGE,
        )
    ]  # fmt: skip
    # position: logit = d + t, departures +-delta (the weaker direction counts)
    ev["position"] = [
        _evidence(
            judge, np.ones_like(d), p0, expit(d + s * delta), tie_share, votes, 1.0, two,
            delta - _SHIFT_EDGE,
        )
        for s in (1.0, -1.0)
    ]  # fmt: skip
    for kind, (rows, x) in sides.items():
        base = x * d[rows]  # log-odds of the keyed side
        k_total = max(int(keys[kind]), 1)
        seen = np.where(keys_seen[kind] > 0, keys_seen[kind], k_total)
        crit = ndtri(1 - level / (2 * n_departures * seen))
        ev[kind] = [
            _evidence(
                judge[rows], np.ones_like(base), expit(base), expit(base + delta), tie_share,
                votes, float(k_total), crit, delta - _SHIFT_EDGE,
            )
        ]  # fmt: skip
    by = {}
    need = {}
    for kind, items in ev.items():
        by[kind] = np.min([e.power(votes) for e in items], axis=0)
        need[kind] = np.max([e.needed(target) for e in items], axis=0)
    stack = np.array([by[k] for k in by])
    names = list(by)
    weakest = tuple(names[i] for i in np.argmin(stack, axis=0))
    return JudgePower(
        by_departure=by,
        power=stack.min(axis=0),
        votes_needed=np.max([need[k] for k in need], axis=0),
        weakest=weakest,
        target=target,
        needed_by_departure=need,
    )
