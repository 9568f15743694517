"""ε → ∞ means k-means quality: at ε = 10⁶, how many of 10 seeds each method ``auto`` can
choose ends within 5 % of ``KMeans(n_init=10)``'s cost on clear blobs (docs/utility.md,
"ε → ∞").

The sets are ``make_blobs(3000, d, centers=k, cluster_std=1, random_state=seed)``, seed 0
to 9, with the box one unit beyond the data's extremes as the public domain. Each row
gives, per method, the seeds within 1.05× of k-means and the median cost ratio; ``auto``
also names what it ran. ``hybrid`` is listed only where its grid fits under EUGkM's cell
cap at that ε: elsewhere ``auto`` cannot take it (:func:`~dpcluster.algorithms.auto.choose`).

    .venv/bin/python scripts/bench_huge_epsilon.py [--seeds 10] [--shapes 2x2,16x64]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from dpcluster import DPKMeans
from dpcluster.algorithms.eugkm import MAX_CELLS, cells_per_axis

EPSILON = 1e6
TOLERANCE = 1.05
#: (k, d): 2 to 16 clusters in 2 to 64 dimensions
SHAPES = ((2, 2), (4, 2), (16, 2), (4, 3), (5, 5), (16, 5), (5, 16), (16, 16), (4, 64), (16, 64))
METHODS = ("auto", "pe_lloyd", "dplloyd_improved", "hybrid")


def grid_fits(n: int, d: int) -> bool:
    """Whether EUGkM's grid at ε = 10⁶ is under its cell cap (``auto``'s condition)."""
    m = cells_per_axis(n, EPSILON, d)
    return m >= 2 and float(m) ** d <= MAX_CELLS


def run_shape(k: int, d: int, seeds: int) -> dict:
    """{method: (seeds within TOLERANCE, median ratio, what ran)} for one shape."""
    out = {}
    for method in METHODS:
        if method == "hybrid" and not grid_fits(3000, d):
            continue
        good, ratios, ran = 0, [], set()
        for seed in range(seeds):
            X, _ = make_blobs(3000, d, centers=k, cluster_std=1.0, random_state=seed)
            ref = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
            box = (X.min() - 1, X.max() + 1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = DPKMeans(k, epsilon=EPSILON, bounds=box, method=method, random_state=seed)
                model.fit(X)
            ratios.append(model.inertia_ / ref)
            good += model.inertia_ <= TOLERANCE * ref
            ran.add(model.method_)
        out[method] = (good, float(np.median(ratios)), "/".join(sorted(ran)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--shapes", default="", help="k x d pairs, e.g. 2x2,16x64 (default: all)")
    a = ap.parse_args(argv)
    shapes = [tuple(map(int, s.split("x"))) for s in a.shapes.split(",")] if a.shapes else SHAPES
    print(f"seeds within {TOLERANCE}x of KMeans(n_init=10) at eps = {EPSILON:g} (median ratio)")
    print("| k | d | " + " | ".join(METHODS) + " |")
    print("|---|---|" + "---|" * len(METHODS))
    for k, d in shapes:
        row = run_shape(k, d, a.seeds)
        cells = []
        for method in METHODS:
            if method not in row:
                cells.append("over the cell cap")
                continue
            good, med, ran = row[method]
            cells.append(f"{good}/{a.seeds} ({med:.3f})" + (f" {ran}" if method == "auto" else ""))
        print(f"| {k} | {d} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
