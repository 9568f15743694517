"""Run-batched Lloyd statistics from generated straight-line code: the kernel of the
figures' DPLloyd cells (thousands of runs on one dataset).

:func:`~dpcluster.kernels.assign._accumulate` loops over centroids and coordinates around
its loop over the lanes (runs), so each lane's best distance, label, count and sums live in
arrays and every point costs a store per centroid per lane vector. Here, for one (k, d, U),
the centroid loop, the coordinate loop and U consecutive points are written out as
straight-line code inside two loops over the 64 lanes of a chunk of runs:

1. **Search, in float32 with a certificate.** The expanded-form distance
   ``||o^j||² − 2 x·o^j`` of each point to each centroid is built with fused multiply-adds
   in single precision, 16 lanes per AVX-512 vector. Beside the best distance, each lane
   keeps the second best. Where their gap exceeds :func:`tolerance` (a bound on how far
   a float32 distance can be from the float64 one of the loop kernel, doubled) the float32
   winner is provably the float64 winner; the few other (point, run) pairs, exact ties
   among them, are searched again in float64 exactly as the loop kernel does
   (:func:`_exact_labels`). The labels are therefore the loop kernel's, bit for bit.
2. **Accumulation, in float64.** Each cluster's count and coordinate sums add the step's
   points of that cluster in point order (a masked add per accumulator, loaded and stored
   once per U points). Every other accumulator is added with a fused multiply-add by a
   run-time 1.0: the same rounding as an add (x·1 is exact), but it runs on the CPU's
   multiply-add ports, which the adds would otherwise leave idle.

So counts and sums are bit-identical to ``_accumulate`` (tested), which adds the same
values in the same order. Where ``_accumulate`` adds ``0·x`` for a point of another
cluster, this kernel keeps the sum as it is: the same value, because a sum that starts at
+0.0 is never −0.0.

The source is generated and cached by :mod:`.codegen`. A first compilation takes 2-10 s,
which is why :func:`unroll_points` limits k·d and the dispatcher in :mod:`.assign` uses
this kernel only for batches of many runs, and only for shapes that pay the compilation
back (:func:`.dispatch.wanted`). Runs are split across threads by chunk of 64,
so results do not depend on the thread count.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit

from . import codegen
from .config import RUN_CHUNK as LANES
from .config import UNROLLED_MAX_KD as MAX_KD
from .config import UNROLLED_MAX_SCALE as MAX_SCALE

#: float32 unit roundoff 2⁻²⁴
_U32 = float(np.finfo(np.float32).eps) / 2


def unroll_points(k: int, d: int) -> int:
    """Points per step U of the generated kernel for k centroids in d dimensions, or 0 when
    there is none (k·d > ``MAX_KD``: the loop kernel of :mod:`.assign` serves those).
    U = 4 while the step's U·d broadcast coordinates fit the 32 vector registers with the
    centroid values (d ≤ 6, k·d ≤ 32), else 2 (measured: ``scripts/bench_lloyd.py``)."""
    kd = k * d
    if kd > MAX_KD:
        return 0
    return 4 if d <= 6 and kd <= 32 else 2


def scale(X, Ct) -> float:
    """A = max_j ||o^j||² + Σ_i max|x_i| · max_j |2 o^j_i| over the data X (N, d) and all
    runs of Ct (k, d, R): a bound on ``|cn| + Σ_i |x_i cm_i|`` for every point, centroid
    and run, the magnitude the rounding errors of the expanded distance scale with."""
    cn = np.einsum("jir,jir->jr", Ct, Ct).max(initial=0.0)
    cm = 2.0 * np.abs(Ct).max(axis=(0, 2), initial=0.0)
    if len(X) == 0:
        return float(cn)
    mx = np.maximum(X.max(axis=0), -X.min(axis=0))  # max |x_i| without a copy of X
    return float(cn + mx @ cm)


def tolerance(d: int, A: float) -> float:
    """The gap below which a float32 search result is re-checked in float64.

    The loop kernel computes ``E = cn + Σ_i x_i·cm_i`` in float64; the float32 search
    rounds x, cm and cn to float32 (3 roundings) and sums d + 1 terms with d fused
    multiply-adds (or 2d roundings without the JIT). With u = 2⁻²⁴ and ``A`` from
    :func:`scale`, each float32 value is within (2d + 3)·u·A of the exact sum of the
    float64 inputs, and the float64 value within (d + 2)·2⁻⁵³·A < u·A of it, so within
    δ = (2d + 4)·u·A of each other. A float32 gap above 2δ keeps the winner; the
    tolerance is 4δ (twice that, which also covers rounding the gap and the tolerance),
    plus 1e-30 for results in float32's subnormal range.
    """
    return 4.0 * (2 * d + 4) * _U32 * A + 1e-30


def source(k: int, d: int, U: int) -> str:
    """Python source of the kernel for k centroids, d coordinates and U points per step.

    ``kernel(X, X32, w, Ct, counts, sums, c0, c1, tol, one)`` fills chunks c0..c1-1
    (runs 64·c0 ..) of counts (k, R) and sums (k, d, R) from X (N, d), its float32 copy
    X32, weights w (N,) and centroids Ct (k, d, R), exactly as
    :func:`~dpcluster.kernels.assign._accumulate` does; ``tol`` is :func:`tolerance`,
    ``one`` is 1.0 (an argument, so the compiler cannot turn ``fma(x, one, s)`` into an add).
    """
    out = [
        f"# generated by dpcluster.kernels.unrolled: k={k}, d={d}, U={U}. Do not edit.",
        "import numpy as np",
        "from numba import njit",
        "from dpcluster.kernels.tables import expanded_tables",
        "from dpcluster.kernels.intrinsics import bitor, fma, select",
        "from dpcluster.kernels.unrolled import _exact_labels, _tail",
        "",
        "",
        "@njit(cache=True, nogil=True)",
        "def kernel(X, X32, w, Ct, counts, sums, c0, c1, tol, one):",
        "    N = X.shape[0]",
        "    R = Ct.shape[2]",
        "    tol = np.float32(tol)",
        f"    lab = np.empty(({U}, {LANES}), np.float32)",
        "    for c in range(c0, c1):",
        f"        r0 = c * {LANES}",
        f"        B = min(R, r0 + {LANES}) - r0",
        f"        cm, cn = expanded_tables(Ct, r0, B, {d}, {LANES}, np.float64)",
        "        cm32 = cm.astype(np.float32)",
        "        cn32 = cn.astype(np.float32)",
        f"        for j in range({k}):",  # unused lanes: distances 0, 1, 2, ... (no ties)
        f"            for b in range(B, {LANES}):",
        "                cn32[j, b] = np.float32(j)",
        f"        cnt = np.zeros(({k}, {LANES}))",
        f"        sm = np.zeros(({k}, {d}, {LANES}))",
        "        n = 0",
    ]
    out += _steps(k, d, U)
    out.append("        _tail(X, w, n, cm, cn, B, cnt, sm)  # the last N mod U points")
    out += [
        f"        for j in range({k}):",
        "            for b in range(B):",
        "                counts[j, r0 + b] = cnt[j, b]",
        f"                for i in range({d}):",
        "                    sums[j, i, r0 + b] = sm[j, i, b]",
        "",
    ]
    return "\n".join(out)


def _steps(k: int, d: int, U: int) -> list[str]:
    """While U points remain, one step of U points at ``n`` in all 64 lanes: the float32
    search with its certificate, the float64 re-check, then the accumulation."""
    pad = " " * 16
    f32 = "np.float32"
    lines = [f"        while n + {U} <= N:"]
    for u in range(U):
        lines += [f"            y{u}_{i} = X32[n + {u}, {i}]" for i in range(d)]
    lines += ["            near = np.int32(0)", f"            for b in range({LANES}):"]
    for u in range(U):
        lines += [f"{pad}bd{u} = {f32}(np.inf)", f"{pad}sb{u} = {f32}(np.inf)"]
        lines.append(f"{pad}bi{u} = {f32}(0.0)")
    for j in range(k):  # fold centroid j into each point's best and second best
        lines += [f"{pad}c{i} = cm32[{j}, {i}, b]" for i in range(d)]
        lines.append(f"{pad}cj = cn32[{j}, b]")
        for u in range(U):
            terms = [(f"y{u}_{i}", f"c{i}") for i in range(d)]
            lines += codegen.certified_step(pad, j, "cj", terms, f"bd{u}", f"sb{u}", f"bi{u}")
    for u in range(U):  # label −1: not certified (a NaN gap neither), search again in float64
        lines += [
            f"{pad}g = sb{u} - bd{u} > tol",
            f"{pad}lab[{u}, b] = select(g, bi{u}, {f32}(-1.0))",
            f"{pad}near = bitor(near, select(g, np.int32(0), np.int32(1)))",
        ]
    lines += ["            if near:", f"                _exact_labels(X, n, {U}, cm, cn, B, lab)"]
    for u in range(U):
        lines.append(f"            w{u} = w[n + {u}]")
        lines += [f"            wx{u}_{i} = w{u} * X[n + {u}, {i}]" for i in range(d)]
    lines.append(f"            for b in range({LANES}):")
    lines += [f"{pad}l{u} = lab[{u}, b]" for u in range(U)]
    for j in range(k):  # each accumulator adds the step's points of its cluster in order
        lines += [f"{pad}m{u} = l{u} == {f32}({float(j)})" for u in range(U)]
        targets = [(f"cnt[{j}, b]", "w{u}")]
        targets += [(f"sm[{j}, {i}, b]", f"wx{{u}}_{i}") for i in range(d)]
        for a, (target, value) in enumerate(targets):
            lines.append(f"{pad}s = {target}")
            for u in range(U):
                v = value.format(u=u)
                add = f"fma({v}, one, s)" if a % 2 else f"s + {v}"
                lines.append(f"{pad}s = select(m{u}, {add}, s)")
            lines.append(f"{pad}{target} = s")
    lines.append(f"            n += {U}")
    return lines


@njit(cache=True, nogil=True)
def _exact_labels(X, n, U, cm, cn, B, lab):
    """For points n..n+U-1 and lanes b < B whose ``lab[u, b]`` is −1 (not certified), the
    nearest centroid as :func:`~dpcluster.kernels.assign._accumulate` finds it."""
    for u in range(U):
        for b in range(B):
            if lab[u, b] < 0:
                lab[u, b] = _exact_label(X, n + u, cm, cn, b)


@njit(cache=True, nogil=True, inline="always")
def _exact_label(X, p, cm, cn, b):
    """Point p's nearest centroid in lane b: float64 ``cn[j, b] + Σ_i x_i cm[j, i, b]``
    summed in order of i, ties to the lowest index (as the loop kernel)."""
    best = np.inf
    label = 0
    for j in range(cm.shape[0]):
        acc = cn[j, b]
        for i in range(cm.shape[1]):
            acc += X[p, i] * cm[j, i, b]
        if acc < best:
            best = acc
            label = j
    return label


@njit(cache=True, nogil=True, inline="always")
def _tail(X, w, n, cm, cn, B, cnt, sm):
    """Points n..N-1 (fewer than U), searched and added in float64 exactly as the loop
    kernel does, after all earlier points: a second generated path for them would double
    the compilation time."""
    for p in range(n, X.shape[0]):
        for b in range(B):
            j = _exact_label(X, p, cm, cn, b)
            cnt[j, b] += w[p]
            for i in range(cm.shape[1]):
                sm[j, i, b] += w[p] * X[p, i]


@functools.cache
def compiled(k: int, d: int, U: int):
    """The njit kernel of :func:`source` (k, d, U), imported from its cached file."""
    return codegen.load(*_named_source(k, d, U)).kernel


@functools.cache
def _named_source(k: int, d: int, U: int) -> tuple[str, str]:
    return source(k, d, U), f"dpcluster_lloyd_k{k}_d{d}_u{U}"


def accumulate_unrolled(X, w, Ct, counts, sums) -> bool:
    """:func:`~dpcluster.kernels.assign._accumulate` (float64 comparisons; same arguments
    and bits) through the generated kernel for Ct's (k, d); chunks of 64 runs are split
    over ``numba.get_num_threads()`` threads. Requires ``unroll_points(k, d) > 0``.
    Returns False, having done nothing, when the float32 search cannot certify its labels
    (non-finite values, or :func:`scale` above ``MAX_SCALE``): the loop kernel is for those."""
    k, d, R = Ct.shape
    U = unroll_points(k, d)
    if not U:
        raise ValueError(f"no generated kernel for k={k}, d={d} (k·d > {MAX_KD})")
    A = scale(X, Ct)
    if not (np.isfinite(A) and A <= MAX_SCALE):
        return False
    tol = tolerance(d, A)
    X32 = X.astype(np.float32)
    kernel = compiled(k, d, U)
    chunks = -(-R // LANES)
    threads = max(1, min(chunks, numba.get_num_threads()))
    bounds = [chunks * t // threads for t in range(threads + 1)]

    def part(t):
        kernel(X, X32, w, Ct, counts, sums, bounds[t], bounds[t + 1], tol, 1.0)

    if threads == 1:
        part(0)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(part, range(threads)))
    return True


def mark_compiled(k: int, d: int) -> None:
    """Leave the mark in the kernel cache that (k, d)'s generated kernel compiled here."""
    codegen.mark_compiled(*_named_source(k, d, unroll_points(k, d)))


def compiled_before(k: int, d: int) -> bool:
    """Whether this machine compiled (k, d)'s generated kernel before (its mark)."""
    return codegen.compiled_before(*_named_source(k, d, unroll_points(k, d)))
