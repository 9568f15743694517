"""Nearest-centroid statistics for ONE centroid set on many points: the single-fit kernel.

The batched kernels (:mod:`.assign`) put runs in the SIMD lanes, which wastes the lanes when
there is one run. Here threads split the *points* into fixed blocks of ``POINT_BLOCK``; the
distance loop vectorises over the centroids; each block keeps its own partial counts and
sums in point order, and the partials are added in block order.
Block boundaries depend on N only, so results do not depend on the thread count. They can
differ from the batched kernel's in the last bits (another summation order), so the
experiments keep the batched kernel and only single fits (``dplloyd``, ``DPKMeans``) use this.
Ties go to the lowest centroid index.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

#: points per block (fixed, so the partial sums do not depend on the thread count)
POINT_BLOCK = 16_384


@njit(parallel=True, cache=True)
def _accumulate_points(X, w, C, counts, sums, D):
    """IN X (N, D) float64, w (N,) float64 weights, C (k, D) float64 centroids;
    OUT counts (k,) Σ w over each cluster, sums (k, D) Σ w·x (zero-initialised by the
    caller). ``D`` a compile-time literal for d ≤ 10 (see :func:`accumulate_points`).

    Per point, the k expanded-form distances ``||o^j||² − 2 x·o^j`` are built together,
    coordinate by coordinate, in a vector over the centroids (padded to a multiple of 4
    with +inf), then the lowest index of the smallest wins.
    """
    N = X.shape[0]
    k = C.shape[0]
    kp = (k + 3) // 4 * 4
    nb = (N + POINT_BLOCK - 1) // POINT_BLOCK
    pc = np.zeros((nb, k))
    ps = np.zeros((nb, k, D))
    cmt = np.zeros((D, kp))
    cn = np.full(kp, np.inf)
    for j in range(k):
        cn[j] = 0.0
        for i in range(D):
            cmt[i, j] = -2.0 * C[j, i]
            cn[j] += C[j, i] * C[j, i]
    for b in prange(nb):
        lo = b * POINT_BLOCK
        hi = min(N, lo + POINT_BLOCK)
        acc = np.empty(kp)
        for n in range(lo, hi):
            for j in range(kp):
                acc[j] = cn[j]
            for i in range(D):
                x = X[n, i]
                for j in range(kp):
                    acc[j] += x * cmt[i, j]
            best = acc[0]
            bj = 0
            for j in range(1, k):
                if acc[j] < best:
                    best = acc[j]
                    bj = j
            wn = w[n]
            pc[b, bj] += wn
            for i in range(D):
                ps[b, bj, i] += wn * X[n, i]
    for b in range(nb):
        for j in range(k):
            counts[j] += pc[b, j]
            for i in range(D):
                sums[j, i] += ps[b, j, i]


@functools.cache
def _kernel_for(d: int):
    if d > 10:
        return _any_d

    @njit(cache=True)
    def accumulate_d(X, w, C, counts, sums):
        _accumulate_points(X, w, C, counts, sums, d)

    return accumulate_d


@njit(cache=True)
def _any_d(X, w, C, counts, sums):
    _accumulate_points(X, w, C, counts, sums, X.shape[1])


def accumulate_points(X, w, C, counts, sums) -> None:
    """:func:`_accumulate_points` with the dimension as a literal for d = 1..10."""
    _kernel_for(X.shape[1])(X, w, C, counts, sums)
