#!/usr/bin/env python
"""Benchmark: grid Lloyd as dispatched (the pruned search or the block kernel where they
pay) against the row kernel alone, in the same process.

The reference sends every shape to the lane-vectorised row kernel of ``kernels/grid.py``
(``pruned_pays`` and ``blocks_pay`` always false); the current run lets
``dpcluster.kernels.api`` choose. The pruned search gives the same bits
(``tests/test_pruned.py``), the block kernel the same labels, counts and SSE with sums
that differ by rounding (``tests/test_grid_blocks.py``). Each row is the best of
``--repeats`` timings; the ratio is reference / current.

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
from dpcluster.kernels import api, grid_moments  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sampler import best  # noqa: E402  (best of n timings, as every bench here)


@contextlib.contextmanager
def brute_force_everywhere():
    """Every grid pass through the row kernel's brute-force search."""
    current = api.pruned_pays, api.blocks_pay
    api.pruned_pays = api.blocks_pay = lambda m, d, k: False
    try:
        yield
    finally:
        api.pruned_pays, api.blocks_pay = current


def blobs(n: int, d: int, k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.8, 0.8, (k, d))
    return np.clip(centres[rng.integers(0, k, n)] + rng.normal(0, 0.02, (n, d)), -1, 1)


def birch1(battery: Path | None) -> np.ndarray | None:
    """The real 2-D set of issue 52 (100,000 records, k = 100), if the battery is given."""
    path = None if battery is None else battery / "sipu" / "birch1.data.gz"
    return None if path is None or not path.exists() else np.loadtxt(path)


def workloads(battery: Path | None = None):
    rng = np.random.default_rng(0)
    m9 = 5  # Figure 2, theta = 2, d = 9: 5^9 = 1.95 million cells, 30 init sets
    w9 = rng.laplace(size=m9**9)
    C9 = rng.uniform(-1, 1, (30, 8, 9))
    yield (
        "Figure-2 EUGkM pass (5^9 cells, k=8, 30 sets)",
        lambda: grid_moments(w9, m9, C9, distances="float32"),
    )
    for d, m, k in [(10, 4, 10), (7, 7, 7), (6, 8, 6), (5, 11, 5)]:  # Figure 2's other grids
        w = rng.laplace(size=m**d)
        C = rng.uniform(-1, 1, (30, k, d))
        yield (
            f"Figure-2 EUGkM pass ({m}^{d} cells, k={k}, 30 sets)",
            lambda w=w, m=m, C=C: grid_moments(w, m, C, distances="float32"),
        )
    w1 = rng.laplace(size=464)
    C1 = rng.uniform(-1, 1, (30, 32, 1))
    yield (
        "1-D grid pass (464 cells, k=32, 30 sets)",
        lambda: grid_moments(w1, 464, C1, distances="float32"),
    )
    for k, m in [(32, 200), (100, 200), (100, 1000)]:
        w = rng.laplace(size=m * m)
        C = rng.uniform(-1, 1, (30, k, 2))
        yield (
            f"grid pass ({m}^2 cells, k={k}, 30 sets)",
            lambda w=w, m=m, C=C: grid_moments(w, m, C, distances="float32"),
        )
    real = birch1(battery)
    for eps in (1.0, 2.0) if real is not None else ():
        yield (
            f"DPKMeans fit, birch1 (10^5 x 2), k=100, eps={eps:g}",
            lambda eps=eps: DPKMeans(100, epsilon=eps, random_state=0).fit(real),
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
    ap.add_argument(
        "--battery", type=Path, help="clustering-data-v1 folder: adds birch1 (sipu/birch1)"
    )
    args = ap.parse_args(argv)
    print(f"| workload | row kernel s | current s | ratio (best of {args.repeats}) |")
    print("|---|---|---|---|")
    for name, fn in workloads(args.battery):
        fn()  # compile both before timing
        with brute_force_everywhere():
            fn()
            ref = best(fn, args.repeats)
        now = best(fn, args.repeats)
        print(f"| {name} | {ref:.3f} | {now:.3f} | {ref / now:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
