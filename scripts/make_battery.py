"""Write a second labelled battery, independent of ``../shared/battery``, for
``scripts/bench_utility.py``: the same clustering-data-v1 layout (docs/datasets.md), built
from scikit-learn's bundled real sets and from generators, with no download.

Sets (k = the number of reference labels):

* ``uci/iris`` (150 × 4, k = 3), ``uci/wdbc`` (569 × 30, k = 2), ``mnist/digits``
  (1,797 × 64, k = 10): scikit-learn's bundled copies;
* ``g2mg/g2mg_<d>_<s>`` for d ∈ {1, 2, 4, 8, 16, 32, 64, 128} and s ∈ {10, 30, 50, 70}:
  two Gaussian clusters of 1,024 records with centres 500 and 600 on every axis and
  per-coordinate σ = s·√(d/2), the form of the suite's g2mg family (fitted to the shipped
  g2mg_8_10 and g2mg_32_10: σ ≈ 19.8 and 40.0). The clusters are 141/s standard
  deviations apart along the diagonal, so s = 50 and 70 overlap;
* ``fcps/hepta_like`` (7 Gaussian clusters in 3-D: the origin and ±3 on each axis),
  ``fcps/tetra_like`` (4 clusters at tetrahedron vertices), ``sipu/unbalance_like`` (three
  2,000-record and five 100-record clusters in 2-D), ``wut/moons_like`` (two moons),
  ``other/blobs_<d>_<k>`` for (d, k) ∈ {(3, 12), (5, 7), (20, 30)} (isotropic blobs).

With ``--blobs``, the blob grid instead: ``blobs/blobs_<d>_<k>``, ``make_blobs(3000, d,
centers=k, cluster_std=1)`` for k ∈ {2, 4, 8, 16} and d ∈ {2, 5, 16, 64} (the clear
blobs of the ε → ∞ check, ``scripts/bench_huge_epsilon.py``, at every ε).

Every set is drawn from a fixed seed, so the folder is the same on every machine.
Usage:  python scripts/make_battery.py [--blobs] OUT_FOLDER
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

import numpy as np
from sklearn import datasets

G2MG_DIMS = (1, 2, 4, 8, 16, 32, 64, 128)
G2MG_SPREADS = (10, 30, 50, 70)
BLOB_KS, BLOB_DIMS = (2, 4, 8, 16), (2, 5, 16, 64)


def write_set(root: Path, name: str, X: np.ndarray, y: np.ndarray) -> None:
    """``<root>/<name>.data.gz`` and ``.labels0.gz``; labels renumbered 1..k (0 = noise
    is not used here)."""
    base = root / name
    base.parent.mkdir(parents=True, exist_ok=True)
    codes = np.unique(np.asarray(y), return_inverse=True)[1] + 1
    with gzip.GzipFile(f"{base}.data.gz", "wb", mtime=0) as f:
        np.savetxt(f, np.asarray(X, dtype=np.float64), fmt="%.8g")
    with gzip.GzipFile(f"{base}.labels0.gz", "wb", mtime=0) as f:
        np.savetxt(f, codes, fmt="%d")


def gaussian_pair(d: int, s: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A g2mg-form pair: (2048, d) records and their labels."""
    sigma = s * np.sqrt(d / 2.0)
    X = np.vstack([rng.normal(500.0, sigma, (1024, d)), rng.normal(600.0, sigma, (1024, d))])
    return X, np.repeat([1, 2], 1024)


def blobs(centres: np.ndarray, sizes, sigma: float, rng: np.random.Generator):
    X = np.vstack([rng.normal(c, sigma, (n, len(c))) for c, n in zip(centres, sizes)])
    return X, np.repeat(np.arange(len(sizes)), sizes)


def build(root: Path) -> list[str]:
    """Write every set under ``root``; returns their names."""
    rng = np.random.default_rng(20261204)
    sets = {
        "uci/iris": datasets.load_iris(return_X_y=True),
        "uci/wdbc": datasets.load_breast_cancer(return_X_y=True),
        "mnist/digits": datasets.load_digits(return_X_y=True),
    }
    for d in G2MG_DIMS:
        for s in G2MG_SPREADS:
            sets[f"g2mg/g2mg_{d}_{s}"] = gaussian_pair(d, s, rng)
    hepta = np.vstack([np.zeros(3), 3 * np.eye(3), -3 * np.eye(3)])
    sets["fcps/hepta_like"] = blobs(hepta, [30] * 7, 0.5, rng)
    tetra = 1.2 * np.array([[1, 1, 1], [-1, -1, 1], [-1, 1, -1], [1, -1, -1]])
    sets["fcps/tetra_like"] = blobs(tetra, [100] * 4, 0.6, rng)
    sizes = [2000] * 3 + [100] * 5
    sets["sipu/unbalance_like"] = blobs(rng.uniform(-10, 10, (8, 2)), sizes, 0.5, rng)
    sets["wut/moons_like"] = datasets.make_moons(1000, noise=0.08, random_state=1)
    for seed, (n, d, k) in enumerate([(500, 3, 12), (3000, 5, 7), (6000, 20, 30)]):
        std = 0.5 if d == 3 else 1.0
        X, y = datasets.make_blobs(n, d, centers=k, cluster_std=std, random_state=seed + 2)
        sets[f"other/blobs_{d}_{k}"] = (X, y)
    for name, (X, y) in sets.items():
        write_set(root, name, X, y)
    return sorted(sets)


def build_blob_grid(root: Path) -> list[str]:
    """Write the blob grid (module docstring) under ``root``; returns the set names."""
    names = []
    for i, (d, k) in enumerate((d, k) for d in BLOB_DIMS for k in BLOB_KS):
        X, y = datasets.make_blobs(3000, d, centers=k, cluster_std=1.0, random_state=100 + i)
        names.append(f"blobs/blobs_{d}_{k}")
        write_set(root, names[-1], X, y)
    return names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="folder to write the battery into")
    ap.add_argument("--blobs", action="store_true", help="write the blob grid instead")
    args = ap.parse_args(argv)
    names = (build_blob_grid if args.blobs else build)(Path(args.out))
    print(f"{len(names)} sets written under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
