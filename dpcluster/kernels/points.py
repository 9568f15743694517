"""Nearest-centroid statistics for ONE centroid set on many points: the single-fit kernel.

The batched kernels (:mod:`.assign`) put runs in the SIMD lanes, which wastes the lanes when
there is one run. Here threads split the *points* into fixed blocks of ``POINT_BLOCK``; each
block transposes its points to (D, block) so the distance loop vectorises over points, keeps
its own partial counts and sums in point order, and the partials are added in block order.
Block boundaries depend on N only, so results do not depend on the thread count. They can
differ from the batched kernel's in the last bits (another summation order), so the
experiments keep the batched kernel and only single fits (``dplloyd``, ``DPKMeans``) use this.
Ties go to the lowest centroid index.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

#: points per block: 2^14 keeps a block's transposed copy (D × 16,384 doubles) in L2
POINT_BLOCK = 16_384


@njit(parallel=True, cache=True)
def _accumulate_points(X, w, C, counts, sums, D):
    """IN X (N, D) float64, w (N,) float64 weights, C (k, D) float64 centroids;
    OUT counts (k,) Σ w over each cluster, sums (k, D) Σ w·x. ``D`` a compile-time literal
    for d ≤ 10 (see :func:`accumulate_points`)."""
    N = X.shape[0]
    k = C.shape[0]
    nb = (N + POINT_BLOCK - 1) // POINT_BLOCK
    pc = np.zeros((nb, k))
    ps = np.zeros((nb, k, D))
    cm = np.empty((k, D))
    cn = np.zeros(k)
    for j in range(k):
        for i in range(D):
            cm[j, i] = -2.0 * C[j, i]
            cn[j] += C[j, i] * C[j, i]
    for b in prange(nb):
        lo = b * POINT_BLOCK
        m = min(N, lo + POINT_BLOCK) - lo
        xt = np.empty((D, m))
        for n in range(m):
            for i in range(D):
                xt[i, n] = X[lo + n, i]
        best = np.full(m, np.inf)
        bj = np.zeros(m)  # float: the compare-and-select vectorises with one lane type
        for j in range(k):
            fj = float(j)
            for n in range(m):
                acc = cn[j]
                for i in range(D):
                    acc += xt[i, n] * cm[j, i]
                better = acc < best[n]
                best[n] = acc if better else best[n]
                bj[n] = fj if better else bj[n]
        for n in range(m):
            j = int(bj[n])
            wn = w[lo + n]
            pc[b, j] += wn
            for i in range(D):
                ps[b, j, i] += wn * xt[i, n]
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
