"""Slow, obvious NumPy oracles for every kernel (STYLE rule 11)."""

from __future__ import annotations

import numpy as np


def sq_dists(X, C):
    """(N, k) squared Euclidean distances, computed directly."""
    return ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)


def labels(X, C):
    return np.argmin(sq_dists(X, C), axis=1)


def cluster_stats(X, C, w=None):
    """Per-cluster weight totals (k,) and weighted sums (k, d) for one centroid set."""
    w = np.ones(len(X)) if w is None else w
    lab = labels(X, C)
    k, d = C.shape
    counts = np.zeros(k)
    sums = np.zeros((k, d))
    for n in range(len(X)):
        counts[lab[n]] += w[n]
        sums[lab[n]] += w[n] * X[n]
    return counts, sums


def sse(X, C, w=None):
    w = np.ones(len(X)) if w is None else w
    return float((w * sq_dists(X, C).min(axis=1)).sum())


def grid_counts(X, m, r=1.0):
    idx = np.clip(np.floor((X + r) * m / (2 * r)).astype(int), 0, m - 1)
    flat = np.ravel_multi_index(idx.T, (m,) * X.shape[1])
    return np.bincount(flat, minlength=m ** X.shape[1]).astype(float)


def lloyd_steps(X, C, steps):
    """Plain Lloyd for a fixed number of steps; empty clusters keep their centroid."""
    C = C.copy()
    for _ in range(steps):
        counts, sums = cluster_stats(X, C)
        ok = counts > 0
        C[ok] = sums[ok] / counts[ok, None]
    return C


def consistence(D, kappa=0.8, max_iter=100):
    """Algorithm 1 read off METHODS B4 with plain NumPy: each iteration revises every unfixed
    (i, j) to min over k of D[i, k] + D[k, j], k with both links fixed before it."""
    D = np.array(D, dtype=float)
    n = len(D)
    lam = kappa * D[~np.eye(n, dtype=bool)].max()
    big = np.iinfo(np.int64).max
    F = np.where(D < lam, 0, big).astype(np.int64)
    np.fill_diagonal(F, 0)
    for it in range(1, max_iter + 1):
        ok = F < it
        cand = np.where(ok[:, :, None] & ok[None, :, :], D[:, :, None] + D[None, :, :], np.inf)
        best = cand.min(axis=1)  # (i, j): min over k
        revise = (F == big) & np.isfinite(best)
        if not revise.any():
            break
        D = np.where(revise, best, D)
        F = np.where(revise, it, F)
    return D, F
