"""Distances from (DP)BV encodings (docs/methods.md B1, B4) and the distance-consistence
algorithm (B2, Algorithm 1).

Every function here sees encodings and public parameters only: it is what the aggregator
may run.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernels.bits import estimate_matrix, hamming_pairs
from .bitvector import RecordCodec, keep_probability


def flip_params(epsilon: float | None) -> tuple[float, float]:
    """(p, q): keep and flip probabilities; plain BV is (1, 0)."""
    if epsilon is None:
        return 1.0, 0.0
    p = keep_probability(epsilon)
    return p, 1.0 - p


def debias_hamming(
    dh: np.ndarray, s: int, epsilon: float | None, one_sided: bool = False
) -> np.ndarray:
    """Unbiased clean Hamming distance from noisy ones (B4).

    Both sides noised: ``(d'_H − 2pqs)/(p−q)²``; one side: ``(d'_H − qs)/(p−q)``.
    """
    p, q = flip_params(epsilon)
    dh = np.asarray(dh, dtype=np.float64)
    if one_sided:
        return (dh - q * s) / (p - q)
    return (dh - 2 * p * q * s) / (p - q) ** 2


def hamming_to_distance(dh: np.ndarray, mu: float, s: int) -> np.ndarray:
    """d^_E = μ d_H / (2s) (B1; unbiased for d_E ≤ 2t, saturates at 2t)."""
    return mu * np.asarray(dh, dtype=np.float64) / (2.0 * s)


def pair_estimates(
    codec: RecordCodec, E: np.ndarray, F: np.ndarray, epsilon: float | None
) -> np.ndarray:
    """Per-attribute distance estimates (P, A) of aligned pairs of encodings E, F (P, A, W),
    debiased for DPBV, not clipped."""
    dh = np.empty(E.shape[:2], np.int64)
    hamming_pairs(np.ascontiguousarray(E), np.ascontiguousarray(F), dh)
    return hamming_to_distance(debias_hamming(dh, codec.s, epsilon), codec.mu[None, :], codec.s)


def distance_matrix(
    codec: RecordCodec, E: np.ndarray, F: np.ndarray | None = None, epsilon: float | None = None
) -> np.ndarray:
    """Eq. 20 for every pair: ``sqrt(Σ_a clip(d^_E,a, 0, U_a − L_a)²)``; (n, m) float64.

    E (n, A, W) and F (m, A, W) packed encodings (F = None: E against itself, symmetric,
    zero diagonal). ``epsilon`` is the per-attribute DPBV budget, None for plain BV.
    """
    p, q = flip_params(epsilon)
    sym = F is None
    F = E if sym else F
    out = np.empty((E.shape[0], F.shape[0]))
    estimate_matrix(
        np.ascontiguousarray(E),
        np.ascontiguousarray(F),
        codec.mu.astype(float),
        int(codec.s),
        float(p),
        float(q),
        codec.widths.astype(float),
        sym,
        out,
    )
    return out


#: rows of D revised together by :func:`_consistence_pass` (each streamed row of k serves
#: all of them, so D is read n / CONSISTENCE_TILE times per pass instead of n times)
CONSISTENCE_TILE = 16


@njit(parallel=True, cache=True)
def _consistence_pass(D, F, it, Dn, Fn):
    """One iteration of Algorithm 1: revise every unfixed (i, j) by min over admissible k.

    For a tile of rows i the candidates ``D[i, k] + D[k, j]`` are folded in row by row of k
    (k with ``F[i, k] < it``, j with ``F[k, j] < it``), so every access streams along a row,
    the j loop vectorises, and each row of k read from memory serves the whole tile. A
    minimum does not depend on the order its terms arrive in, so the values equal those of
    a plain loop over j then k (tests/naive.py's Algorithm 1, tested).
    """
    n = D.shape[0]
    big = np.iinfo(np.int64).max
    T = CONSISTENCE_TILE
    for tile in prange((n + T - 1) // T):
        i0 = tile * T
        i1 = min(n, i0 + T)
        best = np.full((i1 - i0, n), np.inf)
        open_pairs = 0
        for i in range(i0, i1):
            for j in range(n):
                Dn[i, j] = D[i, j]
                Fn[i, j] = F[i, j]
                if F[i, j] == big:
                    open_pairs += 1
        if open_pairs == 0:  # the whole tile is fixed: nothing to revise
            continue
        for k in range(n):
            for i in range(i0, i1):
                if F[i, k] < it:
                    dik = D[i, k]
                    b = best[i - i0]
                    for j in range(n):
                        v = dik + D[k, j] if F[k, j] < it else np.inf
                        b[j] = min(b[j], v)
        for i in range(i0, i1):
            for j in range(n):
                if F[i, j] == big and best[i - i0, j] < np.inf:
                    Dn[i, j] = best[i - i0, j]
                    Fn[i, j] = it


def consistence(
    D: np.ndarray, kappa: float = 0.8, tau: str = "max", max_iter: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 on one attribute's estimated distance matrix D (n, n).

    τ = max off-diagonal estimate (``tau="p99"``: its 99th percentile) estimates the
    saturation level 2t; λ = κτ. Entries below λ are the local view (flag 0). Each
    iteration ``it`` revises every unfixed entry to ``min_k D[i,k] + D[k,j]`` over the k
    whose links were fixed before ``it`` (flag ``it``); entries never reached keep their
    estimate (flag = int64 max). Returns (revised D, flags F).
    """
    D = np.array(D, dtype=np.float64, copy=True)
    n = D.shape[0]
    off = D[~np.eye(n, dtype=bool)]
    level = off.max() if tau == "max" else np.percentile(off, 99)
    lam = kappa * level
    big = np.iinfo(np.int64).max
    F = np.where(D < lam, 0, big).astype(np.int64)
    np.fill_diagonal(F, 0)
    Dn, Fn = np.empty_like(D), np.empty_like(F)
    for it in range(1, max_iter + 1):
        _consistence_pass(D, F, it, Dn, Fn)
        if np.array_equal(Fn, F):
            break
        D, Dn = Dn, D
        F, Fn = Fn, F
    return D, F


def mediator_values(x: np.ndarray, spacing: float) -> np.ndarray:
    """Dummy values bridging every gap wider than ``spacing`` between sorted values (B2).

    A custodian inserts them so that pairs across a gap wider than 2t become reachable by
    a chain of local-view links; they are encoded like real values, used only as links by
    Algorithm 1, and dropped from the output. Returns the mediators (M,) in gap order.
    """
    xs = np.unique(np.asarray(x, dtype=np.float64).reshape(-1))
    out = []
    for a, gap in zip(xs[:-1], np.diff(xs)):
        if gap > spacing:
            n = int(np.ceil(gap / spacing)) - 1
            out.append(a + gap * np.arange(1, n + 1) / (n + 1))
    return np.concatenate(out) if out else np.empty(0)


def consistent_distances(
    codec: RecordCodec,
    E: np.ndarray,
    n_real: int,
    epsilon: float | None = None,
    kappa: float = 0.8,
    tau: str = "max",
) -> tuple[np.ndarray, np.ndarray]:
    """One attribute's distances after Algorithm 1, the last ``len(E) − n_real`` encodings
    being mediators: returns (D (n_real, n_real), flags) with the mediators dropped."""
    D, F = consistence(distance_matrix(codec, E, epsilon=epsilon), kappa, tau)
    return D[:n_real, :n_real], F[:n_real, :n_real]
