"""Lloyd on many small disjoint blocks at once (GkM's sample-and-aggregate, docs/methods.md A4)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def block_lloyd(X, starts, C, max_iter):
    """Run Lloyd independently inside every block of rows, in place.

    IN     X        (N, d) float64, rows already permuted so block b is X[starts[b]:starts[b+1]]
    IN     starts   (l + 1,) int64 block boundaries
    IN/OUT C        (l, k, d) float64, block b's initial centroids; overwritten by its result
    IN     max_iter int, iterations per block; a block stops early once no point changes
                    cluster (further iterations would not move it)

    Update: a cluster's centroid becomes the mean of its points; an empty cluster keeps its
    centroid (as SciPy's ``kmeans2(missing="warn")``). Ties go to the lowest index.
    Blocks are independent, so the result does not depend on the thread count.
    """
    n_blocks, k, d = C.shape
    for b in prange(n_blocks):
        lo = starts[b]
        hi = starts[b + 1]
        lab = np.full(hi - lo, -1, np.int64)
        cnt = np.zeros(k)
        sm = np.zeros((k, d))
        for _ in range(max_iter):
            changed = False
            cnt[:] = 0.0
            sm[:] = 0.0
            for n in range(lo, hi):
                best = np.inf
                bj = 0
                for j in range(k):
                    s = 0.0
                    for i in range(d):
                        diff = X[n, i] - C[b, j, i]
                        s += diff * diff
                    if s < best:
                        best = s
                        bj = j
                if lab[n - lo] != bj:
                    changed = True
                    lab[n - lo] = bj
                cnt[bj] += 1.0
                for i in range(d):
                    sm[bj, i] += X[n, i]
            if not changed:
                break
            for j in range(k):
                if cnt[j] > 0:
                    for i in range(d):
                        C[b, j, i] = sm[j, i] / cnt[j]


@njit(cache=True)
def lex_order(C, order):
    """Per block, the order that sorts its k centroids lexicographically (coordinate 0 first,
    ties by 1, 2, …), stable: ``order[b] == np.lexsort(C[b].T[::-1])``.

    IN  C      (l, k, d) float64 block centroids
    OUT order  (l, k) int64
    Insertion sort: k is small (≤ 15 in the papers), so this beats one big lexsort.
    """
    n_blocks, k, d = C.shape
    for b in range(n_blocks):
        for j in range(k):
            order[b, j] = j
        for j in range(1, k):
            cur = order[b, j]
            t = j
            while t > 0:
                prev = order[b, t - 1]
                # is C[b, cur] < C[b, prev] lexicographically? (equal keeps the order: stable)
                less = False
                for i in range(d):
                    if C[b, cur, i] != C[b, prev, i]:
                        less = C[b, cur, i] < C[b, prev, i]
                        break
                if not less:
                    break
                order[b, t] = prev
                t -= 1
            order[b, t] = cur
