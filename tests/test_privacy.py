"""Privacy as a correctness property: noise scales, budget splits and ledger totals."""

import math
import re

import numpy as np
import pytest

from dpcluster.algorithms import dplloyd, dplloyd_batch, dplloyd_improved, eugkm, methods
from dpcluster.algorithms.dplloyd import improved_ratio, sensitivity_split
from dpcluster.algorithms.lsh_splits import lsh_splits
from dpcluster.algorithms.reference import private_mean
from dpcluster.privacy import LaplaceMechanism, Ledger

# Ledger totals are sums of floating-point shares of ε; allow only rounding error.
ROUNDING = 1e-12


@pytest.mark.statistical
@pytest.mark.parametrize("eps,sens", [(0.1, 1.0), (1.0, 3.0), (2.5, 0.5)])
def test_laplace_noise_scale(eps, sens):
    mech = LaplaceMechanism(eps, sens)
    # the lattice mechanism's scale is b = Δ/ε widened by 2 lattice steps in Δ, and its
    # variance the discrete one: both within a few 1e-6 of the continuous Laplace's
    b = sens / eps
    assert b <= mech.scale <= b * (1 + 4e-6)
    assert mech.variance == pytest.approx(2 * b * b, rel=1e-5)
    b = mech.scale
    n = 200_000
    x = mech.noise(np.random.default_rng(2024), n)
    # E|X| = b and sd(|X|) = b, so the mean of |X| has standard error b/sqrt(n).
    assert abs(np.abs(x).mean() - b) < 6 * b / math.sqrt(n)
    # Var(s^2) = (mu4 - sigma^4)/n = (24 - 4) b^4 / n for the Laplace distribution.
    assert abs(x.var() - 2 * b * b) < 6 * math.sqrt(20 / n) * b * b
    assert abs(x.mean()) < 6 * math.sqrt(2) * b / math.sqrt(n)


def test_mechanism_rejects_bad_parameters():
    for eps, sens in [(0.0, 1.0), (-1.0, 1.0), (math.inf, 1.0), (1.0, 0.0)]:
        with pytest.raises(ValueError):
            LaplaceMechanism(eps, sens)


@pytest.mark.parametrize("mechanism", ["LaplaceMechanism", "ExponentialMechanism"])
def test_a_noise_scale_outside_double_precision_is_refused(mechanism):
    """Δ/ε overflowing would draw inf noise; underflowing to 0 would add none while the
    ledger books ε. Both are refused by name; a scale just inside is built."""
    import dpcluster.privacy as privacy

    make = getattr(privacy, mechanism)
    for eps, sens in [(1e-320, 1.0), (1e300, 1e-300), (1e-10, 1e300)]:
        with pytest.raises(ValueError, match="outside double precision"):
            make(eps, sens)
    if mechanism == "LaplaceMechanism":  # past the integer sampler's reach: data-free
        wide = make(1e-300, 1.0)
        assert wide.data_free and math.isfinite(wide.scale)
        assert np.array_equal(wide.add(np.array([5.0, -3.0]), [0.0, 0.0]), [0.0, 0.0])
        assert not make(1e-12, 10.0).data_free and make(1e-12, 10.0).scale > 0
    else:  # a rate below 2^-62 per lattice step: a uniform choice, which reads no loss
        wide = make(1e-300, 1.0)
        assert wide.rate[0] == 0 and wide.scale == math.inf
        assert wide.probabilities(np.array([0.0, 5.0])).tolist() == [0.5, 0.5]
        assert math.isfinite(make(1e-12, 10.0).scale) and make(1e-12, 10.0).rate[0] > 0


def test_a_users_epsilon_is_within_the_documented_range():
    from dpcluster.privacy import USER_EPSILON, check_user_epsilon

    lo, hi = USER_EPSILON
    assert check_user_epsilon(lo) is None and check_user_epsilon(hi) is None
    for bad in (lo / 2, hi * 2, 0.0, math.nan, math.inf, True, "1"):
        assert check_user_epsilon(bad), bad


def _data(d, N=200, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (N, d))


@pytest.mark.parametrize("d", [1, 2, 6, 10, 64])
@pytest.mark.parametrize("eps", [0.05, 1.0, 3.0])
def test_ledger_never_exceeds_epsilon(d, eps):
    X = _data(d)
    rng = np.random.default_rng(d)
    k = 3
    init = rng.uniform(-1, 1, (k, d))
    inits = rng.uniform(-1, 1, (4, k, d))
    results = [
        dplloyd(X, k, eps, init, rng),
        dplloyd_improved(X, k, eps, init, rng, n=len(X)),  # a count given as public
        eugkm(X, k, eps, inits, rng, private_n=True),
        lsh_splits(X, k, eps, rng),
        private_mean(X, k, eps, rng),
        methods.auto(X, k, eps, rng),
        methods.fit_dplloyd_improved(X, k, eps, rng, clip=0.2),
        methods.fit_eugkm(X, k, eps, rng, init_sets=4),
        methods.fit_hybrid(X, k, eps, rng, init_sets=4),
        methods.fit_private_mean(X, k, eps, rng),
        # per-feature radii: the sums are charged Σ r_j
        dplloyd_improved(X * 0.5, k, eps, init * 0.5, rng, r=np.full(d, 0.5), iterations=3),
        lsh_splits(X * 0.5, k, eps, rng, r=np.full(d, 0.5)),
    ]
    for res in results:
        assert res.ledger.total_epsilon <= eps  # not even by a rounding error
        assert res.ledger.total_epsilon == pytest.approx(eps, rel=1e-9)  # nothing wasted
    # the papers' rules that read the exact N: ∞ provable, the paper's ε claimed
    for res in (dplloyd_improved(X, k, eps, init, rng), eugkm(X, k, eps, inits, rng)):
        assert res.ledger.total_epsilon == math.inf
        assert res.ledger.claimed_epsilon <= eps
        assert any("read exactly" in e.purpose for e in res.ledger.entries)


@pytest.mark.parametrize("d", [1, 2, 6, 10, 64])
def test_dplloyd_sensitivities_and_equal_scales(d):
    res = dplloyd(_data(d), 2, 1.0, _data(d, 2, 1), np.random.default_rng(0))
    count = [e for e in res.ledger.entries if "count" in e.purpose]
    sums = [e for e in res.ledger.entries if "sum" in e.purpose]
    assert len(count) == len(sums) == 5
    assert all(e.sensitivity == 1.0 for e in count)
    assert all(e.sensitivity == d for e in sums)
    b = 5 * (d + 1) / 1.0  # A1: b = t (d r + 1) / ε for counts and sums alike
    assert all(e.scale == pytest.approx(b, rel=1e-5) for e in count + sums)
    split = sensitivity_split(0.2, d)
    assert split.count == pytest.approx(0.2 / (d + 1)) and split.total == pytest.approx(0.2)


@pytest.mark.parametrize("d", [2, 6, 10])
def test_improved_split_is_count_c_to_each_sum_1(d):
    """The intended A2 mapping; diffprivlib 0.6.6 swaps it (count gets the per-dim share)."""
    eps, rng = 1.0, np.random.default_rng(0)
    res = dplloyd_improved(_data(d, 500), 2, eps, _data(d, 2, 1), rng)
    t = res.iterations
    c = improved_ratio(d)
    count = [e for e in res.ledger.entries if e.purpose == "cluster counts"]
    sums = [e for e in res.ledger.entries if e.purpose == "cluster coordinate sums"]
    for e in count:
        assert e.epsilon == pytest.approx(eps / t * c / (d + c))
        assert e.scale == pytest.approx((d + c) * t / (eps * c), rel=1e-5)
    for e in sums:
        per_coordinate = e.epsilon / d
        assert per_coordinate == pytest.approx(eps / t / (d + c))
        assert e.scale == pytest.approx(t * (d + c) / eps, rel=1e-5)  # r / ε_sum_dim, r = 1


@pytest.mark.statistical
def test_improved_sum_noise_has_the_intended_scale():
    """Measure the noise the sums actually receive; a count/sum swap changes its variance.

    All N points sit at the origin, k = 1 and t = 1, so the noisy centroid is
    ``ns / (N + nc)`` with ``ns ~ Lap(b_sum)`` per coordinate: ``N·o ≈ ns`` (relative error
    ≤ |nc|/N ≈ 1e-4). For d = 10 the intended b_sum = (d+c)/ε ≈ 11.27; the swapped mapping
    gives (d+c)/(c ε) ≈ 8.91, a 37% lower variance. With 20,000 coordinates the sample
    variance has relative standard error sqrt(20/4/20000) ≈ 1.6%; we allow 6 of them.
    """
    d, N, R, eps = 10, 100_000, 2000, 1.0
    X = np.zeros((N, d))
    inits = np.full((R, 1, d), 0.5)
    streams = [
        {"count": np.random.default_rng((7, i, 0)), "sum": np.random.default_rng((7, i, 1))}
        for i in range(R)
    ]
    C, _ = dplloyd_batch(X, inits, eps, streams, iterations=1, split="improved")
    ns = (C[:, 0, :] * N).ravel()
    c = improved_ratio(d)
    b_sum = (d + c) / eps
    rel_se = math.sqrt(20 / 4 / ns.size)
    assert abs(ns.var() / (2 * b_sum**2) - 1) < 6 * rel_se
    swapped = (d + c) / (c * eps)
    assert abs(ns.var() / (2 * swapped**2) - 1) > 6 * rel_se  # the test can tell them apart


def test_ledger_is_append_only_record():
    ledger = Ledger()
    m = ledger.record(LaplaceMechanism(0.25, 1.0), "x", round=2)
    assert m.scale == pytest.approx(4.0, rel=1e-5) and ledger.total_epsilon == 0.25
    entry = ledger.entries[0]
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.epsilon = 0.0  # frozen
    assert ledger.to_dict()["neighbouring"].startswith("add/remove")


class _Mech:
    """A mechanism as the ledger reads one: ε, δ, sensitivity and scale."""

    def __init__(self, epsilon, delta=0.0):
        self.epsilon, self.delta, self.sensitivity, self.scale = epsilon, delta, 1.0, 1.0


@pytest.mark.parametrize("value", [0, 0.0, -1.0, math.nan, math.inf, True, False, "1", None])
def test_an_epsilon_that_is_not_a_positive_finite_number_is_refused(value):
    from dpcluster.privacy import check_epsilon

    assert check_epsilon(value) == "must be a positive finite number"


@pytest.mark.parametrize("value", [1, 0.5, np.float64(2.0), 1e-12])
def test_a_positive_finite_epsilon_passes(value):
    from dpcluster.privacy import check_epsilon

    assert check_epsilon(value) is None


@pytest.mark.parametrize(
    "mech,repeats,words",
    [
        (_Mech(1.0), 0, "repeats must be >= 1, got 0"),
        (_Mech(0.0), 1, "noise: a release must book a positive finite ε, got 0.0"),
        (_Mech(math.nan), 1, "a release must book a positive finite ε, got nan"),
        (_Mech(-0.5), 2, "a release must book a positive finite ε, got -0.5"),
        (_Mech(math.inf), 1, "got inf (a negative, zero or NaN entry would hide"),
        (_Mech(1.0, 1.0), 1, "noise: a release's δ must lie in [0, 1), got 1.0"),
        (_Mech(1.0, -0.1), 1, "δ must lie in [0, 1)"),
        (_Mech(1.0, math.nan), 1, "δ must lie in [0, 1)"),
    ],
)
def test_the_ledger_refuses_an_entry_that_would_hide_a_cost(mech, repeats, words):
    ledger = Ledger()
    with pytest.raises(ValueError, match=re.escape(words)):
        ledger.record(mech, "noise", repeats=repeats)
    assert ledger.entries == []


def test_a_claim_without_its_own_numbers_claims_the_mechanisms_once():
    """A mechanism that names a claim but no claimed ε/δ claims its own, per release:
    the repeats are charged to what holds, never to the claim."""
    mech = _Mech(0.5, 1e-7)
    mech.claim = "the paper's Theorem"
    ledger = Ledger()
    ledger.record(mech, "pairs", repeats=3)
    (entry,) = ledger.entries
    assert (entry.epsilon, entry.claimed_epsilon) == (1.5, 0.5)
    assert (entry.delta, entry.claimed_delta) == (pytest.approx(3e-7), 1e-7)


def test_a_ledger_travels_as_its_totals_entries_and_the_origin_of_its_bounds():
    from dpcluster.privacy import DATA_BOUNDS_NOTE

    ledger = Ledger(bounds="data", choices=["auto: dplloyd"])
    ledger.record(_Mech(0.25, 1e-6), "a", repeats=2)
    ledger.record(_Mech(0.5), "b")
    out = ledger.to_dict()
    assert out["total_epsilon"] == 1.0 and out["claimed_epsilon"] == 1.0
    assert out["total_delta"] == 2e-6 and out["claimed_delta"] == 2e-6
    assert [e["purpose"] for e in out["entries"]] == ["a", "b"]
    assert out["bounds"] == "data" and out["note"] == DATA_BOUNDS_NOTE
    assert out["choices"] == ["auto: dplloyd"]
    public = Ledger(bounds="public").to_dict()
    assert public["bounds"] == "public" and "note" not in public and "choices" not in public


def test_a_run_without_a_ledger_is_infinitely_spent_and_says_why():
    from dpcluster.privacy import LOCAL, not_private, spent

    nothing = {"epsilon_claimed": math.inf, "epsilon_provable": math.inf}
    assert spent(None) == {**nothing, "delta_claimed": 1.0, "delta_provable": 1.0}
    ledger = Ledger()
    ledger.record(_Mech(0.75), "a")
    pure = {"epsilon_claimed": 0.75, "epsilon_provable": 0.75}
    assert spent(ledger) == {**pure, "delta_claimed": 0.0, "delta_provable": 0.0}
    assert not_private() == {"entries": [], "note": "not private"}
    assert not_private("exact counts", LOCAL) == {
        "entries": [],
        "note": "exact counts",
        "neighbouring": LOCAL,
    }


def test_theorem4s_claimed_delta_is_p_to_the_s_minus_e_eps_q_to_the_s():
    """Sun et al.'s δ = p^s − e^ε q^s, against the formula in plain floats where they
    suffice, and the docstring's δ(2, 1000) where only log space does."""
    from dpcluster.privacy.response import theorem4_delta

    for eps, s in ((1.0, 3), (0.5, 7), (2.0, 2)):
        p, q = math.exp(eps) / (math.exp(eps) + 1), 1 / (math.exp(eps) + 1)
        assert theorem4_delta(eps, s) == pytest.approx(p**s - math.exp(eps) * q**s, rel=1e-12)
    assert theorem4_delta(1.0, 1) == 0.0  # p = e^ε q: one bit claims δ = 0
    assert theorem4_delta(2.0, 1000) == pytest.approx(7.514e-56, rel=1e-3)


def test_the_tight_delta_is_the_hockey_stick_sum_over_the_kept_bits():
    """δ(ε') = Σ_a C(m,a) p^a q^(m−a) (1 − e^{ε' − ε(2a − m)})_+, summed by hand."""
    from dpcluster.privacy.response import tight_delta

    def by_hand(eps, m, target):
        p = math.exp(eps) / (math.exp(eps) + 1)
        return sum(
            math.comb(m, a)
            * p**a
            * (1 - p) ** (m - a)
            * max(0.0, 1 - math.exp(target - eps * (2 * a - m)))
            for a in range(m + 1)
        )

    for eps, m, target in ((1.0, 1, 0.5), (0.7, 3, 0.5), (2.0, 5, 3.0), (0.3, 12, 1.0)):
        assert tight_delta(eps, m, target) == pytest.approx(by_hand(eps, m, target), rel=1e-12)
        assert tight_delta(eps, m, target) > 0
    assert tight_delta(1.0, 4, 4.0) == 0.0 and tight_delta(1.0, 0, 0.5) == 0.0


def test_a_randomised_response_needs_a_positive_epsilon_and_m_max_within_s():
    from dpcluster.privacy.response import BitVectorResponse

    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="epsilon must be positive and finite, got"):
            BitVectorResponse(bad, 10, 5)
    with pytest.raises(ValueError, match=re.escape("m_max=11 must be in 0..s=10")):
        BitVectorResponse(1.0, 10, 11)
    assert BitVectorResponse(1.0, 10, 0).epsilon == 0.0  # no two encodings differ
    assert BitVectorResponse(1.0, 10, 10).epsilon == 10.0


#: methods whose ledger is infinite by design (GkM's blocks read the exact N) or that
#: run another library's code
_UNBOUNDED = ("gkm", "gkm_3k", "diffprivlib")


@pytest.mark.slow
def test_every_methods_ledger_is_within_its_budget_exactly_at_random_budgets():
    """Over random (ε, δ) from 1e-3 to 1e3, every central method's ledger totals are at most
    the ε and δ it was given, compared exactly (no rounding slack)."""
    from dpcluster import DPKMeans
    from dpcluster.estimator import central_methods

    X = np.random.default_rng(0).uniform(-1, 1, (60, 2))
    draws = np.random.default_rng(1)
    over = []
    for method in sorted(m for m in central_methods() if m not in _UNBOUNDED):
        fits = 4 if method == "lsh_splits_gaussian" else 16
        for i in range(fits):
            eps, delta = float(10 ** draws.uniform(-3, 3)), (0.0, 1e-6)[i % 2]
            if method == "lsh_splits_gaussian":
                delta = 1e-6
            km = DPKMeans(2, epsilon=eps, delta=delta, bounds=(-1, 1), method=method)
            ledger = km.set_params(random_state=i).fit(X).ledger_
            if ledger.total_epsilon > eps or ledger.total_delta > delta:
                over.append((method, eps, delta, ledger.total_epsilon, ledger.total_delta))
    assert not over


def test_the_exponential_mechanism_draws_integers_only_and_bounds_its_ratio_exactly():
    """The exponential mechanism is lattice-safe: its draw asks the generator for integers
    only (no floating-point uniform to round), and on losses that move by at most Δ plus
    floating-point error between neighbours, every candidate's probability ratio is at
    most e^ε (docs/privacy.md, "The exponential mechanism")."""
    from dpcluster.privacy import ExponentialMechanism

    class IntegersOnly:
        def __init__(self, seed):
            self._rng = np.random.default_rng(seed)

        def integers(self, *args, **kwargs):
            return self._rng.integers(*args, **kwargs)

    rng = np.random.default_rng(5)
    for eps, sens in [(1.0, 0.5), (0.01, 3.0), (8.0, 1e-3), (1e-6, 7.0)]:
        mech = ExponentialMechanism(eps, sens)
        loss = rng.uniform(0, 50 * sens, size=64)
        neighbour = loss + rng.uniform(-sens, sens, size=64) * (1 - 1e-15) + 1e-13 * sens
        gap = np.abs(mech.log_probabilities(loss) - mech.log_probabilities(neighbour))
        assert gap.max() <= eps
        assert 0 <= mech.select(IntegersOnly(1), loss) < 64
