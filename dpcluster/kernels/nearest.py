"""Nearest candidate of every record among many candidates, or among the members of its
own family: PE-means's and PE-Lloyd's votes (dpcluster/algorithms/pe_means.py,
pe_lloyd.py).

Layout: candidates are passed transposed, ``Ct[i, j]`` = coordinate i of candidate j, so
the innermost loop runs over candidates and vectorises (SIMD) without reordering any
floating-point sum: each candidate's squared distance is summed over coordinates
0..d−1 in order, the same bits as a plain loop. Records are split across threads, each
record's answer computed alone, so results do not depend on the thread count. Ties go to
the lowest candidate index (as ``numpy.argmin``).

All arrays are float64 and C-contiguous. Kernels are pure: no I/O, no RNG.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def nearest_candidates(X, Ct, out):
    """Index of the nearest candidate of every record.

    IN  X (N, d), Ct (d, P);  OUT out (N,) int64 (lowest index on ties)
    """
    N, d = X.shape
    P = Ct.shape[1]
    for n in prange(N):
        dist = np.zeros(P)
        for i in range(d):
            xi = X[n, i]
            for j in range(P):
                diff = xi - Ct[i, j]
                dist[j] += diff * diff
        best, bj = np.inf, 0
        for j in range(P):
            if dist[j] < best:
                best, bj = dist[j], j
        out[n] = bj


@njit(cache=True, parallel=True)
def nearest_in_family(X, family, F, out):
    """Index, within its family, of every record's nearest family member: the same sums
    as :func:`nearest_candidates` (coordinates 0..d−1 in order), lowest index on ties.

    IN  X (N, d), family (N,) int64 in [0, k), F (k, size, d);  OUT out (N,) int64
    """
    N, d = X.shape
    size = F.shape[1]
    for n in prange(N):
        f = family[n]
        best, bj = np.inf, 0
        for j in range(size):
            s = 0.0
            for i in range(d):
                diff = X[n, i] - F[f, j, i]
                s += diff * diff
            if s < best:
                best, bj = s, j
        out[n] = bj
