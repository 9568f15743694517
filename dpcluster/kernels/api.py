"""The NumPy-facing wrappers of the kernels: they allocate their outputs and choose a
kernel (the kernels themselves are pure; :mod:`.dispatch` holds the policy). Wrappers take centroids in the API layout ``(R, k, d)`` (or ``(k, d)`` for one set) and
handle the kernel layout ``(k, d, R)`` internally.
"""

from __future__ import annotations

import math

import numpy as np

from .assign import accumulate_batched, assign_labels, sse_batched, sse_expanded_batched
from .grid import GRID_LANES, grid_accumulate, grid_counts
from .grid_blocks import blocks_pay, grid_block_accumulate
from .nearest import nearest_candidates, nearest_in_family
from .points import accumulate_points
from .pruned import grid_accumulate_pruned, pruned_pays


def _runs_last(C: np.ndarray) -> np.ndarray:
    """(R, k, d) -> contiguous (k, d, R)."""
    return np.ascontiguousarray(np.transpose(C, (1, 2, 0)))


def _as_points(X: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(X, dtype=np.float64)


def cluster_stats(
    X: np.ndarray,
    C: np.ndarray,
    weights: np.ndarray | None = None,
    distances: str = "float64",
    masked: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster (weighted) counts and coordinate sums for a batch of centroid sets.

    X (N, d); C (R, k, d) or (k, d); weights (N,) or None (all ones).
    ``distances``: precision of the nearest-centroid comparisons, "float64" or "float32"
    (counts and sums accumulate in double either way; the two differ only for a point
    within float32 rounding of two centroids, docs/numerics.md). ``masked``: the
    accumulation variant (:func:`~dpcluster.kernels.assign.accumulate_batched`; the same
    numbers either way, default by k).
    Returns counts (R, k) and sums (R, k, d), or (k,) and (k, d) for a single set.
    """
    if distances not in GRID_DISTANCES:
        raise ValueError(f"distances must be one of {GRID_DISTANCES}, got {distances!r}")
    single = C.ndim == 2
    Cb = C[None] if single else C
    X = _as_points(X)
    w = np.ones(X.shape[0]) if weights is None else np.ascontiguousarray(weights, np.float64)
    R, k, d = Cb.shape
    counts = np.empty((k, R))
    sums = np.empty((k, d, R))
    accumulate_batched(
        X, w, _runs_last(Cb.astype(np.float64)), counts, sums, distances == "float32", masked
    )
    counts_r, sums_r = counts.T.copy(), np.transpose(sums, (2, 0, 1)).copy()
    return (counts_r[0], sums_r[0]) if single else (counts_r, sums_r)


def cluster_stats_single(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cluster_stats` of ONE centroid set C (k, d) with threads over the points
    (:mod:`.points`): counts (k,), sums (k, d). For single fits on many records; equal to
    :func:`cluster_stats` up to the last bits (another summation order)."""
    X = _as_points(X)
    C = np.ascontiguousarray(C, np.float64)
    counts, sums = np.zeros(C.shape[0]), np.zeros(C.shape)
    accumulate_points(X, None, C, counts, sums)
    return counts, sums


def cluster_stats_single_outside(
    X: np.ndarray, C: np.ndarray, limit: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`cluster_stats_single` and, from the same pass over X, the number of entries of
    X that are not finite or exceed ``limit`` in magnitude (:func:`.scan.count_outside`):
    (counts (k,), sums (k, d), outside). For an input check that also gives the first
    statistics (:func:`dpcluster.algorithms.checks.points_and_stats`)."""
    X = _as_points(X)
    C = np.ascontiguousarray(C, np.float64)
    counts, sums = np.zeros(C.shape[0]), np.zeros(C.shape)
    outside = accumulate_points(X, None, C, counts, sums, limit=limit)
    return counts, sums, outside


def sse(X: np.ndarray, C: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray | float:
    """Σ_x w_x min_j ||x − o^j||² for each centroid set. C (R, k, d) -> (R,); (k, d) -> float."""
    single = C.ndim == 2
    Cb = C[None] if single else C
    X = _as_points(X)
    w = np.ones(X.shape[0]) if weights is None else np.ascontiguousarray(weights, np.float64)
    out = np.empty(Cb.shape[0])
    sse_batched(X, w, _runs_last(Cb.astype(np.float64)), out)
    return float(out[0]) if single else out


def sse_expanded(X: np.ndarray, C: np.ndarray, step: float = 2.0**-40) -> np.ndarray:
    """Σ_x min_j ||x − o^j||² per centroid set C (R, k, d) -> (R,), computed as
    ``||x||² + min_j (||o^j||² − 2 x·o^j)`` with each record's term rounded to a multiple
    of ``step`` (a power of two) and summed exactly in int64: equal to :func:`sse` up to
    rounding and about 1.35x faster. For PGkM's fitness only; every reported NICV uses
    :func:`sse`."""
    if not (step > 0 and math.frexp(step)[0] == 0.5):
        raise ValueError(f"sse_expanded's step must be a positive power of two, got {step}")
    X = _as_points(X)
    out = np.empty(C.shape[0])
    sse_expanded_batched(X, np.ones(X.shape[0]), _runs_last(C.astype(np.float64)), out, float(step))
    return out


def nicv(X: np.ndarray, C: np.ndarray) -> np.ndarray | float:
    """Normalised intra-cluster variance, docs/methods.md A0: (1/N) Σ_j Σ_{x∈O^j} ||x − o^j||².

    X (N, d) normalised data; C (R, k, d) -> (R,) or (k, d) -> float. Empty clusters add 0.
    """
    return sse(X, C) / X.shape[0]


def labels(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Nearest-centroid index (N,) int64 of every point for one centroid set C (k, d)."""
    out = np.empty(X.shape[0], np.int64)
    assign_labels(_as_points(X), np.ascontiguousarray(C, np.float64), out)
    return out


def nearest(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Nearest-candidate index (N,) int64 of every record among many candidates C (P, d):
    :func:`labels`'s answer (the same sums, lowest index on ties), vectorised over the
    candidates and threaded over the records."""
    out = np.empty(X.shape[0], np.int64)
    nearest_candidates(_as_points(X), np.ascontiguousarray(np.asarray(C, np.float64).T), out)
    return out


def nearest_member(X: np.ndarray, family: np.ndarray, F: np.ndarray) -> np.ndarray:
    """(N,) int64: for every record of X (N, d), the index within its family
    ``family[n]`` of the nearest member of F (k, size, d) (:func:`nearest`'s sums, lowest
    index on ties), threaded over the records."""
    out = np.empty(X.shape[0], np.int64)
    nearest_in_family(
        _as_points(X),
        np.ascontiguousarray(family, np.int64),
        np.ascontiguousarray(F, np.float64),
        out,
    )
    return out


def grid_histogram(X: np.ndarray, m: int, r: float = 1.0) -> np.ndarray:
    """Cell counts n_c (m^d,) float64 of the uniform grid on [-r, r]^d (C order), m ≥ 1."""
    _check_cells(m)
    out = np.zeros(int(m) ** X.shape[1])
    grid_counts(_as_points(X), int(m), float(r), out)
    return out


def grid_stats(
    weights: np.ndarray, m: int, C: np.ndarray, r: float = 1.0, distances: str = "float64"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted Lloyd statistics of the ``m^d`` grid cell centres (EUGkM, docs/methods.md A3).

    weights (m^d,) cell weights in :func:`grid_histogram` order; C (R, k, d) centroid sets.
    Returns counts (R, k), sums (R, k, d) and SSE (R,) = Σ_c w_c min_j ||c − o^j||², the
    same numbers :func:`cluster_stats` and :func:`sse` give on ``cell_centres(m, d, r)`` up
    to rounding, at a fraction of the cost and without the (m^d, d) centre array.

    ``distances="float32"`` compares the squared distances in single precision (counts,
    sums and the SSE accumulate in double): 1.34x faster per pass at m = 5, d = 9, k = 10
    (docs/numerics.md; EUGkM's default), and a cell whose two
    nearest centroids are within ~(2d+2)·2⁻²⁴ relative distance of each other may go to
    the other one. Exact ties still go to the lowest index.
    """
    return _grid_pass(weights, m, C, r, True, distances)


def grid_moments(
    weights: np.ndarray, m: int, C: np.ndarray, r: float = 1.0, distances: str = "float64"
) -> tuple[np.ndarray, np.ndarray]:
    """Counts (R, k) and sums (R, k, d) of :func:`grid_stats` (same ``distances``),
    bit-identical, without the SSE: what one weighted Lloyd iteration needs (~6% cheaper)."""
    counts, sums, _ = _grid_pass(weights, m, C, r, False, distances)
    return counts, sums


#: precisions the grid kernel can compare distances in
GRID_DISTANCES = ("float32", "float64")


def _check_cells(m) -> None:
    """The grid kernels index without bounds checks: refuse m < 1 before they run."""
    if int(m) < 1:
        raise ValueError(f"a grid needs at least 1 cell per axis, got m={m}")


def _grid_pass(weights, m, C, r, with_sse, distances):
    _check_cells(m)
    if distances not in GRID_DISTANCES:
        raise ValueError(f"distances must be one of {GRID_DISTANCES}, not {distances!r}")
    R, k, d = C.shape
    w = np.ascontiguousarray(weights, np.float64)
    if w.shape != (int(m) ** d,):
        raise ValueError(f"weights has shape {w.shape}, expected ({int(m) ** d},) for m={m}, d={d}")
    if pruned_pays(int(m), d, k):
        counts, sums, out = np.empty((k, R)), np.empty((k, d, R)), np.empty(R)
        grid_accumulate_pruned(
            w,
            int(m),
            float(r),
            _runs_last(np.asarray(C, np.float64)),
            counts,
            sums,
            out,
            with_sse,
            float32=distances == "float32",
        )
        return counts.T.copy(), np.transpose(sums, (2, 0, 1)).copy(), out
    L = GRID_LANES
    Rp = -(-R // L) * L  # pad with copies of the last set, then trim
    Cp = np.concatenate([C, np.repeat(C[-1:], Rp - R, axis=0)]) if Rp > R else C
    counts, sums, out = np.empty((k, Rp)), np.empty((k, d, Rp)), np.empty(Rp)
    kernel = grid_block_accumulate if blocks_pay(int(m), d, k) else grid_accumulate
    kernel(
        w,
        int(m),
        float(r),
        _runs_last(Cp.astype(np.float64)),
        counts,
        sums,
        out,
        with_sse,
        float32=distances == "float32",
        runs=R,
    )
    return counts.T[:R].copy(), np.transpose(sums, (2, 0, 1))[:R].copy(), out[:R].copy()
