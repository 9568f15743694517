"""The audit: its likelihood code against brute force, its bounds, and planted bugs it must
catch with the default trial counts."""

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from dpcluster.algorithms.dplloyd import dplloyd_batch
from dpcluster.audit import (
    TranscriptLLR,
    audit_target,
    blackbox_ceiling,
    blackbox_epsilon,
    clopper_pearson,
    targets,
    whitebox_epsilon,
)
from dpcluster.audit.targets import central_pair
from dpcluster.privacy import ExponentialMechanism, LaplaceMechanism, observe
from dpcluster.privacy import response as response_module
from tests import naive, planted

TARGETS = targets()


# --- statistics ------------------------------------------------------------------------


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (57, 1000), (1, 5000)])
def test_clopper_pearson_matches_scipy(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    low, high = clopper_pearson(k, n)
    assert low == pytest.approx(ci.low, abs=1e-12) and high == pytest.approx(ci.high, abs=1e-12)


def test_whitebox_bound_certifies_what_the_held_out_half_reaches():
    assert whitebox_epsilon(np.full(100, 1.7)) == pytest.approx(1.7)
    assert whitebox_epsilon(np.full(100, -0.5)) == 0.0
    # a δ as large as the probability of the event leaves nothing certified
    llr = np.r_[np.full(10, 3.0), np.zeros(90)]
    assert whitebox_epsilon(np.tile(llr, 2), delta=0.5) == 0.0


def test_blackbox_bound_on_known_laplace_pair():
    """Lap(0, 1) against Lap(1, 1) is exactly 1-DP: the bound is below 1 and not trivial."""
    rng = np.random.default_rng(0)
    lb = blackbox_epsilon(rng.laplace(0, 1, 40_000), rng.laplace(1, 1, 40_000))
    assert 0.5 < lb <= 1.0
    same = blackbox_epsilon(rng.normal(size=20_000), rng.normal(size=20_000))
    assert same < 0.15
    assert blackbox_ceiling(10_000) == pytest.approx(math.log(5000 / 3.689), abs=0.01)


# --- likelihoods against brute force ---------------------------------------------------


def test_laplace_and_exponential_likelihoods():
    m = LaplaceMechanism(0.7, 2.0)
    y, a = np.array([0.3, -4.0, 9.0]), np.array([1.0, 1.0, 1.0])
    # outputs on the lattice; the discrete Laplace pmf of the steps from the snapped answer
    y = m.snap(y)
    z = (y - m.snap(a)) / m.lattice
    q = math.exp(-1.0 / m.sigma)
    want = np.log((1 - q) / (1 + q) * q ** np.abs(z))
    assert np.allclose(m.log_likelihood(y, a), want)
    # at the same ε and sensitivity, it is the continuous density's ratio up to 1e-5
    assert m.scale == pytest.approx(2.0 / 0.7, rel=1e-5)
    em = ExponentialMechanism(0.9, 3.0)
    loss = np.array([1.0, 5.0, 2.5, 0.0])
    assert np.allclose(
        [math.exp(em.log_likelihood(i, loss)) for i in range(4)], em.probabilities(loss)
    )


def test_dplloyd_transcript_llr_matches_a_direct_density():
    """One DPLloyd iteration: the observer's LLR equals Σ log Lap densities of the released
    counts and sums, computed with scipy on naive cluster statistics of D and D'."""
    D, D2 = central_pair(30, 2, seed=4)
    init = np.array([[[-0.5, -0.5], [0.5, 0.5]]])
    n, eps = 6, 0.8
    seen = []
    rec = TranscriptLLR(D, D2, n, per_trial=False)
    with observe(lambda rel: seen.append(rel) or rec(rel)):
        dplloyd_batch(
            D,
            np.repeat(init, n, 0),
            eps,
            {"count": np.random.default_rng(1), "sum": np.random.default_rng(2)},
            iterations=1,
        )
    counts, sums = seen
    want = np.zeros(n)
    for rel, which in ((counts, 0), (sums, 1)):
        m = rel.mechanism
        fD = naive.cluster_stats(D, init[0])[which]
        fD2 = naive.cluster_stats(D2, init[0])[which]
        for r in range(n):  # |steps from each snapped answer| / σ
            steps = rel.output[r] / m.lattice
            want[r] += (
                np.abs(steps - np.floor(fD2 / m.lattice + 0.5)).sum()
                - np.abs(steps - np.floor(fD / m.lattice + 0.5)).sum()
            ) / m.sigma
    assert np.allclose(rec.llr, want, rtol=0, atol=1e-9)
    assert rec.llr.max() <= eps + 1e-12


def test_dpbv_llr_takes_the_form_eps_times_2a_minus_m():
    t = TARGETS["dpbv (one attribute)"]
    x, x2 = t.pair()
    xs, x2s = np.repeat(x, 500), np.repeat(x2, 500)  # a local target's input, per trial
    rec = TranscriptLLR(xs, x2s, 500, per_trial=False)
    eps = 0.01
    with observe(rec):
        t.run(xs, eps, np.random.default_rng(0), 500)
    m = t.params["m_max"]
    units = rec.llr / eps
    assert np.allclose(units, np.round(units), atol=1e-6)
    assert np.all((np.round(units).astype(int) + m) % 2 == 0) and units.max() <= m


@pytest.mark.statistical
def test_likelihood_ratio_has_mean_one_under_the_neighbour():
    """E_{D'}[exp(ln dP_D/dP_D')] = 1 for any exact LLR. On GkM's aggregation step (k·d = 4
    coordinates, ε = 0.5) the ratio lies in [e^-0.5, e^0.5]; its sd ≤ 0.33, so the mean of
    20,000 draws is within 6·0.33/√20000 = 0.014 of 1."""
    t = TARGETS["gkm (aggregation)"]
    D, D2 = t.pair()
    n = 20_000
    rec = TranscriptLLR(D, D2, n, per_trial=True)  # ln P_D/P_D' on trials from D'
    with observe(rec):
        t.run(D2, 0.5, np.random.default_rng(5), n, rec.trial)
    assert abs(np.exp(rec.llr).mean() - 1.0) < 0.014
    assert -0.5 - 1e-12 <= rec.llr.min() and rec.llr.max() <= 0.5 + 1e-12


# --- the audit on the real mechanisms -----------------------------------------------------


@pytest.mark.slow
def test_audit_is_consistent_on_dplloyd_and_eugkm_with_useful_bounds():
    for name in ("dplloyd", "eugkm"):
        row = audit_target(TARGETS[name], 1.0)
        assert row["verdict"] == "consistent"
        assert row["epsilon_claimed"] == pytest.approx(1.0)
        # EUGkM's M reads the exact N, as the paper does: booked, so ∞ provable
        assert row["epsilon_provable"] == (math.inf if name == "eugkm" else pytest.approx(1.0))
        assert 0.5 <= row["epsilon_lb_whitebox"] <= 1.0 + 1e-9


def test_audit_finds_theorem4_violated_but_the_provable_bound_holds():
    row = audit_target(TARGETS["dpbv (one attribute)"], 2.0)
    assert row["verdict"] == "violation"
    assert row["epsilon_provable"] == 2.0 * 1000 and row["epsilon_claimed"] == 2.0
    assert 100 <= row["epsilon_lb_whitebox"] <= row["epsilon_provable"]
    assert row["epsilon_lb_blackbox"] >= 0.9 * row["blackbox_ceiling"]


# --- planted bugs (kept here, never in the registry) --------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "module,target",
    [
        (planted.dplloyd_module, "dplloyd"),
        (planted.eugkm_module, "eugkm"),
        (planted.gkm_module, "gkm (aggregation)"),
    ],
)
def test_halved_laplace_scale_is_caught(monkeypatch, module, target):
    half = planted.scaled_laplace(2.0)
    monkeypatch.setattr(module, "LaplaceMechanism", half)
    row = audit_target(TARGETS[target], 1.0)
    assert row["verdict"] == "violation of provable ε"
    assert row["epsilon_lb_whitebox"] > 1.0


@pytest.mark.slow
def test_swapped_count_sum_split_is_caught_per_release(monkeypatch):
    """The 1.21× overspend of a swapped split at d = 10 hides in the transcript total (22
    coordinates) but not in the sums release, which leaks c = 1.265× its booked ε."""
    monkeypatch.setattr(planted.dplloyd_module, "LaplaceMechanism", planted.swapped_split(10))
    row = audit_target(planted.improved_target_in(10), 1.0)
    assert row["verdict"] == "violation of provable ε"
    assert row["release_lb_over_booked"] > 1.2 and "coordinate sums" in row["note"]


@pytest.mark.slow
def test_correct_split_at_d10_is_consistent_release_by_release():
    row = audit_target(planted.improved_target_in(10), 1.0)
    assert row["verdict"] == "consistent" and row["release_lb_over_booked"] <= 1 + 1e-9


def test_randomised_response_with_twice_the_epsilon_is_caught(monkeypatch):
    monkeypatch.setattr(
        response_module.BitVectorResponse,
        "p",
        property(lambda self: response_module.keep_probability(2 * self.epsilon_bit)),
    )
    row = audit_target(TARGETS["dpbv (one attribute)"], 1.0)
    assert row["verdict"] == "violation of provable ε"
    assert row["epsilon_lb_whitebox"] > row["epsilon_provable"]


def test_audit_rows_do_not_depend_on_jobs():
    from dpcluster.audit import run_audit

    a = run_audit(["eugkm", "bv_error"], [1.0], trials=200, jobs=1)
    b = run_audit(["eugkm", "bv_error"], [1.0], trials=200, jobs=2)
    cols = [c for c in a.columns if c != "seconds"]
    assert a[cols].equals(b[cols])
    assert list(a["verdict"]) == ["consistent", "not private"]
