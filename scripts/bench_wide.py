#!/usr/bin/env python
"""Benchmark: the run-batched Lloyd kernels on wide data (d > 10; docs/performance.md).

For each shape (N records, d, k, R runs), times one pass of
  * the generic-d loop kernel (``assign._accumulate`` with d not a literal), the
    reference, and the wide kernel (``wide.accumulate_wide``), which gives its bits;
  * the SSE: the generic-d ``assign._sse`` against ``wide.sse_wide``, and PGkM's
    expanded SSE, ``assign._sse_expanded`` against ``wide.sse_expanded_wide``;
and prints seconds (best of ``--repeat``), the ratios reference / wide, and the wide
kernel's share of the FLOP bound: 2·N·k·d·R flops at the rate of a (N, d) × (d, k·R)
matrix product timed in the same run. Run with one thread so the ratios compare kernels,
not thread counts:

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/bench_wide.py [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_algorithms import _best_of as best  # the same best-of-n timing

from dpcluster.kernels import assign, wide

SHAPES = [  # (N, d, k, R)
    (5_000, 16, 5, 64),
    (2_000, 64, 10, 64),
    (2_000, 784, 10, 64),
    (500, 5_000, 3, 64),
    (300, 20_000, 3, 4),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    narrow = assign._accumulator(0, np.float64, False)
    print(
        "| N | d | k | R | loop s | wide s | loop / wide | SSE loop s | SSE wide s "
        "| loop / wide | PGkM SSE loop / wide | wide % of FLOP bound |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for N, d, k, R in SHAPES:
        X = rng.uniform(-1, 1, (N, d))
        w = np.ones(N)
        Ct = np.ascontiguousarray(rng.uniform(-1, 1, (k, d, R)))
        counts, sums, out = np.empty((k, R)), np.empty((k, d, R)), np.empty(R)
        calls = {
            "loop": lambda: narrow(X, w, Ct, counts, sums),
            "wide": lambda: wide.accumulate_wide(X, w, Ct, counts, sums, np.float64),
            "sse_loop": lambda: assign._sse_any_d(X, w, Ct, out),
            "sse_wide": lambda: wide.sse_wide(X, w, Ct, out),
            "exp_loop": lambda: assign._sse_expanded_any_d(X, w, Ct, out, 2.0**-40),
            "exp_wide": lambda: wide.sse_expanded_wide(X, w, Ct, out, 2.0**-40),
        }
        for fn in calls.values():  # compile and warm up
            fn()
        t = {name: best(fn, args.repeat) for name, fn in calls.items()}
        A, B = rng.uniform(size=(N, d)), rng.uniform(size=(d, k * R))
        gemm = best(lambda: A @ B, args.repeat)  # noqa: B023 (timed here, in this loop)
        bound = gemm  # the same 2·N·d·k·R flops at the matmul rate
        print(
            f"| {N:,} | {d:,} | {k} | {R} | {t['loop']:.4f} | {t['wide']:.4f} "
            f"| {t['loop'] / t['wide']:.1f} | {t['sse_loop']:.4f} | {t['sse_wide']:.4f} "
            f"| {t['sse_loop'] / t['sse_wide']:.1f} | {t['exp_loop'] / t['exp_wide']:.1f} "
            f"| {100 * bound / t['wide']:.0f} % |"
        )


if __name__ == "__main__":
    main()
