"""Lloyd's algorithm, batched over many initial-centroid sets, optionally on weighted points.

Non-private. Used for the baseline (docs/methods.md A0: min NICV over the 30 init sets, run to
convergence) and, with noisy weights, as EUGkM's post-processing step (A3).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..kernels import cluster_stats, grid_moments

Stats = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def lloyd_iterate(
    stats: Stats, inits: np.ndarray, max_iter: int = 300, tol: float = 0.0, r: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """The Lloyd loop over R centroid sets, given
    ``stats(C (R', k, d)) -> (W (R', k), S (R', k, d))``.

    Update  o_j = clip(S_j / W_j, −r, r) where W_j is cluster j's total weight; a cluster
            whose total weight is ≤ 0 keeps its previous centroid
            (docs/methods.md A1/A3 ASSUMPTION).
    Stops   a run when its largest coordinate shift is ≤ ``tol`` (with ``tol = 0`` this is
            "no point changes cluster") or after ``max_iter`` iterations. Finished runs drop
            out of later ``stats`` calls.
    Returns (centroids (R, k, d), iterations (R,) int).
    """
    C = np.array(inits, dtype=np.float64, copy=True)
    R = C.shape[0]
    iters = np.zeros(R, dtype=np.int64)
    active = np.arange(R)
    for _ in range(max_iter):
        if active.size == 0:
            break
        W, S = stats(C[active])
        old = C[active]
        ok = W > 0
        means = np.clip(S / np.where(ok, W, 1.0)[..., None], -r, r)
        new = np.where(ok[..., None], means, old)
        C[active] = new
        iters[active] += 1
        shift = np.abs(new - old).max(axis=(1, 2))
        active = active[shift > tol]
    return C, iters


def lloyd_batch(
    X: np.ndarray,
    inits: np.ndarray,
    weights: np.ndarray | None = None,
    max_iter: int = 300,
    tol: float = 0.0,
    r: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Run Lloyd on points X (N, d) (weights (N,) or None, may be negative) from each of the
    R initial sets ``inits`` (R, k, d); see :func:`lloyd_iterate` for the update and stop rule.
    """
    return lloyd_iterate(lambda C: cluster_stats(X, C, weights), inits, max_iter, tol, r)


def grid_lloyd_batch(
    weights: np.ndarray,
    m: int,
    inits: np.ndarray,
    max_iter: int = 100,
    tol: float = 0.0,
    r: float = 1.0,
    distances: str = "float64",
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted Lloyd on the centres of the ``m^d`` grid cells with weights (m^d,) (EUGkM).

    The same iteration as :func:`lloyd_batch` on ``cell_centres(m, d, r)``, through the
    separable grid kernel (no (m^d, d) centre array). ``distances``: the precision of the
    nearest-centroid comparisons (:func:`~dpcluster.kernels.grid_stats`).
    """
    return lloyd_iterate(
        lambda C: grid_moments(weights, m, C, r, distances), inits, max_iter, tol, r
    )


def lloyd(X: np.ndarray, init: np.ndarray, max_iter: int = 300, tol: float = 0.0) -> np.ndarray:
    """Lloyd from one initial set ``init`` (k, d) to convergence; returns centroids (k, d)."""
    return lloyd_batch(X, init[None], max_iter=max_iter, tol=tol)[0][0]
