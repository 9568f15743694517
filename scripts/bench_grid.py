#!/usr/bin/env python
"""Benchmark: grid Lloyd's kernel against its previous centroid loop, in the same process.

The reference is the grid kernel with the centroid loop unrolled inside the lane loop at
every k (what ran before ``GRID_UNROLL_MAX_K``); the current kernel moves it outside past
that k. Both give the same bits (``tests/test_kernels.py``), so only the time differs.
Each row is the best of ``--repeats`` timings; the ratio is reference / current.

    python scripts/bench_grid.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcluster import DPKMeans  # noqa: E402
from dpcluster.algorithms.methods import fit_eugkm  # noqa: E402
from dpcluster.kernels import grid, grid_moments  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sampler import best  # noqa: E402  (best of n timings, as every bench here)


@contextlib.contextmanager
def unrolled_everywhere():
    """The kernel as it was: the centroid loop inside the lane loop at every k."""
    current = grid._specialise
    grid._specialise = lambda K, float32: current(K, float32, False)
    try:
        yield
    finally:
        grid._specialise = current


def blobs(n: int, d: int, k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.8, 0.8, (k, d))
    return np.clip(centres[rng.integers(0, k, n)] + rng.normal(0, 0.02, (n, d)), -1, 1)


def workloads():
    rng = np.random.default_rng(0)
    m9 = 5  # Figure 2, theta = 2, d = 9: 5^9 = 1.95 million cells, 30 init sets
    w9 = rng.laplace(size=m9**9)
    C9 = rng.uniform(-1, 1, (30, 8, 9))
    yield (
        "Figure-2 EUGkM pass (5^9 cells, k=8, 30 sets)",
        lambda: grid_moments(w9, m9, C9, distances="float32"),
    )
    for k, m in [(32, 200), (100, 200)]:
        w = rng.laplace(size=m * m)
        C = rng.uniform(-1, 1, (30, k, 2))
        yield (
            f"grid pass ({m}^2 cells, k={k}, 30 sets)",
            lambda w=w, m=m, C=C: grid_moments(w, m, C, distances="float32"),
        )
    X = blobs(100_000, 2, 100)
    box = (np.full(2, -1.0), np.full(2, 1.0))
    for eps in (1.0, 2.0):
        yield (
            f"hybrid fit, 10^5 x 2, k=100, eps={eps:g}",
            lambda eps=eps: DPKMeans(
                100, epsilon=eps, method="hybrid", bounds=box, random_state=0
            ).fit(X),
        )
    big = blobs(10_000_000, 2, 10)
    yield (
        "EUGkM fit, 10^7 x 2, k=10",
        lambda: fit_eugkm(big, 10, 1.0, np.random.default_rng(1), n=float(len(big))),
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"| workload | unrolled s | current s | ratio (best of {args.repeats}) |")
    print("|---|---|---|---|")
    for name, fn in workloads():
        fn()  # compile both before timing
        with unrolled_everywhere():
            fn()
            ref = best(fn, args.repeats)
        now = best(fn, args.repeats)
        print(f"| {name} | {ref:.3f} | {now:.3f} | {ref / now:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
