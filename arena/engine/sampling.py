"""Exact multinomial resampling, fast.

Resampling ``N`` battles with replacement and counting them per category is a
``Multinomial(N, p)`` draw.  NumPy's ``Generator.multinomial`` draws one
binomial per category in sequence (~160 ns each); for LMArena-scale tables
(~10^5 categories x 1000 rounds) that alone would take 15 s.  We use the
classical Poisson construction instead, which is exact, not an approximation:

1. draw ``X_q ~ Poisson(lam * p_q)`` independently with ``lam = N - 2 sqrt(N)``;
   given their sum ``S``, ``X`` is ``Multinomial(S, p)`` whatever ``lam`` is;
2. if ``S > N`` (probability ~2%) redraw that round -- conditioning on
   ``S`` does not change the conditional law of ``X`` given ``S``;
3. add ``N - S`` (~2 sqrt(N)) further categorical draws from ``p``: the sum of
   independent ``Multinomial(S, p)`` and ``Multinomial(N - S, p)`` is
   ``Multinomial(N, p)``.

Small problems use ``Generator.multinomial`` directly.
"""

from __future__ import annotations

import numpy as np

__all__ = ["multinomial_rows"]

#: Below this many trials the plain sequential multinomial is as fast.
_POISSON_MIN_N = 2000


def multinomial_rows(
    rng: np.random.Generator, n: int, p: np.ndarray, rounds: int, *, method: str = "auto"
) -> np.ndarray:
    """Draw ``rounds`` independent ``Multinomial(n, p)`` vectors, shape (rounds, Q), float64.

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int
        Number of trials (battles or clusters) per round.
    p : ndarray, shape (Q,)
        Category probabilities (non-negative, summing to 1).
    rounds : int
    method : {"auto", "poisson", "multinomial"}
        ``"multinomial"`` is NumPy's sequential sampler (same law, slower).
    """
    n = int(n)
    p = np.asarray(p, dtype=np.float64)
    q = p.size
    if method == "auto":
        method = "poisson" if n >= _POISSON_MIN_N and q > 1 else "multinomial"
    if method == "multinomial" or q <= 1 or n == 0:
        return rng.multinomial(n, p, size=rounds).astype(np.float64)
    if method != "poisson":
        raise ValueError(f"unknown sampling method {method!r}")
    lam = max(n - 2.0 * np.sqrt(n), 0.0)
    rate = lam * p
    x = rng.poisson(rate, size=(rounds, q))
    s = x.sum(axis=1)
    bad = np.flatnonzero(s > n)
    while bad.size:
        x[bad] = rng.poisson(rate, size=(bad.size, q))
        s[bad] = x[bad].sum(axis=1)
        bad = bad[s[bad] > n]
    rem = n - s
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    u = rng.random(int(rem.sum()))
    cat = np.minimum(np.searchsorted(cdf, u, side="right"), q - 1)
    row = np.repeat(np.arange(rounds), rem)
    extra = np.bincount(row * q + cat, minlength=rounds * q).reshape(rounds, q)
    return (x + extra).astype(np.float64)
