"""Nearest-centroid statistics for ONE centroid set on many points: the single-fit kernel.

The batched kernels (:mod:`.assign`) put runs in the SIMD lanes, which wastes the lanes when
there is one run. Here threads split the *points* into fixed blocks of ``POINT_BLOCK``; the
distance loop vectorises over the centroids; each block keeps its own partial counts and
sums in point order, and the partials are added in block order.
Block boundaries depend on N only, so results do not depend on the thread count. They can
differ from the batched kernel's in the last bits (another summation order), so the
experiments keep the batched kernel and only single fits (``dplloyd``, ``DPKMeans``) use this.
Ties go to the lowest centroid index.

For fits on many records (N ≥ ``GENERATED_MIN_POINTS``, k·d ≤ ``GENERATED_MAX_KD``) a kernel
generated for the fit's (k, d) (:func:`point_lanes_source`, cached by :mod:`.codegen`)
puts the points in the SIMD lanes instead: each slice of ``SLICE`` points is transposed to
float32 (d, SLICE) by vector shuffles (:func:`.intrinsics.rows_to_lanes`), the k distances
of 16 points at a time are built with fused multiply-adds and the centroids' values as
constants, and a point whose best and second best are closer than
:func:`point_tolerance` is searched again in float64 (:func:`_exact_point_labels`), as
:mod:`.unrolled` does for runs. The labels are then accumulated exactly as above, in
point order per block, while the next slice's records are prefetched: the same bits as
the loop kernel (tested). With unit weights (``w`` None, as every fit has) no weight array
is read. Measurements: docs/performance.md (``scripts/bench_scale.py``).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from . import codegen, unrolled
from .config import (
    GENERATED_MAX_KD,
    GENERATED_MIN_POINTS,
    POINT_BLOCK,
    PREFETCH_KEEP,
    SHUFFLE_ROWS,
    SLICE,
)
from .scan import count_outside


@njit(parallel=True, cache=True)
def _accumulate_points(X, w, C, counts, sums, D):
    """IN X (N, D) float64, w (N,) float64 weights, C (k, D) float64 centroids;
    OUT counts (k,) Σ w over each cluster, sums (k, D) Σ w·x (zero-initialised by the
    caller). ``D`` a compile-time literal for d ≤ 10 (see :func:`accumulate_points`).

    Per point, the k expanded-form distances ``||o^j||² − 2 x·o^j`` are built together,
    coordinate by coordinate, in a vector over the centroids (padded to a multiple of 4
    with +inf), then the lowest index of the smallest wins.
    """
    N = X.shape[0]
    k = C.shape[0]
    kp = (k + 3) // 4 * 4
    nb = (N + POINT_BLOCK - 1) // POINT_BLOCK
    pc = np.zeros((nb, k))
    ps = np.zeros((nb, k, D))
    cmt = np.zeros((D, kp))
    cn = np.full(kp, np.inf)
    for j in range(k):
        cn[j] = 0.0
        for i in range(D):
            cmt[i, j] = -2.0 * C[j, i]
            cn[j] += C[j, i] * C[j, i]
    for b in prange(nb):
        lo = b * POINT_BLOCK
        hi = min(N, lo + POINT_BLOCK)
        acc = np.empty(kp)
        for n in range(lo, hi):
            for j in range(kp):
                acc[j] = cn[j]
            for i in range(D):
                x = X[n, i]
                for j in range(kp):
                    acc[j] += x * cmt[i, j]
            best = acc[0]
            bj = 0
            for j in range(1, k):
                if acc[j] < best:
                    best = acc[j]
                    bj = j
            wn = w[n]
            pc[b, bj] += wn
            for i in range(D):
                ps[b, bj, i] += wn * X[n, i]
    for b in range(nb):
        for j in range(k):
            counts[j] += pc[b, j]
            for i in range(D):
                sums[j, i] += ps[b, j, i]


@functools.cache
def _kernel_for(d: int):
    if d > 10:
        return _any_d

    @njit(cache=True)
    def accumulate_d(X, w, C, counts, sums):
        _accumulate_points(X, w, C, counts, sums, d)

    return accumulate_d


@njit(cache=True)
def _any_d(X, w, C, counts, sums):
    _accumulate_points(X, w, C, counts, sums, X.shape[1])


def record_width(d: int) -> int:
    """Floats per row of the unweighted point-lane kernel's sums: d sums and the count,
    padded to a multiple of 4 (a 256-bit register). At d = 10, aligned rows of 12 measured
    faster than unaligned rows of 11 and as fast as rows of 16."""
    return (d + 1 + 3) // 4 * 4


def point_lanes_source(k: int, d: int, weighted: bool = True, checked: bool = False) -> str:
    """Source of ``kernel(X, w, C, counts, sums, tol0, tol1)``: :func:`_accumulate_points`
    for k centroids in d dimensions with the points in the SIMD lanes (module docstring).
    A point's float32 label is certified when its gap exceeds ``tol0 + tol1·||x||²``
    (:func:`point_tolerance`). The kernel returns 0, or, ``checked`` (unweighted only),
    takes a last argument ``limit`` and returns how many entries of X are not finite or
    exceed it in magnitude, counted on the values its scatter loads anyway
    (:func:`.intrinsics.add_record_counting_outside`).

    Without weights, each block's sums and count of cluster j are one row of ``W`` =
    :func:`record_width` floats of a 64-byte aligned buffer (d sums, the count, zeros), and
    a record is added to its row, count included, by one vector add."""
    if checked and weighted:
        raise ValueError("the checked point-lane kernel is unweighted")
    W = record_width(d)
    pad = " " * 16
    f32 = "np.float32"
    out = [
        f"# generated by dpcluster.kernels.points: k={k}, d={d}, weighted={weighted}, "
        f"checked={checked}. Do not edit.",
        "import numpy as np",
        "from numba import njit, prange",
        "from dpcluster.kernels.intrinsics import add_record, add_record_counting_outside, bitor, "
        "fma, prefetch, rows_to_lanes, select",
        "from dpcluster.kernels.points import _exact_point_labels",
        "",
        "",
        "@njit(parallel=True, cache=True)",
        f"def kernel(X, {'w, ' if weighted else ''}C, counts, sums, tol0, tol1"
        f"{', limit' if checked else ''}):",
        "    N = X.shape[0]",
        "    tol0 = np.float32(tol0)",
        "    tol1 = np.float32(tol1)",
        f"    nb = (N + {POINT_BLOCK} - 1) // {POINT_BLOCK}",
        *(
            [f"    pc = np.zeros((nb, {k}))", f"    ps = np.zeros((nb, {k}, {d}))"]
            if weighted
            else [
                f"    ps = np.zeros(nb * {k * W} + 8)",
                "    off = (-ps.ctypes.data) % 64 // 8  # rows from a 64-byte boundary",
            ]
        ),
        f"    cm = np.empty(({k}, {d}))",
        f"    cn = np.zeros({k})",
        f"    for j in range({k}):",
        f"        for i in range({d}):",
        "            cm[j, i] = -2.0 * C[j, i]",
        "            cn[j] += C[j, i] * C[j, i]",
    ]
    for j in range(k):
        out.append(f"    cn{j} = {f32}(cn[{j}])")
        out += [f"    cm{j}_{i} = {f32}(cm[{j}, {i}])" for i in range(d)]
    out += [
        "    outside = 0",
        "    for b in prange(nb):",
        "        outside_b = 0",
        f"        lo = b * {POINT_BLOCK}",
        f"        hi = min(N, lo + {POINT_BLOCK})",
        f"        xt = np.empty(({d}, {SLICE}), np.float32)",
        f"        lab = np.empty({SLICE}, np.float32)",
        f"        for s in range(lo, hi, {SLICE}):",
        f"            m = min(hi - s, {SLICE})",
        f"            full = m - m % {SHUFFLE_ROWS}",
        f"            for p in range(0, full, {SHUFFLE_ROWS}):",
        f"                rows_to_lanes(X, s + p, xt, p, {d}, {SHUFFLE_ROWS})",
        "            for p in range(full, m):",
        *[f"{pad}xt[{i}, p] = {f32}(X[s + p, {i}])" for i in range(d)],
        "            near = np.int32(0)",
        "            for p in range(m):",
        *[f"                x{i} = xt[{i}, p]" for i in range(d)],
        f"{pad}xx = {f32}(0.0)",
        *[f"{pad}xx = fma(x{i}, x{i}, xx)" for i in range(d)],
        f"{pad}bd = {f32}(np.inf)",
        f"{pad}sb = {f32}(np.inf)",
        f"{pad}bi = {f32}(0.0)",
    ]
    for j in range(k):  # float32 distance, best and second best (see .unrolled)
        terms = [(f"x{i}", f"cm{j}_{i}") for i in range(d)]
        out += codegen.certified_step(pad, j, f"cn{j}", terms, "bd", "sb", "bi")
    out += [
        f"{pad}g = sb - bd > fma(tol1, xx, tol0)",  # false for NaN too
        f"{pad}lab[p] = select(g, bi, {f32}(-1.0))",
        f"{pad}near = bitor(near, select(g, np.int32(0), np.int32(1)))",
        "            if near:",
        "                _exact_point_labels(X, s, m, cm, cn, lab)",
        "            for p in range(m):",
        f"{pad}j = np.int64(lab[p])",
        # the next slice's record p: its first and last value cover its cache lines
        f"{pad}prefetch(X, s + {SLICE} + p, 0, {PREFETCH_KEEP})",
        f"{pad}prefetch(X, s + {SLICE} + p, {d - 1}, {PREFETCH_KEEP})",
        *(
            [f"{pad}wn = w[s + p]", f"{pad}pc[b, j] += wn"]
            + [f"{pad}ps[b, j, {i}] += wn * X[s + p, {i}]" for i in range(d)]
            if weighted
            else [
                f"{pad}outside_b += add_record_counting_outside("
                f"ps, off + (b * {k} + j) * {W}, X, s + p, {d}, {W}, limit)"
                if checked
                else f"{pad}add_record(ps, off + (b * {k} + j) * {W}, X, s + p, {d}, {W})",
            ]
        ),
        "        outside += outside_b",
        "    for b in range(nb):",
        f"        for j in range({k}):",
        *(
            [
                "            counts[j] += pc[b, j]",
                f"            for i in range({d}):",
                "                sums[j, i] += ps[b, j, i]",
            ]
            if weighted
            else [
                f"            row = off + (b * {k} + j) * {W}",
                f"            counts[j] += ps[row + {d}]",
                f"            for i in range({d}):",
                "                sums[j, i] += ps[row + i]",
            ]
        ),
        "    return outside",
        "",
    ]
    return "\n".join(out)


@njit(cache=True, nogil=True)
def _exact_point_labels(X, s, m, cm, cn, lab):
    """Points s..s+m-1 whose ``lab`` is −1 (not certified by the float32 search): the
    nearest centroid as :func:`_accumulate_points` finds it, in float64."""
    k, D = cm.shape
    for p in range(m):
        if lab[p] < 0:
            best = np.inf
            label = 0
            for j in range(k):
                acc = cn[j]
                for i in range(D):
                    acc += X[s + p, i] * cm[j, i]
                if acc < best:
                    best = acc
                    label = j
            lab[p] = label


def point_tolerance(C) -> tuple[float, float]:
    """(tol0, tol1) of the point-lane kernel for centroids C (k, d): a point x's float32
    winner is certified when its gap to the second best exceeds tol0 + tol1·||x||².

    This is :func:`.unrolled.tolerance` with the scale bounded per point instead of over
    the data, so no pass over X is needed: for every centroid j,
    ``|cn_j| + Σ_i |x_i cm_ji| ≤ c + ||x||·2√c ≤ 3c + ||x||²/2`` with c = max_j ||o^j||²
    (Cauchy-Schwarz, then 2ab ≤ a² + b²). ||x||² is summed in float32 by the kernel;
    its relative error, (d + 1)·2⁻²⁴, is far inside the tolerance's factor of 2. If the
    float32 values overflow, the gap is NaN or the tolerance infinite, and the point is
    searched again in float64.
    """
    d = C.shape[1]
    c = float((C * C).sum(axis=1).max(initial=0.0))
    return unrolled.tolerance(d, 3.0 * c), unrolled.tolerance(d, 0.5) - 1e-30


@functools.cache
def _generated(k: int, d: int, weighted: bool, checked: bool = False):
    stem = f"dpcluster_points_k{k}_d{d}" + ("_w" if weighted else "") + ("_c" if checked else "")
    return codegen.load(point_lanes_source(k, d, weighted, checked), stem).kernel


def accumulate_points(
    X, w, C, counts, sums, generated: bool | None = None, limit: float | None = None
) -> int | None:
    """:func:`_accumulate_points` with the dimension as a literal for d = 1..10, or the
    generated point-lane kernel (same bits) when ``generated`` is True, or by default for
    N ≥ ``GENERATED_MIN_POINTS`` and k·d ≤ ``GENERATED_MAX_KD``. ``w`` None means unit
    weights: the same bits as ones (1·x = x), without reading an (N,) array.

    With ``limit``, returns the number of entries of X that are not finite or exceed it in
    magnitude (:func:`.scan.count_outside`), counted in the same pass by the unweighted
    generated kernel and by a scan first otherwise. The statistics of data with such
    entries are still computed (NaN gets label 0), and are the caller's to discard."""
    k, d = C.shape
    if generated is None:
        generated = X.shape[0] >= GENERATED_MIN_POINTS and k * d <= GENERATED_MAX_KD
    outside = None
    if limit is not None and (w is not None or not generated):
        outside = count_outside(X, limit)
    if generated:
        weights = () if w is None else (w,)
        fused = () if limit is None or outside is not None else (float(limit),)
        kernel = _generated(k, d, w is not None, bool(fused))
        found = kernel(X, *weights, C, counts, sums, *point_tolerance(C), *fused)
        if fused:
            outside = int(found)
    else:
        _kernel_for(d)(X, np.ones(X.shape[0]) if w is None else w, C, counts, sums)
    return outside
