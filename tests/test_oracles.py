"""Kernels of Paper B and the grid against slow, obvious oracles (tests/naive.py), on the
corner cases of STYLE rule 11: empty clusters, single points, duplicates, ties, points on and
beyond the boundary, one cell, unreachable pairs."""

from __future__ import annotations

import numpy as np
import pytest

from dpcluster.kernels.grid import grid_counts
from dpcluster.ldp.bitvector import RecordCodec
from dpcluster.ldp.distance import consistence, distance_matrix
from dpcluster.ldp.kcluster import _average_distances
from tests import naive

#: every test here checks a compiled kernel; make test-nojit reruns them without the JIT
pytestmark = pytest.mark.kernel

# --- kCluster's average distances ------------------------------------------------------------


@pytest.mark.parametrize(
    "labels,k",
    [
        ([0, 1, 2, 0, 1, 2, 0, 1], 3),
        ([0, 0, 0, 0, 2, 2, 2, 2], 3),  # cluster 1 empty: inf for every point
        ([0, 1, 1, 1, 1, 1, 1, 1], 2),  # point 0 alone: its own cluster has no other member
        ([0, 0, 0, 0, 0, 0, 0, 0], 1),
    ],
    ids=["mixed", "empty cluster", "singleton", "one cluster"],
)
def test_average_distances_matches_the_loop(labels, k):
    rng = np.random.default_rng(1)
    D = rng.uniform(0, 5, (8, 8))
    D[2] = D[3]  # duplicate rows: two points at the same distances
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0.0)
    labels = np.array(labels, np.int64)
    out = np.empty((8, k))
    _average_distances(D, labels, k, out)
    np.testing.assert_allclose(out, naive.average_distances(D, labels, k), rtol=1e-14)


# --- Eq. 20 from packed encodings -------------------------------------------------------------


def _eq20(rc, E, F, epsilon):
    """Eq. 20 written out: per attribute d_H, debiased (d_H − 2pqs)/(p−q)² for DPBV, scaled
    by μ/(2s), clipped to [0, U − L], then the root of the sum of squares."""
    if epsilon is None:
        p, q = 1.0, 0.0
    else:
        p = np.exp(epsilon) / (1 + np.exp(epsilon))
        q = 1 - p
    dh = naive.popcount_rows(E, F).astype(float)
    s = rc.s
    de = rc.mu[None, None, :] * ((dh - 2 * p * q * s) / (p - q) ** 2) / (2 * s)
    de = np.clip(de, 0.0, rc.widths[None, None, :])
    return np.sqrt((de**2).sum(axis=-1))


@pytest.mark.parametrize("epsilon", [None, 0.5, 2.0], ids=["BV", "DPBV eps 0.5", "DPBV eps 2"])
@pytest.mark.parametrize("symmetric", [True, False], ids=["E vs E", "E vs F"])
def test_distance_matrix_matches_eq20_by_hand(epsilon, symmetric):
    rc = RecordCodec.draw(
        130, [2.0, 3.0, 4.0], np.zeros(3), np.full(3, 10.0), np.random.default_rng(0)
    )
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 10, (12, 3))
    X[1] = X[0]  # duplicate records
    X[2] = [0.0, 10.0, 0.0]  # on the boundary
    E = rc.encode(X, epsilon, np.random.default_rng(3) if epsilon else None)
    if symmetric:
        D = distance_matrix(rc, E, epsilon=epsilon)
        want = _eq20(rc, E, E, epsilon)
        np.fill_diagonal(want, 0.0)
    else:
        Y = rng.uniform(0, 10, (7, 3))
        F = rc.encode(Y, epsilon, np.random.default_rng(4) if epsilon else None)
        D = distance_matrix(rc, E, F, epsilon=epsilon)
        want = _eq20(rc, E, F, epsilon)
    np.testing.assert_allclose(D, want, rtol=1e-12, atol=1e-12)
    if epsilon is None:  # plain BV of duplicates: identical encodings, distance 0
        assert D[0, 1] == 0.0 if symmetric else True


# --- Algorithm 1: unreachable pairs and τ = p99 ----------------------------------------------


@pytest.mark.parametrize("tau", ["max", "p99"])
def test_consistence_leaves_unreachable_pairs_and_matches_the_oracle(tau):
    """Two groups whose cross distances all saturate (≥ λ) and no chain of local links
    joins them: every cross pair stays at its estimate with flag int64 max."""
    rng = np.random.default_rng(4)
    x = np.r_[rng.uniform(0, 3, 12), rng.uniform(20, 23, 10)]
    D = np.minimum(np.abs(x[:, None] - x[None, :]), 6.0) + rng.normal(0, 0.2, (22, 22))
    D = np.abs((D + D.T) / 2)
    np.fill_diagonal(D, 0.0)
    out, F = consistence(D, kappa=0.5, tau=tau)
    ref_out, ref_F = naive.consistence(D, kappa=0.5, tau=tau)
    np.testing.assert_array_equal(F, ref_F)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=0)
    big = np.iinfo(np.int64).max
    cross = F[:12, 12:]
    assert np.all(cross == big) and np.array_equal(out[:12, 12:], D[:12, 12:])
    assert F[:12, :12].max() < big  # within a group everything is reached


def test_consistence_p99_uses_a_lower_level_than_max():
    """One outlier estimate sets τ under "max" but not under "p99": the local views differ."""
    rng = np.random.default_rng(6)
    x = rng.uniform(0, 10, 30)
    D = np.minimum(np.abs(x[:, None] - x[None, :]), 4.0)
    D[0, 1] = D[1, 0] = 40.0  # an outlier
    _, F_max = consistence(D, kappa=0.8, tau="max")
    _, F_p99 = consistence(D, kappa=0.8, tau="p99")
    assert (F_max == 0).sum() > (F_p99 == 0).sum()  # λ = 32 makes nearly everything local


# --- the uniform grid --------------------------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 5])
@pytest.mark.parametrize("d", [1, 3])
def test_grid_counts_clamp_out_of_range_points_and_one_cell(m, d):
    rng = np.random.default_rng(m * 10 + d)
    X = rng.uniform(-1.5, 1.5, (400, d))  # a third of the points lie outside [-1, 1]
    X[:4] = 1.0
    X[4:8] = -1.0
    got = np.zeros(m**d)
    grid_counts(X, m, 1.0, got)  # the kernel itself: the public wrapper refuses such data
    want = naive.grid_counts(X, m)
    np.testing.assert_array_equal(got, want)
    assert got.sum() == 400
    if m == 1:
        assert got.tolist() == [400.0]


# --- the single-set, point-parallel statistics ------------------------------------------------


@pytest.mark.parametrize("N,d,k", [(1, 2, 3), (20_000, 3, 7), (17_000, 12, 4), (16_385, 1, 2)])
def test_single_set_stats_match_the_oracle(N, d, k):
    """Blocks of 16,384 points: one point, a block and one more, d above the literal range;
    duplicate points and two identical centroids (a tie for the lowest index)."""
    from dpcluster.kernels import cluster_stats_single

    rng = np.random.default_rng(N + d)
    X = rng.uniform(-1, 1, (N, d))
    X[: N // 2] = X[0]
    C = rng.uniform(-1, 1, (k, d))
    C[1] = C[0]
    counts, sums = cluster_stats_single(X, C)
    want_counts, want_sums = naive.cluster_stats(X, C)
    np.testing.assert_array_equal(counts, want_counts)
    np.testing.assert_allclose(sums, want_sums, rtol=1e-11, atol=1e-9)
    assert counts[1] == 0.0  # the tie goes to centroid 0
