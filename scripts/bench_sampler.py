#!/usr/bin/env python
"""Benchmark: the exact lattice Laplace and Gaussian against numpy's floating-point
Laplace and normal, in the same process, on the noise alone and on whole fits.

The reference is the floating-point mechanism, restored here for timing only: noise from
``rng.laplace(0, Δ/ε)`` or ``rng.normal(0, σ)`` added to the raw answer, and records not
put on the lattice. The lattice version is what dpcluster runs (docs/privacy.md, "The
sampler"). Each row is the best of ``--repeats`` timings; the ratio is lattice /
reference (below 2 is the target for whole fits).

    python scripts/bench_sampler.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import importlib  # noqa: E402

from dpcluster import DPKMeans  # noqa: E402
from dpcluster.algorithms import checks  # noqa: E402
from dpcluster.algorithms.dplloyd import dplloyd_batch  # noqa: E402
from dpcluster.privacy import gaussian, mechanisms  # noqa: E402

dplloyd = importlib.import_module("dpcluster.algorithms.dplloyd")


@contextlib.contextmanager
def continuous_laplace():
    """The mechanism as it was: continuous noise on raw answers, raw records."""
    mech, gauss = mechanisms.LaplaceMechanism, gaussian.GaussianMechanism
    saved = (mech.noise, mech.add, gauss.noise, gauss.add)
    saved_snaps = (checks.snap_records, dplloyd.snap_records)
    mech.noise = lambda self, rng, shape: rng.laplace(0.0, self.sensitivity / self.epsilon, shape)
    gauss.noise = lambda self, rng, shape: rng.normal(0.0, self.sigma, shape)
    mech.add = gauss.add = lambda self, answer, noise: np.asarray(answer, dtype=np.float64) + noise
    checks.snap_records = dplloyd.snap_records = lambda X: np.asarray(X, dtype=np.float64)
    try:
        yield
    finally:
        mech.noise, mech.add, gauss.noise, gauss.add = saved
        checks.snap_records, dplloyd.snap_records = saved_snaps


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def workloads():
    rng = np.random.default_rng(0)
    big = rng.uniform(-1, 1, (200_000, 10))
    s1_like = rng.uniform(-1, 1, (5_000, 2))
    inits = rng.uniform(-1, 1, (3_000, 15, 2))
    # one (count, sum) stream pair per run, as a cell draws them (docs/reproducibility.md)
    streams = [
        {"count": np.random.default_rng((i, 0)), "sum": np.random.default_rng((i, 1))}
        for i in range(len(inits))
    ]
    mech = mechanisms.LaplaceMechanism(0.5, 3.0, coordinates=2)
    gauss = gaussian.GaussianMechanism(0.01, 1.0, 1, 1e-6)
    iris_like = rng.uniform(-0.5, 0.5, (150, 4))
    return {
        "noise: 10^6 draws": lambda: mech.noise(np.random.default_rng(3), 1_000_000),
        "Gaussian noise: 10^6 draws": lambda: gauss.noise(np.random.default_rng(3), 1_000_000),
        "DPKMeans auto with delta, 150 x 4, k = 3, eps = 4 (PE-Lloyd)": lambda: DPKMeans(
            3, 4.0, delta=1e-3, radius=1, random_state=0
        ).fit(iris_like),
        "Figure-1 DPLloyd cell (3,000 runs, N = 5,000, k = 15, t = 5)": lambda: dplloyd_batch(
            s1_like, inits, 1.0, streams, iterations=5
        ),
        "DPKMeans dplloyd, 200,000 x 10, k = 10": lambda: DPKMeans(
            10, 1.0, method="dplloyd", bounds=(-1, 1), random_state=0
        ).fit(big),
        "DPKMeans auto, 200,000 x 10, k = 10": lambda: DPKMeans(
            10, 1.0, bounds=(-1, 1), random_state=0
        ).fit(big),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rows = []
    for name, fn in workloads().items():
        fn()  # compile the kernels once
        lattice = best(fn, args.repeats)
        with continuous_laplace():
            fn()
            reference = best(fn, args.repeats)
        rows.append((name, lattice, reference))
    print("| workload | lattice (s) | numpy Laplace / normal (s) | ratio |")
    print("|---|---|---|---|")
    for name, lattice, reference in rows:
        print(f"| {name} | {lattice:.4f} | {reference:.4f} | {lattice / reference:.2f} |")


if __name__ == "__main__":
    main()
