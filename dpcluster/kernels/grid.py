"""Uniform-grid cell counting in d dimensions (EUGkM synopsis, docs/methods.md A3)."""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from .config import GRID_LANES, GRID_MASKED_MAX_K, GRID_UNROLL_MAX_K


@njit(cache=True)
def grid_counts(X, m, r, out):
    """Count points per cell of the ``m^d`` equal-width grid on ``[-r, r]^d``.

    A point's cell index along axis i is ``min(floor((x_i + r) * m / (2r)), m - 1)``
    (clamped at 0 too), and cells are numbered in C order: axis 0 varies slowest.

    IN  X   (N, d) float64, points in [-r, r]^d
    IN  m   int, cells per axis;  r float, half the domain width
    OUT out (m^d,) float64, zero-initialised by the caller; out[c] = n_c
    """
    N, d = X.shape
    scale = m / (2.0 * r)
    for n in range(N):
        idx = 0
        for i in range(d):
            ci = int(np.floor((X[n, i] + r) * scale))
            if ci < 0:
                ci = 0
            elif ci > m - 1:
                ci = m - 1
            idx = idx * m + ci
        out[idx] += 1.0


def cell_centres(m: int, d: int, r: float = 1.0) -> np.ndarray:
    """Centres of the ``m^d`` cells in the order used by :func:`grid_counts`.

    Returns (m^d, d) float64 with coordinate ``-r + (j + 0.5) * (2r/m)`` along each axis.
    """
    axis = -r + (np.arange(m) + 0.5) * (2.0 * r / m)
    index = np.arange(m**d)
    out = np.empty((m**d, d))
    for i in range(d - 1, -1, -1):  # C order: the last axis varies fastest
        out[:, i] = axis[index % m]
        index //= m
    return out


@njit(cache=True)
def axis_centres(m, r):
    """The m cell centres along one axis of the grid on [-r, r]: (m,) float64."""
    width = 2.0 * r / m
    ax = np.empty(m)
    for a in range(m):
        ax[a] = -r + (a + 0.5) * width
    return ax


@njit(cache=True)
def distance_tables(ax, Ct, L, F):
    """Per-axis squared distances from the cell centres ``ax`` (m,) to centroids Ct (k, d, R):
    ``Tb[c, i, a, j·L + b] = (ax[a] − o^j_i)²`` in precision F for run c·L + b, so each
    block of L runs is one contiguous (d, m, k·L) table. R is a multiple of L."""
    k, d, R = Ct.shape
    m = ax.shape[0]
    Tb = np.empty((R // L, d, m, k * L), F)
    for c in range(R // L):
        for i in range(d):
            for a in range(m):
                for j in range(k):
                    for b in range(L):
                        diff = ax[a] - Ct[j, i, c * L + b]
                        Tb[c, i, a, j * L + b] = F(diff * diff)
    return Tb


@njit(cache=True)
def _grid_accumulate(w, m, r, Ct, counts, sums, sse, with_sse, runs, L, K, F, OUTER):
    """Weighted Lloyd statistics of the ``m^d`` grid cell centres, without materialising them.

    Every cell c of the uniform grid on ``[-r, r]^d`` (C order, as :func:`grid_counts`) is a
    point at its centre with weight ``w[c]`` (EUGkM: the noisy count ñ_c, possibly negative).
    The squared distance from a centre to a centroid separates over axes, so it is built from
    a per-axis table ``T[i, a, j] = (centre_a − o^j_i)²`` with prefix sums shared along the
    odometer: about k additions per cell and run instead of k·d multiply-adds.

    IN  w      (m^d,) float64 cell weights
    IN  m      int cells per axis;  r float half-width of the domain
    IN  Ct     (k, d, R) float64 centroids of R runs (runs last), R a multiple of L
    OUT counts (k, R)    Σ_{c in O^j} w_c
    OUT sums   (k, d, R) Σ_{c in O^j} w_c c_i
    OUT sse    (R,)      Σ_c w_c min_j ||c − o^j||², or zeros when ``with_sse`` is False
    IN  with_sse  bool   the Lloyd iterations need only counts and sums; skipping the SSE
                         saves ~6% and leaves counts and sums bit-identical
    IN  runs   int       the caller's own runs (≤ R): later lanes are padding, searched with
                         the rest but left out of counts and sums (zeros there)

    IN  L, K   runs per lane block and k, both compile-time literals (see
               :func:`grid_accumulate`)
    IN  OUTER  literal: the centroid loop outside the lane loop (large k, where it no
               longer unrolls) instead of inside it; the labels are the same either way

    Work is split into (slab of the first axis, lane block) tasks that accumulate privately
    and are summed in slab order. Within a task every per-(centroid, lane) table is one flat
    row of ``k·L`` values (index ``j·L + b``), so the per-row bookkeeping (prefix refresh,
    closing a finished subtree) is a single loop over a *runtime* length: LLVM vectorises it
    behind an alias check, where a literal length was unrolled into scalar code. That
    bookkeeping was two thirds of the time at m = 4..5, the shapes that dominate Figure 2.

    The kernel is serial on purpose: the harness runs cells in parallel processes with one
    numba thread each, and a parallel version compiled 2.5x slower (7.5 s vs 3 s cold),
    which dominated a cold Figure-1 run. Ties go to the lowest centroid index.
    """
    k, d, R = Ct.shape
    ax = axis_centres(m, r)
    nblocks = R // L
    kl = k * L  # deliberately not a literal: see the docstring
    nl = kl // k  # = L, but a runtime value, so the masked-add loop vectorises
    Tb = distance_tables(ax, Ct, L, F)
    row_cells = m ** (d - 1)
    # each task's totals are added as it ends; tasks run slab by slab, so every (centroid,
    # run) gets its slabs' totals in slab order, with no (m, k, d, R) array of partials
    # (at large m·k a fresh multi-megabyte allocation, page-faulted on every pass)
    counts[:] = 0.0
    sums[:] = 0.0
    sse[:] = 0.0
    last = d - 1
    for task in range(m * nblocks):
        a0 = np.int64(task // nblocks)
        blk = task % nblocks
        r0 = blk * L
        nreal = min(L, runs - r0)  # lanes past the caller's runs are padding: not summed
        nmask = nl if nreal == L else nreal  # (a full block keeps the masked add's fast loop)
        T = Tb[blk]
        dig = np.zeros(d, np.int64)
        dig[0] = a0
        P = np.zeros((d, kl), F)  # P[l] = Σ_{i<l} T[i, dig[i]]
        for l in range(1, d):
            _add_rows(P[l], P[l - 1], T[l - 1, dig[l - 1]], kl)
        TL = T[last]
        PL = P[last]
        best = np.empty(L, F)
        bj = np.zeros(L, F)  # j·L of the nearest centroid, as a float so the select vectorises
        # Wt[l] = weight per (centroid, lane) so far in the open subtree whose digits 0..l-1
        # are fixed; when it closes, axis l-1's coordinate is added once for all of it.
        Wt = np.zeros((d, kl))
        sm = np.zeros((d, kl))  # sm[i, j·L + b] = Σ w_c c_i over cluster j of lane b
        WL = Wt[last]
        SL = sm[last]
        err = np.zeros(L)
        cell = a0 * row_cells
        inner = m if d > 1 else 1
        while True:
            for a in range(inner):
                aa = np.int64(a) if d > 1 else a0
                xa = ax[aa]
                ta = TL[aa]
                if not OUTER:
                    # j innermost with K a literal: the j loop unrolls, the b loop vectorises
                    # and each lane's running minimum stays in a register
                    for b in range(L):
                        bv = PL[b] + ta[b]
                        bjv = F(0.0)
                        for j in range(1, K):
                            v = PL[j * L + b] + ta[j * L + b]
                            better = v < bv
                            bv = v if better else bv
                            bjv = F(j * L) if better else bjv
                        best[b] = bv
                        bj[b] = bjv
                else:
                    # past the unrolling (large k) the j loop inside the lane loop stays
                    # scalar: the centroids go in blocks of four outside the lane loop,
                    # each lane's minimum kept in L1 between blocks (the same comparisons
                    # in the same order, so the same labels)
                    for b in range(L):
                        best[b] = PL[b] + ta[b]
                        bj[b] = F(0.0)
                    j = 1
                    while j + 4 <= K:
                        o0 = j * L
                        o1, o2, o3 = o0 + L, o0 + 2 * L, o0 + 3 * L
                        f0, f1, f2, f3 = F(o0), F(o1), F(o2), F(o3)
                        for b in range(L):
                            bv = best[b]
                            bjv = bj[b]
                            v = PL[o0 + b] + ta[o0 + b]
                            c = v < bv
                            bv = v if c else bv
                            bjv = f0 if c else bjv
                            v = PL[o1 + b] + ta[o1 + b]
                            c = v < bv
                            bv = v if c else bv
                            bjv = f1 if c else bjv
                            v = PL[o2 + b] + ta[o2 + b]
                            c = v < bv
                            bv = v if c else bv
                            bjv = f2 if c else bjv
                            v = PL[o3 + b] + ta[o3 + b]
                            c = v < bv
                            bv = v if c else bv
                            bjv = f3 if c else bjv
                            best[b] = bv
                            bj[b] = bjv
                        j += 4
                    while j < K:
                        fj = F(j * L)
                        off = j * L
                        for b in range(L):
                            v = PL[off + b] + ta[off + b]
                            better = v < best[b]
                            best[b] = v if better else best[b]
                            bj[b] = fj if better else bj[b]
                        j += 1
                wc = w[cell]
                cell += 1
                if K <= GRID_MASKED_MAX_K:
                    # small k: a masked add over the k clusters, vectorised over lanes, beats
                    # the scalar scatter below (same additions in the same order)
                    wx = wc * xa
                    for j in range(K):
                        _masked_add(WL, SL, bj, F(j * L), j * nl, wc, wx, nmask)
                else:
                    for b in range(nreal):
                        t = int(bj[b]) + b
                        WL[t] += wc
                        SL[t] += wc * xa
                if with_sse:
                    for b in range(L):
                        err[b] += wc * best[b]
            if d == 1:
                break
            # close finished subtrees (the row first), then advance the odometer
            lev = close_subtrees(sm, Wt, dig, ax, m, last, kl)
            if lev < 0:
                break
            for l in range(lev, d):
                _add_rows(P[l], P[l - 1], T[l - 1, dig[l - 1]], kl)
        add_task_totals(counts, sums, sse, Wt[0], sm, err, r0, L)


#: :func:`odometer_step`'s outcomes
FINISHED, ADVANCED, CARRIED = 0, 1, 2


@njit(cache=True, inline="always")
def close_subtrees(sm, Wt, dig, ax, m, lev, kl):
    """Close the open subtree at level ``lev`` (digits 0..lev-1 fixed) and every subtree
    its end completes, folding each into its parent (:func:`_close_subtree`), then advance
    the odometer. Returns the shallowest level whose distance prefix must be rebuilt, or
    -1 when the slab is finished."""
    while True:
        i = lev - 1
        _close_subtree(sm[i], Wt[lev - 1], Wt[lev], ax[dig[i]], kl)
        step = odometer_step(dig, i, m)
        if step == FINISHED:
            return -1
        if step == ADVANCED:
            return lev
        lev -= 1


@njit(cache=True, inline="always")
def add_task_totals(counts, sums, sse, cnt, sm, err, r0, L):
    """Add one task's totals (lanes r0..r0+L-1) to the pass's outputs: ``cnt`` (k·L,)
    weights, ``sm`` (d, k·L) coordinate sums and ``err`` (L,) SSE. Tasks are added in
    slab order, so every output has the same summation order for any batch."""
    k, d = counts.shape[0], sm.shape[0]
    for j in range(k):
        for b in range(L):
            counts[j, r0 + b] += cnt[j * L + b]
            for i in range(d):
                sums[j, i, r0 + b] += sm[i, j * L + b]
    for b in range(L):
        sse[r0 + b] += err[b]


@njit(cache=True, inline="always")
def odometer_step(dig, i, m):
    """After the subtree below digit i closed: FINISHED when i is the slab's own digit 0,
    ADVANCED when digit i moved on, CARRIED when it wrapped to 0 (close level i next)."""
    if i == 0:
        return FINISHED
    if dig[i] < m - 1:
        dig[i] += 1
        return ADVANCED
    dig[i] = 0
    return CARRIED


@njit(cache=True, inline="always")
def _add_rows(dst, a, b, n):
    """dst[t] = a[t] + b[t] for t < n (1-D views; n at runtime so the loop vectorises)."""
    for t in range(n):
        dst[t] = a[t] + b[t]


@njit(cache=True, inline="always")
def _masked_add(W, S, lab, j, off, wc, wx, n):
    """For lanes b < n whose nearest centroid ``lab[b]`` is j: ``W[off+b] += wc`` and
    ``S[off+b] += wx``; other lanes keep their value exactly (a select, not ``+= 0``)."""
    for b in range(n):
        hit = lab[b] == j
        W[off + b] = W[off + b] + wc if hit else W[off + b]
        S[off + b] = S[off + b] + wx if hit else S[off + b]


@njit(cache=True, inline="always")
def _close_subtree(s, parent, child, x, n):
    """Fold a finished subtree into its parent: its weight per (centroid, lane) ``child``
    adds ``child·x`` to the coordinate sums ``s`` of the axis it fixed, joins ``parent``,
    and resets to zero. All 1-D views of length n."""
    for t in range(n):
        v = child[t]
        s[t] += v * x
        parent[t] += v
        child[t] = 0.0


@functools.cache
def _specialise(K: int, float32: bool, outer: bool | None = None):
    """An njit wrapper calling :func:`_grid_accumulate` with L = ``GRID_LANES`` and k = ``K``
    frozen as compile-time literals.

    Built lazily and cached on disk, so a run compiles only the k it uses (~3 s cold each).
    Freezing k lets the centroid loop unroll inside the vectorised lane loop: 1.3-1.4x
    faster at k = 5..10 (``scripts/bench_algorithms.py``), with bit-identical results.
    ``outer``: the centroid loop's place (default: outside past ``GRID_UNROLL_MAX_K``);
    the tests compare both.
    """

    F = np.float32 if float32 else np.float64
    OUTER = K > GRID_UNROLL_MAX_K if outer is None else bool(outer)

    @njit(cache=True)
    def grid_accumulate_k(w, m, r, Ct, counts, sums, sse, with_sse, runs):
        _grid_accumulate(w, m, r, Ct, counts, sums, sse, with_sse, runs, GRID_LANES, K, F, OUTER)

    return grid_accumulate_k


def grid_accumulate(
    w, m, r, Ct, counts, sums, sse, with_sse=True, float32=False, runs=None
) -> None:
    """:func:`_grid_accumulate` for centroids Ct (k, d, R); the caller pads R to a multiple
    of ``GRID_LANES`` with copies, and ``runs`` (default R) says how many are its own: the
    padding is searched with them (a whole vector costs the same) but its counts and sums
    are not accumulated, so a fit from one set costs about half of a 32-set fit, not all
    of it (docs/performance.md). ``float32``: compare distances in float32 (see ``F`` there)."""
    runs = Ct.shape[2] if runs is None else int(runs)
    kernel = _specialise(Ct.shape[0], bool(float32))
    kernel(w, m, r, Ct, counts, sums, sse, bool(with_sse), runs)
