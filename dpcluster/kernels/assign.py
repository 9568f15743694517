"""Nearest-centroid assignment kernels, batched over many centroid sets ("runs").

Layout: the runs axis is last and contiguous, ``Ct[j, i, r]`` = coordinate ``i`` of
centroid ``j`` in run ``r``, so the innermost loops run over runs and vectorise (SIMD)
without reordering any floating-point sum. One pass over the data serves a whole chunk of
runs, which is what makes 3,000 DPLloyd runs per Figure-1 cell cheap.

Determinism: work is split across threads *by run*, never by point. Every run's counts and
sums are accumulated over points 0..N-1 in order, so results do not depend on the numba
thread count. Ties go to the lowest centroid index (as ``numpy.argmin``).

All arrays are float64 and C-contiguous. Kernels are pure: no I/O, no RNG.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from . import dispatch
from .config import (
    BATCH_MASKED_MAX_K,
    LITERAL_DIMS,
    RUN_CHUNK,
    SSE_CHUNK,
    UNROLLED_MIN_RUNS,
)
from .tables import expanded_tables, lane_table
from .unrolled import accumulate_unrolled, unroll_points
from .wide import accumulate_wide, sse_expanded_wide, sse_wide


@njit(parallel=True, cache=True)
def _accumulate(X, w, Ct, counts, sums, D, F, MASKED):
    """Assign every point to its nearest centroid in every run; sum weights and points.

    IN  X      (N, D) float64  points (Paper A: normalised records, or EUGkM cell centres)
    IN  w      (N,)   float64  per-point weight (1.0 for records; noisy cell counts ñ_c for
                               EUGkM, possibly negative or fractional)
    IN  Ct     (k, D, R) float64  centroids o^j of each of R runs, runs last
    OUT counts (k, R)    float64  Σ_{x in O^j} w_x            (|O^j| when w = 1)
    OUT sums   (k, D, R) float64  Σ_{x in O^j} w_x x_i
    IN  D      int, the dimension. :func:`accumulate_batched` passes it as a compile-time
               literal for d ≤ 10, so the coordinate loop unrolls and the distance stays in a
               register (one compilation per d).
    IN  F      the precision of the distance comparisons: float64, or float32 (twice the
               SIMD lanes). Counts and sums accumulate the float64 records in double either way.
    IN  MASKED bool literal: add each point to every centroid's count and sums with weight w
               or 0 (vectorised over runs) instead of scattering it to its own centroid per
               run; bit-identical, faster for small k (``BATCH_MASKED_MAX_K``).

    The nearest centroid minimises ``||o^j||² − 2 x·o^j`` (= ``||x − o^j||² − ||x||²``), the
    form scikit-learn's Lloyd also uses; it differs from the direct form only by rounding.
    """
    N = X.shape[0]
    k = Ct.shape[0]
    R = Ct.shape[2]
    nchunks = (R + RUN_CHUNK - 1) // RUN_CHUNK
    for c in prange(nchunks):
        r0 = c * RUN_CHUNK
        B = min(R, r0 + RUN_CHUNK) - r0
        cm, cn = expanded_tables(Ct, r0, B, D, RUN_CHUNK, F)
        bd = np.empty(RUN_CHUNK, F)
        bi = np.empty(RUN_CHUNK, F)
        xs = np.empty(D, F)
        cnt = np.zeros((k, RUN_CHUNK))
        sm = np.zeros((k, D, RUN_CHUNK))
        for n in range(N):
            for i in range(D):
                xs[i] = F(X[n, i])
            for b in range(RUN_CHUNK):
                bd[b] = F(np.inf)
                bi[b] = F(0.0)
            for j in range(k):
                fj = F(j)
                for b in range(RUN_CHUNK):
                    acc = cn[j, b]
                    for i in range(D):
                        acc += xs[i] * cm[j, i, b]
                    better = acc < bd[b]
                    bd[b] = acc if better else bd[b]
                    bi[b] = fj if better else bi[b]
            wn = w[n]
            if MASKED:
                for j in range(k):
                    fj = F(j)
                    for b in range(RUN_CHUNK):
                        m = wn if bi[b] == fj else 0.0
                        cnt[j, b] += m
                        for i in range(D):
                            sm[j, i, b] += m * X[n, i]
            else:
                for b in range(RUN_CHUNK):
                    j = int(bi[b])
                    cnt[j, b] += wn
                    for i in range(D):
                        sm[j, i, b] += wn * X[n, i]
        for j in range(k):
            for b in range(B):
                counts[j, r0 + b] = cnt[j, b]
                for i in range(D):
                    sums[j, i, r0 + b] = sm[j, i, b]


def _specialise(D: int):
    """njit wrappers calling :func:`_sse` and :func:`_sse_expanded` with ``D`` frozen as a
    compile-time literal.

    Built lazily, so a run only compiles the dimensions it uses (each takes ~2-3 s cold and
    is then loaded from numba's on-disk cache).
    """

    @njit(cache=True)
    def sse_d(X, w, Ct, out):
        _sse(X, w, Ct, out, D)

    @njit(cache=True)
    def sse_expanded_d(X, w, Ct, out, step):
        _sse_expanded(X, w, Ct, out, D, step)

    return sse_d, sse_expanded_d


@njit(cache=True)
def _sse_any_d(X, w, Ct, out):
    _sse(X, w, Ct, out, X.shape[1])


@njit(cache=True)
def _sse_expanded_any_d(X, w, Ct, out, step):
    _sse_expanded(X, w, Ct, out, X.shape[1], step)


@functools.cache
def _kernels_for(d: int):
    return _specialise(d) if d in LITERAL_DIMS else (_sse_any_d, _sse_expanded_any_d)


@functools.cache
def _accumulator(D: int, F, masked: bool):
    """An njit wrapper calling :func:`_accumulate` with the dimension ``D`` (0: the data's
    d, not a literal: the reference the tests hold :func:`.wide.accumulate_wide` to), the
    precision ``F`` and the accumulation variant frozen."""
    if D:

        @njit(cache=True)
        def accumulate(X, w, Ct, counts, sums):
            _accumulate(X, w, Ct, counts, sums, D, F, masked)

    else:

        @njit(cache=True)
        def accumulate(X, w, Ct, counts, sums):
            _accumulate(X, w, Ct, counts, sums, X.shape[1], F, masked)

    return accumulate


def accumulate_batched(
    X, w, Ct, counts, sums, float32: bool = False, masked: bool | None = None
) -> None:
    """:func:`_accumulate` with the dimension as a literal for d = 1..10 (see there), and
    :func:`.wide.accumulate_wide` beyond;
    ``float32``: compare distances in float32; ``masked`` (default: k ≤ ``BATCH_MASKED_MAX_K``)
    picks the masked accumulation, with the same results.

    With the defaults (float64, ``masked=None``), a batch of at least ``UNROLLED_MIN_RUNS``
    runs whose k·d has a generated kernel goes to :mod:`.unrolled`, with the same bits,
    once that shape pays its compilation back (:func:`.dispatch.wanted`).
    """
    k, d, R = Ct.shape
    eligible = not float32 and masked is None and R >= UNROLLED_MIN_RUNS and unroll_points(k, d)
    generated = eligible and dispatch.wanted(k, d)
    if generated and accumulate_unrolled(X, w, Ct, counts, sums):
        dispatch.ran_generated(k, d)
        return
    if d not in LITERAL_DIMS:  # wide data: one kernel, the same bits (masked or not)
        with dispatch.timed_loop(k, d, counted=bool(eligible and not generated)):
            accumulate_wide(X, w, Ct, counts, sums, np.float32 if float32 else np.float64)
        return
    masked = k <= BATCH_MASKED_MAX_K if masked is None else bool(masked)
    kernel = _accumulator(d, np.float32 if float32 else np.float64, masked)
    with dispatch.timed_loop(k, d, counted=bool(eligible and not generated)):
        kernel(X, w, Ct, counts, sums)


def sse_batched(X, w, Ct, out) -> None:
    """:func:`_sse` with the dimension as a literal for d = 1..10, and :func:`.wide.sse_wide`
    beyond (both bit-identical to the generic-d :func:`_sse`)."""
    if X.shape[1] in LITERAL_DIMS:
        _kernels_for(X.shape[1])[0](X, w, Ct, out)
    else:
        sse_wide(X, w, Ct, out)


def sse_expanded_batched(X, w, Ct, out, step) -> None:
    """:func:`_sse_expanded` with the dimension as a literal for d = 1..10 (see there), and
    :func:`.wide.sse_expanded_wide` beyond (the same bits)."""
    if X.shape[1] in LITERAL_DIMS:
        _kernels_for(X.shape[1])[1](X, w, Ct, out, step)
    else:
        sse_expanded_wide(X, w, Ct, out, step)


@njit(parallel=True, cache=True)
def _sse(X, w, Ct, out, D):
    """Weighted sum of squared distances to the nearest centroid, per run.

    IN  X   (N, D) float64, w (N,) float64, Ct (k, D, R) float64 (as above)
    OUT out (R,) float64   Σ_x w_x min_j ||x - o^j||²   (N·NICV when w = 1)
    IN  D   int, the dimension; a compile-time literal for d ≤ 10 (see :func:`sse_batched`)

    Each squared distance is summed over coordinates in order from 0.0 in a register, so
    the result does not depend on D being literal. Lanes past R in the last chunk see
    zero centroids and are discarded.
    """
    N = X.shape[0]
    k = Ct.shape[0]
    R = Ct.shape[2]
    nchunks = (R + SSE_CHUNK - 1) // SSE_CHUNK
    for c in prange(nchunks):
        r0 = c * SSE_CHUNK
        B = min(R, r0 + SSE_CHUNK) - r0
        cc = lane_table(Ct, r0, B, SSE_CHUNK)
        xs = np.empty(D)
        bd = np.empty(SSE_CHUNK)
        acc = np.zeros(SSE_CHUNK)
        for n in range(N):
            for i in range(D):
                xs[i] = X[n, i]
            for b in range(SSE_CHUNK):
                bd[b] = np.inf
            for j in range(k):
                for b in range(SSE_CHUNK):
                    t = 0.0
                    for i in range(D):
                        diff = xs[i] - cc[j, i, b]
                        t += diff * diff
                    bd[b] = t if t < bd[b] else bd[b]
            wn = w[n]
            for b in range(SSE_CHUNK):
                acc[b] += wn * bd[b]
        for b in range(B):
            out[r0 + b] = acc[b]


@njit(cache=True)
def _sse_expanded(X, w, Ct, out, D, step):
    """:func:`_sse` in the expanded form ``||x||² + min_j (||o^j||² − 2 x·o^j)``, each point's
    term floored at 0: one multiply-add per coordinate instead of a subtract and a
    multiply-add, 1.3-1.4x faster on PGkM's pool (``scripts/bench_algorithms.py``).

    Each point's weighted term is rounded to a whole number of ``step`` (a power of two)
    and the terms are summed as int64, exactly and in any order; ``out`` is that sum
    times ``step``. So one more record moves ``out`` by its own rounded term and one final
    rounding, whatever the others are (the exponential mechanism's floating-point
    allowance, docs/privacy.md). The int64 sum holds N·max term/step < 2^63.

    It differs from :func:`_sse` only by rounding (the step, and cancellation when x is
    near a centroid), so it is for PGkM's fitness, never for reported NICV. Serial: the
    harness runs one numba thread per cell. IN/OUT and the lane layout as :func:`_sse`.
    """
    N = X.shape[0]
    k = Ct.shape[0]
    R = Ct.shape[2]
    nchunks = (R + SSE_CHUNK - 1) // SSE_CHUNK
    for c in range(nchunks):
        r0 = c * SSE_CHUNK
        B = min(R, r0 + SSE_CHUNK) - r0
        cm, cn = expanded_tables(Ct, r0, B, D, SSE_CHUNK, np.float64)
        xs = np.empty(D)
        bd = np.empty(SSE_CHUNK)
        acc = np.zeros(SSE_CHUNK, np.int64)
        per_step = 1.0 / step
        for n in range(N):
            xx = 0.0
            for i in range(D):
                xs[i] = X[n, i]
                xx += xs[i] * xs[i]
            for b in range(SSE_CHUNK):
                bd[b] = np.inf
            for j in range(k):
                for b in range(SSE_CHUNK):
                    t = cn[j, b]
                    for i in range(D):
                        t += xs[i] * cm[j, i, b]
                    bd[b] = t if t < bd[b] else bd[b]
            wn = w[n]
            for b in range(SSE_CHUNK):
                v = xx + bd[b]
                acc[b] += np.int64(np.floor(wn * (v if v > 0.0 else 0.0) * per_step + 0.5))
        for b in range(B):
            out[r0 + b] = acc[b] * step


@njit(cache=True)
def assign_labels(X, C, labels):
    """Nearest-centroid label of every point for one centroid set.

    IN  X (N, d) float64, C (k, d) float64;  OUT labels (N,) int64 (lowest index on ties)
    """
    N, d = X.shape
    k = C.shape[0]
    for n in range(N):
        best = np.inf
        bj = 0
        for j in range(k):
            s = 0.0
            for i in range(d):
                diff = X[n, i] - C[j, i]
                s += diff * diff
            if s < best:
                best = s
                bj = j
        labels[n] = bj
