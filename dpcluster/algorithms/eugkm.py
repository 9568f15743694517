"""EUGkM: noisy uniform-grid synopsis + weighted k-means (docs/methods.md A3).

Privacy argument. Neighbouring relation: add/remove one tuple. The histogram of all m^d
cell counts has L1 sensitivity 1 (a tuple lies in exactly one cell), so adding ``Lap(1/ε)``
to every cell, empty ones included, is ε-DP. Counts are neither rounded nor truncated.
Choosing M uses a record count: the paper reads the exact N, which is not public under
add/remove one (booked as an exact read: ε = ∞ provable, the paper's ε claimed); a plan
passes a noisy count ``n`` released before (:mod:`.plan`); with ``private_n`` the budget
is split, ``ε_N = 0.05 ε`` on ``Ñ = N + Lap(1/ε_N)`` and ``ε − ε_N`` on the cells
(sequential composition). Clustering the synopsis and choosing among the init sets is
post-processing.
"""

from __future__ import annotations

import math

import numpy as np

from ..analysis.mse import THETA
from ..kernels import grid_histogram, grid_stats
from ..privacy import LaplaceMechanism, Ledger, release
from ..privacy.budget import remaining
from ..privacy.ledger import book_exact_count
from . import checks
from .dplloyd import DPResult
from .lloyd import grid_lloyd_batch
from .weighted import kmeanspp_seeds

ROUNDING = {"round": round, "floor": math.floor, "ceil": math.ceil}

#: the largest grid EUGkM builds (m^d cells); a spec is checked against it before any work
MAX_CELLS = 20_000_000
#: with ``private_n``, the share of ε spent on the record count N (the cells get the rest)
N_SHARE = 0.05


def cells_per_axis(
    N: float, epsilon: float, d: int, theta: float = THETA, rounding: str = "round"
) -> int:
    """m = rounding(M^(1/d)) ≥ 1 with ``M = (N ε/θ)^(2d/(2+d))``, so
    ``M^(1/d) = (Nε/θ)^(2/(2+d))``."""
    m_real = max(N * epsilon / theta, 1e-300) ** (2.0 / (2.0 + d))
    # capped where N ε overflows: m^d is then far above any max_cells, which refuses it
    return max(1, int(ROUNDING[rounding](min(m_real, 2.0**62))))


def eugkm(
    X: np.ndarray,
    k: int,
    epsilon: float,
    inits: np.ndarray,
    rng: np.random.Generator,
    theta: float = THETA,
    rounding: str = "round",
    private_n: bool = False,
    max_iter: int = 100,
    tol: float = 1e-9,
    max_cells: int = MAX_CELLS,
    r: float = 1.0,
    distances: str = "float32",
    n: float | None = None,
    seeding: str = "given",
) -> DPResult:
    """One EUGkM synopsis and the centroid set chosen from it.

    X      (N, d) data in [-r, r]^d;  inits (S, k, d) initial sets (the shared 30).
    rng    this synopsis' generator; its child streams are ``"n"`` and ``"cells"``.
    Steps  m cells per axis → noisy counts ñ_c for all m^d cells → weighted Lloyd on the
           cell centres from every init set (stop when the max shift ≤ tol·r, or max_iter)
           → keep the set with the smallest synopsis NICV ``Σ ñ_c min_j ||c−o_j||² / Σ ñ_c``.
    distances  precision of the cell-to-centroid comparisons in the Lloyd passes and the
           final choice: "float32" (default; whole Figure-2 cells 13-37% faster) or
           "float64" (the exact double path). Counts, sums and SSE accumulate in double.
           The two differ only where a cell is within ~(2d+2)·2⁻²⁴ relative distance of
           two centroids; see docs/numerics.md.
    n      the public or already released record count that sets M; None reads the exact
           N as the paper does, and books that read (:func:`~dpcluster.privacy.ledger.
           book_exact_count`).
    seeding  "given": Lloyd starts from ``inits`` (the paper's shared sets); "synopsis":
           half of them redrawn by greedy k-means++ on the cells whose noisy count clears
           the noise (:func:`synopsis_seeds`, post-processing).
    Returns DPResult with info {m, cells, chosen_init, n_used}.
    """
    X = checks.points(X, r)
    N, d = X.shape
    inits = checks.centroid_sets(inits, d)
    n_rng, cell_rng = rng.spawn(2)
    ledger = Ledger()
    eps_cells, n_used = epsilon, float(N if n is None else max(1.0, n))
    if private_n:
        eps_n = N_SHARE * epsilon
        n_mech = ledger.record(LaplaceMechanism(eps_n, 1.0), "record count N (chooses M)")
        noisy_n = float(n_mech.add(N, n_mech.noise(n_rng, 1))[0])
        noisy_n = release(n_mech, "record count N", noisy_n, lambda data: float(len(data)))
        n_used = max(1.0, noisy_n)
        eps_cells = remaining(epsilon, [eps_n])
    elif n is None:
        book_exact_count(ledger, "EUGkM's grid size M")
    m = cells_per_axis(n_used, eps_cells, d, theta, rounding)
    if n is not None and m**d > max_cells:
        # a released count has already been spent: cap the grid instead of refusing after
        # a release (a public decision from Ñ and max_cells)
        m = max(1, int(math.floor(max_cells ** (1.0 / d) + 1e-9)))
        while m**d > max_cells:
            m -= 1
    n_cells = m**d
    if n_cells > max_cells:
        raise ValueError(
            f"EUGkM grid has {m}^{d} = {n_cells:,} cells, above max_cells={max_cells:,}; "
            "raise max_cells or use rounding: floor"
        )
    counts = grid_histogram(X, m, r)
    cell_mech = ledger.record(LaplaceMechanism(eps_cells, 1.0), "grid cell counts")
    noisy = cell_mech.add(counts, cell_mech.noise(cell_rng, n_cells))
    noisy = release(cell_mech, "grid cell counts", noisy, lambda data: grid_histogram(data, m, r))
    if seeding == "synopsis":
        inits = synopsis_seeds(noisy, m, inits, cell_mech.scale, rng.spawn(1)[0], r)
    C, iters = grid_lloyd_batch(
        noisy, m, inits, max_iter=max_iter, tol=tol * r, r=r, distances=distances
    )
    # Σ ñ_c min_j ||c − o_j||²; the positive normaliser Σ ñ_c does not change the argmin.
    best = int(np.argmin(grid_stats(noisy, m, C, r, distances)[2]))
    return DPResult(
        C[best],
        ledger,
        int(iters[best]),
        {"m": m, "cells": n_cells, "chosen_init": best, "n_used": n_used},
    )


#: seeding choices of :func:`eugkm`
SEEDINGS = ("given", "synopsis")


def synopsis_seeds(
    noisy: np.ndarray,
    m: int,
    inits: np.ndarray,
    scale: float,
    rng: np.random.Generator,
    r: float = 1.0,
) -> np.ndarray:
    """The start sets ``inits`` (S, k, d) with the first ⌈S/2⌉ redrawn from a released
    synopsis: greedy k-means++ (:func:`~dpcluster.algorithms.weighted.kmeanspp_seeds`) on
    the centres of the cells whose noisy count ñ_c exceeds ``scale·ln(m^d)``, weighted by
    ñ_c. Laplace noise of that ``scale`` passes the threshold in about half a cell of the
    whole grid, so these seeds sit where records are rather than anywhere in the box; the
    other sets stay as given, and the choice by synopsis NICV takes the better. With fewer
    clear cells than k (a grid too coarse or too noisy to place k centres) every set stays.
    Post-processing: it reads only the noisy counts, the public m and the scale."""
    S, k, d = inits.shape
    out = np.array(inits, dtype=np.float64, copy=True)
    tau = scale * math.log(max(noisy.size, 2))
    keep = np.flatnonzero(noisy > tau)
    if keep.size < k:  # too few clear cells to place k centres: the given sets stay
        return out
    digits = np.stack(np.unravel_index(keep, (m,) * d), axis=1)  # the cells' C order
    P = -r + (digits + 0.5) * (2.0 * r / m)
    w = noisy[keep]
    trials = 2 + int(math.log(k))
    for s in range(-(-S // 2)):
        out[s] = kmeanspp_seeds(P, w, k, rng, trials)
    return out
