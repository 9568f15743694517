"""What the ledgers prove: exact m_max, the tight δ, Paper-B rows, budget matching, bounds."""

import itertools
import math
import warnings

import numpy as np
import pytest

from dpcluster import data, harness
from dpcluster.experiments import CellContext
from dpcluster.ldp.bitvector import BVCodec, dpbv_delta, pack_bits
from dpcluster.ldp.parties import Custodian, pair_multiplicity
from dpcluster.privacy import LOCAL, BitVectorResponse, Ledger, keep_probability, tight_delta
from dpcluster.rng import StreamFactory
from dpcluster.spec import parse


def brute_m_max(codec: BVCodec, points: int = 200_001) -> int:
    """Largest Hamming distance over a dense grid of the domain plus every breakpoint."""
    grid = np.linspace(codec.lo, codec.hi, points)
    edges = np.concatenate([codec.centres - codec.t, codec.centres + codec.t])
    x = np.concatenate([grid, edges[(edges >= codec.lo) & (edges <= codec.hi)]])
    vectors = np.unique(codec.clean_bits(x), axis=0).astype(np.int64)
    return int(max((np.abs(a - vectors).sum(axis=1).max() for a in vectors), default=0))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["extended", "plain"])
def test_m_max_is_exact(seed, mode):
    rng = np.random.default_rng(seed)
    t = float(rng.uniform(0.5, 8.0))
    codec = BVCodec.draw(12, t, 0.0, 16.0, rng, mode)
    assert codec.m_max == brute_m_max(codec)
    x, x2 = codec.worst_pair()
    assert codec.lo <= min(x, x2) and max(x, x2) <= codec.hi
    assert (codec.clean_bits([x]) != codec.clean_bits([x2])).sum() == codec.m_max


def test_m_max_on_digits_is_every_bit():
    """t = 8 on [0, 16]: 0 and 16 share no centre window, so every bit differs."""
    codec = BVCodec.draw(1000, 8.0, 0.0, 16.0, np.random.default_rng(3))
    assert codec.m_max == 1000
    assert codec.mechanism(2.0).epsilon == 2000.0


def test_tight_delta_matches_enumeration():
    """δ(ε') = Σ_o max(0, P_x(o) − e^ε' P_x'(o)) over all 2^m outputs of the m differing
    bits (the equal bits cancel)."""
    for eps_bit, m, target in [(0.5, 6, 1.0), (1.0, 5, 1.0), (0.3, 7, 0.2), (2.0, 4, 9.0)]:
        p = keep_probability(eps_bit)
        want = 0.0
        for out in itertools.product([0, 1], repeat=m):
            a = sum(out)  # bits that kept x's value (x's clean bits all 1, x''s all 0)
            px = p**a * (1 - p) ** (m - a)
            px2 = (1 - p) ** a * p ** (m - a)
            want += max(0.0, px - math.exp(target) * px2)
        assert tight_delta(eps_bit, m, target) == pytest.approx(want, rel=1e-9, abs=1e-15)


def test_dpbv_spend_records_claim_and_what_holds():
    codec = BVCodec.draw(200, 3.0, 0.0, 25.0, np.random.default_rng(1))
    ledger = Ledger(LOCAL)
    codec.encode(np.array([1.0, 7.0]), 1.5, np.random.default_rng(2), ledger)
    (spend,) = ledger.entries
    assert spend.epsilon == codec.m_max * 1.5 and spend.delta == 0.0
    assert spend.claimed_epsilon == 1.5 and spend.claimed_delta == dpbv_delta(1.5, 200)
    assert "Theorem 4" in spend.claim
    assert spend.details["m_max"] == codec.m_max and spend.details["epsilon_bit"] == 1.5
    assert spend.details["delta_at_claimed_epsilon"] == tight_delta(1.5, codec.m_max, 1.5)
    assert ledger.to_dict()["neighbouring"] == LOCAL


def test_randomised_response_likelihood_matches_enumeration():
    mech = BitVectorResponse(0.8, 3, 3)
    clean = np.array([True, False, True])
    outs = np.array(list(itertools.product([False, True], repeat=3)))
    ll = mech.log_likelihood(outs, clean)
    p = keep_probability(0.8)
    want = [math.log(np.prod([p if o == c else 1 - p for o, c in zip(out, clean)])) for out in outs]
    assert np.allclose(ll, want, rtol=0, atol=1e-12)
    assert math.fsum(np.exp(ll)) == pytest.approx(1.0, abs=1e-12)


def test_paper_b_rows_book_m_max_times_epsilon(tmp_path):
    """Every DPBV row's epsilon_provable is Σ over its attributes of m_max·ε, with m_max
    brute-forced on the very codecs the cell drew; epsilon_claimed is the paper's A·ε."""
    from dpcluster.experiments import paper_b_cells as experiments

    raw = {
        "name": "pb",
        "seed": 3,
        "epsilon": [1.0],
        "datasets": [{"name": "uniform", "params": {"N": 60, "d": 2, "lo": 0, "hi": 25}}],
        "algorithms": [
            {"name": "dpbv_error", "repeat": 2, "params": {"s": 16, "t": 3.0, "pairs": 50}}
        ],
        "metrics": ["mae"],
        "plot": {"kind": "none"},
    }
    sp = parse(raw, "pb.yaml")
    (cell,) = harness.expand(sp)
    outcome = harness.run_cell(cell)
    assert not outcome.error
    ds = data.load(cell.dataset.name, **cell.dataset.kwargs)
    init_streams = StreamFactory(cell.seed, (cell.dataset.key, "k", ds.k))
    ctx = CellContext(
        dataset=ds,
        k=ds.k,
        epsilon=1.0,
        params=cell.algorithm.kwargs,
        repeat=2,
        n_init=30,
        init_method="uniform",
        streams=None,
        init_streams=init_streams,
    )
    for _, row in outcome.rows.iterrows():
        codec = experiments.record_codec(ctx, int(row["rep"]), 16, 3.0)
        want = sum(brute_m_max(c, 20_001) * 1.0 for c in codec.attributes)
        assert row["epsilon_provable"] == pytest.approx(want)
        assert row["epsilon_claimed"] == pytest.approx(2 * 1.0)
    assert outcome.meta["ledger"]["neighbouring"] == LOCAL


def test_decomposition_is_charged_per_pair_of_the_busiest_record():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 25, (6, 2))
    pairs = np.array([[0, 1], [0, 2], [0, 3], [4, 5]])
    assert pair_multiplicity(pairs, 6) == 3
    from dpcluster.ldp.parties import decomposition_codec

    codec = decomposition_codec(np.full(2, 25.0), 64, np.random.default_rng(1))
    bob = Custodian("bob", X, 2.0, np.random.default_rng(2))
    bob.encode_partial_sq_distances(pairs, slice(0, 2), codec)
    (spend,) = bob.ledger.entries
    assert spend.repeats == 3 and spend.epsilon == 3 * codec.m_max * 2.0
    assert spend.claimed_epsilon == 2.0  # the paper books the release once


def test_per_record_budget_is_matched_across_vertical_methods(tmp_path):
    """With budget: per_record both methods spend the same claimed ε per record: split over
    Bob's attributes, or over the pairs of the busiest record."""
    raw = {
        "name": "v",
        "seed": 1,
        "epsilon": [2.0],
        "datasets": [{"name": "uniform", "params": {"N": 40, "d": 6, "lo": 0, "hi": 25}}],
        "algorithms": [
            {
                "name": "vertical_error",
                "repeat": 1,
                "params": {
                    "s": 32,
                    "t": 12.5,
                    "pairs": 200,
                    "method": ["non-decomposition", "decomposition"],
                    "budget": "per_record",
                },
            }
        ],
        "metrics": ["mae"],
        "plot": {"kind": "none"},
    }
    per_record = {}
    for cell in harness.expand(parse(raw, "v.yaml")):
        out = harness.run_cell(cell)
        assert not out.error
        entries = out.meta["ledger"]["entries"]
        per_record[cell.algorithm.kwargs["method"]] = sum(
            e["details"]["epsilon_bit"] * e["repeats"] for e in entries
        )
    assert per_record["non-decomposition"] == pytest.approx(2.0)
    assert per_record["decomposition"] == pytest.approx(2.0)


@pytest.mark.parametrize("name", sorted(data.FILES))
def test_public_bounds_load_every_bundled_dataset(name):
    ds = data.load(name, bounds="public")
    assert ds.bounds == "public" and ds.clipped == 0
    assert np.isfinite(ds.X).all() and ds.X.min() >= -1 and ds.X.max() <= 1
    assert data.load(name).bounds == "data"


def test_public_bounds_clip_and_do_not_follow_the_data():
    raw = np.array([[0.0, 5.0], [10.0, 50.0], [20.0, -3.0]])
    X, lo, hi = data.normalise(raw, ((0.0, 0.0), (10.0, 10.0)))
    assert np.array_equal(lo, [0, 0]) and np.array_equal(hi, [10, 10])
    assert np.array_equal(X, [[-1.0, 0.0], [1.0, 1.0], [1.0, -1.0]])
    moved = raw.copy()
    moved[0, 0] = -1e6  # an outlier moves every record under bounds=data, none under public
    assert np.array_equal(data.normalise(moved, ((0.0, 0.0), (10.0, 10.0)))[0][1:], X[1:])
    from_data = data.normalise(moved, "data")[0][1:]
    assert not np.array_equal(from_data, data.normalise(raw, "data")[0][1:])


def test_bounds_from_the_data_warn():
    raw = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.warns(data.DataBoundsWarning, match="is private"):
        data.normalise(raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data.normalise(raw, "data")
        data.normalise(raw, (-5.0, 5.0))


def test_spec_bounds_key(tmp_path):
    raw = {
        "name": "b",
        "seed": 1,
        "epsilon": [1.0],
        "bounds": "public",
        "datasets": [{"name": "image"}, {"name": "s1", "params": {"bounds": "data"}}],
        "algorithms": [{"name": "dplloyd", "repeat": 1}],
        "init": {"sets": 1},
        "plot": {"kind": "none"},
    }
    sp = parse(raw, "b.yaml")
    assert [d.key for d in sp.datasets] == ["image(bounds=public)", "s1"]
    rep = harness.run_spec(sp, tmp_path / "out")
    assert not rep.failures
    assert dict(zip(rep.runs["dataset"], rep.runs["bounds"])) == {
        "image(bounds=public)": "public",
        "s1": "data",
    }
    from dpcluster.errors import SpecError

    with pytest.raises(SpecError, match="bounds"):
        parse({**raw, "bounds": "pubic"}, "b.yaml")


def test_non_private_rows_claim_nothing(tmp_path):
    raw = {
        "name": "np",
        "seed": 1,
        "datasets": [{"name": "s1"}],
        "algorithms": [{"name": "lloyd"}],
        "init": {"sets": 2},
        "plot": {"kind": "none"},
    }
    rep = harness.run_spec(parse(raw, "np.yaml"), tmp_path / "o")
    assert (rep.runs["epsilon_provable"] == math.inf).all()
    assert (rep.runs["epsilon_claimed"] == math.inf).all()


def test_packing_helper_unchanged():
    bits = np.random.default_rng(0).random((3, 70)) < 0.5
    assert pack_bits(bits).shape == (3, 2)
