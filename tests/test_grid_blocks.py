"""The block grid kernel (dpcluster/kernels/grid_blocks.py) against the row kernel, its
oracle: the same labels, so the same counts and SSE bit for bit on weights whose partial
sums are exact (EUGkM's noisy counts lie on a dyadic lattice), and the same coordinate sums
up to rounding; on random grids with negative weights and centroids built to tie."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcluster import kernels
from dpcluster.kernels.config import GRID_LANES, GRID_UNROLL_MAX_K
from dpcluster.kernels.grid import grid_accumulate
from dpcluster.kernels.grid_blocks import blocks_pay, grid_block_accumulate


def _both(w, m, C, float32, with_sse=True):
    """(row kernel, block kernel) statistics of centroid sets C (R, k, d) on the m^d grid."""
    R, k, d = C.shape
    Rp = -(-R // GRID_LANES) * GRID_LANES
    Ct = np.ascontiguousarray(np.transpose(np.concatenate([C, C[:1].repeat(Rp - R, 0)]), (1, 2, 0)))
    out = []
    for kernel in (grid_accumulate, grid_block_accumulate):
        counts, sums, err = np.empty((k, Rp)), np.empty((k, d, Rp)), np.empty(Rp)
        kernel(w, m, 1.0, Ct, counts, sums, err, with_sse, float32=float32, runs=R)
        assert not counts[:, R:].any() and not sums[:, :, R:].any()  # padding: not summed
        out.append((counts[:, :R], sums[:, :, :R], err[:R]))
    return out


def _lattice_weights(rng, n):
    """Noisy counts as EUGkM releases them: counts plus Laplace noise on a 2^-20 lattice."""
    return rng.poisson(0.5, n) + np.round(rng.laplace(0.0, 3.0, n) * 2**20) / 2**20


def _assert_same_statistics(w, m, C, float32, with_sse=True):
    (c0, s0, e0), (c1, s1, e1) = _both(w, m, C, float32, with_sse)
    np.testing.assert_array_equal(c1, c0)
    np.testing.assert_array_equal(e1, e0)
    # each sum is a few roundings of totals bounded by Σ|w| (r = 1)
    np.testing.assert_allclose(s1, s0, rtol=0, atol=1e-13 * np.abs(w).sum() + 1e-300)


@pytest.mark.parametrize("float32", [True, False])
@pytest.mark.parametrize(
    "d, m, k, R",
    [(3, 5, 4, 3), (4, 3, 1, 33), (4, 5, 7, 30), (5, 4, 10, 2), (6, 2, 3, 40)],
)
def test_blocks_match_the_row_kernel(rng, float32, d, m, k, R):
    C = rng.uniform(-1.1, 1.1, (R, k, d))
    _assert_same_statistics(_lattice_weights(rng, m**d), m, C, float32)


@settings(max_examples=40, deadline=None)
@given(
    d=st.integers(3, 6),
    m=st.integers(1, 5),
    k=st.sampled_from([1, 3, 4, 7, 10]),  # the k the cases above compile
    R=st.integers(1, 40),
    float32=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_blocks_match_the_row_kernel_with_ties(d, m, k, R, float32, seed):
    """Centroids on a coarse dyadic grid (duplicates and cell edges, so exact ties) and
    weights of both signs: the labels, so the counts and SSE, are the row kernel's."""
    rng = np.random.default_rng(seed)
    C = np.round(rng.uniform(-1, 1, (R, k, d)) * 4) / 4
    _assert_same_statistics(_lattice_weights(rng, m**d), m, C, float32)


def test_blocks_give_a_duplicate_centroid_no_cell(rng):
    """Ties go to the lowest index: a copy of centroid 0 at index 1 never wins a cell."""
    d, m, k, R = 5, 4, 6, 33
    C = rng.uniform(-1, 1, (R, k, d))
    C[:, 1] = C[:, 0]
    w = np.ones(m**d)
    _, (counts, _, _) = _both(w, m, C, float32=True)
    assert counts[1].sum() == 0 and counts.sum() == R * m**d


def test_block_moments_are_the_bits_of_the_full_pass(rng):
    m, d, k = 5, 4, 6
    assert blocks_pay(m, d, k)
    w = _lattice_weights(rng, m**d)
    C = rng.uniform(-1, 1, (31, k, d))
    counts, sums, _ = kernels.grid_stats(w, m, C)
    c2, s2 = kernels.grid_moments(w, m, C)
    np.testing.assert_array_equal(c2, counts)
    np.testing.assert_array_equal(s2, sums)


@pytest.mark.parametrize(
    "m, d, k, pays",
    [
        (5, 9, 8, True),  # Figure 2, theta = 2
        (4, 10, 10, True),
        (11, 5, 10, True),
        (30, 3, 5, False),  # d = 3: the row kernel
        (17, 4, 10, False),  # the last two axes' table past GRID_BLOCKS_MAX_BYTES
        (5, 9, GRID_UNROLL_MAX_K + 1, False),  # the centroid loop no longer unrolls
    ],
)
def test_blocks_pay_where_measured(m, d, k, pays):
    assert blocks_pay(m, d, k) is pays


def test_block_kernel_refuses_shapes_it_does_not_serve():
    with pytest.raises(ValueError, match="block kernel"):
        grid_block_accumulate(np.ones(4), 2, 1.0, np.zeros((1, 2, GRID_LANES)), *_outputs(1, 2))


def _outputs(k, d):
    return np.empty((k, GRID_LANES)), np.empty((k, d, GRID_LANES)), np.empty(GRID_LANES)
