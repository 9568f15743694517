#!/usr/bin/env python
"""Benchmark: one Figure-1 DPLloyd cell (3,000 runs x 5 iterations) on the paper's shapes.

For each shape it prints, side by side in the same process:
  * dpcluster: ``dplloyd_batch`` (batched numba kernel, noise and ledger included);
  * numpy:     a plain NumPy DPLloyd loop, one run at a time (measured on --ref-runs runs,
               scaled to 3,000);
  * sklearn:   ``KMeans(max_iter=5, n_init=1, init=given)`` per run (same scaling);
  * roofline:  15,000 x max(3 N k d / matmul FLOP/s, 8 N d / read bandwidth), both measured
               here, and the fraction of it dpcluster reaches. The bandwidth term assumes
               every run streams the data; the batched kernel reads it once per 32 runs, so
               it can beat that term (fraction > 100%). The compute-only bound
               15,000 x 3 N k d / FLOP/s is printed too, as the harder target.
Output is a Markdown table of seconds per cell and ratios.

``--workload`` instead times the whole Figure-1 DPLloyd workload of configs/fig1.yaml (every
dataset x every epsilon, 30 initial sets x 100 runs, 5 iterations each), once with today's
kernels and once with the reference scatter kernel, interleaved cell by cell, and stops if
the two give different centroids in any cell (they must agree bit for bit).
The machine line names the CPU numba compiles for and its widest vectors; to measure the
AVX2 code on a machine that also has AVX-512, target an AVX2 CPU, and ask OpenBLAS (the
DGEMM reference) for its AVX2 kernels too.
Usage:
    python scripts/bench_lloyd.py [--ref-runs 100] [--shapes s1,adult,lifesci,gowalla-synth]
    python scripts/bench_lloyd.py --workload
    NUMBA_CPU_NAME=znver2 OPENBLAS_CORETYPE=Zen DPCLUSTER_CACHE=/tmp/avx2 \
        python scripts/bench_lloyd.py --workload
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import yaml

from dpcluster import data
from dpcluster.algorithms import dplloyd_batch
from dpcluster.algorithms.dplloyd import distinct_cluster_stats
from dpcluster.kernels import cluster_stats

RUNS, ITERS = 3000, 5

# time the generated kernels themselves: with "auto" a shape met once might stay on the
# loop kernel (dpcluster/kernels/unrolled.py, wanted)
os.environ.setdefault("DPCLUSTER_GENERATED", "always")


def shapes():
    return {
        "s1": ("S1 N=5,000 d=2 k=15", lambda: (data.load("s1").X, 15)),
        "adult": ("Adult N=48,842 d=6 k=5", lambda: (data.load("adult").X, 5)),
        "lifesci": ("Lifesci N=26,733 d=10 k=3", lambda: (data.load("lifesci").X, 3)),
        "gowalla-synth": (
            "synthetic N=107,091 d=2 k=5",
            lambda: (data.load("synthetic", N=107_091, k=5, d=2).X, 5),
        ),
    }


def machine_roofline() -> tuple[float, float]:
    """(matmul FLOP/s, read bytes/s), best of a few repetitions."""
    a = np.random.default_rng(0).standard_normal((2048, 2048))
    a @ a
    best = min(_timed(lambda: a @ a) for _ in range(3))
    flops = 2 * 2048**3 / best
    big = np.ones(50_000_000)
    big.sum()
    best = min(_timed(big.sum) for _ in range(3))
    return flops, big.nbytes / best


def vector_isa() -> str:
    """What numba compiles the kernels for: its target CPU and widest vector extension
    (``NUMBA_CPU_NAME=znver2`` targets AVX2 on any x86-64 machine that has it)."""
    import llvmlite.binding as llvm
    from numba.core import config

    name = config.CPU_NAME or llvm.get_host_cpu_name()
    features = config.CPU_FEATURES or llvm.get_host_cpu_features().flatten()
    if config.CPU_NAME and not config.CPU_FEATURES:
        return f"target {name} (that CPU's features)"
    isa = "AVX-512" if "+avx512f" in features else "AVX2" if "+avx2" in features else "SSE"
    return f"target {name}, {isa}"


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def numpy_dplloyd(X, init, eps, rng, t=ITERS):
    """Straightforward NumPy DPLloyd (A1), one run; the naive reference."""
    C = init.copy()
    k, d = C.shape
    b = t * (d + 1) / eps
    for _ in range(t):
        lab = ((X[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)
        cnt = np.bincount(lab, minlength=k) + rng.laplace(0, b, k)
        sums = np.stack([np.bincount(lab, X[:, i], minlength=k) for i in range(d)], 1)
        sums = sums + rng.laplace(0, b, (k, d))
        ok = cnt > 0
        C[ok] = np.clip(sums[ok] / cnt[ok, None], -1, 1)
    return C


def reference_stats(X, C):
    """The reference kernel (per-run scatter, one loop over centroids per lane block) with
    the same sharing of identical centroid sets as today's default."""
    R = C.shape[0]
    distinct, which = np.unique(C.reshape(R, -1), axis=0, return_inverse=True)
    counts, sums = cluster_stats(X, distinct.reshape(-1, *C.shape[1:]), masked=False)
    which = which.reshape(-1)
    return counts[which], sums[which]


def workload() -> None:
    """Figure 1's DPLloyd cells: today's kernels against the reference, cell by cell."""
    spec = yaml.safe_load(
        open(os.path.join(os.path.dirname(__file__), "..", "configs", "fig1.yaml"))
    )
    sets, runs_per_set = spec["init"]["sets"], 100
    flops, _ = machine_roofline()
    print(
        f"machine: {os.cpu_count()} cores; matmul {flops / 1e9:.1f} GFLOP/s; "
        f"kernels: {vector_isa()}\n"
    )
    print(
        "| dataset | N | d | k | cells | dpcluster s | reference s | speed-up "
        "| FLOP bound s | % of it |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    total = {"ours": 0.0, "ref": 0.0, "cells": 0, "bound": 0.0}
    for entry in spec["datasets"]:
        ds = data.load(entry["name"])
        X, k = ds.X, ds.k
        N, d = X.shape
        rng = np.random.default_rng(7)
        inits = np.repeat(rng.uniform(-1, 1, (sets, k, d)), runs_per_set, axis=0)

        def streams(R=len(inits)):
            return [
                {"count": np.random.default_rng((i, 0)), "sum": np.random.default_rng((i, 1))}
                for i in range(R)
            ]

        for stats in (distinct_cluster_stats, reference_stats):  # compile / load caches
            dplloyd_batch(X, inits[:300], 1.0, streams(300), stats=stats)
        ours = ref = 0.0
        for eps in spec["epsilon"]:
            out = {}
            for name, stats in (("ours", distinct_cluster_stats), ("ref", reference_stats)):
                s = streams()
                t = time.perf_counter()
                out[name] = dplloyd_batch(X, inits, eps, s, stats=stats)[0]
                took = time.perf_counter() - t
                ours, ref = (ours + took, ref) if name == "ours" else (ours, ref + took)
            if not np.array_equal(out["ours"], out["ref"]):
                raise SystemExit(f"{entry['name']} eps={eps}: centroids differ from the reference")
        cells = len(spec["epsilon"])
        # 3·N·k·d flops per run and iteration (distances and accumulation) at matmul speed
        bound = cells * len(inits) * ITERS * 3 * N * k * d / flops
        total["ours"] += ours
        total["ref"] += ref
        total["cells"] += cells
        total["bound"] += bound
        print(
            f"| {entry['name']} | {N:,} | {d} | {k} | {cells} | {ours:.2f} | {ref:.2f} "
            f"| {ref / ours:.2f}x | {bound:.2f} | {bound / ours:.0%} |"
        )
    print(
        f"| **all** | | | | {total['cells']} | **{total['ours']:.1f}** | **{total['ref']:.1f}** "
        f"| **{total['ref'] / total['ours']:.2f}x** | {total['bound']:.1f} "
        f"| {total['bound'] / total['ours']:.0%} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ref-runs", type=int, default=60, help="runs timed for numpy/sklearn")
    ap.add_argument("--shapes", default=",".join(shapes()))
    ap.add_argument("--workload", action="store_true", help="the whole Figure-1 DPLloyd workload")
    args = ap.parse_args()
    if args.workload:
        return workload()
    from sklearn.cluster import KMeans

    flops, bw = machine_roofline()
    print(
        f"machine: {os.cpu_count()} cores; matmul {flops / 1e9:.1f} GFLOP/s; "
        f"read {bw / 1e9:.1f} GB/s; kernels: {vector_isa()}\n"
    )
    print(
        "| shape | dpcluster s/cell | reference kernel s/cell | vs reference | float32 s/cell "
        "| s/iteration/run | numpy s/cell | sklearn s/cell "
        "| vs numpy | vs sklearn | roofline s | % of roofline | compute bound s | % of it |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    table = shapes()
    totals = {"ours": 0.0, "reference": 0.0, "float32": 0.0, "compute": 0.0}
    for key in args.shapes.split(","):
        label, get = table[key]
        X, k = get()
        N, d = X.shape
        rng = np.random.default_rng(1)
        inits = rng.uniform(-1, 1, (RUNS, k, d))
        streams = [
            {"count": np.random.default_rng((i, 0)), "sum": np.random.default_rng((i, 1))}
            for i in range(RUNS)
        ]
        dplloyd_batch(X, inits[:40], 1.0, streams[:40])  # JIT / cache load
        ours = min(_timed(lambda: dplloyd_batch(X, inits, 1.0, streams)) for _ in range(2))
        # the run-batched kernel with per-run scatter accumulation: the kernel before the
        # masked accumulation, timed here as the reference (same numbers, tested)
        ref_stats = lambda X, C: cluster_stats(X, C, masked=False)  # noqa: E731
        ref_stats(X[:100], inits[:64])
        ref = min(
            _timed(lambda: dplloyd_batch(X, inits, 1.0, streams, stats=ref_stats)) for _ in range(2)
        )
        f32_stats = lambda X, C: cluster_stats(X, C, distances="float32")  # noqa: E731
        f32_stats(X[:100], inits[:64])
        f32 = min(
            _timed(lambda: dplloyd_batch(X, inits, 1.0, streams, stats=f32_stats)) for _ in range(2)
        )
        n = args.ref_runs
        naive = _timed(lambda: [numpy_dplloyd(X, inits[i], 1.0, rng) for i in range(n)])
        naive *= RUNS / n

        def sk():
            for i in range(n):
                KMeans(k, init=inits[i], n_init=1, max_iter=ITERS, tol=0.0, algorithm="lloyd").fit(
                    X
                )

        skl = _timed(sk) * RUNS / n
        compute = RUNS * ITERS * 3 * N * k * d / flops
        roof = max(compute, RUNS * ITERS * 8 * N * d / bw)
        for key_, v in (("ours", ours), ("reference", ref), ("float32", f32), ("compute", 0)):
            totals[key_] += v
        totals["compute"] += RUNS * ITERS * 3 * N * k * d / flops
        print(
            f"| {label} | {ours:.3f} | {ref:.3f} | {ref / ours:.2f}x | {f32:.3f} "
            f"| {ours / (RUNS * ITERS):.2e} | {naive:.2f} | {skl:.2f} "
            f"| {naive / ours:.1f}x | {skl / ours:.1f}x | {roof:.3f} | {100 * roof / ours:.0f}% "
            f"| {compute:.3f} | {100 * compute / ours:.0f}% |"
        )
    print(
        f"\nall shapes, one cell each: {totals['ours']:.2f} s against the reference kernel's "
        f"{totals['reference']:.2f} s ({totals['reference'] / totals['ours']:.2f}x); float32 "
        f"search {totals['float32']:.2f} s; compute bound {totals['compute']:.2f} s "
        f"({100 * totals['compute'] / totals['ours']:.0f}% of it reached)"
    )


if __name__ == "__main__":
    main()
