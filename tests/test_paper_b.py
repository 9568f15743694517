"""Paper B: encodings, estimators, Algorithm 1, kCluster and the distributed settings."""

import math
import re

import numpy as np
import pytest

from dpcluster.kernels.bits import hamming_pairs
from dpcluster.ldp.baselines import adp, rsp
from dpcluster.ldp.bitvector import (
    BVCodec,
    RecordCodec,
    dpbv_delta,
    keep_probability,
    pack_bits,
    unpack_bits,
)
from dpcluster.ldp.distance import consistence, distance_matrix, pair_estimates
from dpcluster.ldp.kcluster import kcluster
from dpcluster.ldp.parties import (
    Custodian,
    Encoded,
    Receiver,
    horizontal_distances,
    vertical_distances,
)
from dpcluster.privacy import Ledger
from tests import naive

# --- encodings and kernels -------------------------------------------------------------


@pytest.mark.parametrize(
    "eps,s,delta",
    [(2, 1000, 7.514e-56), (1, 1000, 8.96e-137), (4, 1000, 1.31e-8), (2, 100, 3.07e-6)],
)
def test_theorem4_delta(eps, s, delta):
    assert dpbv_delta(eps, s) == pytest.approx(delta, rel=2e-3)
    p = keep_probability(eps)
    if eps == 2:
        assert p == pytest.approx(0.88080, abs=1e-5)


@pytest.mark.kernel
@pytest.mark.parametrize("s", [1, 63, 64, 65, 1000])
def test_pack_roundtrip_and_popcount_oracle(rng, s):
    bits = rng.random((40, 3, s)) < 0.3
    other = rng.random((40, 3, s)) < 0.6
    a, b = pack_bits(bits), pack_bits(other)
    assert a.dtype == np.uint64 and a.shape == (40, 3, (s + 63) // 64)
    np.testing.assert_array_equal(unpack_bits(a, s), bits)
    out = np.empty((40, 3), np.int64)
    hamming_pairs(a, b, out)
    np.testing.assert_array_equal(out, (bits != other).sum(axis=2))  # naive oracle


def test_bv_definition_and_public_private_streams():
    codec = BVCodec.draw(200, 1.5, 0.0, 10.0, np.random.default_rng(1))
    assert codec.mu == pytest.approx(13.0)
    assert codec.centres.min() >= -1.5 and codec.centres.max() <= 11.5
    x = np.array([2.0, 7.5])
    bits = unpack_bits(codec.encode(x), 200)
    np.testing.assert_array_equal(bits, np.abs(x[:, None] - codec.centres) <= 1.5)
    # the same public codec and private stream give the same report; the flips come only
    # from the private generator
    a = codec.encode(x, 1.0, np.random.default_rng(5))
    b = codec.encode(x, 1.0, np.random.default_rng(5))
    c = codec.encode(x, 1.0, np.random.default_rng(6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    with pytest.raises(ValueError, match="private generator"):
        codec.encode(x, 1.0)


@pytest.mark.statistical
def test_dpbv_keep_probability():
    eps, s, n = 1.0, 1000, 400
    codec = BVCodec.draw(s, 3.0, 0.0, 25.0, np.random.default_rng(2))
    x = np.random.default_rng(3).uniform(0, 25, n)
    clean = unpack_bits(codec.encode(x), s)
    ledger = Ledger()
    noisy = unpack_bits(codec.encode(x, eps, np.random.default_rng(4), ledger), s)
    kept = (clean == noisy).mean()
    p = keep_probability(eps)
    m = n * s
    assert abs(kept - p) < 6 * math.sqrt(p * (1 - p) / m)  # binomial s.e., 6 sigma
    spend = ledger.entries[0]
    assert spend.claimed_epsilon == eps and spend.claimed_delta == dpbv_delta(eps, s)
    assert spend.epsilon == codec.m_max * eps and spend.delta == 0.0 and spend.claim


def test_fig3_worked_example_saturates():
    """t = 1.2, s = 1000 on [0, 20]: the pair (5, 9) is estimated near 2t = 2.4, not 4."""
    est = []
    for seed in range(40):
        rc = RecordCodec.draw(1000, 1.2, 0, 20, np.random.default_rng(seed))
        est.append(
            pair_estimates(rc, rc.encode(np.array([[5.0]])), rc.encode(np.array([[9.0]])), None)[
                0, 0
            ]
        )
    # per-draw sd = μ sqrt(π(1−π)/(4s)) with π = 4.8/22.4: 0.145; mean over 40 draws
    assert abs(np.mean(est) - 2.4) < 6 * 0.145 / math.sqrt(40)


@pytest.mark.statistical
def test_debiased_dpbv_estimator_is_unbiased():
    """Mean over many pairs at distance 2 (< 2t) and over public draws is 2, within 6 s.e."""
    eps, s, dist = 2.0, 1000, 2.0
    est = []
    for seed in range(20):
        rc = RecordCodec.draw(s, 3.0, 0, 25, np.random.default_rng([7, seed]))
        x = np.random.default_rng([8, seed]).uniform(0, 23, (500, 1))
        E = rc.encode(x, eps, np.random.default_rng([9, seed]))
        F = rc.encode(x + dist, eps, np.random.default_rng([10, seed]))
        est.append(pair_estimates(rc, E, F, eps)[:, 0])
    est = np.concatenate(est)
    p = keep_probability(eps)
    q = 1 - p
    pi = 2 * p * q + (p - q) ** 2 * 2 * dist / 31.0
    sd = 31.0 * math.sqrt(pi * (1 - pi) / (4 * s)) / (p - q) ** 2  # B4 variance
    # pairs within one public draw share r: use the per-draw means as the samples
    per_draw = est.reshape(20, -1).mean(axis=1)
    se = max(per_draw.std(ddof=1), sd / math.sqrt(500)) / math.sqrt(20)
    assert abs(per_draw.mean() - dist) < 6 * se
    assert est.std() == pytest.approx(sd, rel=0.25)


@pytest.mark.kernel
def test_distance_matrix_matches_pairwise_estimates(rng):
    rc = RecordCodec.draw(
        300, [2.0, 3.0, 4.0], np.zeros(3), np.full(3, 10.0), np.random.default_rng(0)
    )
    X = rng.uniform(0, 10, (30, 3))
    E = rc.encode(X, 1.5, np.random.default_rng(1))
    D = distance_matrix(rc, E, epsilon=1.5)
    i, j = np.triu_indices(30, 1)
    per = np.clip(pair_estimates(rc, E[i], E[j], 1.5), 0, rc.widths)
    np.testing.assert_allclose(D[i, j], np.sqrt((per**2).sum(axis=1)), rtol=1e-12)
    np.testing.assert_array_equal(D, D.T)
    assert np.all(np.diag(D) == 0)


# --- Algorithm 1 -------------------------------------------------------------------------


@pytest.mark.kernel
def test_consistence_on_a_hand_built_case():
    """Values 0, 1, 2, 3 with a 'saturated' estimate of 1.9 for every pair ≥ 2 apart."""
    x = np.array([0.0, 1.0, 2.0, 3.0])
    D = np.abs(x[:, None] - x[None, :])
    D[D >= 2] = 1.9  # saturation: τ = 1.9, λ = 0.8·1.9 = 1.52 → only neighbours are local
    out, F = consistence(D)
    np.testing.assert_allclose(out, np.abs(x[:, None] - x[None, :]))
    assert F[0, 1] == 0 and F[0, 2] == 1 and F[0, 3] == 2  # 0-1-2 first, then 0-2 + 2-3


@pytest.mark.kernel
def test_consistence_matches_a_plain_numpy_reading_of_algorithm_1():
    """The tiled kernel gives exactly the reference's values and flags (n = 70 is not a
    multiple of the 16-row tile; saturated noisy estimates as in Figure 5)."""
    from dpcluster.ldp.distance import CONSISTENCE_TILE

    rng = np.random.default_rng(5)
    x = rng.uniform(0, 25, 70)
    D = np.minimum(np.abs(x[:, None] - x[None, :]), 6.0) + rng.normal(0, 0.5, (70, 70))
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0.0)
    assert 70 % CONSISTENCE_TILE
    out, F = consistence(D, kappa=0.3)  # a small local view: several rounds are needed
    ref_out, ref_F = naive.consistence(D, kappa=0.3)
    assert F.max() >= 3 and (F < np.iinfo(np.int64).max).all()
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_array_equal(F, ref_F)


def test_consistence_lowers_the_error_on_uniform_values():
    x = np.random.default_rng(0).uniform(0, 25, (300, 1))
    rc = RecordCodec.draw(1000, 3.0, 0, 25, np.random.default_rng(1))
    D = distance_matrix(rc, rc.encode(x))
    T = np.abs(x - x.T)
    assert np.abs(consistence(D)[0] - T).mean() < 0.25 * np.abs(D - T).mean()


# --- kCluster ----------------------------------------------------------------------------


def test_kcluster_recovers_well_separated_clusters():
    rng = np.random.default_rng(3)
    centres = np.array([[0, 0], [10, 0], [0, 10]])
    X = np.concatenate([c + rng.normal(0, 0.5, (40, 2)) for c in centres])
    truth = np.repeat(np.arange(3), 40)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(axis=2))
    labels, rounds = kcluster(D, 3, np.random.default_rng(0))
    # same partition up to renaming
    for c in range(3):
        assert len(set(labels[truth == c])) == 1
    assert len(set(labels)) == 3 and rounds >= 1


# --- distributed settings --------------------------------------------------------------


def _carries_a_raw_value(msg: Encoded, raw: np.ndarray) -> bool:
    """Does any 64-bit word of the message equal the bit pattern of any raw float64?"""
    return bool(np.isin(np.ascontiguousarray(msg.bits).view(np.uint64), raw.view(np.uint64)).any())


def test_no_raw_value_reaches_the_receiver():
    rng = np.random.default_rng(0)
    XA, XB = rng.uniform(0, 25, (20, 4)), rng.uniform(0, 25, (15, 4))
    codec = RecordCodec.draw(256, 6.0, np.zeros(4), np.full(4, 25.0), np.random.default_rng(1))
    alice = Custodian("alice", XA, 2.0, np.random.default_rng(2))
    bob = Custodian("bob", XB, 2.0, np.random.default_rng(3))
    agg = Receiver("aggregator")
    D = horizontal_distances(alice, bob, codec, agg)
    assert D.shape == (20, 15)
    assert agg.received and all(
        isinstance(m, Encoded) and m.bits.dtype == np.uint64 for m in agg.received
    )
    assert not any(_carries_a_raw_value(m, XA) or _carries_a_raw_value(m, XB) for m in agg.received)
    # the check can fire: a message carrying the raw floats is caught
    assert _carries_a_raw_value(Encoded("alice", "raw", XA.view(np.uint64)), XA)
    with pytest.raises(TypeError):
        agg.receive(XA)  # a raw array is refused
    with pytest.raises(TypeError):
        Encoded("bob", "records", XB)  # and cannot even be wrapped
    assert alice.ledger.entries and bob.ledger.entries  # every release was recorded


@pytest.mark.parametrize("method", ["non-decomposition", "decomposition"])
def test_vertical_estimate_converges_to_exact_distance(method):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 25, (200, 6))
    pairs = rng.integers(0, 200, (300, 2))
    true = np.sqrt(((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2).sum(axis=1))
    errors = []
    for s in (100, 4000):
        codec = RecordCodec.draw(s, 12.5, np.zeros(3), np.full(3, 25.0), np.random.default_rng(1))
        bob = Custodian("bob", X, None, np.random.default_rng(2))  # plain BV: error ~ 1/sqrt(s)
        est = vertical_distances(
            X[:, :3], bob, pairs, 3, codec, method, np.random.default_rng(3), Receiver("alice")
        )
        errors.append(np.abs(est - true).mean())
    assert errors[1] < 0.5 * errors[0] and errors[1] < 1.0
    dp_bob = Custodian("bob", X, 2.0, np.random.default_rng(4))
    vertical_distances(
        X[:, :3], dp_bob, pairs, 3, codec, method, np.random.default_rng(3), Receiver("alice")
    )
    # non-decomposition: one spend per Bob attribute; decomposition: one for R² (the
    # reference 0 is data-independent and free)
    assert len(dp_bob.ledger.entries) == (3 if method == "non-decomposition" else 1)


def test_adp_and_rsp():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 16, (4000, 64))
    noisy = adp(X, 2.0, np.random.default_rng(1))
    assert (noisy - X).std() == pytest.approx(2.0, rel=0.01)
    assert (
        adp(X, 4.0, np.random.default_rng(1), sigma_is_variance=True) - X
    ).std() == pytest.approx(2.0, rel=0.01)
    P = rsp(X, 48, np.random.default_rng(2))
    assert P.shape == (4000, 48)
    i, j = rng.integers(0, 4000, (2, 2000))
    ratio = ((P[i] - P[j]) ** 2).sum(1).mean() / ((X[i] - X[j]) ** 2).sum(1).mean()
    assert ratio == pytest.approx(1.0, abs=0.15)  # E||p'_a − p'_b||² = ||p_a − p_b||²


def test_paper_b_spec_runs_through_the_harness(tmp_path):
    """A tiny Table-III-like spec: metrics other than NICV reach summary and table."""
    from dpcluster.harness import run_spec
    from dpcluster.spec import parse

    raw = {
        "name": "tb",
        "seed": 3,
        "datasets": [{"name": "blobs", "params": {"N": 90, "k": 3}}],
        "epsilon": [2.0],
        "algorithms": [
            {"name": "kmeans", "repeat": 2},
            {"name": "dp_kcluster", "repeat": 2, "params": {"s": 128}},
        ],
        "metrics": ["ari", "nmi"],
        "plot": {"kind": "table"},
    }
    rep = run_spec(parse(raw, "tb.yaml"), tmp_path / "out")
    assert not rep.failures
    s = rep.summary.set_index("algorithm")
    assert s.loc["kmeans", "metric"] == "ari" and s.loc["kmeans", "n"] == 2
    assert 0.9 < s.loc["kmeans", "ari_mean"] <= 1.0  # well-separated blobs
    # the paper's claim: ε per attribute, d·ε per record; what holds is Σ_a m_max,a·ε, larger
    assert s.loc["dp_kcluster", "epsilon_claimed_max"] == pytest.approx(2 * 2.0)
    assert s.loc["dp_kcluster", "epsilon_provable_max"] > 10 * 2 * 2.0
    assert s.loc["kmeans", "epsilon_provable_max"] == math.inf
    table = (tmp_path / "out" / "table.md").read_text()
    assert "dp_kcluster(s=128)" in table and "±" in table


def test_mediators_make_unreachable_pairs_reachable():
    """Two groups 7 apart with t = 1.5 (2t = 3): cross pairs are unreachable by Algorithm 1
    alone and saturate near 3; mediators every ≤ 1.5 bridge the gap (B2)."""
    from dpcluster.ldp.distance import consistent_distances, mediator_values

    x = np.concatenate([np.linspace(0, 3, 7), np.linspace(10, 13, 7)])
    assert len(mediator_values(x, 1.5)) == 4 and mediator_values(np.array([1.0]), 1.5).size == 0
    codec = RecordCodec.draw(4000, 1.5, 0, 13, np.random.default_rng(0))
    alice = Custodian("alice", x[:, None], None, np.random.default_rng(1))
    receiver = Receiver("aggregator")
    plain = receiver.receive(alice.encode_records(codec))
    D0, F0 = consistent_distances(codec, plain, len(x))
    msg = alice.encode_with_mediators(codec, 0, spacing=1.5)
    assert msg.n_mediators == 4 and msg.bits.shape[0] == len(x) + 4
    D1, F1 = consistent_distances(codec, receiver.receive(msg), len(x))
    truth = np.abs(x[:, None] - x[None, :])
    cross = np.ix_(range(7), range(7, 14))
    assert np.all(F0[cross] == np.iinfo(np.int64).max)  # unreachable without mediators
    assert D0[cross].max() < 3.6  # saturated near 2t
    assert np.all(F1[cross] < np.iinfo(np.int64).max)
    assert np.abs(D1[cross] - truth[cross]).max() < 1.0


@pytest.mark.parametrize(
    "s,t,lo,hi,mode,words",
    [
        (0, 1.0, 0.0, 1.0, "extended", "need s >= 1, t > 0 and hi > lo; got s=0"),
        (8, 0.0, 0.0, 1.0, "extended", "got s=8, t=0.0"),
        (8, 1.0, 2.0, 2.0, "extended", "[2.0, 2.0]"),
        (8, 1.0, 0.0, 1.0, "wide", "unknown range mode 'wide'"),
    ],
)
def test_a_codec_with_no_range_or_window_is_refused_by_name(s, t, lo, hi, mode, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        BVCodec.draw(s, t, lo, hi, np.random.default_rng(0), mode)
    BVCodec.draw(1, 1e-9, 0.0, 1e-9, np.random.default_rng(0), "plain")  # the smallest legal


@pytest.mark.parametrize("codec_of", ["value", "record"])
def test_plain_centres_stay_in_the_range_and_extended_ones_reach_t_beyond(codec_of):
    """B2: plain draws r_j ~ U[L, U] (μ = U − L); extended U[L − t, U + t] (μ = U − L + 2t)."""
    for mode, (a, b) in (("plain", (0.0, 10.0)), ("extended", (-3.0, 13.0))):
        rng = np.random.default_rng(1)
        if codec_of == "value":
            codec = BVCodec.draw(4000, 3.0, 0.0, 10.0, rng, mode)
        else:
            codec = RecordCodec.draw(4000, 3.0, [0.0], [10.0], rng, mode).attributes[0]
        r = codec.centres
        assert codec.range_mode == mode
        assert a <= r.min() < a + 0.05 and b - 0.05 < r.max() <= b


def test_a_record_encoders_release_reads_its_own_column_of_a_neighbour():
    """The audit evaluates each attribute's release on neighbouring record matrices: the
    release's query must read that attribute's column, not the first or the whole matrix."""
    from dpcluster.privacy.transcript import observe

    X = np.array([[1.0, 9.0], [4.0, 2.0], [7.0, 5.0]])
    codec = RecordCodec.draw(64, 2.0, [0.0, 0.0], [10.0, 10.0], np.random.default_rng(2))
    seen = []
    with observe(seen.append):
        codec.encode(X, 1.0, np.random.default_rng(3), Ledger())
    assert len(seen) == 2
    for a, rel in enumerate(seen):
        expected = codec.attributes[a].clean_bits(X[:, a])
        assert np.array_equal(rel.query(X), expected)
        assert not np.array_equal(rel.query(X), codec.attributes[1 - a].clean_bits(X[:, a]))
