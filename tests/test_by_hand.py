"""Budget and sensitivity bookkeeping checked against values worked out by hand.

Each test here was written to kill a surviving mutant of ``make mutation`` in code that
decides what is noised and how much: every expected value is a literal computed in the
comment beside it, never a call to the function under test.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from dpcluster.algorithms.dplloyd import dplloyd
from dpcluster.algorithms.hybrid import hybrid
from dpcluster.algorithms.pgkm import fitness_sensitivity, genetic_kmeans
from dpcluster.ldp.parties import decomposition_codec, pair_multiplicity
from dpcluster.privacy.response import BitVectorResponse


def test_fitness_sensitivity_is_d_times_the_squared_width():
    """Δf = d·(2r)²: d = 3, r = 2 gives 3·16 = 48; r = 0.5 gives 3·1 = 3."""
    assert fitness_sensitivity(3, 2.0) == 48.0
    assert fitness_sensitivity(3, 0.5) == 3.0


@pytest.mark.parametrize(
    "pairs,n,busiest",
    [
        (np.empty((0, 2), int), 4, 1),  # no pair: one release at most
        (np.array([[0, 1]]), 4, 1),
        (np.array([[0, 1], [0, 2], [1, 2], [0, 3]]), 4, 3),  # record 0 is in three pairs
        (np.array([[3, 1], [3, 2]]), 5, 2),
    ],
)
def test_pair_multiplicity_counts_the_busiest_record(pairs, n, busiest):
    assert pair_multiplicity(pairs, n) == busiest


def test_decomposition_codec_covers_r_squared():
    """μ = (3, 4): Z = 9 + 16 = 25, t_z = 12.5, centres on [0 − 12.5, 25 + 12.5]."""
    codec = decomposition_codec(np.array([3.0, 4.0]), 64, np.random.default_rng(0))
    assert (codec.t, codec.lo, codec.hi, codec.s) == (12.5, 0.0, 25.0, 64)
    assert codec.centres.min() >= -12.5 and codec.centres.max() <= 37.5
    assert codec.mu == 50.0


def test_pgkm_books_m_prime_times_r_it_selections_at_eps_over_80():
    """Defaults m = 200, m' = 10, r_it = 8: 80 selections of ε/80 each, rounds 0..7 ten
    times each, fitness sensitivity d·(2r)² = 2·4 = 8, the first from all 200 candidates."""
    X = np.random.default_rng(0).uniform(-1, 1, (30, 2))
    seen = []
    from dpcluster.privacy import observe

    with observe(seen.append):
        res = genetic_kmeans(X, 2, np.random.default_rng(1), 1.0)
    entries = res.ledger.entries
    assert len(entries) == 80 and res.iterations == 8
    assert all(e.epsilon == pytest.approx(1 / 80) and e.sensitivity == 8.0 for e in entries)
    assert [e.round for e in entries] == [r for r in range(8) for _ in range(10)]
    assert len(seen[0].query(X)) == 200 and len(seen[9].query(X)) == 191
    assert res.ledger.total_epsilon == pytest.approx(1.0)
    assert {e.purpose for e in entries} == {"select a parameter by SSE fitness"}
    assert all(s.purpose == "select a parameter by SSE fitness" for s in seen)
    assert all(s.mechanism.epsilon == pytest.approx(1 / 80) for s in seen)


def test_pgkm_allows_selecting_the_whole_pool_and_scales_with_r():
    X = np.random.default_rng(0).uniform(-2, 2, (30, 3))
    res = genetic_kmeans(X, 2, np.random.default_rng(1), 1.0, pool=4, selected=4, iterations=1, r=2)
    assert {e.sensitivity for e in res.ledger.entries} == {3 * 16.0}  # d·(2r)², r = 2
    with pytest.raises(ValueError):
        genetic_kmeans(X, 2, np.random.default_rng(1), 1.0, pool=4, selected=5, r=2)


def test_dplloyd_result_fields():
    X = np.random.default_rng(0).uniform(-1, 1, (100, 2))
    res = dplloyd(X, 3, 1.0, X[:3], np.random.default_rng(1))
    assert res.centroids.shape == (3, 2) and res.iterations == 5
    assert res.info == {"split": "sensitivity"}


def test_hybrid_defaults_and_the_switch_between_one_and_one_point_one():
    """N = 10,000, k = 2, d = 2, θ = 10: the switch-on ε is 0.864 (tests/test_noise.py);
    at 1.05 × 0.864 the hybrid is on, with one DPLloyd step by default."""
    X = np.random.default_rng(0).uniform(-1, 1, (10_000, 2))
    inits = np.random.default_rng(9).uniform(-1, 1, (1, 2, 2))
    on = hybrid(X, 2, 1.05 * 0.864, inits, np.random.default_rng(0), max_iter=1)
    assert len(on) == 1 and on[0].iterations == 1 and on[0].centroids.shape == (2, 2)
    assert on[0].info["fell_back"] is False and on[0].info["ineq15"] is True
    assert on[0].info["forced"] is False
    off = hybrid(X, 2, 0.95 * 0.864, inits, np.random.default_rng(0), max_iter=1)
    assert off[0].info["fell_back"] is True and off[0].centroids.shape == (2, 2)
    assert off[0].iterations >= 1


def test_bit_vector_likelihood_on_a_batch_of_runs():
    """Runs × records × s bits: each record's log-likelihood counts its own flips."""
    mech = BitVectorResponse(math.log(3.0), m_max=4, s=4)  # p = 3/4
    answer = np.zeros((2, 3, 4), bool)
    output = answer.copy()
    output[1, 2, :3] = True  # three flips in run 1, record 2
    ll = mech.log_likelihood(output, answer)
    assert ll.shape == (2, 3)
    assert ll[0, 0] == pytest.approx(4 * math.log(0.75))
    assert ll[1, 2] == pytest.approx(math.log(0.75) + 3 * math.log(0.25))


def test_cells_per_axis_at_an_epsilon_other_than_one():
    """m = round((N ε/θ)^(2/(2+d))): N = 20,000, ε = 0.5, θ = 10, d = 2 gives
    round(1000^0.5) = round(31.62) = 32; ε = 2 gives round(4000^0.5) = round(63.25) = 63."""
    from dpcluster.algorithms.eugkm import cells_per_axis

    assert cells_per_axis(20_000, 0.5, 2) == 32
    assert cells_per_axis(20_000, 2.0, 2) == 63
    assert cells_per_axis(20_000, 2.0, 2, theta=40.0) == 32


def test_eugkm_reports_its_grid():
    """N = 2,000, ε = 1, θ = 10, d = 2: m = round(200^0.5) = 14, 196 cells."""
    from dpcluster.algorithms.eugkm import eugkm

    X = np.random.default_rng(0).uniform(-1, 1, (2_000, 2))
    inits = np.random.default_rng(1).uniform(-1, 1, (3, 2, 2))
    res = eugkm(X, 2, 1.0, inits, np.random.default_rng(2), max_iter=3)
    assert res.info["m"] == 14 and res.info["cells"] == 196 and res.info["n_used"] == 2_000
    assert res.info["chosen_init"] in (0, 1, 2) and 1 <= res.iterations <= 3


def test_exponential_mechanism_probabilities_are_stable_for_large_scores():
    """Losses −2,000 and −1,000 at temperature 2Δ/ε = 1: the first wins with probability
    1/(1 + e^−1000) = 1 in double precision, with no overflow."""
    from dpcluster.privacy import ExponentialMechanism

    p = ExponentialMechanism(2.0, 1.0).probabilities(np.array([-2000.0, -1000.0]))
    assert p.tolist() == [1.0, 0.0]  # the smaller loss is the likelier


@pytest.mark.parametrize("rule,eps_spent", [("eq3", 1.0), ("gupt", 1.0 / 3.0)])
def test_gkm_noise_mechanism_at_r_two(rule, eps_spent):
    """k = 2, d = 3, l = 5, r = 2: sensitivity k·d·2r/l = 2·3·4/5 = 4.8; Eq. 3 spends ε = 1,
    GUPT's rule ε/3, so the scales are 4.8 and 14.4."""
    from dpcluster.algorithms.gkm import noise_mechanism

    mech = noise_mechanism(2, 3, 5, 1.0, r=2.0, rule=rule)
    assert mech.sensitivity == pytest.approx(4.8) and mech.epsilon == pytest.approx(eps_spent)
    # the lattice widens the scale by 2p = 2·k·d steps of γ = 2^-20 in Δ
    b = 4.8 / eps_spent
    assert b * (1 + 12 * 2**-20 / 4.8) <= mech.scale <= b * (1 + 13 * 2**-20 / 4.8)
    with pytest.raises(ValueError):
        noise_mechanism(2, 3, 5, 1.0, rule="other")


def test_exponential_mechanism_log_probabilities_by_hand_row_by_row():
    """ε = 1, Δ = 0.5: temperature 2Δ/ε = 1, so log P = −loss − log Σ exp(−loss) per row.
    The second row's smallest loss is 2, not 0, and its rows differ in their maxima."""
    from dpcluster.privacy.mechanisms import ExponentialMechanism

    mech = ExponentialMechanism(epsilon=1.0, sensitivity=0.5)
    # the lattice's temperature γ/r: 2Δ/ε = 1 widened by at most 2^-18 (docs/privacy.md)
    t = mech.scale
    assert 1.0 <= t <= 1.0 + 2.0**-18
    z = math.log(1.0 + math.exp(-1.0 / t) + math.exp(-3.0 / t))  # 0.349...
    got = mech.log_probabilities(np.array([[0.0, 1.0, 3.0], [2.0, 2.0, 2.0]]))
    expected = [[-z, -1.0 / t - z, -3.0 / t - z], [-math.log(3.0)] * 3]
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    assert mech.log_likelihood(1, np.array([2.0, 3.0, 5.0])) == pytest.approx(
        -1.0 / t - z, rel=1e-13
    )


def test_laplace_log_likelihood_by_hand():
    """ε = 0.5, Δ = 1: b = 2; the lattice γ = 2^-20 (2^-30·b is below the record
    lattice), Δ_γ = 2^20 + 2 steps, σ = Δ_γ/ε = 2^21 + 4 steps exactly; output 3 is
    z = 2^21 steps from the answer 1, so log P = −2^21/(2^21 + 4) + log tanh(1/(2σ))."""
    from dpcluster.privacy.mechanisms import LaplaceMechanism

    mech = LaplaceMechanism(0.5, 1.0)
    assert mech.lattice == 2.0**-20 and mech.sigma == 2**21 + 4
    got = mech.log_likelihood(np.array([3.0, 1.0, -1.0]), np.ones(3))
    norm = math.log(math.tanh(0.5 / (2**21 + 4)))
    far = -(2**21) / (2**21 + 4) + norm
    np.testing.assert_allclose(got, [far, norm, far], rtol=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_a_mechanism_with_a_bad_budget_names_itself(bad):
    from dpcluster.privacy.mechanisms import ExponentialMechanism, LaplaceMechanism

    with pytest.raises(ValueError, match="^exponential-mechanism epsilon must be positive"):
        ExponentialMechanism(epsilon=bad, sensitivity=1.0)
    with pytest.raises(ValueError, match="^exponential-mechanism sensitivity must be positive"):
        ExponentialMechanism(epsilon=1.0, sensitivity=bad)
    with pytest.raises(ValueError, match="^Laplace sensitivity must be positive and finite, got"):
        LaplaceMechanism(1.0, bad)
    with pytest.raises(ValueError, match="^Laplace epsilon must be positive and finite, got"):
        LaplaceMechanism(bad, 1.0)


def test_improved_dplloyd_at_rho_one_half_by_hand():
    """A2 at d = 2, ρ = 0.5: c = (4·2·0.25)^(1/3) = 2^(1/3) = 1.259921; per iteration the
    counts get ε_iter·c/(2+c) = 0.386488·ε_iter and the sum matrix (sensitivity 2)
    ε_iter·2/(2+c) = 0.613512·ε_iter. N = 1000, k = 3: ε_m = sqrt(500·27/10⁶·(2+c)³)
    = 0.683876; ε = 3.0003·ε_m = 2.051834 gives t = 3 (a 0.1 % larger ε_m would give 2)."""
    from dpcluster.algorithms.dplloyd import dplloyd_improved, improved_iterations

    assert improved_iterations(2.051834, 1000, 3, 2, 0.5) == 3
    assert improved_iterations(2.04, 1000, 3, 2, 0.5) == 2
    X = np.random.default_rng(0).uniform(-1, 1, (1000, 2))
    init = np.array([[-0.5, 0.0], [0.0, 0.5], [0.5, 0.0]])
    res = dplloyd_improved(X, 3, 2.051834, init, np.random.default_rng(1), rho=0.5)
    assert res.iterations == 3
    assert res.info == {"split": "improved", "c": pytest.approx(1.2599210498948732)}
    by_purpose = {}
    for e in res.ledger.entries:
        by_purpose.setdefault(e.purpose, []).append((e.round, e.epsilon, e.sensitivity))
    eps_iter = 2.051834 / 3
    assert by_purpose["cluster counts"] == [
        (i, pytest.approx(0.38648820956430935 * eps_iter), 1.0) for i in range(3)
    ]
    assert by_purpose["cluster coordinate sums"] == [
        (i, pytest.approx(0.6135117904356906 * eps_iter), 2.0) for i in range(3)
    ]
    assert res.centroids.shape == (3, 2) and res.centroids.dtype == np.float64


def test_dplloyd_batch_refuses_an_unknown_split():
    from dpcluster.algorithms.dplloyd import dplloyd_batch

    X = np.zeros((4, 2))
    streams = {"count": np.random.default_rng(0), "sum": np.random.default_rng(1)}
    with pytest.raises(ValueError, match="split must be 'sensitivity' or 'improved'"):
        dplloyd_batch(X, np.zeros((1, 2, 2)), 1.0, streams, split="IMPROVED")


def test_eugkm_grid_by_hand():
    """N = 1000, d = 2, θ = 10, ε = 0.45: m = sqrt(Nε/θ) = sqrt(45) = 6.708, so 7 cells per
    axis rounded and 6 floored; 7² = 49 cells fit max_cells = 49 and not 48."""
    from dpcluster.algorithms.eugkm import eugkm

    X = np.random.default_rng(0).uniform(-1, 1, (1000, 2))
    inits = np.random.default_rng(1).uniform(-1, 1, (2, 2, 2))
    run = lambda **kw: eugkm(X, 2, 0.45, inits, np.random.default_rng(2), **kw)  # noqa: E731
    assert run().info["m"] == 7 and run().info["cells"] == 49
    assert run(rounding="floor").info["m"] == 6
    assert run(max_cells=49).info["cells"] == 49
    message = "EUGkM grid has 7^2 = 49 cells, above max_cells=48; raise max_cells or use rounding"
    with pytest.raises(ValueError, match=re.escape(message)):
        run(max_cells=48)


def test_eugkm_counts_the_grid_on_minus_r_to_r_and_keeps_the_best_set():
    """Records in [-2, 2]² with r = 2: the released counts are the histogram of the grid on
    [-2, 2]², not on [-1, 1]². Of three initial sets, the third sits on the two clusters and
    the first two tie every record to one centroid, so the third is chosen."""
    from dpcluster.algorithms.eugkm import eugkm
    from dpcluster.kernels import grid_histogram
    from dpcluster.privacy import observe

    rng = np.random.default_rng(3)
    centres = np.array([[-1.0, -1.0], [1.0, 1.0]])
    X = np.clip(np.repeat(centres, 500, axis=0) + 0.1 * rng.standard_normal((1000, 2)), -2, 2)
    bad = np.array([[1.8, -1.8], [-1.8, 1.8]])
    inits = np.stack([bad, bad[::-1], centres])
    seen = []
    with observe(seen.append):
        res = eugkm(X, 2, 50.0, inits, np.random.default_rng(4), max_iter=1, r=2.0)
    m = res.info["m"]
    np.testing.assert_array_equal(seen[0].query(X), grid_histogram(X, m, 2.0))
    assert not np.array_equal(seen[0].query(X), grid_histogram(X, m, 1.0))
    assert res.info["chosen_init"] == 2
    np.testing.assert_allclose(res.centroids, centres, atol=0.05)


def test_eugkm_private_n_books_and_releases_the_record_count():
    from dpcluster.algorithms.eugkm import eugkm
    from dpcluster.privacy import observe

    X = np.random.default_rng(0).uniform(-1, 1, (1000, 2))
    seen = []
    with observe(seen.append):
        res = eugkm(X, 2, 1.0, X[None, :2], np.random.default_rng(1), private_n=True)
    first = res.ledger.entries[0]
    assert (first.purpose, first.epsilon, first.sensitivity) == (
        "record count N (chooses M)",
        pytest.approx(0.05),
        1.0,
    )
    assert seen[0].purpose == "record count N" and seen[0].mechanism.epsilon == pytest.approx(0.05)
    assert seen[0].query(X) == 1000.0
    assert res.info["n_used"] == pytest.approx(float(seen[0].output))


def test_gkm_at_r_two_by_hand():
    """N = 1000 in blocks of 100: l = 10; k = d = 2, r = 2: sensitivity k·d·2r/l = 1.6.
    Records sit at ±1.5, outside [-1, 1], so an average clipped to r = 1 would show."""
    from dpcluster.algorithms.gkm import gkm
    from dpcluster.privacy import observe

    rng = np.random.default_rng(0)
    X = np.repeat([[-1.5, -1.5], [1.5, 1.5]], 500, axis=0) + 0.01 * rng.standard_normal((1000, 2))
    seen = []
    with observe(seen.append):
        res = gkm(X, 2, 1e6, np.random.default_rng(1), block=100, r=2.0)
    entry, read = res.ledger.entries  # the release, and the exact read of N (l = N / 100)
    assert read.purpose.startswith("record count N (read exactly") and read.epsilon == math.inf
    assert (entry.purpose, entry.epsilon, entry.sensitivity) == (
        "averaged block centroids (k·d coordinates)",
        1e6,
        pytest.approx(1.6),
    )
    assert res.info == {"blocks": 10, "block_size": 100}
    np.testing.assert_allclose(np.sort(res.centroids[:, 0]), [-1.5, 1.5], atol=0.01)
    outputs = np.array([[[1.5, 1.5], [-1.5, -1.5]], [[-1.5, -1.5], [1.8, 1.2]]])
    np.testing.assert_allclose(seen[0].query(outputs), [[-1.5, -1.5], [1.65, 1.35]])


def test_gkm_aggregate_by_hand():
    """Four block outputs (k = 2, d = 1) at r = 2, aligned by coordinate: the average is
    [[-1.25], [1.5]]; sensitivity k·d·2r/l = 2·1·4/4 = 2."""
    from dpcluster.algorithms.gkm import gkm_aggregate
    from dpcluster.privacy import observe

    outputs = np.array([[[-1.0], [1.5]], [[1.5], [-1.5]], [[-1.0], [1.5]], [[1.5], [-1.5]]])
    seen = []
    with observe(seen.append):
        res = gkm_aggregate(outputs, 1e6, np.random.default_rng(0), r=2.0)
    np.testing.assert_allclose(res.centroids, [[-1.25], [1.5]], atol=1e-4)
    (entry,) = res.ledger.entries
    assert (entry.epsilon, entry.sensitivity) == (1e6, pytest.approx(2.0))
    assert res.info == {"blocks": 4}
    np.testing.assert_allclose(seen[0].query(outputs[:2]), [[-1.25], [1.5]])


def test_dplloyd_single_fit_at_r_two_by_hand():
    """d = 3, r = 2, t = 3, ε = 1.5: ε_iter = 0.5 split 1 : d·r = 1 : 6, so the counts get
    0.5/7 and the sum matrix (sensitivity d·r = 6) 3/7 per iteration. With min_count above
    N no noisy count passes, so every centroid keeps its initial value."""
    from dpcluster.algorithms.dplloyd import dplloyd, sensitivity_split

    split = sensitivity_split(1.0, 3, r=2.0)
    assert (split.count, split.sum, split.d) == (pytest.approx(1 / 7), pytest.approx(6 / 7), 3)
    assert split.per_coordinate_sum == pytest.approx(2 / 7)
    X = np.random.default_rng(0).uniform(-2, 2, (500, 3))
    X[:, 0] = np.sign(X[:, 0]) * 1.8  # two clusters whose means lie beyond 1
    init = np.array([[-1.5, 0.0, 0.0], [1.5, 0.0, 0.0]])
    res = dplloyd(X, 2, 1.5, init, np.random.default_rng(1), iterations=3, r=2.0)
    got = [(e.purpose, e.round, e.epsilon, e.sensitivity) for e in res.ledger.entries]
    assert got == [
        (purpose, i, pytest.approx(eps), sens)
        for i in range(3)
        for purpose, eps, sens in (
            ("cluster counts", 0.5 / 7, 1.0),
            ("cluster coordinate sums", 3 / 7, 6.0),
        )
    ]
    assert np.abs(res.centroids).max() > 1.0  # centroids on [-2, 2], not clipped to 1
    kept = dplloyd(X, 2, 1.5, init, np.random.default_rng(1), iterations=3, r=2.0, min_count=1e9)
    np.testing.assert_array_equal(kept.centroids, init)


def test_runs_sharing_a_centroid_set_get_the_statistics_of_their_own_set():
    from dpcluster.algorithms.dplloyd import distinct_cluster_stats
    from dpcluster.kernels import cluster_stats

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 2))
    A, B = rng.uniform(-1, 1, (2, 3, 2))
    C = np.stack([A, B, A, B, B])
    counts, sums = distinct_cluster_stats(X, C)
    ref_counts, ref_sums = cluster_stats(X, C)
    np.testing.assert_array_equal(counts, ref_counts)
    np.testing.assert_array_equal(sums, ref_sums)
    assert counts.shape == (5, 3) and sums.shape == (5, 3, 2)


def test_mediator_encoding_books_the_dpbv_and_the_exact_mediator_count():
    """14 values, gap 7 bridged every ≤ 1.5: 4 mediators. The DPBV of the 18 values is one
    per-attribute release (ε_bit = 2, m_max = 169 at s = 400 here: provable 338, claimed 2);
    the mediator count is an exact release (ε = ∞) carrying the paper's claim."""
    from dpcluster.ldp.bitvector import RecordCodec
    from dpcluster.ldp.parties import Custodian

    x = np.concatenate([np.linspace(0, 3, 7), np.linspace(10, 13, 7)])
    codec = RecordCodec.draw(400, 1.5, 0, 13, np.random.default_rng(0))
    alice = Custodian("alice", x[:, None], 2.0, np.random.default_rng(1))
    msg = alice.encode_with_mediators(codec, 0, spacing=1.5)
    assert (msg.sender, msg.what, msg.n_mediators, msg.bits.shape[0]) == (
        "alice",
        "attribute 0 + mediators",
        4,
        18,
    )
    dpbv, count = alice.ledger.entries
    assert (dpbv.mechanism, dpbv.epsilon, dpbv.claimed_epsilon) == ("BitVectorResponse", 338.0, 2.0)
    assert dpbv.details["m_max"] == 169
    assert (count.purpose, count.mechanism, count.epsilon) == (
        "number of mediators",
        "ExactRelease",
        math.inf,
    )
    assert count.claim == "Sun et al.: mediators cost computation only"
    # the bits are randomised: the same values encoded without ε give other bits
    plain = Custodian("alice", x[:, None], None, np.random.default_rng(1))
    assert not np.array_equal(plain.encode_with_mediators(codec, 0, 1.5).bits, msg.bits)


def test_partial_distances_are_labelled_and_only_the_values_are_charged():
    from dpcluster.ldp.parties import Custodian, decomposition_codec

    X = np.random.default_rng(0).uniform(0, 25, (6, 2))
    pairs = np.array([[0, 1], [0, 2], [0, 3], [4, 5]])
    codec = decomposition_codec(np.full(2, 25.0), 64, np.random.default_rng(1))
    bob = Custodian("bob", X, 2.0, np.random.default_rng(2))
    value, zero = bob.encode_partial_sq_distances(pairs, slice(0, 2), codec)
    assert [(m.sender, m.what) for m in (value, zero)] == [("bob", "R2"), ("bob", "R2-reference")]
    (spend,) = bob.ledger.entries
    assert spend.purpose == "DPBV of R² per pair (charged once per pair of the worst-case record)"


def test_hybrid_at_r_two_and_theta_five_by_hand():
    """d = k = 2, N = 4000, r = 2, θ = 5. Ineq. 15's threshold M_req = 12(dr+1)²k²(d + d r²)
    /(d r²) = 12·25·4·10/8 = 1500; at d = 2 the switch-on ε is θ·M_req/N = 1.875 (3.75 at
    θ = 10, 1.08 at r = 1). At ε = 2.1 the hybrid runs: EUGkM on ε/2 with m = floor(sqrt(
    4000·1.05/5)) = floor(28.98) = 28, then one DPLloyd step on ε/2 split 1 : dr = 1 : 4.
    At ε = 1.5 it falls back to EUGkM on all of ε: m = floor(sqrt(1200)) = 34."""
    from dpcluster.algorithms.hybrid import hybrid

    X = np.random.default_rng(0).uniform(-2, 2, (4000, 2))
    inits = np.random.default_rng(1).uniform(-2, 2, (3, 2, 2))
    kw = dict(theta=5.0, r=2.0, rounding="floor", max_iter=3, lloyd_runs=2)
    runs = hybrid(X, 2, 2.1, inits, np.random.default_rng(2), **kw)
    assert len(runs) == 2
    info = runs[0].info
    assert (info["ineq15"], info["fell_back"], info["m"]) == (True, False, 28)
    got = [(e.purpose, e.epsilon, e.sensitivity) for e in runs[0].ledger.entries]
    read = "record count N (read exactly by the hybrid's switch and EUGkM's M)"
    assert got == [
        ("grid cell counts", pytest.approx(1.05), 1.0),
        (read, math.inf, math.inf),  # the paper's switch reads the exact N
        ("cluster counts", pytest.approx(0.21), 1.0),
        ("cluster coordinate sums", pytest.approx(0.84), 4.0),
    ]
    (alone,) = hybrid(X, 2, 1.5, inits, np.random.default_rng(2), **kw)
    assert (alone.info["ineq15"], alone.info["fell_back"], alone.info["m"]) == (False, True, 34)
    assert [(e.epsilon, e.sensitivity) for e in alone.ledger.entries] == [
        (1.5, 1.0),
        (math.inf, math.inf),
    ]


def test_dplloyd_clips_noisy_means_to_the_domain_on_both_sides():
    """At ε = 0.01 the noisy sums and counts put most means far outside [-r, r]; A1 clips
    them to the domain, so every centroid lies in [-2, 2]² at r = 2, and some sit exactly on
    each face."""
    from dpcluster.algorithms.dplloyd import dplloyd_batch

    X = np.random.default_rng(0).uniform(-2, 2, (300, 2))
    inits = np.random.default_rng(1).uniform(-2, 2, (200, 3, 2))
    streams = {"count": np.random.default_rng(2), "sum": np.random.default_rng(3)}
    C, _ = dplloyd_batch(X, inits, 0.01, streams, r=2.0)
    assert np.abs(C).max() <= 2.0
    assert (C == 2.0).any() and (C == -2.0).any()
