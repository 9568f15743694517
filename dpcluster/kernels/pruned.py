"""Grid Lloyd with a pruned nearest-centroid search: the filtering algorithm on a lattice.

The same statistics as :func:`.grid._grid_accumulate` (EUGkM's weighted Lloyd over the
``m^d`` cell centres, docs/methods.md A3), bit for bit, at a cost that follows the answer
rather than k. Per run, the grid is split recursively into boxes of cells (Kanungo et al.
2002's filtering on a kd-tree, where the tree is the lattice itself). A box keeps only the
centroids that can be nearest to one of its cells: with z* the candidate nearest the box's
middle, centroid z is dropped when even the box's vertex farthest toward z (where the
linear D_z − D_z* is least) is nearer z*, by more than the rounding of the distances the
search compares. A box left with one centroid is assigned whole; a small box compares its
candidates row by row.

Identical results. The labels are those of the brute-force search:
- a candidate's distance to a cell is summed exactly as the brute force sums it
  (``((T_0 + T_1) + …) + T_{d−1}`` in the comparison precision F, each ``T_i`` the
  rounded per-axis square), and candidates are compared in ascending index with a strict
  ``<``, so ties still go to the lowest index;
- a dropped centroid's computed distance is provably larger than z*'s at every cell of
  its box: ``D̃ ∈ [D(1 − γ) − η, D(1 + γ) + η]`` with γ ≥ (d + 1)·u_F plus the float64
  error of the bounds, η the underflow of d terms, and the test demands a gap above
  ``γ·(Dmax_z + Dmax_z*) + 2η`` (Dmax: the largest squared distance to the box);
- counts, sums and SSE are then accumulated cell by cell in the brute force's own order
  (C order, per first-axis slab, subtrees folded as the odometer closes them), so every
  addition happens in the same order with the same operands.
The bounds depend on geometry only, so negative noisy weights do not affect them.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from .config import (
    GRID_PRUNED_1D_MIN_K,
    GRID_PRUNED_2D_CELLS_PER_K,
    GRID_PRUNED_2D_MIN_K,
    GRID_PRUNED_LEAF,
    GRID_PRUNED_ROW_BIAS,
)
from .grid import CARRIED, FINISHED, odometer_step


@njit(cache=True)
def _bounds_margin(d, F):
    """(γ, η) of the module docstring for comparisons in precision F (float32 or float64)."""
    if F(0.5) + F(2.0**-30) == F(0.5):  # float32: 2^-30 is below half an ulp of 0.5
        u, tiny = 2.0**-24, 2.0**-126
    else:
        u, tiny = 2.0**-53, 2.0**-1022
    gamma = (4.0 * d + 8.0) * (u + 2.0**-53)
    eta = (d + 1.0) * tiny
    return gamma, eta


@njit(cache=True)
def _label_run(T, ax, c, m, d, k, leaf, row_bias, gamma, eta, lab, best, with_best, F, scratch):
    """Nearest-centroid label and its distance (as the brute force computes it) of every
    cell, for one run.

    IN  T    (d, m, k) F  per-axis squares T[i, a, j] = F((ax[a] − c[j, i])²)
    IN  ax   (m,) cell-centre coordinates;  c (k, d) float64 centroids
    IN  leaf int, boxes of at most this many cells compare their candidates cell by cell
    IN  row_bias int, the last axis is split only when this many times wider than the rest
    IN  gamma, eta  the rounding margins of :func:`_bounds_margin`
    IN  scratch  :func:`_scratch`'s work arrays, reused across runs
    OUT lab  (m^d,) int32 label per cell, C order;  best (m^d,) F its distance (written
             where a box keeps one candidate only when ``with_best``)
    """
    lo, hi, lev, cand, ncand, cc, dmax, smid, gaps, Tl = scratch
    for j in range(k):
        cand[0, j] = j
        for i in range(d):
            cc[0, i, j] = c[j, i]
    ncand[0] = k
    strides = np.ones(d, np.int64)
    for i in range(d - 2, -1, -1):
        strides[i] = strides[i + 1] * m
    digit = np.zeros(d, np.int64)
    last = d - 1
    for a in range(m):  # Tl[j, a] = T[last, a, j]: rows contiguous per centroid
        for j in range(k):
            Tl[j, a] = T[last, a, j]
    top = 0
    for i in range(d):
        lo[0, i] = 0
        hi[0, i] = m
    lev[0] = 0
    box_lo = np.empty(d, np.int64)
    box_hi = np.empty(d, np.int64)
    while top >= 0:
        for i in range(d):
            box_lo[i] = lo[top, i]
            box_hi[i] = hi[top, i]
        parent = lev[top]
        top -= 1
        row = parent + 1
        # Kanungo's filter: z* is the candidate nearest the box's middle; z is dropped
        # when even the box's vertex farthest toward z (the minimiser of the linear
        # D_z − D_z*) is nearer z* by more than the rounding of both distances. The
        # candidates' coordinates are stored per stack row, axis-major, so the loops over
        # candidates vectorise.
        pn = ncand[parent]
        for t in range(pn):
            smid[t] = 0.0
            dmax[t] = 0.0
            gaps[t] = 0.0
        for i in range(d):
            x0 = ax[box_lo[i]]
            x1 = ax[box_hi[i] - 1]
            xm = 0.5 * (x0 + x1)
            for t in range(pn):
                ci = cc[parent, i, t]
                e = xm - ci
                smid[t] += e * e
                e0 = x0 - ci
                e1 = x1 - ci
                dmax[t] += max(e0 * e0, e1 * e1)
        ref = 0
        for t in range(1, pn):
            if smid[t] < smid[ref]:
                ref = t
        for i in range(d):
            x0 = ax[box_lo[i]]
            x1 = ax[box_hi[i] - 1]
            cs = cc[parent, i, ref]
            for t in range(pn):
                # (v − c_i)² − (v − c*_i)² = (c*_i − c_i)(2v − c_i − c*_i), least at the
                # vertex v toward c: the smaller of the two ends, without a branch
                s = cs - cc[parent, i, t]
                u = cs + cc[parent, i, t]
                gaps[t] += min(s * (2.0 * x0 - u), s * (2.0 * x1 - u))
        slack = 2.0 * eta + gamma * dmax[ref]
        n = 0
        for t in range(pn):  # branch-free compaction: write always, advance on a keep
            cand[row, n] = cand[parent, t]
            for i in range(d):
                cc[row, i, n] = cc[parent, i, t]
            n += (t == ref) | (gaps[t] <= slack + gamma * dmax[t])
        ncand[row] = n
        cells = 1
        widest = last
        wmax = (box_hi[last] - box_lo[last]) // row_bias  # rows long: the leaf loop's vector
        if box_hi[last] - box_lo[last] < 2:
            wmax = 0  # a row of one cell cannot be split: some other axis must be
        for i in range(d):
            w = box_hi[i] - box_lo[i]
            cells *= w
            if i < last and w >= 2 and w > wmax:
                widest = i
                wmax = w
        if n > 1 and cells > leaf:
            mid = (box_lo[widest] + box_hi[widest]) // 2
            for half in range(2):  # the upper half is pushed first, so the lower runs first
                top += 1
                for i in range(d):
                    lo[top, i] = box_lo[i]
                    hi[top, i] = box_hi[i]
                if half == 0:
                    lo[top, widest] = mid
                else:
                    hi[top, widest] = mid
                lev[top] = row
            continue
        # a leaf: row by row (all digits but the last fixed), each candidate compared
        # over the row's cells in one vectorised loop; P is its distance over the fixed
        # axes, summed in the brute force's order
        lo_l = box_lo[last]
        hi_l = box_hi[last]
        nl = hi_l - lo_l
        for i in range(last):
            digit[i] = box_lo[i]
        while True:
            base = 0
            for i in range(last):
                base += digit[i] * strides[i]
            lrow = lab[base + lo_l : base + hi_l]  # views indexed from 0: no negative
            brow = best[base + lo_l : base + hi_l]  # index fix-ups, so the loops vectorise
            if n == 1 and not with_best:  # assigned whole: labels only
                j1 = np.int32(cand[row, 0])
                for a in range(nl):
                    lrow[a] = j1
            else:
                for t in range(n):
                    j = cand[row, t]
                    p = F(0.0)
                    for i in range(last):
                        p = p + T[i, digit[i], j]
                    tj = Tl[j, lo_l:hi_l]
                    jj = np.int32(j)
                    if t == 0:
                        for a in range(nl):
                            brow[a] = p + tj[a]
                            lrow[a] = jj
                    else:
                        for a in range(nl):
                            v = p + tj[a]
                            better = v < brow[a]
                            brow[a] = v if better else brow[a]
                            lrow[a] = jj if better else lrow[a]
            i = last - 1
            while i >= 0:
                digit[i] += 1
                if digit[i] < box_hi[i]:
                    break
                digit[i] = box_lo[i]
                i -= 1
            if i < 0:
                break


@njit(cache=True)
def _scratch(m, d, k, F):
    """:func:`_label_run`'s work arrays, allocated once per pass (not per run): the box
    stack (lo, hi, parent row), one candidate row per depth (ids, count, coordinates),
    per-candidate bounds and the last axis's table transposed."""
    bits = 1
    while (1 << bits) < m:
        bits += 1
    depth = d * (bits + 1) + 2  # each split halves one axis: at most d·⌈log2 m⌉ levels
    return (
        np.zeros((depth, d), np.int64),
        np.zeros((depth, d), np.int64),
        np.zeros(depth, np.int64),
        np.empty((depth + 1, k), np.int64),
        np.zeros(depth + 1, np.int64),
        np.empty((depth + 1, d, k)),
        np.empty(k),
        np.empty(k),
        np.empty(k),
        np.empty((k, m), F),
    )


@njit(cache=True, inline="always")
def _touch(touched, seen, lev, t):
    """Add cluster t to level ``lev``'s list of clusters holding weight, once."""
    if not seen[lev, t]:
        seen[lev, t] = True
        touched[lev, 0] += 1
        touched[lev, touched[lev, 0]] = t


@njit(cache=True)
def _accumulate_run(w, ax, lab, best, m, d, k, with_sse, counts, sums, sse, b, work):
    """Add run b's statistics to counts (k, R), sums (k, d, R) and sse (R,) from its labels,
    in the brute force's order: per first-axis slab a0, row sums first, folded into their
    parents as the odometer closes each subtree, and the slab's totals added to the run's
    in slab order, exactly as :func:`.grid._grid_accumulate` builds one lane's.

    Only clusters holding weight are folded (``touched[l, 0]`` of them listed after it per
    level l): an untouched one holds +0.0, and adding ±0.0 to a sum that is never −0.0
    leaves it unchanged, so the bits are the brute force's. Along a row, the running sums
    of a stretch of cells with one label stay in registers: the same additions in order.
    """
    Wt, sm, touched, seen, dig = work
    last = d - 1
    row_cells = m ** (d - 1)
    inner = m if d > 1 else 1
    for a0 in range(m):
        err = 0.0
        dig[:] = 0
        dig[0] = a0
        cell = a0 * row_cells
        while True:
            cur = lab[cell]
            acc_w = Wt[last, cur]
            acc_s = sm[last, cur]
            _touch(touched, seen, last, cur)
            for a in range(inner):
                xa = ax[a] if d > 1 else ax[a0]
                wc = w[cell]
                t = lab[cell]
                if t != cur:
                    Wt[last, cur] = acc_w
                    sm[last, cur] = acc_s
                    cur = t
                    acc_w = Wt[last, cur]
                    acc_s = sm[last, cur]
                    _touch(touched, seen, last, cur)
                acc_w += wc
                acc_s += wc * xa
                if with_sse:
                    err += wc * best[cell]
                cell += 1
            Wt[last, cur] = acc_w
            sm[last, cur] = acc_s
            if d == 1:
                break
            lev = last
            done = False
            while True:
                i = lev - 1
                x = ax[dig[i]]
                for q in range(1, touched[lev, 0] + 1):
                    t = touched[lev, q]
                    v = Wt[lev, t]
                    sm[i, t] += v * x
                    Wt[lev - 1, t] += v
                    Wt[lev, t] = 0.0
                    seen[lev, t] = False
                    _touch(touched, seen, lev - 1, t)
                touched[lev, 0] = 0
                step = odometer_step(dig, i, m)
                if step != CARRIED:
                    done = step == FINISHED
                    break
                lev -= 1
            if done:
                break
        for q in range(1, touched[0, 0] + 1):  # the slab's totals, then a clean slate
            t = touched[0, q]
            counts[t, b] += Wt[0, t]
            for i in range(d):
                sums[t, i, b] += sm[i, t]
                sm[i, t] = 0.0
            Wt[0, t] = 0.0
            seen[0, t] = False
        touched[0, 0] = 0
        sse[b] += err


@njit(cache=True)
def _grid_accumulate_pruned(w, m, r, Ct, counts, sums, sse, with_sse, runs, leaf, F):
    """:func:`.grid._grid_accumulate`'s contract (same arguments, same outputs, bit for bit)
    with the pruned search; runs are handled one at a time, so R need not be padded, and
    lanes past ``runs`` get zeros everywhere."""
    k, d, R = Ct.shape
    width = 2.0 * r / m
    ax = np.empty(m)
    for a in range(m):
        ax[a] = -r + (a + 0.5) * width
    gamma, eta = _bounds_margin(d, F)
    n_cells = m**d
    lab = np.empty(n_cells, np.int32)
    best = np.empty(n_cells, F)
    T = np.empty((d, m, k), F)
    c = np.empty((k, d))
    scratch = _scratch(m, d, k, F)
    work = (
        np.zeros((d, k)),
        np.zeros((d, k)),
        np.zeros((d, k + 1), np.int64),
        np.zeros((d, k), np.bool_),
        np.zeros(d, np.int64),
    )
    counts[:] = 0.0
    sums[:] = 0.0
    sse[:] = 0.0
    for b in range(runs):
        for j in range(k):
            for i in range(d):
                c[j, i] = Ct[j, i, b]
        for i in range(d):
            for a in range(m):
                for j in range(k):
                    diff = ax[a] - Ct[j, i, b]
                    T[i, a, j] = F(diff * diff)
        _label_run(
            T,
            ax,
            c,
            m,
            d,
            k,
            leaf,
            GRID_PRUNED_ROW_BIAS,
            gamma,
            eta,
            lab,
            best,
            with_sse,
            F,
            scratch,
        )
        _accumulate_run(w, ax, lab, best, m, d, k, with_sse, counts, sums, sse, b, work)


@functools.cache
def _specialise(float32: bool):
    """An njit wrapper with the comparison precision F frozen (one compilation each)."""
    F = np.float32 if float32 else np.float64

    @njit(cache=True)
    def grid_accumulate_pruned_f(w, m, r, Ct, counts, sums, sse, with_sse, runs, leaf):
        _grid_accumulate_pruned(w, m, r, Ct, counts, sums, sse, with_sse, runs, leaf, F)

    return grid_accumulate_pruned_f


def grid_accumulate_pruned(
    w, m, r, Ct, counts, sums, sse, with_sse=True, float32=False, runs=None, leaf=None
) -> None:
    """:func:`.grid.grid_accumulate` through the pruned search (same arguments and bits;
    Ct (k, d, R) need not be padded). ``leaf``: the largest box compared cell by cell
    (default ``GRID_PRUNED_LEAF``; any value ≥ 1 gives the same numbers)."""
    runs = Ct.shape[2] if runs is None else int(runs)
    leaf = GRID_PRUNED_LEAF if leaf is None else max(1, int(leaf))
    kernel = _specialise(bool(float32))
    kernel(w, m, r, Ct, counts, sums, sse, bool(with_sse), runs, leaf)


def pruned_pays(m: int, d: int, k: int) -> bool:
    """Whether the pruned search is the faster one for this grid and k (both give the same
    bits): one dimension from a handful of centroids, two where there are many centroids,
    each with many cells (``GRID_PRUNED_1D_MIN_K``, ``GRID_PRUNED_2D_*``; measured in
    docs/performance.md, "Grid Lloyd's pruned search")."""
    if d == 1:
        return k >= GRID_PRUNED_1D_MIN_K
    if d == 2:
        return k >= GRID_PRUNED_2D_MIN_K and m * m >= GRID_PRUNED_2D_CELLS_PER_K * k
    return False
