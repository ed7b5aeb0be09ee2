"""LSAT section 6 (Bock & Lieberman 1970; ``ltm::LSAT``) and its published ltm fits."""

from __future__ import annotations

import numpy as np

#: LSAT section 6 (Bock & Lieberman 1970; ``ltm::LSAT``): response pattern -> examinees.
LSAT6 = {
    "00000": 3, "00001": 6, "00010": 2, "00011": 11, "00100": 1, "00101": 1, "00110": 3,
    "00111": 4, "01000": 1, "01001": 8, "01011": 16, "01101": 3, "01110": 2, "01111": 15,
    "10000": 10, "10001": 29, "10010": 14, "10011": 81, "10100": 3, "10101": 28, "10110": 15,
    "10111": 80, "11000": 16, "11001": 56, "11010": 21, "11011": 173, "11100": 11, "11101": 61,
    "11110": 28, "11111": 298,
}  # fmt: skip
#: ``ltm::rasch(LSAT)`` (one discrimination shared by the items, theta ~ N(0, 1)) as printed
#: by summary() in Rizopoulos (2006), "ltm: An R package for latent variable modelling and
#: item response theory analyses", J. Stat. Softw. 17(5), section 4.1.
RASCH_B = [-3.6153, -1.3224, -0.3176, -1.7301, -2.7802]
RASCH_SE_B = [0.3266, 0.1422, 0.0977, 0.1691, 0.2510]
RASCH_A, RASCH_SE_A, RASCH_LOGLIK = 0.7551, 0.0694, -2466.938


def lsat6() -> np.ndarray:
    return np.array([[int(c) for c in k] for k, n in LSAT6.items() for _ in range(n)])
