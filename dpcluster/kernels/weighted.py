"""Weighted k-means on a small candidate set, in one compiled pass: greedy k-means++
seeding and Lloyd, several starts, the lowest weighted cost kept. It is PE-means's
selection (dpcluster/algorithms/pe_means.py), run once per generation.

Randomness comes in as uniforms drawn by the caller from the generator it was given; a
draw ∝ mass is the inverse of the running total at u·total (the same distribution as
``Generator.choice(p=mass/total)``). Sums run over candidates 0..m−1 in order and ties go
to the lowest index, so the result does not depend on the machine's thread count.

All arrays are float64 and C-contiguous. Kernels are pure: no I/O, no RNG.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def _sq(P, i, C, j):
    s = 0.0
    for t in range(P.shape[1]):
        diff = P[i, t] - C[j, t]
        s += diff * diff
    return s


@njit(cache=True)
def _draw(cdf, u):
    """The index whose running total first exceeds u·total (the last on round-off)."""
    target = u * cdf[-1]
    lo, hi = 0, len(cdf) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cdf[mid] > target:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def kmeanspp(P, w, k, trials, u, C):
    """Greedy k-means++: the first centre drawn ∝ w, each next the candidate of lowest
    Σ w·min(D², D_c²) among ``trials`` drawn ∝ w·D² (uniform when no mass is left).

    IN  P (m, d), w (m,) ≥ 0, u (1 + (k − 1)·trials,) uniforms in [0, 1);  OUT C (k, d)
    """
    m, d = P.shape
    cdf = np.cumsum(w)
    first = _draw(cdf, u[0]) if cdf[-1] > 0 else min(int(u[0] * m), m - 1)
    C[0, :] = P[first, :]
    d2 = np.empty(m)
    for i in range(m):
        d2[i] = _sq(P, i, C, 0)
    for j in range(1, k):
        mass = np.empty(m)
        for i in range(m):
            mass[i] = w[i] * d2[i]
        cdf = np.cumsum(mass)
        base = 1 + (j - 1) * trials
        if cdf[-1] > 0:
            best, best_cost = -1, np.inf
            for t in range(trials):
                pick = _draw(cdf, u[base + t])
                cost = 0.0
                for i in range(m):
                    s = 0.0
                    for c in range(d):
                        diff = P[i, c] - P[pick, c]
                        s += diff * diff
                    cost += w[i] * (s if s < d2[i] else d2[i])
                if cost < best_cost:
                    best, best_cost = pick, cost
        else:
            best = min(int(u[base] * m), m - 1)
        C[j, :] = P[best, :]
        for i in range(m):
            s = _sq(P, i, C, j)
            if s < d2[i]:
                d2[i] = s


@njit(cache=True)
def lloyd(P, w, C, max_iter):
    """Weighted Lloyd from C until the labels repeat (at most ``max_iter`` passes); a
    centre with no mass stays. Returns Σ w·min D² at the final centres.

    IN  P (m, d), w (m,);  IN/OUT C (k, d)
    """
    m, d = P.shape
    k = C.shape[0]
    labels = np.full(m, -1)
    mass = np.empty(k)
    sums = np.empty((k, d))
    for _ in range(max_iter):
        changed = False
        for i in range(m):
            best, bj = np.inf, 0
            for j in range(k):
                s = _sq(P, i, C, j)
                if s < best:
                    best, bj = s, j
            if labels[i] != bj:
                labels[i] = bj
                changed = True
        if not changed:
            break
        mass[:] = 0.0
        sums[:, :] = 0.0
        for i in range(m):
            j = labels[i]
            mass[j] += w[i]
            for c in range(d):
                sums[j, c] += w[i] * P[i, c]
        for j in range(k):
            if mass[j] > 0:
                for c in range(d):
                    C[j, c] = sums[j, c] / mass[j]
    cost = 0.0
    for i in range(m):
        best = np.inf
        for j in range(k):
            s = _sq(P, i, C, j)
            if s < best:
                best = s
        cost += w[i] * best
    return cost


@njit(cache=True, parallel=True)
def weighted_kmeans(P, w, k, trials, U, start, use_start, max_iter, out):
    """``len(U)`` starts of :func:`kmeanspp` (row s of U its uniforms) and :func:`lloyd`,
    the first replaced by ``start`` when ``use_start``; the lowest cost kept (the first
    on ties). The starts run on separate threads, each alone on its own centres, and the
    choice is made after all of them, so the result does not depend on the thread count.

    IN  P (m, d), w (m,), U (n_init, 1 + (k − 1)·trials), start (k, d);  OUT out (k, d)
    """
    d = P.shape[1]
    n = U.shape[0]
    runs = np.empty((n, k, d))
    costs = np.empty(n)
    for s in prange(n):
        C = runs[s]
        if s == 0 and use_start:
            C[:, :] = start
        else:
            kmeanspp(P, w, k, trials, U[s], C)
        costs[s] = lloyd(P, w, C, max_iter)
    best = 0
    for s in range(1, n):
        if costs[s] < costs[best]:
            best = s
    out[:, :] = runs[best]
