"""Lloyd, DPLloyd and EUGkM: against scikit-learn, against Lloyd at huge ε, and METHODS values."""

import math

import numpy as np
import pytest

from dpcluster import data, kernels
from dpcluster.algorithms import (
    dplloyd,
    dplloyd_batch,
    dplloyd_improved,
    eugkm,
    initial_sets,
    lloyd,
    lloyd_batch,
)
from dpcluster.algorithms.dplloyd import (
    distinct_cluster_stats,
    improved_iterations,
    improved_ratio,
    improved_split,
)
from dpcluster.algorithms.eugkm import cells_per_axis, synopsis_seeds
from dpcluster.rng import StreamFactory
from tests import naive


@pytest.fixture(scope="module")
def s1():
    return data.load("s1")


def test_lloyd_matches_sklearn(s1):
    sklearn = pytest.importorskip("sklearn.cluster")
    # Inits are data points, so no cluster empties (sklearn relocates empty clusters, while
    # we keep them in place; the two rules only differ when that happens).
    rng = np.random.default_rng(3)
    inits = np.stack([s1.X[rng.choice(s1.N, 15, replace=False)] for _ in range(5)])
    ours, iters = lloyd_batch(s1.X, inits)
    for init, C, _it in zip(inits, ours, iters):
        km = sklearn.KMeans(15, init=init, n_init=1, max_iter=300, tol=0.0, algorithm="lloyd").fit(
            s1.X
        )
        np.testing.assert_allclose(C, km.cluster_centers_, atol=1e-9, rtol=0)
        assert kernels.nicv(s1.X, C) == pytest.approx(km.inertia_ / s1.N, rel=1e-9)


@pytest.mark.kernel
def test_lloyd_single_set_matches_naive_steps(rng):
    X = rng.uniform(-1, 1, (300, 3))
    init = rng.uniform(-1, 1, (4, 3))
    C, iters = lloyd_batch(X, init[None], max_iter=3)
    np.testing.assert_allclose(C[0], naive.lloyd_steps(X, init, 3), atol=1e-12)
    assert iters[0] <= 3
    # to convergence: a fixed point of the naive step, reached within 300 naive steps
    converged = lloyd(X, init)
    np.testing.assert_allclose(naive.lloyd_steps(X, converged, 1), converged, atol=1e-12)
    np.testing.assert_allclose(converged, naive.lloyd_steps(X, init, 300), atol=1e-9)


def test_dplloyd_tracks_lloyd_at_huge_epsilon(s1):
    init = initial_sets(StreamFactory(5), 1, 15, 2)[0]
    res = dplloyd(s1.X, 15, 1e9, init, np.random.default_rng(0))
    exact = naive.lloyd_steps(s1.X, init, 5)
    counts, _ = naive.cluster_stats(s1.X, exact)
    live = counts > 0
    np.testing.assert_allclose(res.centroids[live], exact[live], atol=1e-6)
    assert res.ledger.total_epsilon == pytest.approx(1e9)


def test_dplloyd_is_worse_at_small_epsilon(s1):
    init = initial_sets(StreamFactory(5), 1, 15, 2)[0]
    inits = np.repeat(init[None], 200, axis=0)
    nicvs = {}
    for eps in (0.05, 5.0):
        streams = [
            {"count": np.random.default_rng((i, 0)), "sum": np.random.default_rng((i, 1))}
            for i in range(200)
        ]
        C, _ = dplloyd_batch(s1.X, inits, eps, streams)
        nicvs[eps] = kernels.nicv(s1.X, C).mean()
    assert nicvs[0.05] > nicvs[5.0]


@pytest.mark.parametrize(
    "N,d,expected", [(5000, 2, 22), (48842, 6, 8), (26733, 10, 4), (107091, 2, 103)]
)
def test_eugkm_cells_per_axis(N, d, expected):
    # METHODS numeric checks at ε = 1, θ = 10: S1 22.36, Adult 8.36, Lifesci 3.73, Gowalla 103.5
    assert cells_per_axis(N, 1.0, d, 10.0, "round") == expected


def test_eugkm_grid_rounding_and_M():
    assert cells_per_axis(26733, 1.0, 10, 10.0, "floor") == 3
    assert cells_per_axis(26733, 1.0, 10, 10.0, "ceil") == 4
    m_real = (26733 / 10) ** (2 / 12)
    assert m_real == pytest.approx(3.73, abs=0.005)
    # d = 2 reduces to UG: M = N ε / θ
    assert (5000 * 1.0 / 10) ** (2 * 2 / 4) == pytest.approx(500)


def test_eugkm_run_on_s1(s1):
    inits = initial_sets(StreamFactory(1), 30, 15, 2)
    res = eugkm(s1.X, 15, 1.0, inits, np.random.default_rng(3))
    assert res.info["m"] == 22 and res.info["cells"] == 484
    assert 0 <= res.info["chosen_init"] < 30
    # M reads the exact N, as the paper does: booked as an exact read (∞ under
    # add/remove one), and the paper's ε claimed
    assert res.ledger.claimed_epsilon == pytest.approx(1.0)
    assert res.ledger.total_epsilon == math.inf
    assert kernels.nicv(s1.X, res.centroids) < 0.1  # far better than a random centroid set


def test_eugkm_float32_and_float64_distances_agree_on_a_well_separated_grid(s1):
    """Same synopsis (same stream): on S1's 22 x 22 grid no cell is near-tied at float32
    resolution, so the two precisions give the same centroids and the same choice."""
    inits = initial_sets(StreamFactory(1), 30, 15, 2)
    single = eugkm(s1.X, 15, 1.0, inits, np.random.default_rng(3))
    double = eugkm(s1.X, 15, 1.0, inits, np.random.default_rng(3), distances="float64")
    assert single.info == double.info
    np.testing.assert_array_equal(single.centroids, double.centroids)


@pytest.mark.kernel
def test_distinct_cluster_stats_is_bit_identical_to_every_run(rng):
    """DPLloyd's first iteration: 3 distinct sets repeated over 12 runs, computed 3 times."""
    X = rng.uniform(-1, 1, (300, 3))
    C = np.repeat(rng.uniform(-1, 1, (3, 4, 3)), 4, axis=0)[rng.permutation(12)]
    counts, sums = distinct_cluster_stats(X, C)
    ref_c, ref_s = kernels.cluster_stats(X, C)
    np.testing.assert_array_equal(counts, ref_c)
    np.testing.assert_array_equal(sums, ref_s)
    C[5, 0, 0] += 1e-3  # all distinct now: the plain path
    np.testing.assert_array_equal(distinct_cluster_stats(X, C)[1], kernels.cluster_stats(X, C)[1])


def test_eugkm_huge_epsilon_is_near_lloyd_on_cells(s1):
    inits = initial_sets(StreamFactory(1), 30, 15, 2)
    res = eugkm(s1.X, 15, 1e4, inits, np.random.default_rng(3), theta=1e3)
    baseline = kernels.nicv(s1.X, lloyd_batch(s1.X, inits)[0]).min()
    assert kernels.nicv(s1.X, res.centroids) < 1.5 * baseline


def test_improved_constants_match_methods():
    # METHODS numeric checks: count share c/(d+c) and iterations at ε = 1
    for d, share in [(2, 0.270), (3, 0.220), (6, 0.151), (10, 0.112)]:
        c = improved_ratio(d)
        assert c / (d + c) == pytest.approx(share, abs=5e-4)
        split = improved_split(1.0, d)
        assert split.count == pytest.approx(share, abs=5e-4)
        assert split.total == pytest.approx(1.0)
    for N, d, k, t in [
        (5000, 2, 15, 2),
        (107091, 2, 5, 7),
        (34112, 3, 3, 7),
        (48842, 6, 5, 7),
        (26733, 10, 3, 6),
    ]:
        assert improved_iterations(1.0, N, k, d) == t


def test_improved_uses_sphere_packing_and_its_t(s1):
    init = initial_sets(StreamFactory(2), 1, 15, 2, method="sphere_packing")[0]
    res = dplloyd_improved(s1.X, 15, 1.0, init, np.random.default_rng(0))
    assert res.iterations == 2
    # t iterations of counts and sums, and the exact read of N that set t (the paper's)
    assert len(res.ledger.entries) == 2 * res.iterations + 1
    assert res.ledger.entries[-1].purpose.startswith("record count N (read exactly")


@pytest.mark.parametrize("k,d", [(8, 3), (5, 2), (15, 2), (3, 10)])
def test_sphere_packing_separation(k, d):
    """Centres ≥ 2a apart and inside [-r + a, r − a]^d, with a = r / 2^j (A0)."""
    for seed in range(3):
        C, a = data.sphere_packing(k, d, np.random.default_rng(seed), r=1.0)
        dists = np.linalg.norm(C[:, None] - C[None], axis=2)[np.triu_indices(k, 1)]
        assert C.shape == (k, d) and dists.min() >= 2 * a
        assert np.all(np.abs(C) <= 1.0 - a)
        assert math.log2(1.0 / a) == int(math.log2(1.0 / a))


def test_sphere_packing_radius_by_hand():
    """k = 1: a = r, the only candidate is the origin. k = 2, d = 1: a = r leaves only 0;
    a = r/2 needs −1/2 and 1/2 exactly (probability 0); a = r/4 fits."""
    C, a = data.sphere_packing(1, 3, np.random.default_rng(0))
    assert a == 1.0 and np.all(C == 0.0)
    C, a = data.sphere_packing(2, 1, np.random.default_rng(0))
    assert a == 0.25 and abs(C[0, 0] - C[1, 0]) >= 0.5


def test_synthetic_generator_is_deterministic_and_in_domain():
    a, b = data.synthetic(1000, 4, 3, 0), data.synthetic(1000, 4, 3, 0)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.X.shape == (1000, 3) and np.abs(a.X).max() <= 1.0
    assert not np.array_equal(a.X, data.synthetic(1000, 4, 3, 1).X)


def test_init_set_i_does_not_depend_on_count():
    f = StreamFactory(4, ("s1",))
    np.testing.assert_array_equal(initial_sets(f, 3, 5, 2)[2], initial_sets(f, 30, 5, 2)[2])
    assert math.isfinite(initial_sets(f, 1, 5, 2).sum())


# --- seeding the grid's Lloyd on its synopsis (docs/methods.md M3s) --------------------------


def _centre_of(cell: int, m: int, d: int) -> np.ndarray:
    digits = np.unravel_index(cell, (m,) * d)
    return -1.0 + (np.array(digits) + 0.5) * (2.0 / m)


def test_synopsis_seeds_sit_on_clear_cells_and_keep_half_the_given_sets():
    m, d, k = 10, 2, 3
    noisy = np.random.default_rng(0).laplace(0.0, 1.0, m**d)  # below ln(100) = 4.6 almost surely
    noisy = np.clip(noisy, -4.0, 4.0)
    clear = [7, 42, 77, 93]
    noisy[clear] = [30.0, 50.0, 20.0, 40.0]
    inits = np.random.default_rng(1).uniform(-1, 1, (5, k, d))
    out = synopsis_seeds(noisy, m, inits, 1.0, np.random.default_rng(2))
    centres = np.array([_centre_of(c, m, d) for c in clear])
    for s in range(3):  # ⌈5/2⌉ sets redrawn: every centre on a distinct clear cell
        hit = np.isclose(out[s][:, None, :], centres[None]).all(axis=2)
        assert hit.any(axis=1).all() and len(np.unique(out[s], axis=0)) == k
    np.testing.assert_array_equal(out[3:], inits[3:])


def test_synopsis_seeds_keep_the_given_sets_where_the_synopsis_has_too_few_clear_cells():
    m, d, k = 10, 2, 4
    noisy = np.zeros(m**d)
    noisy[[5, 55, 95]] = 100.0
    inits = np.random.default_rng(1).uniform(-1, 1, (4, k, d))
    out = synopsis_seeds(noisy, m, inits, 1.0, np.random.default_rng(2))
    np.testing.assert_array_equal(out, inits)


def test_synopsis_seeding_is_post_processing(s1):
    """Same ledger with either seeding: the seeds read only the released counts."""
    inits = np.random.default_rng(3).uniform(-1, 1, (6, 4, 2))
    given = eugkm(s1.X, 4, 1.0, inits, np.random.default_rng(4), n=5000.0)
    seeded = eugkm(s1.X, 4, 1.0, inits, np.random.default_rng(4), n=5000.0, seeding="synopsis")
    assert [e.epsilon for e in seeded.ledger.entries] == [e.epsilon for e in given.ledger.entries]
    assert seeded.ledger.total_epsilon == given.ledger.total_epsilon == 1.0
