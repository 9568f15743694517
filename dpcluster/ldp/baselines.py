"""Paper B's comparison baselines (docs/methods.md B8): ADP and RSP, each followed by k-means.

ADP adds Gaussian noise to every attribute; RSP multiplies by a Gaussian random
projection. Neither is a DP mechanism with a stated ε here (the paper compares utility
only); both draw from the generator passed in.
"""

from __future__ import annotations

import numpy as np


def adp(
    X: np.ndarray, sigma: float, rng: np.random.Generator, sigma_is_variance: bool = False
) -> np.ndarray:
    """``X + N(0, σ² I)``; σ is a standard deviation unless ``sigma_is_variance``."""
    sd = np.sqrt(sigma) if sigma_is_variance else sigma
    return X + rng.normal(0.0, sd, size=X.shape)


def rsp(X: np.ndarray, q: int, rng: np.random.Generator, sigma_r: float = 1.0) -> np.ndarray:
    """``X R / (sqrt(q) σ_R)`` with R (d, q) i.i.d. N(0, σ_R²), so that
    E||p'_a − p'_b||² = ||p_a − p_b||²."""
    d = X.shape[1]
    if not 1 <= q <= d:
        raise ValueError(f"projection dimension q={q} must be in 1..d={d}")
    R = rng.normal(0.0, sigma_r, size=(d, q))
    return X @ R / (np.sqrt(q) * sigma_r)


def kmeans_labels(X: np.ndarray, k: int, rng: np.random.Generator, n_init: int = 10) -> np.ndarray:
    """scikit-learn KMeans (k-means++, ``n_init`` restarts) seeded from ``rng``."""
    from sklearn.cluster import KMeans

    seed = int(rng.integers(0, 2**31 - 1))
    return KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(X)
