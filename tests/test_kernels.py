"""Every kernel against its NumPy oracle, including the corner cases."""

import subprocess
import sys

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpcluster import kernels
from dpcluster.kernels.scan import count_outside
from tests import naive

#: every test here checks a compiled kernel; make test-nojit reruns them without the JIT
pytestmark = pytest.mark.kernel


def _check_stats(X, C, w=None):
    counts, sums = kernels.cluster_stats(X, C, w)
    ref_c, ref_s = naive.cluster_stats(X, C, w)
    np.testing.assert_allclose(counts, ref_c, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sums, ref_s, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "N,d,k", [(500, 2, 15), (300, 6, 5), (200, 10, 3), (100, 13, 4), (50, 1, 2)]
)
def test_cluster_stats_random(rng, N, d, k):
    X = rng.uniform(-1, 1, (N, d))
    _check_stats(X, rng.uniform(-1, 1, (k, d)))


def test_cluster_stats_batched_equals_per_run(rng):
    X = rng.uniform(-1, 1, (400, 3))
    C = rng.uniform(-1, 1, (70, 4, 3))  # 70 runs: spans several run chunks, last one partial
    counts, sums = kernels.cluster_stats(X, C)
    for r in (0, 31, 32, 69):
        ref_c, ref_s = naive.cluster_stats(X, C[r])
        np.testing.assert_allclose(counts[r], ref_c, atol=1e-12)
        np.testing.assert_allclose(sums[r], ref_s, rtol=1e-12, atol=1e-12)


def test_empty_cluster(rng):
    X = rng.uniform(-1, -0.5, (100, 2))
    C = np.array([[-0.75, -0.75], [0.9, 0.9]])  # nothing near the second centroid
    counts, sums = kernels.cluster_stats(X, C)
    assert counts[1] == 0 and np.all(sums[1] == 0)
    _check_stats(X, C)


def test_single_point():
    X = np.array([[0.25, -0.5]])
    C = np.array([[0.0, 0.0], [1.0, 1.0]])
    counts, sums = kernels.cluster_stats(X, C)
    assert counts.tolist() == [1.0, 0.0]
    np.testing.assert_array_equal(sums[0], X[0])


def test_duplicate_and_boundary_points():
    X = np.array([[1.0, 1.0]] * 5 + [[-1.0, -1.0]] * 3 + [[1.0, -1.0], [-1.0, 1.0]])
    C = np.array([[0.5, 0.5], [-0.5, -0.5], [1.0, -1.0]])
    _check_stats(X, C)
    counts, _ = kernels.cluster_stats(X, C)
    # (-1, 1) is equidistant from centroids 0 and 1 (2.5 each) and goes to 0
    assert counts.tolist() == [6.0, 3.0, 1.0]


def test_exact_tie_goes_to_lowest_index():
    X = np.array([[0.0, 0.0]])
    C = np.array([[0.5, 0.0], [-0.5, 0.0]])
    assert kernels.labels(X, C)[0] == 0
    counts, _ = kernels.cluster_stats(X, C)
    assert counts.tolist() == [1.0, 0.0]


def test_weighted_with_negative_and_fractional_weights(rng):
    X = rng.uniform(-1, 1, (300, 3))
    w = rng.laplace(0.0, 2.0, 300)  # like noisy EUGkM cell counts
    _check_stats(X, rng.uniform(-1, 1, (5, 3)), w)


@pytest.mark.parametrize("d", [1, 2, 5, 11])
def test_sse_and_nicv(rng, d):
    X = rng.uniform(-1, 1, (250, d))
    C = rng.uniform(-1, 1, (6, d))
    assert kernels.sse(X, C) == pytest.approx(naive.sse(X, C), rel=1e-12)
    assert kernels.nicv(X, C) == pytest.approx(naive.sse(X, C) / 250, rel=1e-12)
    w = rng.normal(size=250)
    assert kernels.sse(X, C, w) == pytest.approx(naive.sse(X, C, w), rel=1e-10)


@pytest.mark.parametrize("d", [1, 2, 6, 11])
def test_sse_expanded_matches_sse(rng, d):
    """PGkM's fitness form agrees with the direct SSE up to rounding, over a pool that is
    not a multiple of the lane block, and a point sitting on a centroid adds 0, not < 0."""
    X = rng.uniform(-1, 1, (300, d))
    C = rng.uniform(-1, 1, (43, 4, d))
    C[0, 2] = X[7]
    got = kernels.sse_expanded(X, C)
    np.testing.assert_allclose(got, [naive.sse(X, c) for c in C], rtol=1e-12)
    assert got[0] == pytest.approx(kernels.sse(X, C[0]), rel=1e-12)
    on_centroid = kernels.sse_expanded(X[7:8], C[:1])[0]
    assert 0.0 <= on_centroid < 1e-14


def test_nicv_empty_cluster_adds_nothing(rng):
    X = rng.uniform(-1, -0.5, (50, 2))
    C = np.array([[-0.75, -0.75]])
    far = np.vstack([C, [[5.0, 5.0]]])
    assert kernels.nicv(X, far) == pytest.approx(kernels.nicv(X, C), rel=1e-15)


@pytest.mark.parametrize("d,m", [(1, 7), (2, 22), (3, 5), (6, 3)])
def test_grid_counts(rng, d, m):
    X = rng.uniform(-1, 1, (1000, d))
    X[:5] = 1.0  # upper boundary goes to the last cell
    X[5:10] = -1.0
    np.testing.assert_array_equal(kernels.grid_histogram(X, m), naive.grid_counts(X, m))


def test_cell_centres_order_matches_grid():
    m, d = 4, 3
    centres = kernels.cell_centres(m, d)
    counts = kernels.grid_histogram(centres, m)
    np.testing.assert_array_equal(counts, np.ones(m**d))  # each centre lands in its own cell
    idx = 37
    np.testing.assert_array_equal(naive.grid_counts(centres[idx : idx + 1], m).nonzero()[0], [idx])


@pytest.mark.parametrize(
    "m,d,k,R",
    [(7, 1, 3, 5), (5, 2, 4, 30), (4, 3, 2, 33), (3, 5, 6, 2), (2, 6, 3, 1), (3, 4, 1, 70)],
)
def test_grid_stats_equals_oracle_on_cell_centres(rng, m, d, k, R):
    w = rng.normal(size=m**d)  # noisy counts: negative and fractional
    C = rng.uniform(-1, 1, (R, k, d))
    counts, sums, err = kernels.grid_stats(w, m, C)
    centres = kernels.cell_centres(m, d)
    for r in sorted({0, R // 2, R - 1}):
        ref_c, ref_s = naive.cluster_stats(centres, C[r], w)
        np.testing.assert_allclose(counts[r], ref_c, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(sums[r], ref_s, rtol=1e-12, atol=1e-12)
        assert err[r] == pytest.approx(naive.sse(centres, C[r], w), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("k", [1, 2, 4, 5, 7])  # k <= GRID_MASKED_MAX_K: masked add, else scatter
def test_grid_moments_bit_identical_to_grid_stats(rng, k):
    """The Lloyd pass without the SSE takes either cluster-sum path; both must give exactly
    the counts and sums of the full pass (which the oracle test above pins down)."""
    m, d = 4, 3
    w = rng.normal(size=m**d)
    C = rng.uniform(-1, 1, (33, k, d))
    counts, sums, _ = kernels.grid_stats(w, m, C)
    c2, s2 = kernels.grid_moments(w, m, C)
    np.testing.assert_array_equal(c2, counts)
    np.testing.assert_array_equal(s2, sums)


@pytest.mark.parametrize("k", [3, 7])  # masked add, scatter
@pytest.mark.parametrize("distances", ["float32", "float64"])
@pytest.mark.parametrize("m, d", [(5, 3), (4, 5)])  # the row kernel, the block kernel
def test_grid_run_has_the_same_bits_alone_or_in_any_batch(rng, k, distances, m, d):
    """Padding lanes are searched but not summed: a run's counts, sums and SSE are the same
    bits whether it is one of 33, of a partial block, or alone (Lloyd's active set shrinks)."""
    from dpcluster.kernels.grid_blocks import blocks_pay

    assert blocks_pay(m, d, k) is (d > 3)
    w = rng.normal(size=m**d)
    C = rng.uniform(-1, 1, (33, k, d))
    full = kernels.grid_stats(w, m, C, distances=distances)
    for rows in ([32], [5], [0, 7, 31, 32], list(range(1, 30))):
        part = kernels.grid_stats(w, m, C[rows], distances=distances)
        for got, want in zip(part, full, strict=True):
            np.testing.assert_array_equal(got, want[rows])


@pytest.mark.parametrize("float32", [True, False])
def test_grid_large_k_loop_order_gives_the_same_bits(rng, float32):
    """Past ``GRID_UNROLL_MAX_K`` the centroid loop goes outside the lane loop: on random
    grids with negative weights, duplicated centroids and centroids on cell edges (ties),
    its counts, sums and SSE are the unrolled loop's, bit for bit."""
    from dpcluster.kernels.config import GRID_LANES, GRID_UNROLL_MAX_K
    from dpcluster.kernels.grid import _specialise

    k = GRID_UNROLL_MAX_K + 1
    for d, m, R in [(1, 40, 3), (2, 13, 33), (3, 6, 7)]:
        C = rng.uniform(-1.1, 1.1, (R, k, d))
        C[:, 1] = C[:, 0]  # a duplicate: ties everywhere between 0 and 1
        C[:, 2] = np.round(C[:, 2] * m / 2) / (m / 2)  # on cell edges
        Rp = -(-R // GRID_LANES) * GRID_LANES
        Ct = np.ascontiguousarray(
            np.transpose(np.concatenate([C, C[:1].repeat(Rp - R, 0)]), (1, 2, 0))
        )
        w = rng.laplace(size=m**d) + rng.poisson(1.0, m**d)
        out = []
        for outer in (False, True):
            counts, sums, err = np.empty((k, Rp)), np.empty((k, d, Rp)), np.empty(Rp)
            _specialise(k, float32, outer)(w, m, 1.0, Ct, counts, sums, err, True, R)
            out.append((counts[:, :R], sums[:, :, :R], err[:R]))
        for a, b in zip(*out, strict=True):
            np.testing.assert_array_equal(a, b)
        assert out[0][0][1].sum() == 0  # the duplicate never wins a cell


def test_grid_moments_tie_goes_to_lowest_index():
    C = np.array([[[0.2, 0.2], [0.2, 0.2], [-0.5, -0.5]]])
    counts, _ = kernels.grid_moments(np.ones(4), 2, C)
    np.testing.assert_array_equal(counts[0], [3.0, 0.0, 1.0])


def test_grid_stats_tie_goes_to_lowest_index():
    # m = 2 on [-1, 1]: centres at ±0.5. Two identical centroids tie everywhere.
    C = np.array([[[0.2, 0.2], [0.2, 0.2], [-0.5, -0.5]]])
    counts, _, _ = kernels.grid_stats(np.ones(4), 2, C)
    np.testing.assert_array_equal(counts[0], [3.0, 0.0, 1.0])


def _nearest_gap(m, d, C):
    """Per run, the smallest relative gap between the nearest and second-nearest centroid
    over all cells, in float64: C (R, k, d) with k >= 2 -> (R,)."""
    centres = kernels.cell_centres(m, d)
    dist = ((centres[None, :, None, :] - C[:, None, :, :]) ** 2).sum(-1)  # (R, cells, k)
    two = np.sort(dist, axis=-1)[..., :2]
    return ((two[..., 1] - two[..., 0]) / two[..., 1]).min(axis=1)


@pytest.mark.parametrize("k", [2, 4, 5, 7])  # both cluster-sum paths
def test_grid_float32_distances_match_float64_away_from_ties(k):
    """Single-precision comparisons pick the same centroid as double precision wherever the
    two nearest are further apart than float32 can blur (asserted, so the case is real), and
    then counts and sums are bit-identical: they accumulate in double in the same order."""
    rng = np.random.default_rng(20261130 + k)
    m, d = 5, 4
    w = rng.laplace(size=m**d)
    C = rng.uniform(-1, 1, (60, k, d))
    C = C[_nearest_gap(m, d, C) > 8 * (2 * d + 2) * 2.0**-24]  # runs without a near-tie
    assert len(C) >= 33  # still more than one lane block
    c64, s64, e64 = kernels.grid_stats(w, m, C)
    c32, s32, e32 = kernels.grid_stats(w, m, C, distances="float32")
    np.testing.assert_array_equal(c32, c64)
    np.testing.assert_array_equal(s32, s64)
    # the SSE sums float32 distances: relative error per term below (2d+2)·2⁻²⁴
    assert np.abs(e32 - e64).max() <= (2 * d + 2) * 2.0**-24 * (np.abs(w).sum() * 4 * d)
    m32 = kernels.grid_moments(w, m, C, distances="float32")
    np.testing.assert_array_equal(m32[0], c32)
    np.testing.assert_array_equal(m32[1], s32)


@pytest.mark.parametrize("k", [3, 6])  # masked add and scatter
def test_grid_float32_exact_ties_go_to_lowest_index(k):
    C = np.full((1, k, 2), -0.5)
    C[0, :2] = 0.2  # centroids 0 and 1 coincide: they tie exactly in any precision
    counts, _ = kernels.grid_moments(np.ones(4), 2, C, distances="float32")
    np.testing.assert_array_equal(counts[0], [3.0, 0.0, 1.0] + [0.0] * (k - 3))


def test_grid_float32_near_tie_is_resolved_at_float32_resolution():
    """The documented difference: a cell 1e-9 closer to centroid 1 than to centroid 0 goes
    to 1 in double precision; in single precision the two distances round to the same value
    and the tie rule gives it to 0. Nothing else moves."""
    # m = 2, d = 1 on [-1, 1]: centres -0.5 and 0.5; both centroids are ~0.3 from 0.5
    C = np.array([[[0.2 - 1e-9], [0.8], [-0.5]]])
    c64, _ = kernels.grid_moments(np.ones(2), 2, C)
    c32, _ = kernels.grid_moments(np.ones(2), 2, C, distances="float32")
    np.testing.assert_array_equal(c64[0], [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(c32[0], [1.0, 0.0, 1.0])


def test_grid_distances_must_be_a_known_precision():
    with pytest.raises(ValueError, match="float16"):
        kernels.grid_moments(np.ones(4), 2, np.zeros((1, 2, 2)), distances="float16")


def test_grid_stats_rejects_wrong_weight_length():
    with pytest.raises(ValueError, match="expected \\(27,\\)"):
        kernels.grid_stats(np.ones(26), 3, np.zeros((1, 2, 3)))


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="one Python thread without the JIT")
def test_results_do_not_depend_on_thread_count(rng):
    X = rng.uniform(-1, 1, (2000, 4))
    C = rng.uniform(-1, 1, (100, 5, 4))
    w = rng.normal(size=6**4)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = kernels.cluster_stats(X, C), kernels.sse(X, C), kernels.grid_stats(w, 6, C)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = kernels.cluster_stats(X, C), kernels.sse(X, C), kernels.grid_stats(w, 6, C)
    finally:
        numba.set_num_threads(before)
    for a, b in zip((*one[0], one[1], *one[2]), (*many[0], many[1], *many[2])):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data(), N=st.integers(1, 40), d=st.integers(1, 4), k=st.integers(1, 5))
def test_cluster_stats_property(data, N, d, k):
    grid = st.integers(-8, 8).map(lambda v: v / 8)  # dyadic values: duplicates, boundaries
    X = data.draw(arrays(np.float64, (N, d), elements=grid))
    C = data.draw(arrays(np.float64, (k, d), elements=grid))
    counts, sums = kernels.cluster_stats(X, C)
    ref_c, ref_s = naive.cluster_stats(X, C)
    np.testing.assert_array_equal(counts, ref_c)
    np.testing.assert_allclose(sums, ref_s, atol=1e-12)


@pytest.mark.parametrize("k", [2, 8, 9, 15])
@pytest.mark.parametrize("d", [2, 12])
def test_masked_and_scattered_accumulation_are_bit_identical(k, d):
    """The masked add (k ≤ 8 by default) and the per-run scatter give the same bits, with
    negative and fractional weights and duplicate points, whichever k picks by default."""
    rng = np.random.default_rng(k * 100 + d)
    X = rng.uniform(-1, 1, (150, d))
    X[:20] = X[0]
    w = rng.uniform(-2, 3, 150)
    C = rng.uniform(-1, 1, (70, k, d))  # 70 runs: one full chunk of 64 and a partial one
    a = kernels.cluster_stats(X, C, w, masked=True)
    b = kernels.cluster_stats(X, C, w, masked=False)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    ref = naive.cluster_stats(X, C[3], w)
    np.testing.assert_allclose(a[0][3], ref[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a[1][3], ref[1], rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("float32", [False, True])
@pytest.mark.parametrize("k,d,R", [(1, 3, 5), (3, 7, 70), (4, 11, 3), (9, 37, 130), (2, 300, 64)])
def test_wide_kernel_is_bit_identical_to_the_narrow_loop_kernel(k, d, R, float32):
    """The interchanged kernels for wide data (points in blocks, sums laid out by run; the
    SSE and PGkM's expanded SSE) give the narrow kernels' bits: with the dimension a
    literal (d ≤ 10) or not, a partial block of points and of runs, negative weights,
    duplicate points and ties."""
    from dpcluster.kernels import assign, wide

    rng = np.random.default_rng(k * 1000 + d)
    N = 8 * 5 + 3
    X = rng.uniform(-1, 1, (N, d))
    X[:6] = X[0]
    w = rng.uniform(-2, 3, N)
    C = rng.uniform(-1, 1, (R, k, d))
    if k > 1:
        C[:, 1] = C[:, 0]  # an exact tie in every run: the lowest index wins
    Ct = np.ascontiguousarray(np.transpose(C, (1, 2, 0)))
    F = np.float32 if float32 else np.float64
    out = []
    for run in (
        lambda c, s: assign._accumulator(d if d <= 10 else 0, F, False)(X, w, Ct, c, s),
        lambda c, s: wide.accumulate_wide(X, w, Ct, c, s, F),
    ):
        counts, sums = np.empty((k, R)), np.empty((k, d, R))
        run(counts, sums)
        out.append((counts, sums))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    if not float32:  # the SSE of the same sets: the generic-d kernel and the wide one
        ref, got = np.empty(R), np.empty(R)
        assign._sse_any_d(X, w, Ct, ref)
        wide.sse_wide(X, w, Ct, got)
        np.testing.assert_array_equal(ref, got)
        assign._sse_expanded_any_d(X, w, Ct, ref, 2.0**-40)  # PGkM's fitness
        wide.sse_expanded_wide(X, w, Ct, got, 2.0**-40)
        np.testing.assert_array_equal(ref, got)


def test_float32_search_changes_only_near_ties(rng):
    """float32 distance comparisons: well-separated clusters give the float64 counts, and
    the sums still accumulate the float64 records."""
    centres = np.array([[-0.6, -0.6], [0.0, 0.6], [0.6, -0.3]])
    X = np.clip(np.repeat(centres, 200, axis=0) + 0.05 * rng.standard_normal((600, 2)), -1, 1)
    C = centres[None] + 0.01
    a = kernels.cluster_stats(X, C, distances="float32")
    b = kernels.cluster_stats(X, C)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    with pytest.raises(ValueError):
        kernels.cluster_stats(X, C, distances="float16")


#: the bigger shapes take ~10 s each to compile cold, so they run with make test-slow
@pytest.mark.parametrize(
    "k,d",
    [
        (2, 1),
        (3, 2),
        pytest.param(5, 6, marks=pytest.mark.slow),
        pytest.param(9, 4, marks=pytest.mark.slow),  # U = 2
    ],
)
def test_generated_kernel_is_bit_identical_to_the_loop_kernel(k, d):
    """The straight-line kernel of :mod:`dpcluster.kernels.unrolled` against the loop kernel
    (both of its accumulations): negative and fractional weights, duplicate points, two runs
    with duplicate centroids (exact ties), N not a multiple of U (the one-point tail), a
    partial last chunk of runs, and one thread or two."""
    from dpcluster.kernels import unrolled

    assert unrolled.unroll_points(k, d) == (4 if k * d <= 32 and d <= 6 else 2)
    rng = np.random.default_rng(10 * k + d)
    N = 1 if numba.config.DISABLE_JIT else 103
    X = rng.uniform(-1, 1, (N, d))
    X[: N // 4] = X[0]
    w = rng.uniform(-2, 3, N)
    R = 70 if numba.config.DISABLE_JIT else 300  # chunks of 64: the last one partial
    C = rng.uniform(-1, 1, (R, k, d))
    C[5, -1] = C[5, 0]
    C[6, :] = X[0]
    Ct = np.ascontiguousarray(np.transpose(C, (1, 2, 0)))
    threads = numba.get_num_threads()
    try:
        for n in {1, min(2, numba.config.NUMBA_NUM_THREADS)}:
            numba.set_num_threads(n)
            counts, sums = np.empty((k, R)), np.empty((k, d, R))
            unrolled.accumulate_unrolled(X, w, Ct, counts, sums)
            for masked in (True, False):
                ref_c, ref_s = kernels.cluster_stats(X, C, w, masked=masked)
                np.testing.assert_array_equal(counts.T, ref_c)
                np.testing.assert_array_equal(np.transpose(sums, (2, 0, 1)), ref_s)
    finally:
        numba.set_num_threads(threads)
    ref = naive.cluster_stats(X, C[5], w)
    np.testing.assert_allclose(counts[:, 5], ref[0], rtol=1e-12, atol=1e-12)


def test_generated_kernel_resolves_float32_near_ties_as_float64_does():
    """Centroid pairs closer than float32 can tell apart (1e-9 to 1e-6 apart, so the float32
    distances tie or come out in the wrong order): the certificate must send those points
    to the float64 search, and counts and sums must still be the loop kernel's bits."""
    from dpcluster.kernels import unrolled

    k, d = 3, 2
    rng = np.random.default_rng(7)
    N = 9 if numba.config.DISABLE_JIT else 400
    R = 70 if numba.config.DISABLE_JIT else 300
    X = rng.uniform(-1, 1, (N, d))
    C = rng.uniform(-1, 1, (R, k, d))
    C[:, 1] = C[:, 0] + rng.choice([-1, 1], (R, d)) * 10.0 ** rng.uniform(-9, -6, (R, d))
    X[: N // 2] = (C[0, 0] + C[0, 1]) / 2 + rng.normal(0, 1e-8, (N // 2, d))
    Ct = np.ascontiguousarray(np.transpose(C, (1, 2, 0)))
    counts, sums = np.empty((k, R)), np.empty((k, d, R))
    unrolled.accumulate_unrolled(X, np.ones(N), Ct, counts, sums)
    ref_c, ref_s = kernels.cluster_stats(X, C, masked=False)
    np.testing.assert_array_equal(counts.T, ref_c)
    np.testing.assert_array_equal(np.transpose(sums, (2, 0, 1)), ref_s)
    # the test can fail: without the certificate, float32 labels differ from float64 ones
    X32, C32 = X.astype(np.float32), C.astype(np.float32)
    e32 = (C32**2).sum(-1)[:, None, :] - 2 * np.einsum("nd,rkd->rnk", X32, C32)
    e64 = (C**2).sum(-1)[:, None, :] - 2 * np.einsum("nd,rkd->rnk", X, C)
    assert (e32.argmin(-1) != e64.argmin(-1)).any()


@settings(max_examples=200, deadline=None)
@given(
    d=st.integers(1, 12),
    magnitude=st.floats(-6, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_float32_distance_error_is_within_the_certificate(d, magnitude, seed):
    """The bound behind :func:`unrolled.tolerance`: the float32 expanded distance (rounded
    inputs, then d multiply-adds each rounded twice, the JIT-off path and the worse case)
    is within tolerance / 4 of the float64 one the loop kernel computes."""
    from dpcluster.kernels import unrolled

    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, d) * 10.0**magnitude
    c = rng.uniform(-1, 1, d) * 10.0 ** rng.uniform(-6, 6)
    cm, cn = -2.0 * c, 0.0
    for i in range(d):
        cn += c[i] * c[i]
    e64 = cn
    for i in range(d):
        e64 += x[i] * cm[i]
    e32 = np.float32(cn)
    for i in range(d):
        e32 = np.float32(np.float32(x[i]) * np.float32(cm[i])) + e32
    A = unrolled.scale(x[None], c[None, :, None])
    assert abs(float(e32) - e64) <= unrolled.tolerance(d, A) / 4


def test_large_batches_take_the_generated_kernel_and_small_ones_the_loop(monkeypatch):
    from dpcluster.kernels import assign

    calls = []
    real = assign.accumulate_unrolled

    def counted(*a):
        calls.append(real(*a))
        return calls[-1]

    monkeypatch.setattr(assign, "accumulate_unrolled", counted)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (5, 2))
    for R, used in ((assign.UNROLLED_MIN_RUNS - 1, 0), (assign.UNROLLED_MIN_RUNS, 1)):
        calls.clear()
        C = rng.uniform(-1, 1, (R, 3, 2))
        kernels.cluster_stats(X, C)
        assert calls == [True] * used
    calls.clear()
    # k·d = 65: no generated kernel
    kernels.cluster_stats(rng.uniform(-1, 1, (5, 5)), rng.uniform(-1, 1, (300, 13, 5)))
    kernels.cluster_stats(X, C, distances="float32")
    kernels.cluster_stats(X, C, masked=True)
    assert not calls
    # values float32 cannot certify: the generated kernel declines, the loop kernel serves
    got = kernels.cluster_stats(X * 1e16, C * 1e16)
    assert calls == [False]
    ref = kernels.cluster_stats(X * 1e16, C * 1e16, masked=True)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])


def test_auto_policy_compiles_a_shape_once_it_pays_or_was_compiled_before(tmp_path, monkeypatch):
    """ "auto" keeps a shape on the loop kernel until the loop has spent COMPILE_AFTER_S on
    it, then compiles and marks it; a later process with the mark takes the generated kernel
    at once. The numbers are the same on either path."""
    from dpcluster.kernels import assign, dispatch

    monkeypatch.setenv("DPCLUSTER_KERNEL_CACHE", str(tmp_path / "gen"))
    monkeypatch.setenv("DPCLUSTER_GENERATED", "auto")
    monkeypatch.setattr(dispatch, "_loop_seconds", {})
    monkeypatch.setattr(dispatch, "_ran", set())
    calls = []
    real = assign.accumulate_unrolled
    monkeypatch.setattr(assign, "accumulate_unrolled", lambda *a: calls.append(real(*a)) or True)
    rng = np.random.default_rng(1)
    X, C = rng.uniform(-1, 1, (40, 1)), rng.uniform(-1, 1, (assign.UNROLLED_MIN_RUNS, 1, 1))
    on_loop = kernels.cluster_stats(X, C)
    assert calls == [] and dispatch._loop_seconds[(1, 1)] > 0
    assert not list((tmp_path / "gen").glob("*.compiled"))

    monkeypatch.setattr(dispatch, "_loop_seconds", {(1, 1): dispatch.COMPILE_AFTER_S})
    generated = kernels.cluster_stats(X, C)
    assert calls == [True] and len(list((tmp_path / "gen").glob("*_k1_d1_*.compiled"))) == 1
    np.testing.assert_array_equal(generated[0], on_loop[0])
    np.testing.assert_array_equal(generated[1], on_loop[1])

    monkeypatch.setattr(dispatch, "_loop_seconds", {})  # a new process, the mark on disk
    monkeypatch.setattr(dispatch, "_ran", set())
    kernels.cluster_stats(X, C)
    assert calls == [True, True]
    monkeypatch.setenv("DPCLUSTER_GENERATED", "never")
    kernels.cluster_stats(X, C)
    assert calls == [True, True]
    monkeypatch.setenv("DPCLUSTER_GENERATED", "sometimes")
    with pytest.raises(ValueError, match="DPCLUSTER_GENERATED"):
        kernels.cluster_stats(X, C)


def test_generated_source_is_cached_in_the_configured_folder(tmp_path, monkeypatch):
    from dpcluster.kernels import unrolled

    monkeypatch.setenv("DPCLUSTER_KERNEL_CACHE", str(tmp_path / "gen"))
    unrolled.compiled.cache_clear()
    try:
        kernel = unrolled.compiled(1, 1, 1)
    finally:
        unrolled.compiled.cache_clear()
    (path,) = (tmp_path / "gen").glob("dpcluster_lloyd_k1_d1_u1_*.py")
    assert path.read_text().startswith(unrolled.source(1, 1, 1))
    assert "# dpcluster.kernels sources " in path.read_text()
    X, w = np.array([[0.5], [-0.5]]), np.array([1.0, 2.0])
    counts, sums = np.empty((1, 3)), np.empty((1, 1, 3))
    kernel(X, X.astype(np.float32), w, np.zeros((1, 1, 3)), counts, sums, 0, 1, 1e-6, 1.0)
    np.testing.assert_array_equal(counts, [[3.0, 3.0, 3.0]])
    np.testing.assert_array_equal(sums, [[[-0.5, -0.5, -0.5]]])
    with pytest.raises(ValueError, match="k·d"):
        unrolled.accumulate_unrolled(X, w, np.zeros((65, 1, 3)), counts, sums)


def _loop_and_point_lane_stats(X, w, C):
    """[(counts, sums) of the loop kernel, of the generated point-lane kernel, and when
    every weight is 1 of the generated unit-weight kernel]; asserts they are
    bit-identical."""
    from dpcluster.kernels import points

    out = []
    unit = (w == 1.0).all()
    limit = float(np.abs(X).max()) if np.isfinite(X).all() else 1.0
    for kernel in ("loop", "generated", "unit", "checked"):
        if kernel in ("unit", "checked") and not unit:
            continue
        counts, sums = np.zeros(len(C)), np.zeros(C.shape)
        if kernel == "checked":  # the unit-weight kernel that also counts entries > limit
            found = points.accumulate_points(X, None, C, counts, sums, True, limit)
            assert found == count_outside(X, limit)
        else:
            weights = None if kernel == "unit" else w
            points.accumulate_points(X, weights, C, counts, sums, kernel != "loop")
        out.append((counts, sums))
    for counts, sums in out[1:]:  # the weighted kernel, and the unit-weight ones
        np.testing.assert_array_equal(out[0][0], counts)
        np.testing.assert_array_equal(out[0][1], sums)
    return out


@pytest.mark.parametrize(
    "k,d",
    [
        pytest.param(1, 1, marks=pytest.mark.slow),
        (3, 2),
        pytest.param(7, 13, marks=pytest.mark.slow),
    ],
)
def test_point_lane_kernel_is_bit_identical_to_the_loop_kernel(k, d):
    """The generated single-set kernel (points in the SIMD lanes) against the loop kernel:
    several blocks and a partial slice, exact ties (a duplicated centroid, a point on a
    centroid), negative and fractional weights."""
    from dpcluster.kernels import points

    rng = np.random.default_rng(k + 10 * d)
    N = 2 * points.SLICE + 7 if numba.config.DISABLE_JIT else 2 * points.POINT_BLOCK + 1500
    X = rng.uniform(-1, 1, (N, d))
    C = rng.uniform(-1, 1, (k, d))
    C[-1] = C[0]
    X[5] = C[0]
    for w in (rng.uniform(-1, 2, N), np.ones(N)):
        out = _loop_and_point_lane_stats(X, w, C)
        ref_c, ref_s = naive.cluster_stats(X, C, w)
        np.testing.assert_allclose(out[1][0], ref_c, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(out[1][1], ref_s, rtol=1e-12, atol=1e-9)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # float32 overflow without the JIT
@pytest.mark.parametrize("magnitude", [1.0, 1e20])
def test_point_lane_kernel_resolves_float32_near_ties_and_overflow(magnitude):
    """Points halfway between two centroids 1e-9 to 1e-7 apart (float32 cannot order them)
    must be searched again in float64; at 1e20 the float32 squares overflow, every gap is
    NaN or inf, and every point must be. Either way: the loop kernel's bits."""
    from dpcluster.kernels import points

    k, d = 3, 2
    rng = np.random.default_rng(3)
    N = points.SLICE + 5 if numba.config.DISABLE_JIT else points.POINT_BLOCK + 700
    C = rng.uniform(-1, 1, (k, d))
    C[1] = C[0] + np.array([3e-9, -1e-7])
    X = rng.uniform(-1, 1, (N, d))
    X[::3] = (C[0] + C[1]) / 2 + rng.normal(0, 1e-8, (len(X[::3]), d))
    X, C = X * magnitude, C * magnitude
    w = np.ones(N)
    out = _loop_and_point_lane_stats(X, w, C)
    assert out[0][0][1] > 0  # the near-tie pair split the points between them
    if magnitude == 1.0:  # the test can fail: float32 alone orders some of them wrongly
        X32, C32 = X.astype(np.float32), C.astype(np.float32)
        e32 = (C32**2).sum(-1) - 2 * X32 @ C32.T
        e64 = (C**2).sum(-1) - 2 * X @ C.T
        assert (e32.argmin(-1) != e64.argmin(-1)).any()


def test_large_single_fits_take_the_point_lane_kernel(monkeypatch):
    from dpcluster.kernels import points

    calls = []
    monkeypatch.setattr(
        points,
        "_generated",
        lambda k, d, weighted, checked=False: lambda *a: calls.append((k, d, weighted)),
    )
    X = np.zeros((points.GENERATED_MIN_POINTS, 2))
    out = np.zeros(3), np.zeros((3, 2))
    points.accumulate_points(X, np.ones(len(X)), np.zeros((3, 2)), *out)
    points.accumulate_points(X, None, np.zeros((3, 2)), *out)
    assert calls == [(3, 2, True), (3, 2, False)]
    points.accumulate_points(X[:-1], np.ones(len(X) - 1), np.zeros((3, 2)), *out)
    wide = np.zeros((len(X), 13))
    points.accumulate_points(
        wide, np.ones(len(X)), np.zeros((10, 13)), np.zeros(10), np.zeros((10, 13))
    )
    assert calls == [(3, 2, True), (3, 2, False)]


@pytest.mark.parametrize("d,width", [(1, 4), (3, 4), (8, 12), (10, 12), (10, 16), (13, 16)])
def test_add_record_adds_counts_and_checks_as_defined(d, width):
    """The intrinsics against their definitions: the record and 1 (its count) are added
    to a row of sums at an offset, zeros to the rest of the row, nothing else is touched;
    the checking one also counts the values that are NaN, ±inf or above the limit in
    magnitude (a value on the limit is inside)."""
    from numba import njit

    from dpcluster.kernels.intrinsics import add_record, add_record_counting_outside

    @njit
    def run(S, at, X, row, limit, check):
        if check:
            return add_record_counting_outside(S, at, X, row, d, width, limit)
        add_record(S, at, X, row, d, width)
        return -1

    rng = np.random.default_rng(d)
    X = rng.uniform(-2, 2, (4, d))
    X[1, 0] = 2.0
    X[2, :] = [np.nan, np.inf, -np.inf, 2.0 + 1e-12, -2.0][:d] + [0.5] * max(0, d - 5)
    for row in range(4):
        for check in (False, True):
            S = rng.uniform(-1, 1, 3 * width + 5)
            expected = S.copy()
            expected[width + 2 : width + 2 + d] += X[row]
            expected[width + 2 + d] += 1.0
            found = run(S, width + 2, X, row, 2.0, check)
            np.testing.assert_array_equal(S, expected)
            assert found == (int((~(np.abs(X[row]) <= 2.0)).sum()) if check else -1)
    assert run(np.zeros(width), 0, X, 2, 2.0, True) == min(d, 4)


def test_checked_point_lane_kernel_counts_what_the_scan_counts():
    """Bad entries anywhere, in the shuffled records, the last slice's scalar tail and the
    last record, are counted by the checked kernel as by the one-pass scan; the statistics
    of good data are the unchecked kernel's bits."""
    from dpcluster.kernels import points

    k, d = 3, 2
    rng = np.random.default_rng(5)
    N = 2 * points.SLICE + 7 if numba.config.DISABLE_JIT else 2 * points.POINT_BLOCK + 1503
    X = rng.uniform(-1, 1, (N, d))
    X[0, 0], X[1, 1] = 1.0, -1.0
    C = rng.uniform(-1, 1, (k, d))
    for rows in ([], [N - 1], [3, N - 2], [points.SLICE + 9, N - 5, N - 1]):
        for bad in (np.nan, np.inf, -np.inf, 1.0 + 1e-9):
            Y = X.copy()
            for n in rows:
                Y[n, n % d] = bad
            counts, sums = np.zeros(k), np.zeros((k, d))
            found = points.accumulate_points(Y, None, C, counts, sums, True, 1.0)
            assert found == count_outside(Y, 1.0) == len(rows)
    counts, sums = np.zeros(k), np.zeros((k, d))
    assert points.accumulate_points(X, None, C, counts, sums, True, 1.0) == 0
    ref_c, ref_s = np.zeros(k), np.zeros((k, d))
    assert points.accumulate_points(X, None, C, ref_c, ref_s, True) is None
    np.testing.assert_array_equal(counts, ref_c)
    np.testing.assert_array_equal(sums, ref_s)
    with pytest.raises(ValueError, match="unweighted"):
        points.point_lanes_source(k, d, weighted=True, checked=True)


@pytest.mark.parametrize("d,n", [(1, 16), (3, 8), (10, 16), (8, 8), (10, 8), (13, 8), (16, 8)])
def test_rows_to_lanes_writes_float32_columns(d, n):
    """The shuffle intrinsic against its definition: n records from an offset row, written
    as float32 columns at an offset; every other entry of the target is left alone."""
    from numba import njit

    from dpcluster.kernels.intrinsics import rows_to_lanes

    @njit
    def copy(X, row, xt, col):
        rows_to_lanes(X, row, xt, col, d, n)

    rng = np.random.default_rng(d)
    X = rng.uniform(-1, 1, (n + 9, d)) * 10.0 ** rng.integers(-42, 30, (n + 9, d))
    xt = np.full((d, n + 20), -7.0, np.float32)
    copy(X, 5, xt, 11)
    want = np.full_like(xt, -7.0)
    want[:, 11 : 11 + n] = X[5 : 5 + n].astype(np.float32).T
    np.testing.assert_array_equal(xt, want)


_GUARD_PAGE_SCRIPT = r"""
import ctypes, mmap, sys
import numpy as np
from numba import njit
from dpcluster.kernels.intrinsics import rows_to_lanes

d, n = int(sys.argv[1]), int(sys.argv[2])
page = mmap.PAGESIZE
buf = mmap.mmap(-1, 2 * page)
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
assert libc.mprotect(base + page, page, 0) == 0  # the second page: no access
rows = page // (8 * d)
X = np.frombuffer(buf, np.float64, rows * d, page - 8 * rows * d).reshape(rows, d)
X[:] = np.arange(rows * d).reshape(rows, d)

@njit
def copy(X, row, xt):
    rows_to_lanes(X, row, xt, 0, d, n)

xt = np.zeros((d, n), np.float32)
copy(X, rows - n, xt)  # the last n records: their last value ends the readable page
assert np.array_equal(xt, X[rows - n :].astype(np.float32).T)
print("ok")
"""


@pytest.mark.parametrize("d,n", [(3, 16), (10, 8), (13, 8)])
def test_rows_to_lanes_reads_nothing_past_the_last_record(d, n):
    """The last records of an array that ends where an unreadable page begins: a load past
    the last value would crash the process (run apart, so a crash is a failure here)."""
    if numba.config.DISABLE_JIT:
        pytest.skip("the Python definition reads element by element")
    done = subprocess.run(
        [sys.executable, "-c", _GUARD_PAGE_SCRIPT, str(d), str(n)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_grid_kernels_refuse_a_grid_without_cells():
    """The grid kernels index without bounds checks, so m < 1 is refused before they run
    (m = 0 once wrote past an empty histogram)."""
    X = np.zeros((3, 2))
    for m in (0, -2):
        with pytest.raises(ValueError, match="at least 1 cell per axis"):
            kernels.grid_histogram(X, m)
        with pytest.raises(ValueError, match="at least 1 cell per axis"):
            kernels.grid_moments(np.zeros(1), m, np.zeros((1, 2, 2)))
