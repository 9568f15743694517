#!/usr/bin/env python
"""How far a reordered grid kernel would move EUGkM's results: its weighted Lloyd on
Figure 2's noisy synopses, once as dpcluster runs it and once with every count and sum
multiplied by 1 ± 2⁻⁵² (a random sign per value) at every iteration, which is what a
different summation order does to them. Labels depend on the centres only through float32
distances, so if no label flips the two runs end within rounding of each other.

Each row: one synopsis of ``synthetic(N=10000, k, d)`` at ε = 1 (noisy counts on the
``m^d`` grid of θ), 30 uniform initial sets, 100 iterations; the columns give how many of
the 30 runs stopped early, how many of the reordered runs ended more than 1e-12 apart and
their largest coordinate difference, and how many of the float64 runs ended apart.

    python scripts/perturb_grid_lloyd.py [--shapes 9:10:2,7:5:2,5:8:5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcluster.algorithms.eugkm import cells_per_axis  # noqa: E402
from dpcluster.algorithms.lloyd import lloyd_iterate  # noqa: E402
from dpcluster.data.generators import synthetic  # noqa: E402
from dpcluster.kernels import grid_histogram, grid_moments  # noqa: E402

ULP = 2.0**-52


def compare(d: int, k: int, theta: float, seed: int = 1) -> tuple[int, int, int, float, int]:
    """(m, runs stopped before 100 iterations, reordered runs apart by > 1e-12, their
    largest difference, float64-distance runs apart by > 1e-12)."""
    X = synthetic(10_000, k, d, 0).X
    m = cells_per_axis(len(X), 1.0, d, theta)
    rng = np.random.default_rng(seed)
    w = grid_histogram(X, m, 1.0) + rng.laplace(0.0, 1.0, m**d)
    inits = rng.uniform(-1.0, 1.0, (30, k, d))

    def exact(C):
        return grid_moments(w, m, C, 1.0, "float32")

    signs = np.random.default_rng(seed + 1)

    def reordered(C):
        W, S = exact(C)
        return (
            W * (1.0 + signs.choice([-1.0, 1.0], W.shape) * ULP),
            S * (1.0 + signs.choice([-1.0, 1.0], S.shape) * ULP),
        )

    A, iters = lloyd_iterate(exact, inits, 100, 1e-9)
    B, _ = lloyd_iterate(reordered, inits, 100, 1e-9)
    D, _ = lloyd_iterate(lambda C: grid_moments(w, m, C, 1.0, "float64"), inits, 100, 1e-9)
    gap = np.abs(A - B).max(axis=(1, 2))
    apart64 = int((np.abs(A - D).max(axis=(1, 2)) > 1e-12).sum())
    return m, int((iters < 100).sum()), int((gap > 1e-12).sum()), float(gap.max()), apart64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="9:10:2,7:5:2,5:8:5", help="d:k:theta,...")
    args = parser.parse_args()
    print("| d | k | θ | m | converged | reordered: apart | largest difference | float64: apart |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in args.shapes.split(","):
        d, k, theta = shape.split(":")
        m, done, apart, gap, apart64 = compare(int(d), int(k), float(theta))
        print(
            f"| {d} | {k} | {theta} | {m} | {done} of 30 | {apart} of 30 | {gap:.1e} "
            f"| {apart64} of 30 |"
        )


if __name__ == "__main__":
    main()
