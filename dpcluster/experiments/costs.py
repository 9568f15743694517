"""Cost estimates (rough seconds on one core) that schedule cells heaviest first and weight
the progress ETA, and that ``run --dry-run`` adds up. They never affect results. The
constants are fitted to per-cell wall times measured with two workers busy (the grid's on
Figure 2, the others on a `make reproduce-all`), so they describe this project's 2-core
machines; docs/performance.md compares the estimates with measured runs."""

from __future__ import annotations

from ..algorithms.eugkm import cells_per_axis
from ..kernels import GRID_LANES, blocks_pay
from .protocol import CellShape

# The same code ran 1.6-2x faster on 2026-12-04 than on 2026-12-03 (docs/performance.md),
# so each constant sits between the two days' fits (Paper A's 1.25x above the faster day's,
# Paper B's near their geometric mean): every bundled spec within 0.58-1.68x on both days.

#: seconds per (grid cell · lane · centroid · iteration) of the grid kernel's search
GRID_SEARCH_S = 2.0e-10
#: seconds per (grid cell · lane · iteration) of adding each cell to its cluster's sums
GRID_SUM_S = 5.1e-10
#: a pass of the block kernel (d ≥ 4, few cells per axis) against the row kernel's: Figure
#: 2's EUGkM cells took 31.3 core-minutes with it against 37.5 without (idle fresh-clone
#: runs of 2026-12-06)
GRID_BLOCKS_SHARE = 0.83
#: seconds per Lloyd iteration besides the grid (the centroid tables, the update in NumPy)
GRID_PASS_S = 3.3e-5
#: seconds per (record · centroid · coordinate) of one fitness pass over a candidate pool
POOL_UNIT_S = 6.7e-11
#: seconds per (record · centroid · coordinate · per-block Lloyd iteration) of GkM
GKM_UNIT_S = 7.5e-10
#: seconds per (run · record · centroid · coordinate) of a batched DPLloyd cell (t ≤ 5)
LLOYD_BATCH_S = 8.6e-10
#: seconds per DPLloyd iteration besides the records (noise, update; 20,000 iterations of
#: 60 runs on 6 records took 2 s)
LLOYD_PASS_S = 1.0e-4


def grid(shape: CellShape, share: float = 1.0) -> float:
    """EUGkM's work: ``repeat`` synopses × max_iter passes (on noise-dominated grids nearly
    every run uses all of them) over m^d cells × 32-lane blocks, each (cell, lane) searched
    over k centroids and added to its cluster. ``share``: the fraction of ε EUGkM gets
    (the hybrid's ε/2). Fitted to Figure 2's 342 EUGkM cells on an idle 2-core machine
    (two workers; docs/performance.md): their total within 1 %, each cell over 5 s within
    0.78–1.33× of its time (before the 1.25 above)."""
    p = shape.params
    m = cells_per_axis(shape.N, shape.epsilon * share, shape.d, p["theta"], p["rounding"])
    lanes = -(-shape.n_init // GRID_LANES) * GRID_LANES
    passes = shape.repeat * p["max_iter"]
    per_pass = float(m) ** shape.d * lanes * (shape.k * GRID_SEARCH_S + GRID_SUM_S)
    if blocks_pay(m, shape.d, shape.k):
        per_pass *= GRID_BLOCKS_SHARE
    return passes * (per_pass + GRID_PASS_S)


def dplloyd(shape: CellShape) -> float:
    """DPLloyd's runs (``repeat`` per init set) share each batched pass over the records.
    Fitted where t ≤ 5 (its default; the improved rule's t on the papers' data), so a spec
    asking for more iterations (``iterations`` t > 5) costs t/5 as much."""
    t = shape.params.get("iterations") or 0
    work = shape.repeat * shape.n_init * shape.N * shape.k * shape.d * LLOYD_BATCH_S
    return work * max(1, t / 5) + t * LLOYD_PASS_S


def gkm(shape: CellShape) -> float:
    """Every run clusters all N records in blocks, ``max_iter`` Lloyd passes each."""
    return shape.repeat * shape.N * shape.k * shape.d * shape.params.get("max_iter", 1) * GKM_UNIT_S


def gene(shape: CellShape) -> float:
    p = shape.params
    return shape.repeat * p["pool"] * p["iterations"] * shape.N * shape.k * shape.d * POOL_UNIT_S


def distance_error(shape: CellShape) -> float:
    """Paper B Fig. 5: Algorithm 1 over all n² pairs dominates (~2 s per run at
    n = 2,000); a plain estimate scores ``pairs`` pairs of s-bit codes."""
    N, p = shape.N, shape.params
    if p.get("method") == "consistence":
        return shape.repeat * N * N * 6.5e-7
    return shape.repeat * (N * N * 9.4e-8 + p["pairs"] * p["s"] * 9.4e-9)


def distance_matrix(shape: CellShape) -> float:
    """Paper B clustering: the n×n estimated-distance matrix over d attributes of s bits
    (DPBV on digits: ~3 s per run); the non-private baselines work on the plain values
    (~0.1 s per run on digits)."""
    N, d, s = shape.N, shape.d, shape.params.get("s")
    per_pair = s * 1.2e-11 if s is not None else 3.8e-10
    return shape.repeat * (N * N * d * per_pair + N * shape.k * d * 7.5e-8)


def vertical(shape: CellShape) -> float:
    """Paper B Fig. 6: Bob encodes his d − ⌊d/2⌋ attributes of every record in s bits
    (non-decomposition), or the R² values of every scored pair (decomposition)."""
    p = shape.params
    if p["method"] == "decomposition":
        return shape.repeat * p["pairs"] * p["s"] * 7.3e-9
    return shape.repeat * shape.N * (shape.d - shape.d // 2) * p["s"] * 5.3e-9
