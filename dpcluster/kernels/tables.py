"""Lane tables: a chunk of runs' centroids laid out for the run-batched kernels
(:mod:`.assign`, :mod:`.wide` and the generated kernels of :mod:`.unrolled`), runs last
and zero-padded to the chunk's width."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def expanded_tables(Ct, r0, B, D, width, F):
    """The expanded-form tables of runs ``r0 .. r0+B-1`` of Ct (k, D, R), zero-padded to
    ``width`` lanes: ``cm[j, i, b] = −2 o^j_i`` (k, D, width) and ``cn[j, b] = ||o^j||²``
    (k, width), so ``||x − o^j||² = ||x||² + cn[j] + Σ_i x_i cm[j, i]``."""
    k = Ct.shape[0]
    cm = np.zeros((k, D, width), F)
    cn = np.zeros((k, width), F)
    for j in range(k):
        for i in range(D):
            for b in range(B):
                v = Ct[j, i, r0 + b]
                cm[j, i, b] = F(-2.0 * v)
                cn[j, b] += F(v * v)
    return cm, cn


@njit(cache=True, inline="always")
def lane_table(Ct, r0, B, width):
    """Runs ``r0 .. r0+B-1`` of Ct (k, D, R) as a (k, D, width) table, zero-padded."""
    k, D = Ct.shape[0], Ct.shape[1]
    cc = np.zeros((k, D, width))
    for j in range(k):
        for i in range(D):
            for b in range(B):
                cc[j, i, b] = Ct[j, i, r0 + b]
    return cc
