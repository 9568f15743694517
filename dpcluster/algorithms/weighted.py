"""k-means on a small weighted point set: the post-processing that turns a private coreset
(LSH-splits' leaves, DPM's leaves) into k centres. It reads only released values (noisy
leaf means and counts) and draws from the generator it is given."""

from __future__ import annotations

import math

import numpy as np


def weighted_kmeans(
    P: np.ndarray,
    w: np.ndarray,
    k: int,
    rng: np.random.Generator,
    n_init: int = 10,
    max_iter: int = 100,
    trials: int | None = None,
) -> np.ndarray:
    """Non-private weighted k-means on a small point set: greedy k-means++ seeding (the
    first centre drawn ∝ w, each next one the candidate of lowest Σ w·D² among ``trials``
    drawn ∝ w·D², D the distance to the nearest centre so far; ``trials`` defaults to
    2 + ⌊ln k⌋, as Arthur and Vassilvitskii suggest and scikit-learn does, and 1 is plain
    k-means++) and Lloyd, ``n_init`` starts, lowest Σ w·D² kept. P (m, d), w (m,) ≥ 0.
    With fewer than k points (or weight on fewer), the spare centres repeat chosen ones.
    Returns (k, d)."""
    trials = trials or 2 + int(math.log(k))
    best, best_cost = None, math.inf
    for _ in range(n_init):
        C = kmeanspp_seeds(P, w, k, rng, trials)
        for _ in range(max_iter):
            labels = np.argmin(squared_distances(C, P), axis=0)
            mass = np.bincount(labels, weights=w, minlength=k)
            sums = np.stack(
                [np.bincount(labels, weights=w * P[:, j], minlength=k) for j in range(P.shape[1])],
                axis=1,
            )
            new = np.where(mass[:, None] > 0, sums / np.where(mass > 0, mass, 1.0)[:, None], C)
            if np.array_equal(new, C):
                break
            C = new
        cost = float((w * squared_distances(C, P).min(axis=0)).sum())
        if cost < best_cost:
            best, best_cost = C.copy(), cost
    return best


def kmeanspp_seeds(
    P: np.ndarray, w: np.ndarray, k: int, rng: np.random.Generator, trials: int
) -> np.ndarray:
    """Greedy k-means++ seeding of k centres on points P (m, d) with weights w (m,) ≥ 0: the
    first centre drawn ∝ w, each next one the candidate of lowest Σ w·D² among ``trials``
    drawn ∝ w·D² (D: distance to the nearest centre so far). Where no weight is left the
    pick is uniform, so fewer than k weighted points repeat chosen ones. Returns (k, d)."""
    m = len(P)
    C = np.empty((k, P.shape[1]))
    first = rng.choice(m, p=w / w.sum()) if w.sum() > 0 else rng.integers(m)
    C[0] = P[first]
    d2 = squared_distances(C[:1], P)[0]
    for j in range(1, k):
        mass = w * d2
        if mass.sum() > 0:
            picks = rng.choice(m, size=trials, p=mass / mass.sum())
            after = np.minimum(d2, squared_distances(P[picks], P))
            pick = picks[int(np.argmin(after @ w))]
        else:
            pick = rng.integers(m)
        C[j] = P[pick]
        d2 = np.minimum(d2, squared_distances(C[j : j + 1], P)[0])
    return C


#: below this many coordinates NumPy sums a row's squares one after another (from 8 on
#: it sums pairwise), so a loop over coordinates gives its bits
_SEQUENTIAL_SUM_MAX_D = 7


def squared_distances(Q: np.ndarray, P: np.ndarray) -> np.ndarray:
    """||p − q||² for each q in Q (t, d) and p in P (m, d): (t, m), the bits of
    ``((P[None] − Q[:, None]) ** 2).sum(axis=2)``. Up to 7 coordinates it adds one
    coordinate's squares at a time, without the (t, m, d) temporary whose short-axis
    reduction was most of the estimator's synopsis seeding at k = 100 (tested equal)."""
    if P.shape[1] > _SEQUENTIAL_SUM_MAX_D:
        return ((P[None, :, :] - Q[:, None, :]) ** 2).sum(axis=2)
    out = (P[None, :, 0] - Q[:, None, 0]) ** 2
    for i in range(1, P.shape[1]):
        out += (P[None, :, i] - Q[:, None, i]) ** 2
    return out
