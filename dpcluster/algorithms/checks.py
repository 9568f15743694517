"""Checks at the Python API's edge: every private algorithm's sensitivity assumes finite
records in [-r, r]^d, so data that break that are refused before any ε is booked."""

from __future__ import annotations

import math

import numpy as np

from ..kernels.scan import count_outside


def points(X, r: float = 1.0, what: str = "X") -> np.ndarray:
    """X as (N, d) float64, finite and inside [-r, r]^d; ValueError naming what is wrong."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{what} must be a non-empty (N, d) array, got shape {X.shape}")
    limit = r * (1 + 1e-12)
    if math.isfinite(limit) and not count_outside(X, limit):  # one pass; NaN, ±inf fail
        return X
    lo, hi = float(X.min()), float(X.max())  # min and max propagate NaN and ±inf
    if not (math.isfinite(lo) and math.isfinite(hi)):
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"{what} has a non-finite value at row {i}, column {j}: {X[i, j]}")
    top = max(-lo, hi)
    if top > limit:
        raise ValueError(
            f"{what} must lie in [-{r:g}, {r:g}]^d (the sensitivities assume it); "
            f"max |x| is {top:.6g}. Scale it with dpcluster.data.normalise(raw, "
            "bounds=(lo, hi)) using public bounds"
        )
    return X


def centroid_sets(C, d: int, what: str = "inits") -> np.ndarray:
    """Initial centroids (..., k, d) as float64 with the data's d and finite values."""
    C = np.asarray(C, dtype=np.float64)
    if C.ndim < 2 or C.shape[-1] != d:
        raise ValueError(
            f"{what} must have shape (..., k, {d}) to match X's d = {d}, got {C.shape}"
        )
    if not np.isfinite(C).all():
        raise ValueError(f"{what} has non-finite values")
    return C
