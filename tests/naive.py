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


def consistence(D, kappa=0.8, max_iter=100, tau="max"):
    """Algorithm 1 read off docs/methods.md B2 with plain NumPy: each iteration revises every
    unfixed (i, j) to min over k of D[i, k] + D[k, j], k with both links fixed before it.
    τ is the largest off-diagonal estimate, or its 99th percentile (``tau="p99"``)."""
    D = np.array(D, dtype=float)
    n = len(D)
    off = np.sort(D[~np.eye(n, dtype=bool)])
    if tau == "max":
        level = off[-1]
    else:  # linear interpolation between closest ranks (NumPy's default percentile)
        pos = 0.99 * (len(off) - 1)
        lo = int(np.floor(pos))
        level = off[lo] + (pos - lo) * (off[min(lo + 1, len(off) - 1)] - off[lo])
    lam = kappa * level
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


def average_distances(D, labels, k):
    """(n, k): mean of D[p, q] over the q ≠ p labelled c; inf where there is none."""
    n = len(D)
    out = np.full((n, k), np.inf)
    for p in range(n):
        for c in range(k):
            qs = [q for q in range(n) if q != p and labels[q] == c]
            if qs:
                out[p, c] = sum(D[p, q] for q in qs) / len(qs)
    return out


def popcount_rows(E, F):
    """Hamming distances (n, m, A) between packed encodings E (n, A, W) and F (m, A, W)."""
    a = np.unpackbits(np.ascontiguousarray(E).view(np.uint8), axis=-1).astype(int)
    b = np.unpackbits(np.ascontiguousarray(F).view(np.uint8), axis=-1).astype(int)
    return (a[:, None] != b[None, :]).sum(axis=-1)
