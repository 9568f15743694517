"""Clipping records to a privately chosen ball, so DPLloyd's coordinate sums need less noise
in high dimensions.

Privacy argument. Neighbouring relation: add/remove one record; records lie in the public
box ∏ [-r_j, r_j] centred at the origin (the estimator's working space).

* **The radius.** R is one of :data:`GRID` public candidates, geometric from the box's
  half-diagonal (Σ r_j²)^(1/2) over :data:`SPAN` up to the half-diagonal. The exponential
  mechanism picks R with loss ``|#{i : ||z_i||₂ ≤ R} − q·N|``. Adding or removing one
  record z moves N by 1 and the count by ``[||z||₂ ≤ R]`` in the same direction, so
  ``count − q·N`` moves by −q or 1 − q, and its absolute value by at most
  :func:`loss_sensitivity` = max(q, 1 − q); calibrated to that, the pick is ε_R-DP.
* **The sums.** Each record is scaled toward the origin to ``z·min(1, R/||z||₂)``. The
  scaled record stays in the box, and its L1 norm is at most √d·R (and at most Σ r_j),
  so the coordinate sums of the clipped records have L1 sensitivity
  :func:`clipped_extent` = min(√d·R, Σ r_j) instead of Σ r_j.

The two steps compose sequentially: ε_R + what DPLloyd spends on the clipped records.
Clipping moves records that lie beyond R, so it trades a bias on the outer (1 − q) of the
records for less noise on every centre; q = :data:`QUANTILE`.
"""

from __future__ import annotations

import numpy as np

from ..privacy import ExponentialMechanism, Ledger, release
from . import checks

#: the share of the records the chosen radius aims to keep unclipped
QUANTILE = 0.9
#: candidate radii
GRID = 32
#: the smallest candidate is the box's half-diagonal over this factor: a smaller radius
#: would pull most records of data that fill even a corner of the box toward the origin
SPAN = 16.0


def loss_sensitivity(quantile: float = QUANTILE) -> float:
    """max(q, 1 − q): how far one record moves ``|#{||z_i||₂ ≤ R} − q·N|`` (module
    docstring)."""
    return max(quantile, 1.0 - quantile)


#: clip only where N·ε_R reaches this: then a radius that keeps under half the records is
#: e^-9 less likely than the best one, per candidate ((q − ½)·N·ε_R / (2Δ) ≥ 9 with Δ the
#: loss sensitivity; 40.5 at q = 0.9). Below it the pick is close to a guess, and a guess
#: that clips most records ruins every centre.
MIN_N_EPSILON = 2.0 * 9.0 * loss_sensitivity() / (QUANTILE - 0.5)


def candidates(r, d: int) -> np.ndarray:
    """(GRID,) public radii, geometric from the box's half-diagonal / SPAN to it."""
    radii = np.broadcast_to(np.asarray(r, dtype=np.float64), (d,))
    top = float(np.sqrt(np.sum(radii**2)))
    return np.geomspace(top / SPAN, top, GRID)


def worth_clipping(N: int, epsilon_radius: float) -> bool:
    """Whether N records and ε_R pick a radius reliably (:data:`MIN_N_EPSILON`); a public
    decision from N and ε."""
    return N * epsilon_radius >= MIN_N_EPSILON


def _norms(Z: np.ndarray) -> np.ndarray:
    """(N,) the rows' Euclidean norms."""
    return np.sqrt(np.einsum("ij,ij->i", Z, Z))


def radius_loss(Z: np.ndarray, radii: np.ndarray, quantile: float = QUANTILE) -> np.ndarray:
    """(len(radii),) ``|#{||z_i||₂ ≤ R} − q·N|`` for each candidate R; Z (N, d)."""
    norms = np.sort(_norms(Z))
    inside = np.searchsorted(norms, radii, side="right")
    return np.abs(inside - quantile * len(Z))


def private_radius(
    Z: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    ledger: Ledger,
    r=1.0,
    quantile: float = QUANTILE,
) -> float:
    """An ε-DP radius near the ``quantile`` of the records' norms (module docstring);
    books the pick in ``ledger``."""
    N, d = Z.shape
    radii = candidates(r, d)
    mech = ledger.record(
        ExponentialMechanism(epsilon, loss_sensitivity(quantile)), "clipping radius (norm quantile)"
    )
    i = mech.select(rng, radius_loss(Z, radii, quantile))
    i = release(
        mech,
        "clipping radius (norm quantile)",
        i,
        lambda data: radius_loss(data, radii, quantile),
        rng=rng,
    )
    return float(radii[i])


def clip_to_ball(Z: np.ndarray, radius: float) -> np.ndarray:
    """Z (N, d) with every row longer than ``radius`` scaled toward the origin to it."""
    norms = _norms(Z)
    # a hair inside the ball, so rounding never puts a clipped row's L1 norm above √d·R
    inner = radius * (1.0 - 1e-12)
    scale = np.minimum(1.0, inner / np.maximum(norms, np.finfo(np.float64).tiny))
    return Z * scale[:, None]


def clipped_extent(d: int, r, radius: float) -> float:
    """The L1 sensitivity of the clipped records' coordinate sums: min(√d·R, Σ r_j)."""
    return min(float(np.sqrt(d) * radius), checks.extent(d, r))
