"""Packed bit-vector kernels: popcount Hamming distances and the DPBV distance estimate.

Encodings are stored packed, ``(n, A, W)`` uint64: n records, A attributes, W = ceil(s/64)
words of s bits per attribute (unused high bits are zero in every encoding, so they never
count). Hamming distances come from XOR + popcount on words; no bool arrays, no Python
loops over pairs.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@njit(inline="always", cache=True)
def popcount64(x):
    """Set bits of one uint64 (SWAR form; LLVM lowers it to the popcnt instruction)."""
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return (x * _H01) >> np.uint64(56)


@njit(cache=True)
def hamming_pairs(E, F, out):
    """Per-attribute Hamming distances of aligned pairs.

    IN  E, F (P, A, W) uint64   encodings of the two sides of P pairs
    OUT out  (P, A) int64       d_H per pair and attribute
    """
    P, A, W = E.shape
    for p in range(P):
        for a in range(A):
            c = np.uint64(0)
            for w in range(W):
                c += popcount64(E[p, a, w] ^ F[p, a, w])
            out[p, a] = np.int64(c)


@njit(parallel=True, cache=True)
def estimate_matrix(E, F, mu, s, p, q, hi, symmetric, out):
    """Estimated Euclidean distances between every record of E and every record of F.

    IN  E (n, A, W), F (m, A, W) uint64 packed encodings
    IN  mu (A,) float64  μ_a, the length of attribute a's random-centre range
    IN  s int bits; p, q float64 keep/flip probabilities (p=1, q=0: plain BV)
    IN  hi (A,) float64  clip for each per-attribute estimate (U_a − L_a)
    IN  symmetric bool   E is F: compute i < j only and mirror; diagonal 0
    OUT out (n, m) float64
        d^_H = (d'_H − 2pqs)/(p−q)²  (B4; = d_H for plain BV),  d^_E,a = μ_a d^_H/(2s)
        clipped to [0, hi_a];  out = sqrt(Σ_a d^_E,a²)  (Eq. 20)
    Rows are independent, so the result does not depend on the thread count.
    """
    n, A, W = E.shape
    m = F.shape[0]
    bias = 2.0 * p * q * s
    gain = (p - q) * (p - q)
    for i in prange(n):
        j0 = i + 1 if symmetric else 0
        if symmetric:
            out[i, i] = 0.0
        for j in range(j0, m):
            acc = 0.0
            for a in range(A):
                c = np.uint64(0)
                for w in range(W):
                    c += popcount64(E[i, a, w] ^ F[j, a, w])
                dh = (np.float64(c) - bias) / gain
                de = mu[a] * dh / (2.0 * s)
                if de < 0.0:
                    de = 0.0
                elif de > hi[a]:
                    de = hi[a]
                acc += de * de
            out[i, j] = np.sqrt(acc)
    if symmetric:
        for i in range(n):
            for j in range(i):
                out[i, j] = out[j, i]


@njit(parallel=True, cache=True)
def farthest_pairs(E, best, partner):
    """For every row of E, the largest Hamming distance to a later row, and which row.

    IN  E (M, W) uint64      packed bit vectors
    OUT best (M,) int64      max_{j > i} d_H(E_i, E_j) (0 for the last row)
    OUT partner (M,) int64   the first j attaining it (i for the last row)
    Rows are independent, so the result does not depend on the thread count.
    """
    M, W = E.shape
    for i in prange(M):
        b = np.int64(0)
        at = np.int64(i)
        for j in range(i + 1, M):
            c = np.uint64(0)
            for w in range(W):
                c += popcount64(E[i, w] ^ E[j, w])
            if np.int64(c) > b:
                b = np.int64(c)
                at = np.int64(j)
        best[i] = b
        partner[i] = at
