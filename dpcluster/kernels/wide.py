"""Run-batched Lloyd kernels for wide data (d beyond ``LITERAL_DIMS``), with the bits of
:mod:`.assign`'s generic-d loop kernels.

The loop kernels keep each (point, centroid, run) distance in a register while they walk
the coordinates; at large d that re-reads the whole (k, d, lanes) centroid table once per
point. These take ``WIDE_POINTS`` points at a time with the runs innermost, so each table
row serves every point of the block, without reordering any sum: each distance still adds
its coordinates in order. ``scripts/bench_wide.py`` measures them (docs/performance.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .config import RUN_CHUNK, SSE_CHUNK, WIDE_POINTS
from .tables import expanded_tables, lane_table


@njit(cache=True)
def _nearest(xs, np_, cm, cn, B, part, bd, bi):
    """The search of one block: for points p < ``np_`` of ``xs`` (P, D) and runs b < B,
    ``bd[p, b]`` = min over j of ``cn[j, b] + Σ_i xs[p, i]·cm[j, i, b]`` (the expanded
    ||o^j||² − 2 x·o^j, summed over i in order) and ``bi[p, b]`` its j, the lowest on a
    tie. For each centroid and coordinate, one row of ``cm`` serves every point of the
    block, runs innermost. ``part`` (P, ≥ B) is scratch."""
    k, D = cm.shape[0], cm.shape[1]
    for p in range(np_):
        for b in range(B):
            bd[p, b] = np.inf
            bi[p, b] = 0
    for j in range(k):
        for p in range(np_):
            for b in range(B):
                part[p, b] = cn[j, b]
        for i in range(D):
            row = cm[j, i]
            for p in range(np_):
                xi = xs[p, i]
                for b in range(B):
                    part[p, b] += xi * row[b]
        for p in range(np_):
            for b in range(B):
                if part[p, b] < bd[p, b]:
                    bd[p, b] = part[p, b]
                    bi[p, b] = j


@njit(parallel=True, cache=True)
def accumulate_wide(X, w, Ct, counts, sums, F):
    """:func:`.assign._accumulate` for wide data (d beyond ``LITERAL_DIMS``), with the same bits.

    The narrow kernel keeps each (point, centroid, run) distance in a register while it
    walks the coordinates, which reads the whole (k, d, lanes) table once per point and
    adds each point's coordinates one lane at a time: at d = 200..20,000 that ran at 0.4-2
    GFLOP/s. Here the loops are interchanged without reordering any sum:

    * the search takes ``WIDE_POINTS`` points at a time, and for each centroid and
      coordinate adds ``x_i·(−2 o^j_i)`` to every (point, run) partial distance, runs
      innermost (vectorised); each partial distance still sums its coordinates in order
      from ``||o^j||²``, so it is the narrow kernel's value;
    * the sums are kept as (k, runs, d), so adding a point to its cluster is one
      contiguous vector add over d per run, points in order as before;
    * only the chunk's own runs are searched and summed, not padding lanes (a batch of 4
      runs did the work of 64).

    IN/OUT as :func:`.assign._accumulate`; ``F`` the precision of the distance comparisons.
    """
    N, D = X.shape
    k = Ct.shape[0]
    R = Ct.shape[2]
    P = WIDE_POINTS
    nchunks = (R + RUN_CHUNK - 1) // RUN_CHUNK
    for c in prange(nchunks):
        r0 = c * RUN_CHUNK
        B = min(R, r0 + RUN_CHUNK) - r0
        cm, cn = expanded_tables(Ct, r0, B, D, RUN_CHUNK, F)
        xs = np.empty((P, D), F)
        part = np.empty((P, RUN_CHUNK), F)
        bd = np.empty((P, RUN_CHUNK), F)
        bi = np.zeros((P, RUN_CHUNK), np.int64)
        cnt = np.zeros((k, RUN_CHUNK))
        sm = np.zeros((k, RUN_CHUNK, D))
        for n0 in range(0, N, P):
            np_ = min(P, N - n0)
            for p in range(np_):
                for i in range(D):
                    xs[p, i] = F(X[n0 + p, i])
            _nearest(xs, np_, cm, cn, B, part, bd, bi)
            for p in range(np_):
                n = n0 + p
                wn = w[n]
                for b in range(B):
                    j = bi[p, b]
                    cnt[j, b] += wn
                    dst = sm[j, b]
                    for i in range(D):
                        dst[i] += wn * X[n, i]
        for j in range(k):
            for b in range(B):
                counts[j, r0 + b] = cnt[j, b]
                for i in range(D):
                    sums[j, i, r0 + b] = sm[j, b, i]


@njit(parallel=True, cache=True)
def sse_wide(X, w, Ct, out):
    """:func:`.assign._sse` for wide data with the same bits, its loops interchanged as in
    :func:`accumulate_wide`: ``WIDE_POINTS`` points at a time, runs innermost, each
    squared distance still summed over the coordinates in order from 0.0, and no padding
    lanes. IN/OUT as :func:`.assign._sse`."""
    N, D = X.shape
    k = Ct.shape[0]
    R = Ct.shape[2]
    P = WIDE_POINTS
    nchunks = (R + SSE_CHUNK - 1) // SSE_CHUNK
    for c in prange(nchunks):
        r0 = c * SSE_CHUNK
        B = min(R, r0 + SSE_CHUNK) - r0
        cc = lane_table(Ct, r0, B, B)
        part = np.empty((P, B))
        bd = np.empty((P, B))
        acc = np.zeros(B)
        for n0 in range(0, N, P):
            np_ = min(P, N - n0)
            for p in range(np_):
                for b in range(B):
                    bd[p, b] = np.inf
            for j in range(k):
                part[:np_] = 0.0
                for i in range(D):
                    row = cc[j, i]
                    for p in range(np_):
                        xi = X[n0 + p, i]
                        for b in range(B):
                            diff = xi - row[b]
                            part[p, b] += diff * diff
                for p in range(np_):
                    for b in range(B):
                        if part[p, b] < bd[p, b]:
                            bd[p, b] = part[p, b]
            for p in range(np_):
                wn = w[n0 + p]
                for b in range(B):
                    acc[b] += wn * bd[p, b]
        for b in range(B):
            out[r0 + b] = acc[b]


@njit(cache=True)
def sse_expanded_wide(X, w, Ct, out, step):
    """:func:`.assign._sse_expanded` for wide data (PGkM's fitness) with the same bits, its loops
    interchanged as in :func:`accumulate_wide`: ``WIDE_POINTS`` points at a time, runs
    innermost, ``||x||²`` and each ``||o^j||² − 2 x·o^j`` still summed over the
    coordinates in order, and no padding lanes. Serial, as :func:`.assign._sse_expanded`."""
    N, D = X.shape
    R = Ct.shape[2]
    P = WIDE_POINTS
    nchunks = (R + SSE_CHUNK - 1) // SSE_CHUNK
    for c in range(nchunks):
        r0 = c * SSE_CHUNK
        B = min(R, r0 + SSE_CHUNK) - r0
        cm, cn = expanded_tables(Ct, r0, B, D, B, np.float64)
        xs = np.empty((P, D))
        xx = np.empty(P)
        part = np.empty((P, B))
        bd = np.empty((P, B))
        bi = np.zeros((P, B), np.int64)
        acc = np.zeros(B, np.int64)
        per_step = 1.0 / step
        for n0 in range(0, N, P):
            np_ = min(P, N - n0)
            for p in range(np_):
                s = 0.0
                for i in range(D):
                    xs[p, i] = X[n0 + p, i]
                    s += xs[p, i] * xs[p, i]
                xx[p] = s
            _nearest(xs, np_, cm, cn, B, part, bd, bi)
            for p in range(np_):
                wn = w[n0 + p]
                for b in range(B):
                    v = xx[p] + bd[p, b]
                    acc[b] += np.int64(np.floor(wn * (v if v > 0.0 else 0.0) * per_step + 0.5))
        for b in range(B):
            out[r0 + b] = acc[b] * step
