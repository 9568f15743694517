"""Benchmark: Paper B on digits (1,797 records x 64 attributes x s = 1,000 bits, eps = 2).

Times, in the same process:
  * DPBV encoding of all records (packed uint64);
  * the full n x n estimated distance matrix: dpcluster's popcount kernel vs a
    straightforward NumPy version on unpacked bool arrays (timed on a block of rows and
    scaled to all n, since the naive version needs n x n x 64 x 1000 comparisons);
  * kCluster to convergence on that matrix: dpcluster's kernel vs a NumPy loop;
  * the memory of the stored encodings against their packed size n*A*ceil(s/64)*8 bytes.
Output: a Markdown table. Usage:  python scripts/bench_dpbv.py [--rows 60]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpcluster import data
from dpcluster.ldp.bitvector import RecordCodec, unpack_bits
from dpcluster.ldp.distance import distance_matrix, flip_params
from dpcluster.ldp.kcluster import kcluster


def naive_rows(bits: np.ndarray, rows: np.ndarray, codec: RecordCodec, eps: float) -> np.ndarray:
    """Estimated distances of ``rows`` to every record from unpacked bools (n, A, s)."""
    p, q = flip_params(eps)
    s = codec.s
    out = np.empty((len(rows), bits.shape[0]))
    for r, i in enumerate(rows):
        dh = (bits[i][None] != bits).sum(axis=2)  # (n, A)
        de = codec.mu[None] * ((dh - 2 * p * q * s) / (p - q) ** 2) / (2 * s)
        out[r] = np.sqrt((np.clip(de, 0, codec.widths[None]) ** 2).sum(axis=1))
    return out


def naive_kcluster(D: np.ndarray, labels: np.ndarray, k: int, max_iter: int = 100) -> int:
    n = len(D)
    for it in range(1, max_iter + 1):
        onehot = np.eye(k)[labels]
        tot = D @ onehot - D[np.arange(n), np.arange(n)][:, None] * onehot
        cnt = onehot.sum(axis=0)[None] - onehot
        new = np.argmin(np.where(cnt > 0, tot / np.maximum(cnt, 1), np.inf), axis=1)
        if np.array_equal(new, labels):
            return it
        labels = new
    return max_iter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=60, help="rows timed for the naive matrix")
    args = ap.parse_args()
    ds = data.load("digits")
    raw, (lo, hi) = ds.raw, ds.domain
    eps, s = 2.0, 1000
    codec = RecordCodec.draw(s, (hi - lo) / 2, lo, hi, np.random.default_rng(0))
    small = codec.encode(raw[:20], eps, np.random.default_rng(1))
    distance_matrix(codec, small, epsilon=eps)  # compile
    t = time.perf_counter()
    E = codec.encode(raw, eps, np.random.default_rng(1))
    t_enc = time.perf_counter() - t
    t = time.perf_counter()
    D = distance_matrix(codec, E, epsilon=eps)
    t_mat = time.perf_counter() - t
    bits = unpack_bits(E, s)
    rows = np.arange(args.rows)
    t = time.perf_counter()
    ref = naive_rows(bits, rows, codec, eps)
    t_naive = (time.perf_counter() - t) * len(raw) / args.rows / 2  # symmetric: half the pairs
    assert np.allclose(ref, D[rows], atol=1e-9), "naive and kernel matrices differ"
    kcluster(D[:50, :50], 3, np.random.default_rng(0))  # compile
    t = time.perf_counter()
    labels, rounds = kcluster(D, ds.k, np.random.default_rng(2))
    t_kc = time.perf_counter() - t
    start = np.argmin(D[:, np.random.default_rng(2).choice(len(D), ds.k, replace=False)], axis=1)
    t = time.perf_counter()
    naive_kcluster(D, start, ds.k)
    t_kc_naive = time.perf_counter() - t
    packed = len(raw) * raw.shape[1] * ((s + 63) // 64) * 8
    print(f"digits: n={len(raw)}, A={raw.shape[1]}, s={s}, eps={eps} per attribute\n")
    print("| step | dpcluster s | naive NumPy s | ratio | note |")
    print("|---|---|---|---|---|")
    print(f"| DPBV encode (all records) | {t_enc:.2f} | – | – | packed uint64 |")
    print(
        f"| n×n distance matrix | {t_mat:.2f} | {t_naive:.1f} | {t_naive / t_mat:.0f}x | "
        f"naive: unpacked bools, {args.rows} rows timed, scaled to n(n−1)/2 pairs |"
    )
    print(
        f"| kCluster ({rounds} rounds) | {t_kc:.2f} | {t_kc_naive:.2f} | "
        f"{t_kc_naive / t_kc:.1f}x | naive: NumPy matrix products per round |"
    )
    print(
        f"\nencodings: {E.nbytes / 1e6:.1f} MB stored, packed size {packed / 1e6:.1f} MB "
        f"({E.nbytes / packed:.2f}x); unpacked bools would be {bits.nbytes / 1e6:.0f} MB"
    )


if __name__ == "__main__":
    main()
