"""Checks at the Python API's edge: every private algorithm's sensitivity assumes finite
records in [-r, r]^d, so data that break that are refused before any ε is booked."""

from __future__ import annotations

import math

import numpy as np

from ..kernels import cluster_stats_single
from ..kernels.scan import count_outside
from ..privacy.mechanisms import snap_records


def points(X, r=1.0, what: str = "X") -> np.ndarray:
    """X as (N, d) float64, finite and inside [-r, r]^d; ValueError naming what is wrong.
    ``r`` may be one radius per feature (d,): the box ∏ [-r_j, r_j]."""
    X = records(X, what)
    if not np.isscalar(r):
        return snap_records(_inside_box(X, radii(r, X.shape[1], what), what))
    limit = r * (1 + 1e-12)
    if not (math.isfinite(limit) and count_outside(X, limit) == 0):  # NaN, ±inf count
        _refuse_if_outside(X, r, what)
    return snap_records(X)  # checked as given, then on the lattice


def points_and_stats(
    X, C, r: float = 1.0, what: str = "X"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`points` and the nearest-centroid statistics of ONE centroid set C (k, d) on
    its lattice records: (records, counts (k,), sums (k, d)) as
    :func:`~dpcluster.kernels.cluster_stats_single` gives them. Data that fail the check
    are refused, with :func:`points`'s message, before any statistic is computed. For a
    single fit's first iteration, whose centroids are public before the data are read."""
    Y = points(X, r, what)
    return Y, *cluster_stats_single(Y, np.asarray(C, dtype=np.float64))


def records(X, what: str = "X") -> np.ndarray:
    """X as an (N, d) float64 array, d ≥ 1 and N ≥ 0 (N is private: a release is defined
    on the empty dataset too): its shape only. Its values are checked by
    :func:`points` or :func:`points_and_stats`, one of which must follow."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 1:
        raise ValueError(f"{what} must be an (N, d) array with d >= 1, got shape {X.shape}")
    return X


def radii(r, d: int, what: str = "X") -> np.ndarray:
    """Per-feature radii (d,): non-negative and finite, not all zero."""
    r = np.asarray(r, dtype=np.float64)
    if r.shape != (d,) or not np.all(np.isfinite(r)) or np.any(r < 0) or not np.any(r > 0):
        raise ValueError(f"r for {what} must be {d} finite radii >= 0, not all 0; got {r}")
    return r


def extent(d: int, r) -> float:
    """The largest L1 norm of a record in the box: d·r, or Σ r_j for per-feature radii.
    It is the L1 sensitivity of a coordinate-sum vector under add/remove one record."""
    return d * r if np.isscalar(r) else float(np.sum(r))


def l2_extent(d: int, r) -> float:
    """The largest L2 norm of a record in the box: r·√d, or (Σ r_j²)^(1/2) for
    per-feature radii. It is the L2 sensitivity of a coordinate-sum vector."""
    return float(r) * math.sqrt(d) if np.isscalar(r) else float(np.sqrt(np.sum(np.square(r))))


def project_to_ball(X: np.ndarray, radius: float | None) -> np.ndarray:
    """Rows of X (N, d) with L2 norm above ``radius`` scaled onto the sphere of that
    radius (a positive scaling: the sign of every projection g·x is kept); X itself when
    ``radius`` is None (no ball)."""
    if radius is None:
        return X
    X = np.asarray(X, dtype=np.float64)
    radius = float(radius)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    scale = np.where(norms > radius, radius / np.where(norms > 0, norms, 1.0), 1.0)
    return X * scale[:, None]


def ball_extent(d: int, r, ball: float | None) -> float:
    """The largest L1 norm of a record in the box that also lies in the L2 ball of
    radius ``ball`` (None: no ball): min(Σ r_j, √d·ball)."""
    box = extent(d, r)
    return box if ball is None else min(box, math.sqrt(d) * float(ball))


def _inside_box(X: np.ndarray, r: np.ndarray, what: str) -> np.ndarray:
    bad = ~(np.abs(X) <= r * (1 + 1e-12))  # NaN and ±inf are bad too
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{what}[{i}, {j}] = {X[i, j]} lies outside [-{r[j]:g}, {r[j]:g}], the public box "
            "the sensitivities assume"
        )
    return X


def _refuse_if_outside(X: np.ndarray, r: float, what: str) -> None:
    """The ValueError for X's first non-finite entry, or for its largest |x| above r."""
    lo, hi = float(X.min()), float(X.max())  # min and max propagate NaN and ±inf
    if not (math.isfinite(lo) and math.isfinite(hi)):
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"{what} has a non-finite value at row {i}, column {j}: {X[i, j]}")
    top = max(-lo, hi)
    if top > r * (1 + 1e-12):
        raise ValueError(
            f"{what} must lie in [-{r:g}, {r:g}]^d (the sensitivities assume it); "
            f"max |x| is {top:.6g}. Scale it with dpcluster.data.normalise(raw, "
            "bounds=(lo, hi)) using public bounds"
        )


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
