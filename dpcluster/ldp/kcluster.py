"""kCluster (docs/methods.md B5, Algorithm 2): k-means-like clustering on a distance matrix only.

The aggregator cannot average encodings, so a point joins the cluster it is closest to *on
average*: ``D_C(p) = (1/|C|) Σ_{q∈C} d(p, q)``, with p left out of its own cluster
(ASSUMPTION, |C| − 1). Post-processing of the encodings, so it costs no privacy.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def _average_distances(D, labels, k, out):
    """out[p, c] = mean of D[p, q] over q in cluster c, q ≠ p (inf for an empty cluster).

    IN D (n, n) float64, labels (n,) int64 in 0..k-1;  OUT out (n, k) float64.
    Rows are independent and summed in index order: thread-count independent.
    """
    n = D.shape[0]
    for p in prange(n):
        tot = np.zeros(k)
        cnt = np.zeros(k)
        for q in range(n):
            if q != p:
                c = labels[q]
                tot[c] += D[p, q]
                cnt[c] += 1.0
        for c in range(k):
            out[p, c] = tot[c] / cnt[c] if cnt[c] > 0 else np.inf


def kcluster(
    D: np.ndarray, k: int, rng: np.random.Generator, max_iter: int = 100
) -> tuple[np.ndarray, int]:
    """Cluster n points given only their (estimated) pairwise distances D (n, n).

    1. pick k distinct points at random (``rng``) as initial "centroids";
    2. assign every point to its nearest one;
    3. repeat: every point moves to the cluster with the smallest average distance;
       stop when no label changes or after ``max_iter`` rounds. An emptied cluster stays
       empty (k − 1 clusters go on).
    Returns (labels (n,) int64, rounds run).
    """
    D = np.ascontiguousarray(D, dtype=np.float64)
    n = D.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must be in 1..n={n}")
    seeds = rng.choice(n, size=k, replace=False)
    labels = np.argmin(D[:, seeds], axis=1).astype(np.int64)
    labels[seeds] = np.arange(k)
    avg = np.empty((n, k))
    for it in range(1, max_iter + 1):
        _average_distances(D, labels, k, avg)
        new = np.argmin(avg, axis=1).astype(np.int64)
        if np.array_equal(new, labels):
            return labels, it
        labels = new
    return labels, max_iter
