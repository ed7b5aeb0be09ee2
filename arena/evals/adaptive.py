"""Short tests from a calibrated 2PL bank: informative subsets and computerized adaptive tests.

:func:`select_items` picks a fixed subset greedily so that the test
information is high across a range of abilities (the log of the information,
summed over a grid of abilities, rewards covering the whole range rather than
piling items at one difficulty). :func:`adaptive_test` gives items one at a
time, each the most informative at the current ability estimate, and stops
when the posterior standard deviation reaches a target; the ability posterior
is kept on a fixed grid, so each step costs one pass over the grid and one over
the bank. :func:`simulate_adaptive` runs it for simulated examinees and finds
how long a fixed test must be for the same precision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit, logsumexp

from arena.core.errors import ArgumentError
from arena.evals.checks import check_count, check_rng
from arena.evals.irt import ItemBank, item_information

__all__ = [
    "AdaptiveResult",
    "AdaptiveSimulation",
    "Selection",
    "adaptive_test",
    "select_items",
    "simulate_adaptive",
]

#: Ability grid of the adaptive test's posterior: spacing 0.05 resolves the
#: posterior of up to a few hundred items (sd >= ~0.08); the N(0, 1) prior is ~1e-8 at 6.
_GRID = np.linspace(-6.0, 6.0, 241)
_LOG_PRIOR = -0.5 * _GRID**2
#: Abilities at most at which a subset's information is weighed.
_MAX_GRID = 25
#: Items whose gain is refreshed together in the lazy greedy selection.
_LAZY_BATCH = 32
#: Abilities over which a selected subset should be informative, by default.
DEFAULT_RANGE = np.linspace(-3.0, 3.0, 13)


@dataclass(frozen=True)
class Selection:
    """Result of :func:`select_items`.

    Attributes
    ----------
    indices : ndarray of int
        Positions in the bank, in the order chosen.
    items : list of str
    theta : ndarray
        Abilities the information was maximised over.
    information : ndarray
        Test information of the subset at ``theta`` (prior precision not included).
    """

    indices: np.ndarray
    items: list[str]
    theta: np.ndarray
    information: np.ndarray


def select_items(bank: ItemBank, n: int, *, theta=None) -> Selection:
    """Greedy subset of ``n`` items maximising the summed log test information over ``theta``.

    Parameters
    ----------
    bank : ItemBank
    n : int
        Subset size (at most the bank size).
    theta : array_like, optional
        Abilities at which precision matters, e.g. the calibration models'
        abilities; default an even grid from -3 to 3.

    Returns
    -------
    Selection

    Notes
    -----
    Each step adds the item maximising ``sum_g log(1 + I_i(theta_g) / I(theta_g))``,
    ``I`` the information so far plus the prior's 1: the increase of the
    summed log information, a D-optimal-style criterion.
    """
    n = check_count(n, "n")
    if n > len(bank.items):
        raise ArgumentError(f"n ({n}) exceeds the bank's {len(bank.items)} items")
    grid = DEFAULT_RANGE if theta is None else np.unique(np.asarray(theta, dtype=np.float64))
    if grid.size == 0 or not np.isfinite(grid).all():
        raise ArgumentError("theta must be non-empty and finite")
    if grid.size > _MAX_GRID:
        # Precision at 25 quantiles is indistinguishable from precision at all of them.
        grid = np.quantile(grid, np.linspace(0.0, 1.0, _MAX_GRID))
    info = item_information(grid[None, :], bank.discrimination[:, None], bank.difficulty[:, None])
    total = np.ones(grid.size)
    chosen = np.empty(n, dtype=np.int64)
    # Lazy greedy: an item's gain only shrinks as information accumulates, so
    # gains computed earlier are upper bounds. Each step refreshes the gains of
    # the few items with the highest bounds; when the best fresh gain beats
    # every other bound it is the exact greedy choice.
    bound = np.log1p(info / total[None, :]).sum(axis=1)
    for k in range(n):
        while True:
            m = min(_LAZY_BATCH, int(np.isfinite(bound).sum()))
            top = np.argpartition(-bound, m - 1)[:m]
            fresh = np.log1p(info[top] / total[None, :]).sum(axis=1)
            bound[top] = fresh
            best = int(top[np.argmax(fresh)])
            rest = bound.copy()
            rest[top] = -np.inf
            if fresh.max() >= rest.max(initial=-np.inf):
                break
        chosen[k] = best
        bound[best] = -np.inf
        total += info[best]
    return Selection(chosen, [bank.items[j] for j in chosen], grid, total - 1.0)


@dataclass(frozen=True)
class AdaptiveResult:
    """Result of :func:`adaptive_test`.

    Attributes
    ----------
    theta, se : float
        Final EAP ability and posterior standard deviation.
    items : list of str
        Items given, in order.
    responses : list of int
    stopped : str
        ``"target se"``, ``"max items"`` or ``"bank exhausted"``.
    trace : list of (float, float)
        ``(theta, se)`` after each item.
    """

    theta: float
    se: float
    items: list[str]
    responses: list[int]
    stopped: str
    trace: list[tuple[float, float]]


def _summary(logpost: np.ndarray) -> tuple[float, float]:
    w = np.exp(logpost - logsumexp(logpost))
    mean = float(w @ _GRID)
    return mean, float(np.sqrt(max(w @ (_GRID - mean) ** 2, 0.0)))


def adaptive_test(
    bank: ItemBank,
    answer: Callable[[str], int | bool],
    *,
    se_target: float = 0.3,
    max_items: int = 40,
    start: float = 0.0,
) -> AdaptiveResult:
    """Run a computerized adaptive test against ``bank``.

    Parameters
    ----------
    bank : ItemBank
    answer : callable
        ``answer(item_id)`` returns 1 (right) or 0 (wrong); in practice it
        runs the model on that item and scores it.
    se_target : float, default 0.3
        Stop when the posterior standard deviation is at or below this.
    max_items : int, default 40
    start : float, default 0.0
        Ability at which the first item is chosen.

    Returns
    -------
    AdaptiveResult

    Notes
    -----
    Next item: the unused item with the largest ``a^2 p (1 - p)`` at the
    current EAP estimate. The posterior is N(0, 1) times the item curves,
    evaluated on a fixed grid of abilities from -6 to 6.
    """
    if not se_target > 0:
        raise ArgumentError(f"se_target must be positive, got {se_target!r}")
    max_items = check_count(max_items, "max_items")
    a, b = bank.discrimination, bank.difficulty
    used = np.zeros(a.size, dtype=bool)
    logpost = _LOG_PRIOR.copy()
    theta, se = float(start), 1.0
    items: list[str] = []
    responses: list[int] = []
    trace: list[tuple[float, float]] = []
    stopped = "max items"
    while len(items) < max_items:
        if used.all():
            stopped = "bank exhausted"
            break
        info = item_information(theta, a, b)
        info[used] = -1.0
        j = int(np.argmax(info))
        used[j] = True
        raw = answer(bank.items[j])
        if raw not in (0, 1):  # True/False compare equal to 1/0
            raise ArgumentError(f"answer({bank.items[j]!r}) returned {raw!r}, expected 0 or 1")
        y = int(raw)
        z = a[j] * (_GRID - b[j])
        logpost += log_expit(z) if y else log_expit(-z)
        theta, se = _summary(logpost)
        items.append(bank.items[j])
        responses.append(y)
        trace.append((theta, se))
        if se <= se_target:
            stopped = "target se"
            break
    return AdaptiveResult(theta, se, items, responses, stopped, trace)


@dataclass(frozen=True)
class AdaptiveSimulation:
    """Result of :func:`simulate_adaptive`.

    Attributes
    ----------
    true_theta, theta, se : ndarray, shape (n_examinees,)
        Simulated abilities, adaptive estimates and their standard errors.
    n_items : ndarray of int
        Items each adaptive test used.
    reached : float
        Share of adaptive tests that reached the target SE.
    fixed_items : int or None
        Length of the fixed test (the :func:`select_items` order) at which the
        same share of examinees reaches the target SE; None when even
        ``fixed_max`` items do not.
    random_items : int or None
        The same for items in a random order (a random subset of the benchmark).
    fixed_max : int
        Longest fixed test tried.
    rmse : float
        Root mean squared error of the adaptive estimates.
    """

    true_theta: np.ndarray
    theta: np.ndarray
    se: np.ndarray
    n_items: np.ndarray
    reached: float
    fixed_items: int | None
    random_items: int | None
    fixed_max: int
    rmse: float


def _fixed_length(bank, order, thetas, responses_of, target, share):
    """Shortest prefix of ``order`` at which ``share`` of examinees have SE <= target."""
    a, b = bank.discrimination[order], bank.difficulty[order]
    z = a[:, None] * (_GRID[None, :] - b[:, None])  # (k, grid)
    lp1, lp0 = log_expit(z), log_expit(-z)
    ok_at = np.full(thetas.size, np.iinfo(np.int64).max)
    for e in range(thetas.size):
        y = responses_of(e, order)
        logpost = np.cumsum(np.where(y[:, None] == 1, lp1, lp0), axis=0) + _LOG_PRIOR[None, :]
        w = np.exp(logpost - logsumexp(logpost, axis=1, keepdims=True))
        mean = w @ _GRID
        sd = np.sqrt(np.maximum(w @ _GRID**2 - mean**2, 0.0))
        hit = np.flatnonzero(sd <= target)
        if hit.size:
            ok_at[e] = hit[0] + 1
    need = int(np.ceil(share * thetas.size - 1e-9))
    if need == 0:
        return 0
    k = int(np.sort(ok_at)[need - 1])
    return None if k == np.iinfo(np.int64).max else k


def simulate_adaptive(
    bank: ItemBank,
    rng,
    *,
    n_examinees: int = 200,
    se_target: float = 0.3,
    max_items: int = 40,
    fixed_max: int | None = None,
) -> AdaptiveSimulation:
    """Simulate adaptive tests for examinees drawn from N(0, 1) and compare with fixed tests.

    Parameters
    ----------
    bank : ItemBank
    rng : numpy.random.Generator
        Draws abilities (``rng.standard_normal(n_examinees)``), then one
        uniform per examinee and bank item (``rng.random((n_examinees,
        n_items))``) that decides every answer, so the adaptive and the fixed
        tests see the same answers.
    n_examinees : int, default 200
    se_target : float, default 0.3
    max_items : int, default 40
    fixed_max : int, optional
        Longest fixed test tried (default ``min(bank size, 10 * max_items)``).

    Returns
    -------
    AdaptiveSimulation
    """
    check_rng(rng)
    n_examinees = check_count(n_examinees, "n_examinees")
    n_bank = len(bank.items)
    fixed_max = min(n_bank, 10 * max_items) if fixed_max is None else min(fixed_max, n_bank)
    fixed_max = check_count(fixed_max, "fixed_max")
    true = rng.standard_normal(n_examinees)
    u = rng.random((n_examinees, n_bank))
    pos = {item: j for j, item in enumerate(bank.items)}
    a, b = bank.discrimination, bank.difficulty

    def responses_of(e: int, idx: np.ndarray) -> np.ndarray:
        return (u[e, idx] < expit(a[idx] * (true[e] - b[idx]))).astype(np.int8)

    est = np.empty(n_examinees)
    se = np.empty(n_examinees)
    used = np.empty(n_examinees, dtype=np.int64)
    reached = 0
    for e in range(n_examinees):

        def answer(item: str, e: int = e) -> int:
            return int(responses_of(e, np.array([pos[item]]))[0])

        res = adaptive_test(
            bank,
            answer,
            se_target=se_target,
            max_items=max_items,
        )
        est[e], se[e], used[e] = res.theta, res.se, len(res.items)
        reached += res.stopped == "target se"
    share = reached / n_examinees
    best = select_items(bank, fixed_max).indices
    shuffled = rng.permutation(n_bank)[:fixed_max]
    return AdaptiveSimulation(
        true_theta=true,
        theta=est,
        se=se,
        n_items=used,
        reached=share,
        fixed_items=_fixed_length(bank, best, true, responses_of, se_target, share),
        random_items=_fixed_length(bank, shuffled, true, responses_of, se_target, share),
        fixed_max=fixed_max,
        rmse=float(np.sqrt(np.mean((est - true) ** 2))),
    )
