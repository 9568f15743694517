#!/usr/bin/env python
"""Benchmark: one fit on N = 10^5, 10^6 and 10^7 records (docs/performance.md).

For each N, in a fresh interpreter (so peak memory is that fit's own):
  * ``dplloyd``: one DPLloyd run, d = 10, k = 10, 5 iterations, ε = 1 (synthetic uniform
    data in [-1, 1]^10; 800 MB at N = 10^7);
  * ``eugkm``: one EUGkM synopsis, d = 2, k = 10, ε = 1, one init set;
and prints seconds (the best and the median of ``--repeat`` fits on the same data), peak
resident memory over the data's size (the whole process, and what the fits added above
the process with its data loaded), and the roofline, both rates the best of three in the
same run, with the ratios best / roofline and median / roofline:
  * DPLloyd: max(5 passes over the data at the measured read bandwidth, 5·3·N·k·d flops at
    the measured matmul rate);
  * EUGkM: max(one pass over the data at the read bandwidth, (t + 1)·m^d·k·2 flops at the
    matmul rate): an add and a compare per cell and centroid in each of the t Lloyd passes
    and the final SSE pass (the cell centres are never read: they are computed).

    python scripts/bench_scale.py [--sizes 1e5,1e6,1e7] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
import numpy as np
from dpcluster.algorithms.dplloyd import dplloyd
from dpcluster.algorithms.eugkm import eugkm

which, N, repeat = sys.argv[1], int(float(sys.argv[2])), int(sys.argv[3])
d, k = (10, 10) if which == "dplloyd" else (2, 10)
rng = np.random.default_rng(1)
X = np.empty((N, d))
for lo in range(0, N, 1_000_000):  # fill in chunks: no second full-size temporary
    X[lo : lo + 1_000_000] = rng.uniform(-1, 1, (min(1_000_000, N - lo), d))
init = rng.uniform(-1, 1, (k, d))
# compile (or load from numba's cache) first, on an input large enough to take the same
# kernels as the fit (dpcluster.kernels.points.GENERATED_MIN_POINTS): timing is the fit
small = X[:200_000]
if which == "dplloyd":
    dplloyd(small, k, 1.0, init, np.random.default_rng(0))
else:
    eugkm(small, k, 1.0, init[None], np.random.default_rng(0), max_iter=5)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
walls = []
for _ in range(repeat):
    t = time.perf_counter()
    if which == "dplloyd":
        res = dplloyd(X, k, 1.0, init, np.random.default_rng(2))
    else:
        res = eugkm(X, k, 1.0, init[None], np.random.default_rng(2), max_iter=20)
    walls.append(time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"walls": walls, "peak": peak, "before": base, "data": X.nbytes,
                  "passes": int(res.iterations), "cells": int(res.info.get("cells", 0))}))
"""


def roofline() -> tuple[float, float]:
    """(matmul FLOP/s, read bytes/s) measured here, best of three."""
    import numpy as np

    a = np.random.default_rng(0).standard_normal((2048, 2048))
    a @ a
    flops = 2 * 2048**3 / min(_timed(lambda: a @ a) for _ in range(3))
    big = np.ones(50_000_000)
    big.sum()
    return flops, big.nbytes / min(_timed(big.sum) for _ in range(3))


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5,1e6,1e7")
    ap.add_argument("--repeat", type=int, default=3, help="fits per size (best and median)")
    args = ap.parse_args()
    flops, bandwidth = roofline()
    print(f"matmul {flops / 1e9:.1f} GFLOP/s, read bandwidth {bandwidth / 1e9:.1f} GB/s\n")
    print(
        "| fit | N | best s | median s | roofline s | best / roofline | median / roofline "
        "| peak RSS / data | fits' own peak / data |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for which in ("dplloyd", "eugkm"):
        for size in args.sizes.split(","):
            N = int(float(size))
            done = subprocess.run(
                [sys.executable, "-c", CHILD, which, str(N), str(args.repeat)],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(done.stdout.strip().splitlines()[-1])
            d, k = (10, 10) if which == "dplloyd" else (2, 10)
            best, median = min(r["walls"]), statistics.median(r["walls"])
            if which == "dplloyd":
                bound = max(5 * N * d * 8 / bandwidth, 5 * 3 * N * k * d / flops)
            else:  # one read of the data; the Lloyd passes and the final SSE pass over cells
                bound = max(N * d * 8 / bandwidth, (r["passes"] + 1) * r["cells"] * k * 2 / flops)
            ratios = f"{best / bound:.2f} | {median / bound:.2f}"
            bound_s = f"{bound:.3f}"
            print(
                f"| {which} d={d} k={k} | {N:,} | {best:.3f} | {median:.3f} | {bound_s} | "
                f"{ratios} | {r['peak'] / r['data']:.2f} | "
                f"{(r['peak'] - r['before']) / r['data']:.2f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
