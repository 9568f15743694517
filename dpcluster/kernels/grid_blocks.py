"""Grid Lloyd statistics in blocks of the last two axes, for grids of few cells per axis
(EUGkM's weighted Lloyd, docs/methods.md A3).

The same counts and sums as :func:`.grid._grid_accumulate`, from the same float32 or
float64 nearest-centroid search (so the same labels), summed in another order: every cell
adds its weight once to its block's total per (centroid, run) and once to a table keyed by
its last two digits, and a block's total is folded into the axes above only when all m²
cells of the block are done. :mod:`.grid` closes a row of m cells and multiplies each
cell's weight by its last coordinate; at m = 4..8 that bookkeeping and the float label
conversions were a fifth of a pass. The coordinate sums of the last two axes come from the
table once per slab.

Counts are the kernel's bits wherever partial sums of the weights are exact (EUGkM's noisy
counts lie on a dyadic lattice); coordinate sums differ from :mod:`.grid`'s by rounding.
The SSE is accumulated cell by cell in the same order, so it has the same bits.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from .config import GRID_BLOCKS_MAX_BYTES, GRID_BLOCKS_MIN_D, GRID_LANES, GRID_UNROLL_MAX_K
from .grid import _add_rows, add_task_totals, axis_centres, close_subtrees, distance_tables


@njit(cache=True)
def _grid_block_accumulate(w, m, r, Ct, counts, sums, sse, with_sse, runs, L, K, F):
    """:func:`.grid._grid_accumulate`'s arguments and outputs (d ≥ 3, k = K ≤
    ``GRID_UNROLL_MAX_K``), accumulated by blocks.

    Within a task (a slab of the first axis and a block of L runs):
      P[l]    (kl,) F        Σ_{i<l} T[i, digit_i], the distance prefix (as :mod:`.grid`)
      Wt[l]   (kl,) float64  weight per (centroid, lane) of the open subtree with digits
                             0..l-1 fixed; Wt[d-2] is the open block (m² cells)
      sm[i]   (kl,) float64  Σ w_c c_i per (centroid, lane) for axes i ≤ d-3
      G[p]    (m², kl) float64  weight per (centroid, lane) of the cells whose last two
                             digits are p = (a_{d-2}, a_{d-1}), over the whole slab
    with kl = k·L and index j·L + b for centroid j, lane b.
    """
    k, d, R = Ct.shape
    ax = axis_centres(m, r)
    nblocks = R // L
    kl = k * L
    Tb = distance_tables(ax, Ct, L, F)
    counts[:] = 0.0
    sums[:] = 0.0
    sse[:] = 0.0
    last = d - 1
    leaf = d - 2
    for task in range(m * nblocks):
        a0 = np.int64(task // nblocks)
        blk = task % nblocks
        r0 = blk * L
        nreal = min(L, runs - r0)  # lanes past the caller's runs are padding: not summed
        T = Tb[blk]
        TL = T[last]
        dig = np.zeros(d, np.int64)
        dig[0] = a0
        P = np.zeros((d, kl), F)
        for l in range(1, leaf + 1):
            _add_rows(P[l], P[l - 1], T[l - 1, dig[l - 1]], kl)
        PL = P[last]
        best = np.empty(L, F)
        bj = np.zeros(L, np.int64)  # j·L of the nearest centroid
        Wt = np.zeros((d, kl))
        sm = np.zeros((d, kl))
        G = np.zeros((m * m, kl))
        WB = Wt[leaf]
        err = np.zeros(L)
        cell = a0 * m ** (d - 1)
        while True:
            for a2 in range(m):
                _add_rows(PL, P[leaf], T[leaf, a2], kl)
                for a in range(m):
                    ta = TL[a]
                    # j innermost with K a literal: the j loop unrolls and the b loop
                    # vectorises, the comparisons of :mod:`.grid` in the same order
                    for b in range(L):
                        bv = PL[b] + ta[b]
                        bjv = np.int64(0)
                        for j in range(1, K):
                            v = PL[j * L + b] + ta[j * L + b]
                            better = v < bv
                            bv = v if better else bv
                            bjv = np.int64(j * L) if better else bjv
                        best[b] = bv
                        bj[b] = bjv
                    wc = w[cell]
                    cell += 1
                    g = G[a2 * m + a]
                    for b in range(nreal):
                        t = bj[b] + b
                        WB[t] += wc
                        g[t] += wc
                    if with_sse:
                        for b in range(L):
                            err[b] += wc * best[b]
            # close the block and every subtree it finishes, then advance the odometer
            lev = close_subtrees(sm, Wt, dig, ax, m, leaf, kl)
            if lev < 0:
                break
            for l in range(lev, leaf + 1):
                _add_rows(P[l], P[l - 1], T[l - 1, dig[l - 1]], kl)
        _last_two_axes(G, ax, sm[leaf], sm[last], kl)
        add_task_totals(counts, sums, sse, Wt[0], sm, err, r0, L)


@njit(cache=True)
def _last_two_axes(G, ax, s_row, s_last, kl):
    """The coordinate sums of axes d-2 and d-1 (added to ``s_row`` and ``s_last``, (kl,))
    from G (m², kl), whose row a2·m + a holds the cells with last digits (a2, a)."""
    m = ax.shape[0]
    marginal = np.empty(kl)
    _digit_sums(G, ax, s_row, marginal, m, 1, kl)
    _digit_sums(G, ax, s_last, marginal, 1, m, kl)


@njit(cache=True, inline="always")
def _digit_sums(G, ax, out, marginal, step, other_step, kl):
    """For each digit a of one axis, its weight (G's rows a·step + o·other_step summed in
    the other digit's order o) times its cell centre ``ax[a]``, added to ``out`` in digit
    order."""
    m = ax.shape[0]
    for a in range(m):
        marginal[:] = 0.0
        for o in range(m):
            _accumulate(marginal, G[a * step + o * other_step], kl)
        for t in range(kl):
            out[t] += ax[a] * marginal[t]


@njit(cache=True, inline="always")
def _accumulate(dst, src, n):
    for t in range(n):
        dst[t] += src[t]


def blocks_pay(m: int, d: int, k: int) -> bool:
    """Whether the block kernel is the faster one for this grid and k: from
    ``GRID_BLOCKS_MIN_D`` dimensions, with the centroid loop unrolled (k ≤
    ``GRID_UNROLL_MAX_K``) and G's m²·k·L doubles within ``GRID_BLOCKS_MAX_BYTES``
    (measured in docs/performance.md, "Grid Lloyd in blocks")."""
    return (
        d >= GRID_BLOCKS_MIN_D
        and k <= GRID_UNROLL_MAX_K
        and m * m * k * GRID_LANES * 8 <= GRID_BLOCKS_MAX_BYTES
    )


@functools.cache
def _specialise(K: int, float32: bool):
    """An njit wrapper with L = ``GRID_LANES`` and k = ``K`` frozen as literals (as
    :func:`.grid._specialise`), compiled lazily per k and cached on disk."""
    F = np.float32 if float32 else np.float64

    @njit(cache=True)
    def grid_block_accumulate_k(w, m, r, Ct, counts, sums, sse, with_sse, runs):
        _grid_block_accumulate(w, m, r, Ct, counts, sums, sse, with_sse, runs, GRID_LANES, K, F)

    return grid_block_accumulate_k


def grid_block_accumulate(
    w, m, r, Ct, counts, sums, sse, with_sse=True, float32=False, runs=None
) -> None:
    """:func:`.grid.grid_accumulate`'s contract through the block kernel (d ≥ 3, k ≤
    ``GRID_UNROLL_MAX_K``; :func:`blocks_pay` says where it is the faster one)."""
    k, d, R = Ct.shape
    if d < 3 or k > GRID_UNROLL_MAX_K:
        raise ValueError(f"the block kernel needs d >= 3 and k <= {GRID_UNROLL_MAX_K}")
    runs = R if runs is None else int(runs)
    _specialise(k, bool(float32))(w, m, r, Ct, counts, sums, sse, bool(with_sse), runs)
