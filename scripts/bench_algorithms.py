"""Benchmark: cost of one run of each Paper A algorithm beside a naive NumPy reference.

For every (algorithm, dataset) it times, in the same process:
  * dpcluster: the library call a cell makes for one run (kernels warmed up first);
  * naive:     a straightforward NumPy implementation of the same computation
               (per-candidate / per-block / per-run loops, materialised grid centres).
Both do the same amount of work, so the ratio is the kernel speed-up. Where the naive
version would take minutes, it is timed on a fixed slice of the work and scaled; the table
says which. Output: a Markdown table. Usage:
    python scripts/bench_algorithms.py [--datasets s1,adult,lifesci]
    python scripts/bench_algorithms.py --datasets synthetic:d=9:k=10:theta=2 --only EUGkM

A ``synthetic:key=value:...`` entry is Figure 2's generator (N = 10,000 unless given);
``theta`` there sets EUGkM's θ, so ``d=9:k=10:theta=2`` is Figure 2's heaviest grid (5^9).
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np

from dpcluster import data
from dpcluster.algorithms.eugkm import cells_per_axis
from dpcluster.algorithms.gkm import block_size, gkm, n_blocks, noise_mechanism
from dpcluster.algorithms.pgkm import genetic_kmeans
from dpcluster.kernels import cell_centres, grid_histogram, grid_moments, sse


def _best_of(fn, repeats=3) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _naive_stats(X, w, C):
    """Weighted counts/sums/SSE for one centroid set, NumPy broadcasting (k at a time)."""
    d2 = ((X[:, None, :] - C[None]) ** 2).sum(axis=2)
    lab = d2.argmin(axis=1)
    k = C.shape[0]
    W = np.bincount(lab, weights=w, minlength=k)
    S = np.stack([np.bincount(lab, weights=w * X[:, i], minlength=k) for i in range(X.shape[1])], 1)
    return W, S, float((w * d2[np.arange(len(X)), lab]).sum())


def bench_eugkm(ds, eps=1.0, runs=30, iters=5, theta=10.0, distances="float32"):
    """One weighted-Lloyd iteration of all 30 runs on the noisy grid (EUGkM's inner cost),
    comparing distances in ``distances`` precision (float32 is EUGkM's default)."""
    m = cells_per_axis(ds.N, eps, ds.d, theta)
    rng = np.random.default_rng(0)
    w = grid_histogram(ds.X, m) + rng.laplace(0, 1 / eps, m**ds.d)
    C = rng.uniform(-1, 1, (runs, ds.k, ds.d))
    grid_moments(w, m, C, distances=distances)
    ours = _best_of(lambda: grid_moments(w, m, C, distances=distances)) * iters
    centres = cell_centres(m, ds.d)
    sl = max(1, min(runs, int(2e7 // max(1, centres.size * ds.k))))  # keep the naive side short
    t = _best_of(lambda: [_naive_stats(centres, w, C[r]) for r in range(sl)], 1)
    naive = t * runs / sl * iters
    note = f"{m}^{ds.d} = {m**ds.d:,} cells, {runs} runs x {iters} iterations" + (
        f"; naive timed on {sl} runs, scaled" if sl < runs else ""
    )
    return ours, naive, note


def bench_gkm(ds, rule="3k", eps=1.0):
    """One whole GkM run (shuffle, k random records per block, 10 Lloyd iterations per
    block, clamp, align, average, noise) against the same steps with a loop over blocks."""
    b = block_size(rule, ds.N, ds.k)
    l = n_blocks(ds.N, b)
    gkm(ds.X, ds.k, eps, np.random.default_rng(0), block=rule)
    ours = _best_of(lambda: gkm(ds.X, ds.k, eps, np.random.default_rng(0), block=rule))

    def naive():
        rng = np.random.default_rng(0)
        Xs = ds.X[rng.permutation(ds.N)]
        starts = np.linspace(0, ds.N, l + 1).round().astype(np.int64)
        out = np.empty((l, ds.k, ds.d))
        for j in range(l):
            B = Xs[starts[j] : starts[j + 1]]
            C = B[rng.choice(len(B), ds.k, replace=len(B) < ds.k)]
            for _ in range(10):
                W, S, _ = _naive_stats(B, np.ones(len(B)), C)
                ok = W > 0
                C[ok] = S[ok] / W[ok, None]
            C = np.clip(C, -1, 1)
            out[j] = C[np.lexsort(C.T[::-1])]
        scale = noise_mechanism(ds.k, ds.d, l, eps).scale
        return out.mean(axis=0) + rng.laplace(0, scale, (ds.k, ds.d))

    return ours, _best_of(naive, 1), f"{l:,} blocks of {b}"


def bench_gkm_n06(ds):
    return bench_gkm(ds, "N^0.6")


def bench_pgkm(ds, eps=1.0, pool=200):
    """One PGkM run (8 iterations, pool 200): batched pool fitness vs a per-candidate loop."""
    genetic_kmeans(ds.X, ds.k, np.random.default_rng(0), eps, pool=pool, iterations=1)
    ours = _best_of(lambda: genetic_kmeans(ds.X, ds.k, np.random.default_rng(0), eps, pool=pool))
    cands = np.random.default_rng(1).uniform(-1, 1, (pool, ds.k, ds.d))
    sse(ds.X, cands)
    naive_pool = _best_of(lambda: [_naive_stats(ds.X, np.ones(ds.N), c)[2] for c in cands], 1)
    batched_pool = _best_of(lambda: sse(ds.X, cands))
    # the rest of a run (selection, crossover) is the same code in both: add it to naive
    other = max(ours - 8 * batched_pool, 0.0)
    note = (
        f"pool {pool} x 8 iterations; fitness {batched_pool * 1e3:.1f} ms vs "
        f"{naive_pool * 1e3:.0f} ms per pool"
    )
    return ours, 8 * naive_pool + other, note


BENCHES = {
    "EUGkM (grid Lloyd, float32)": bench_eugkm,
    "EUGkM (grid Lloyd, float64)": functools.partial(bench_eugkm, distances="float64"),
    "GkM (one run, N^0.6)": bench_gkm_n06,
    "GkM-3K (one run)": bench_gkm,
    "PGkM (one run)": bench_pgkm,
}


def _parse_dataset(entry: str):
    """``name`` or ``synthetic:d=9:k=10:theta=2`` -> (Dataset, EUGkM θ or None)."""
    name, *pairs = entry.split(":")
    kv = dict(p.split("=", 1) for p in pairs)
    theta = float(kv.pop("theta")) if "theta" in kv else None
    params = {key: int(v) for key, v in kv.items()}
    if name == "synthetic":
        params = {"N": 10_000, "seed": 0, **params}
    return data.load(name, **params), theta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="s1,adult,lifesci")
    ap.add_argument("--only", default="", help="run only benchmarks whose label contains this")
    args = ap.parse_args()
    print("| algorithm | dataset | dpcluster s/run | naive NumPy s/run | ratio | work |")
    print("|---|---|---|---|---|---|")
    for entry in args.datasets.split(","):
        ds, theta = _parse_dataset(entry)
        for label, fn in BENCHES.items():
            if args.only not in label:
                continue
            ours, naive, note = fn(ds, **({"theta": theta} if theta and "EUGkM" in label else {}))
            print(
                f"| {label} | {ds.label} | {ours:.4f} | {naive:.3f} | "
                f"{naive / ours:.1f}x | {note} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
