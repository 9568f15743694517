"""Uniform-grid cell counting in d dimensions (EUGkM synopsis, METHODS A3)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def grid_counts(X, m, r, out):  # pragma: no cover - compiled
    """Count points per cell of the ``m^d`` equal-width grid on ``[-r, r]^d``.

    A point's cell index along axis i is ``min(floor((x_i + r) * m / (2r)), m - 1)``
    (clamped at 0 too), and cells are numbered in C order: axis 0 varies slowest.

    IN  X   (N, d) float64, points in [-r, r]^d
    IN  m   int, cells per axis;  r float, half the domain width
    OUT out (m^d,) float64, zero-initialised by the caller; out[c] = n_c
    """
    N, d = X.shape
    scale = m / (2.0 * r)
    for n in range(N):
        idx = 0
        for i in range(d):
            ci = int(np.floor((X[n, i] + r) * scale))
            if ci < 0:
                ci = 0
            elif ci > m - 1:
                ci = m - 1
            idx = idx * m + ci
        out[idx] += 1.0


def cell_centres(m: int, d: int, r: float = 1.0) -> np.ndarray:
    """Centres of the ``m^d`` cells in the order used by :func:`grid_counts`.

    Returns (m^d, d) float64 with coordinate ``-r + (j + 0.5) * (2r/m)`` along each axis.
    """
    axis = -r + (np.arange(m) + 0.5) * (2.0 * r / m)
    index = np.arange(m**d)
    out = np.empty((m**d, d))
    for i in range(d - 1, -1, -1):  # C order: the last axis varies fastest
        out[:, i] = axis[index % m]
        index //= m
    return out
